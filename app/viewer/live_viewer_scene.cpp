// decision-viewer's layout, its camera, and the scene MuJoCo draws into the window. See
// live_viewer.h.

// Index of this file:
//   [SECTION] Layout and the camera
//   [SECTION] Drawing the scene

#include <algorithm>

#include "live_viewer_state.h"

namespace dstudio::viewer {

using detail::at_step;
using detail::ms_since;

// ---------------------------------------------------------------------------------------------
// [SECTION] Layout and the camera

void LiveViewer::State::layout(int width, int height) {
  const float scale = presentation ? 26.0f / 15.0f : 1.0f;
  side_w = std::clamp(static_cast<int>(std::max(380.0f * scale, 0.32f * static_cast<float>(width))),
                      200, std::max(200, width / 2));
  bottom_h =
      std::clamp(static_cast<int>(std::max(150.0f * scale, 0.22f * static_cast<float>(height))),
                 100, std::max(100, height / 2));
  scene_w = std::max(1, width - side_w);
  scene_h = std::max(1, height - bottom_h);
}

void LiveViewer::State::camera_input() {
  ImGuiIO& io = ImGui::GetIO();
  const ImVec2 m = io.MousePos;
  const bool over_scene = m.x >= 0 && m.x < scene_w && m.y >= 0 && m.y < scene_h;
  for (int b = 0; b < 3; ++b)
    if (ImGui::IsMouseClicked(b) && over_scene && !io.WantCaptureMouse) drag_button = b;
  if (drag_button >= 0 && !ImGui::IsMouseDown(drag_button)) drag_button = -1;
  const bool shift = io.KeyShift;
  if (drag_button >= 0 && (io.MouseDelta.x != 0.0f || io.MouseDelta.y != 0.0f)) {
    // As MuJoCo's simulate: left rotates, right moves, middle zooms; shift takes the horizontal
    // plane.
    mjtMouse action = mjMOUSE_ZOOM;
    if (drag_button == 0)
      action = shift ? mjMOUSE_ROTATE_H : mjMOUSE_ROTATE_V;
    else if (drag_button == 1)
      action = shift ? mjMOUSE_MOVE_H : mjMOUSE_MOVE_V;
    const double before[3] = {camera.lookat[0], camera.lookat[1], camera.lookat[2]};
    mjv_moveCamera(model, action, io.MouseDelta.x / scene_h, io.MouseDelta.y / scene_h, &scene,
                   &camera);
    for (int k = 0; k < 3; ++k) track_offset[k] += camera.lookat[k] - before[k];
  }
  if (over_scene && !io.WantCaptureMouse && io.MouseWheel != 0.0f)
    mjv_moveCamera(model, mjMOUSE_ZOOM, 0.0, -0.05 * io.MouseWheel, &scene, &camera);
}

render::CameraView LiveViewer::State::camera_view() const {
  render::CameraView v;
  v.track_body = tracking ? track_body : -1;
  v.distance = camera.distance;
  v.azimuth = camera.azimuth;
  v.elevation = camera.elevation;
  v.lookat_z = lookat_z;
  v.lookat_x = camera.lookat[0];
  v.lookat_y = camera.lookat[1];
  return v;
}

void LiveViewer::State::set_camera_view(const render::CameraView& view) {
  tracking = view.track_body >= 0;
  if (tracking) track_body = view.track_body < model->nbody ? view.track_body : 0;
  camera.distance = view.distance;
  camera.azimuth = view.azimuth;
  camera.elevation = view.elevation;
  lookat_z = view.lookat_z;
  camera.lookat[0] = view.lookat_x;
  camera.lookat[1] = view.lookat_y;
  camera.lookat[2] = view.lookat_z;
  track_offset[0] = track_offset[1] = track_offset[2] = 0.0;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Drawing the scene

void LiveViewer::State::add_task_layers(render::SceneLayers& layers) const {
  const auto& task = live->task();
  const auto& p = displayed->physics;
  // The goal always; the navigator's waypoint only for a dataset's episode, which was collected
  // following it (a policy is sent nowhere but the goal).
  if (task.markers)
    for (auto& m : task.markers(p.qpos, p.task_state))
      if (m.label != "waypoint" || live->replay()) layers.markers.push_back(std::move(m));
  if (!show_path) return;
  const auto path_to = [this](const std::vector<models::FramePtr>& run, int first) {
    render::GroundPath path;
    const int last = std::min(display_step, static_cast<int>(run.size()) - 1);
    for (int i = std::max(0, first); i <= last; ++i) {
      const auto& q = run[static_cast<std::size_t>(i)]->physics.qpos;
      if (q.size() >= 2) path.points.push_back({q[0], q[1]});
    }
    return path;
  };
  layers.paths.push_back(path_to(frames, 0));
  // A fork's path from its fork step, in its colour (before it, it is the main run's).
  for (std::size_t b = 0; b < branch_frames.size() && b < branches.size(); ++b) {
    auto path = path_to(branch_frames[b], branches[b].fork_step);
    path.colour = palette::kBranches[b % palette::kBranches.size()].colour;
    layers.paths.push_back(std::move(path));
  }
}

void LiveViewer::State::draw_scene(bool lean) {
  int fb_w = 0, fb_h = 0;
  glfwGetFramebufferSize(window, &fb_w, &fb_h);
  glViewport(0, 0, fb_w, fb_h);
  glClearColor(0.1f, 0.1f, 0.12f, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
  if (!displayed) return;
  const auto& p = displayed->physics;
  if (p.qpos.size() != static_cast<std::size_t>(model->nq) ||
      p.qvel.size() != static_cast<std::size_t>(model->nv))
    return;
  std::copy(p.qpos.begin(), p.qpos.end(), data->qpos);
  std::copy(p.qvel.begin(), p.qvel.end(), data->qvel);
  data->time = p.time;
  // A task that keeps the episode in its model (the pen's target) configures the drawn copy.
  if (const auto& task = live->task();
      task.configure_model && p.task_state.size() == static_cast<std::size_t>(task.task_state_size))
    task.configure_model(model, p.task_state);
  mj_forward(model, data);
  // Follow the body along x and y; the height stays, so hops and falls are visible.
  if (tracking && track_body >= 0) {
    camera.lookat[0] = data->xpos[3 * track_body] + track_offset[0];
    camera.lookat[1] = data->xpos[3 * track_body + 1] + track_offset[1];
    camera.lookat[2] = lookat_z + track_offset[2];
  }
  mjv_updateScene(model, data, &vopt, nullptr, &camera, mjCAT_ALL, &scene);
  // The forks' ghosts at the same step of the clock, and the limbs coloured by the effect.
  render::SceneLayers layers;
  for (std::size_t b = 0; b < branch_frames.size(); ++b)
    if (const auto f = at_step(branch_frames[b], display_step))
      layers.ghosts.push_back(
          {f->physics.qpos, palette::kBranches[b % palette::kBranches.size()].colour});
  if (effects) layers.limbs = {effect_values(), effect_scale()};
  add_task_layers(layers);
  if (!layers.empty()) painter->paint(&scene, &vopt, layers);
  // Shadows and reflections cost most under software OpenGL: off while playing, on when paused,
  // for screenshots and recordings.
  scene.flags[mjRND_SHADOW] = lean ? 0 : 1;
  scene.flags[mjRND_REFLECTION] = lean ? 0 : 1;
  scene.flags[mjRND_SKYBOX] = lean ? 0 : 1;
  int win_w = 0, win_h = 0;
  glfwGetWindowSize(window, &win_w, &win_h);
  const double sx = static_cast<double>(fb_w) / std::max(1, win_w),
               sy = static_cast<double>(fb_h) / std::max(1, win_h);
  const mjrRect viewport{0, static_cast<int>((win_h - scene_h) * sy),
                         static_cast<int>(scene_w * sx), static_cast<int>(scene_h * sy)};
  const auto t0 = Clock::now();
  if (!lean) {
    mjr_setBuffer(mjFB_WINDOW, &context);
    mjr_render(viewport, &scene, &context);
  } else if (const double f = render_scale.scale(); f >= 1.0) {
    mjr_setBuffer(mjFB_WINDOW, &lean_context);
    mjr_render(viewport, &scene, &lean_context);
  } else {
    // Drawn smaller offscreen and stretched onto the window (linear filtering).
    const mjrRect small{
        0, 0, std::clamp(static_cast<int>(viewport.width * f), 1, lean_context.offWidth),
        std::clamp(static_cast<int>(viewport.height * f), 1, lean_context.offHeight)};
    mjr_setBuffer(mjFB_OFFSCREEN, &lean_context);
    mjr_render(small, &scene, &lean_context);
    mjr_blitBuffer(small, viewport, 1, 0, &lean_context);
    mjr_setBuffer(mjFB_WINDOW, &lean_context);
  }
  last_render_ms = ms_since(t0);
}

void LiveViewer::State::make_lean_context() {
  // An offscreen buffer as large as the screen, for the scaled scene.
  int screen_w = 1920, screen_h = 1200;
  if (GLFWmonitor* monitor = glfwGetPrimaryMonitor())
    if (const GLFWvidmode* mode = glfwGetVideoMode(monitor))
      screen_w = std::max(screen_w, mode->width), screen_h = std::max(screen_h, mode->height);
  lean_model = render::lean_copy(model, screen_w, screen_h, lean_drawing);
  mjr_defaultContext(&lean_context);
  mjr_makeContext(lean_model, &lean_context, mjFONTSCALE_100);
  mjr_setBuffer(mjFB_WINDOW, &lean_context);
}

}  // namespace dstudio::viewer

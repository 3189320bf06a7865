#include "dstudio/render/scene_renderer.h"

#include <GLFW/glfw3.h>
#include <mujoco/mujoco.h>
#include <stb/stb_image_write.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>

namespace dstudio::render {

OffscreenContext::OffscreenContext() {
  static std::once_flag init;
  static bool ok = false;
  std::call_once(init, [] { ok = glfwInit() == GLFW_TRUE; });
  if (!ok)
    throw RenderError(
        "cannot initialise GLFW: no display (set DISPLAY, or run under xvfb-run on a machine "
        "without a screen)");
  glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);
  glfwWindowHint(GLFW_DOUBLEBUFFER, GLFW_FALSE);
  auto* window = glfwCreateWindow(64, 64, "dstudio offscreen", nullptr, nullptr);
  if (!window)
    throw RenderError("cannot create an OpenGL context (is there a display with OpenGL?)");
  glfwMakeContextCurrent(window);
  window_ = window;
}

OffscreenContext::~OffscreenContext() {
  if (window_) glfwDestroyWindow(static_cast<GLFWwindow*>(window_));
}

struct SceneRenderer::State {
  mjModel* model = nullptr;
  mjData* data = nullptr;  // a private copy, since mjv_updateScene takes a mutable mjData
  mjvScene scene;
  mjvCamera camera;
  mjvOption option;
  mjrContext context;
  int width = 0, height = 0;
  double lookat_z = 1.0;
  int track_body = -1;
  std::unique_ptr<SceneLayerPainter> painter;  // made when layers are first drawn
  // What draws while playing (lean_drawing.h), made on the first render_playing.
  mjModel* lean_model = nullptr;
  mjrContext lean_context;
  LeanDrawing lean;
};

SceneRenderer::SceneRenderer(const mjModel_* model, int width, int height, CameraView view,
                             RenderQuality quality)
    : state_(new State) {
  auto& s = *state_;
  s.model = mj_copyModel(nullptr, model);
  s.model->vis.quality.offsamples = std::max(0, quality.samples);
  s.model->vis.global.offwidth = std::max(width, 1);
  s.model->vis.global.offheight = std::max(height, 1);
  s.width = width;
  s.height = height;
  s.data = mj_makeData(s.model);
  mjv_defaultScene(&s.scene);
  mjv_defaultCamera(&s.camera);
  mjv_defaultOption(&s.option);
  mjr_defaultContext(&s.context);
  mjv_makeScene(s.model, &s.scene, 2000);
  s.scene.flags[mjRND_SHADOW] = quality.shadows ? 1 : 0;
  s.scene.flags[mjRND_REFLECTION] = quality.reflections ? 1 : 0;
  mjr_makeContext(s.model, &s.context, mjFONTSCALE_100);
  mjr_setBuffer(mjFB_OFFSCREEN, &s.context);
  if (s.context.currentBuffer != mjFB_OFFSCREEN)
    throw RenderError("the OpenGL context has no offscreen framebuffer");
  // A free camera moved onto the tracked body at every frame: MuJoCo's own tracking camera
  // low-pass filters its target and lags behind a fast runner when frames are far apart.
  s.camera.type = mjCAMERA_FREE;
  set_view(view);
}

SceneRenderer::~SceneRenderer() {
  auto& s = *state_;
  s.painter.reset();  // before the model it paints
  mjr_freeContext(&s.context);
  if (s.lean_model) {
    mjr_freeContext(&s.lean_context);
    mj_deleteModel(s.lean_model);
  }
  mjv_freeScene(&s.scene);
  mj_deleteData(s.data);
  mj_deleteModel(s.model);
}

Image SceneRenderer::render(const mjData_* data) {
  auto& s = *state_;
  s.data->time = data->time;
  return render({data->qpos, static_cast<std::size_t>(s.model->nq)},
                {data->qvel, static_cast<std::size_t>(s.model->nv)});
}

int SceneRenderer::width() const {
  return state_->width;
}
int SceneRenderer::height() const {
  return state_->height;
}

CameraView SceneRenderer::view() const {
  const auto& s = *state_;
  return {s.track_body, s.camera.distance,  s.camera.azimuth,  s.camera.elevation,
          s.lookat_z,   s.camera.lookat[0], s.camera.lookat[1]};
}

void SceneRenderer::configure_model(const std::function<void(mjModel_*)>& edit) {
  edit(state_->model);
  if (state_->lean_model) edit(state_->lean_model);
}

void SceneRenderer::set_view(const CameraView& view) {
  auto& s = *state_;
  s.track_body = view.track_body;
  s.camera.distance = view.distance;
  s.camera.azimuth = view.azimuth;
  s.camera.elevation = view.elevation;
  s.lookat_z = view.lookat_z;
  s.camera.lookat[0] = view.lookat_x;
  s.camera.lookat[1] = view.lookat_y;
}

Image SceneRenderer::render(std::span<const double> qpos, std::span<const double> qvel) {
  return render(qpos, qvel, SceneLayers{});
}

Image SceneRenderer::render(std::span<const double> qpos, std::span<const double> qvel,
                            const SceneLayers& layers) {
  return draw(qpos, qvel, layers, false, 1.0);
}

Image SceneRenderer::render_playing(std::span<const double> qpos, std::span<const double> qvel,
                                    const SceneLayers& layers, double scale) {
  auto& s = *state_;
  if (!s.lean_model) {
    // The lean copy shares the drawn copy's offscreen size; one sample a pixel.
    s.lean_model =
        lean_copy(s.model, s.model->vis.global.offwidth, s.model->vis.global.offheight, s.lean);
    mjr_defaultContext(&s.lean_context);
    mjr_makeContext(s.lean_model, &s.lean_context, mjFONTSCALE_100);
  }
  return draw(qpos, qvel, layers, true, std::clamp(scale, 0.1, 1.0));
}

LeanDrawing SceneRenderer::lean_drawing() const {
  return state_->lean;
}

Image SceneRenderer::draw(std::span<const double> qpos, std::span<const double> qvel,
                          const SceneLayers& layers, bool lean, double scale) {
  auto& s = *state_;
  if (qpos.size() != static_cast<std::size_t>(s.model->nq) ||
      qvel.size() != static_cast<std::size_t>(s.model->nv))
    throw RenderError("the state does not belong to the rendered model (qpos " +
                      std::to_string(qpos.size()) + ", nq " + std::to_string(s.model->nq) + ")");
  // Copy the state so the caller's data stays untouched.
  std::copy(qpos.begin(), qpos.end(), s.data->qpos);
  std::copy(qvel.begin(), qvel.end(), s.data->qvel);
  mj_forward(s.model, s.data);
  // Follow the body along x; keep the height fixed so that hops and falls are visible.
  if (s.track_body >= 0 && s.track_body < s.model->nbody) {
    s.camera.lookat[0] = s.data->xpos[3 * s.track_body];
    s.camera.lookat[1] = s.data->xpos[3 * s.track_body + 1];
  }
  s.camera.lookat[2] = s.lookat_z;
  mjv_updateScene(s.model, s.data, &s.option, nullptr, &s.camera, mjCAT_ALL, &s.scene);
  if (!layers.empty()) {
    if (!s.painter) s.painter = std::make_unique<SceneLayerPainter>(s.model);
    s.painter->paint(&s.scene, &s.option, layers);
  }
  mjrContext& context = lean ? s.lean_context : s.context;
  const int width = std::max(1, static_cast<int>(s.width * scale)),
            height = std::max(1, static_cast<int>(s.height * scale));
  mjr_setBuffer(mjFB_OFFSCREEN, &context);
  const mjrRect viewport{0, 0, width, height};
  mjr_render(viewport, &s.scene, &context);
  Image image;
  image.width = width;
  image.height = height;
  image.rgb.resize(static_cast<std::size_t>(3) * width * height);
  std::vector<std::uint8_t> flipped(image.rgb.size());
  mjr_readPixels(flipped.data(), nullptr, viewport, &context);
  // OpenGL rows run bottom to top.
  const std::size_t row = static_cast<std::size_t>(3) * width;
  for (int y = 0; y < height; ++y)
    std::memcpy(&image.rgb[y * row], &flipped[(height - 1 - y) * row], row);
  return image;
}

std::string current_renderer() {
  const auto* name = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
  return name ? name : "";
}

bool software_renderer() {
  const std::string name = current_renderer();
  return name.find("llvmpipe") != std::string::npos || name.find("softpipe") != std::string::npos;
}

void write_png(const std::filesystem::path& path, const Image& image) {
  if (image.width <= 0 || image.height <= 0) throw RenderError("cannot write an empty image");
  if (!stbi_write_png(path.c_str(), image.width, image.height, 3, image.rgb.data(),
                      image.width * 3))
    throw RenderError(path.string() + ": cannot be written");
}

Image contact_sheet(const std::vector<Image>& frames, int columns) {
  Image sheet;
  if (frames.empty()) return sheet;
  const int w = frames.front().width, h = frames.front().height;
  columns = std::max(1, std::min<int>(columns, static_cast<int>(frames.size())));
  const int rows = (static_cast<int>(frames.size()) + columns - 1) / columns;
  sheet.width = w * columns;
  sheet.height = h * rows;
  sheet.rgb.assign(static_cast<std::size_t>(3) * sheet.width * sheet.height, 255);
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const int ox = static_cast<int>(i) % columns * w, oy = static_cast<int>(i) / columns * h;
    for (int y = 0; y < h; ++y)
      std::memcpy(&sheet.rgb[(static_cast<std::size_t>(oy + y) * sheet.width + ox) * 3],
                  &frames[i].rgb[static_cast<std::size_t>(y) * w * 3],
                  static_cast<std::size_t>(w) * 3);
  }
  return sheet;
}

}  // namespace dstudio::render

// decision-viewer's window: GLFW, MuJoCo's renderer and Dear ImGui. See live_viewer.h.

// Index of this file:
//   [SECTION] Timing, colours and GLFW
//   [SECTION] Window placement and bench reports
//   [SECTION] The viewer's state
//   [SECTION] Opening the player and the window
//   [SECTION] Following the player
//   [SECTION] Layout and the camera
//   [SECTION] Drawing the scene
//   [SECTION] Readouts and the overlay
//   [SECTION] The side panel's controls
//   [SECTION] Interventions and forks
//   [SECTION] Attention, traces and the panels
//   [SECTION] Recording
//   [SECTION] Running the window
//   [SECTION] Driving and reading the viewer

#include "live_viewer.h"

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui/backends/imgui_impl_glfw.h>
#include <imgui/backends/imgui_impl_opengl3.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <numeric>
#include <optional>
#include <sstream>
#include <thread>

#include "dstudio/analysis/locality.h"
#include "dstudio/behaviour/d4rl_policy.h"
#include "dstudio/common/error.h"
#include "dstudio/common/palette.h"
#include "dstudio/common/system_info.h"
#include "dstudio/common/text.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/env/episode_end.h"
#include "dstudio/imgui/plots.h"
#include "dstudio/models/checkpoint_info.h"
#include "dstudio/models/dataset_fit.h"
#include "dstudio/models/interventions.h"
#include "dstudio/models/playback.h"
#include "dstudio/models/targets.h"
#include "dstudio/render/lean_drawing.h"
#include "dstudio/render/scene_layers.h"
#include "dstudio/render/video_file.h"

namespace dstudio::viewer {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------------------------
// [SECTION] Timing, colours and GLFW

double ms_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

double ms_since(Clock::time_point t) {
  return ms_between(t, Clock::now());
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const double x = q * static_cast<double>(v.size() - 1);
  const auto i = static_cast<std::size_t>(x);
  const double f = x - static_cast<double>(i);
  return i + 1 < v.size() ? v[i] + f * (v[i + 1] - v[i]) : v[i];
}

std::string speed_text(double speed) {
  return models::speed_label(speed);
}

ImU32 im_colour(palette::Rgb c, int alpha = 255) {
  return IM_COL32(c.r, c.g, c.b, alpha);
}

ImVec4 im_vec(palette::Rgb c) {
  return ImVec4(c.r / 255.0f, c.g / 255.0f, c.b / 255.0f, 1.0f);
}

// The frame of `frames` (consecutive from step 0) at `step`, or its last when it ended before.
models::FramePtr at_step(const std::vector<models::FramePtr>& frames, int step) {
  if (frames.empty()) return nullptr;
  return frames[static_cast<std::size_t>(std::clamp(step, 0, static_cast<int>(frames.size()) - 1))];
}

// One GLFW initialisation for the process; GLFW is not re-entrant across init/terminate.
void init_glfw() {
  static std::once_flag once;
  static bool ok = false;
  std::call_once(once, [] { ok = glfwInit() == GLFW_TRUE; });
  if (!ok)
    throw render::RenderError(
        "cannot initialise GLFW: no display (set DISPLAY, or run under xvfb-run on a machine "
        "without a screen)");
}

const char* kFont = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";

// A titled rule between groups of controls.
void section(const char* title) {
  ImGui::Spacing();
  ImGui::TextDisabled("%s", title);
  ImGui::Separator();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] Window placement and bench reports

ScreenRect fit_to_work_area(int width, int height, const ScreenRect& work_area,
                            const std::array<int, 4>& frame) {
  const int room_w = work_area[2] - frame[0] - frame[2],
            room_h = work_area[3] - frame[1] - frame[3];
  return {work_area[0] + frame[0], work_area[1] + frame[1], std::max(320, std::min(width, room_w)),
          std::max(240, std::min(height, room_h))};
}

std::string BenchReport::text() const {
  std::ostringstream out;
  out << "decision-viewer bench: " << fixed_number(seconds, 1) << " s, " << frames << " frames, "
      << fixed_number(fps, 1) << " frames/s\n"
      << "  frame time (ms): median " << fixed_number(frame_ms_median, 2) << ", p90 "
      << fixed_number(frame_ms_p90, 2) << ", p99 " << fixed_number(frame_ms_p99, 2) << ", max "
      << fixed_number(frame_ms_max, 2) << "\n"
      << "  GUI-thread stall (ms; the loop answers input once a frame): p99 "
      << fixed_number(frame_ms_p99, 2) << ", max " << fixed_number(frame_ms_max, 2) << "\n"
      << "  per frame (median ms): scene " << fixed_number(render_ms_median, 2) << ", panels "
      << fixed_number(ui_ms_median, 2) << ", swap " << fixed_number(swap_ms_median, 2) << "\n"
      << "  scene drawn at " << fixed_number(scale_median, 2) << " of the window's size (median; "
      << fixed_number(scale_min, 2) << " at least)\n"
      << "  policy: " << fixed_number(steps_per_second, 1) << " steps/s shown, "
      << fixed_number(steps_per_second_wanted, 1) << " wanted (real time at the speed set), "
      << episodes << " episode(s)";
  if (forks > 0.0)
    out << "; " << fixed_number(forks, 1)
        << " forks on average beside the main run, each stepped with the same clock";
  out << "\n"
      << "  attention map shown on " << fixed_number(100.0 * map_share, 1) << "% of drawn frames ("
      << frames_with_map << " of " << frames << ")\n"
      << "  configuration: " << configuration << "\n"
      << "  OpenGL: " << renderer << "; BLAS: " << blas << "\n";
  return out.str();
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The viewer's state

// A map's cells as one texture, uploaded only when they change: software OpenGL draws one image
// far faster than a rectangle a cell (1,830 of them for a 60-token window).
struct MapTexture {
  GLuint id = 0;
  int side = 0;
  std::vector<ImU32> pixels;

  ImTextureID upload(const analysis::TokenMatrix& map, const std::vector<char>& valid) {
    if (map.tokens <= 0) return nullptr;
    auto next = imgui::map_pixels(map, valid);
    if (id == 0) {
      glGenTextures(1, &id);
      glBindTexture(GL_TEXTURE_2D, id);
      glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
      glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
      glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
      glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    }
    if (next != pixels || side != map.tokens) {
      pixels = std::move(next);
      side = map.tokens;
      glBindTexture(GL_TEXTURE_2D, id);
      glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
      glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA, side, side, 0, GL_RGBA, GL_UNSIGNED_BYTE,
                   pixels.data());
    }
    return reinterpret_cast<ImTextureID>(static_cast<std::intptr_t>(id));
  }
  void release() {
    if (id != 0) glDeleteTextures(1, &id);
    id = 0;
  }
};

struct LiveViewer::State {
  ViewerOptions options;
  GLFWwindow* window = nullptr;
  ImGuiContext* imgui = nullptr;
  ImFont* large_font = nullptr;
  ImGuiStyle base_style;

  std::unique_ptr<models::LivePlayer> live;
  std::unique_ptr<render::SceneLayerPainter> painter;  // ghosts and limb colours
  MapTexture map_cells, fork_map_cells;                // the attention maps' cells
  std::string title;
  std::vector<models::TargetChoice> targets;

  // MuJoCo's drawing state: a private copy of the model (its floor drawn coarser) and data.
  mjModel* model = nullptr;
  mjData* data = nullptr;
  mjvScene scene{};
  mjvCamera camera{};
  mjvOption vopt{};
  mjrContext context{};
  // While playing: a lean copy of the model that only draws (render/lean_drawing.h), its own
  // context, and the scale of the scene it is drawn at, into its offscreen buffer and blitted up.
  mjModel* lean_model = nullptr;
  mjrContext lean_context{};
  render::LeanDrawing lean_drawing;
  render::RenderScale render_scale;
  Clock::time_point last_frame_start{};
  bool was_playing = false;
  int track_body = 1;
  bool tracking = true;
  double track_offset[3] = {0.0, 0.0, 0.0};
  double lookat_z = 1.4;   // render::viewer_camera()'s
  bool show_path = false;  // the bodies' paths over the ground (on for goal-reaching tasks)
  int drag_button = -1;    // a mouse button pressed over the scene, until released

  // What is on screen.
  models::PlaybackState shown;
  models::FramePtr displayed;  // the frame drawn (the cursor's, or a recording's)
  std::uint64_t generation = ~0ull;
  std::vector<models::FramePtr> frames;
  std::vector<double> rtg, ret, entropy;  // the traces, by step
  analysis::MapSelection selection;
  analysis::TokenMatrix map;
  analysis::LagProfile lag, lag_episode;
  const models::PlayerFrame* map_of = nullptr;  // the frame `map` and `lag` belong to
  models::FramePtr map_source;  // the frame whose window the map shows (see acted_window())
  std::vector<analysis::LagProfile>
      lag_by_step;  // the selection's profile of each step with a window
  bool lags_dirty = true;
  int pending_seek = -1;  // a step the policy has not reached yet
  int display_step = 0;   // the clock's step on screen (the main run may have ended before it)
  // Counterfactual forks: those asked for on the command line wait for the main run's step.
  std::vector<models::ForkSpec> pending_forks;
  std::vector<models::BranchInfo> branches;
  std::uint64_t branch_generation = ~0ull;  // of `branches` and `branch_frames`
  std::vector<std::vector<models::FramePtr>> branch_frames;
  // The curves under the scene with forks, and what they were computed from.
  std::vector<std::vector<double>> divergence_returns, divergence_other;
  std::size_t divergence_key = 0;
  bool fork_mode = false;  // changes of the conditioning fork the episode instead
  float fork_target = 0.0f;
  char fork_checkpoint[1024] = {};
  int plot_joint = -1;  // under the scene with forks: -1 the action difference, else a joint
  std::vector<env::JointCoordinate> joints;  // what the plot under the scene can show
  // Interventions: the steering controls, and the limb colours.
  char steer_file[1024] = {};
  int click_patches = 0;  // a click on the grid: 0 ablates, 1 patches from patch_target
  float patch_target = 1200.0f;
  int steer_layer = 1;
  float steer_alpha = 1.0f;
  bool effects = false;
  double effect_largest = 0.0;
  std::size_t effect_counted = 0;  // main frames looked at for effect_largest
  double speed = 1.0;
  std::optional<models::PlaybackRate> rate;  // the real rate while playing
  Clock::time_point rate_epoch = Clock::now();
  bool presentation = false;
  std::string message;
  Clock::time_point notice_until{};  // `message` also stands over the scene until then
  float target_field = 0.0f;
  int seed_field = 0;

  // Recording: frame i shows the step reached after i / fps seconds of the episode at `speed`.
  std::unique_ptr<render::VideoFile> video;
  std::unique_ptr<models::ClipLog> clip_log;  // what each recorded frame shows, beside the clip
  fs::path last_recording;
  int record_first_step = 0;
  double record_speed = 1.0;
  int record_fps = 30;
  int recorded = 0;
  bool record_frame_ready = false;
  fs::path screenshot_to;     // a Screenshot button press, saved once the frame is drawn
  bool capture_next = false;  // capture() asked for the next frame's pixels
  render::Image captured;

  // Costs of the last frame (ms).
  double last_render_ms = 0.0, last_ui_ms = 0.0, last_swap_ms = 0.0;

  // Layout in window pixels: the scene at the top left, the panels right of it and below it.
  int scene_w = 0, scene_h = 0, side_w = 0, bottom_h = 0;

  void open_player();
  void make_window();
  void apply_style();
  void refresh_frames();
  void refresh_map();
  void layout(int width, int height);
  void camera_input();
  /// The camera as render::CameraView sees it, and set from one (tracking included).
  [[nodiscard]] render::CameraView camera_view() const;
  void set_camera_view(const render::CameraView& view);
  /// Tracking on or off as the task wants it (render::tracking_camera). A task whose camera
  /// tracks keeps the offset the mouse gave the point looked at, as it always did.
  void apply_tracking(bool on) {
    if (live->task().camera.track)
      tracking = on;
    else
      set_camera_view(render::tracking_camera(live->task().camera, camera_view(), on));
  }
  /// What the task marks at the frame on screen, and the paths over the ground so far.
  void add_task_layers(render::SceneLayers& layers) const;
  /// The task's elements at the step on screen, each done from the step it was first done.
  [[nodiscard]] std::vector<env::SubTask> task_elements() const;
  void draw_scene(bool lean);
  void make_lean_context();
  void draw_panels();
  void draw_controls();
  void draw_attention();
  void draw_overlay();
  void draw_traces();
  void draw_interventions();
  template <typename Target, typename Zeroing>
  void draw_conditioning(const Target& apply_target, const Zeroing& apply_zeroing);
  void draw_view_and_recording();
  bool tabs_opened = false;  // the first tab shown has been chosen
  void draw_forks();
  /// Applies `specs` from the step on screen, or forks with them in fork mode; says why not.
  void change_interventions(const std::vector<std::string>& specs);
  void request_fork(const models::BranchChange& change);
  [[nodiscard]] std::vector<double> effect_values() const;
  // The body's own scale (render::limb_colour_scale): a colour means the same change in every run.
  [[nodiscard]] double effect_scale() const { return render::limb_colour_scale(model); }
  void measure_rate();
  [[nodiscard]] std::string speed_status() const;
  [[nodiscard]] std::vector<std::string> fork_legend() const;
  void record_step();
  bool start_recording(const fs::path& base, int fps);
  /// Ends the recording; `why` (the episode ended, an error) is said with where it went.
  void finish_recording(const std::string& why = {});
  void notice(std::string text) {
    message = std::move(text);
    notice_until = Clock::now() + std::chrono::seconds(8);
  }
  fs::path output_folder() const {
    return options.record_folder.empty() ? fs::current_path() : options.record_folder;
  }
  render::Image read_pixels() const;
  std::string readout() const;
};

// ---------------------------------------------------------------------------------------------
// [SECTION] Opening the player and the window

void LiveViewer::State::open_player() {
  std::shared_ptr<models::EpisodePlayer> player;
  std::optional<data::Dataset> dataset_for_targets;
  if (!options.dataset.empty()) {
    const auto& dataset =
        dataset_for_targets.emplace(data::load_dataset(options.dataset, {.isolate = true}));
    for (const auto& w : dataset.warnings)
      std::fprintf(stderr, "decision-viewer: warning: %s: %s\n", dataset.path.c_str(), w.c_str());
    if (options.episode >= 0) {
      player = models::EpisodePlayer::replay(dataset, options.episode);
      title = data::dataset_name(dataset) + ", episode " + std::to_string(options.episode);
    }
  }
  if (!player && !options.behaviour.empty()) {
    // The task: asked for, the dataset's, or the policy file's own.
    std::string task = options.env_id;
    if (task.empty() && dataset_for_targets) task = dataset_for_targets->env_id;
    if (task.empty() && options.behaviour != "dapg")
      task = data::load_dataset(options.behaviour, {.isolate = true}).env_id;
    if (task.empty())
      throw UsageError("--behaviour " + options.behaviour + ": say which task it acts in (--env)");
    player = models::EpisodePlayer::behaviour(
        behaviour::load_behaviour_policy(options.behaviour, task), task, options.behaviour);
    title = player->task().name + ", behaviour policy " + options.behaviour;
  }
  if (!player) {
    if (options.checkpoint.empty())
      throw UsageError("nothing to play: give a checkpoint, or a dataset with --episode");
    player = std::make_shared<models::EpisodePlayer>(options.checkpoint, options.env_id);
    title = models::checkpoint_label(options.checkpoint);
    // The dataset offers the targets: another body's returns would be no target for this policy.
    if (dataset_for_targets)
      if (const auto warning = models::check_dataset_fits(player->info(), *dataset_for_targets);
          !warning.empty()) {
        std::fprintf(stderr, "decision-viewer: warning: %s\n", warning.c_str());
        notice(warning);
      }
  }
  // The data's returns as the model counts them (with its reward shift, if it was trained with
  // one).
  const double shift =
      player->isReplay() || player->isBehaviour() ? 0.0 : player->info().training.reward_shift;
  std::vector<double> returns;
  if (dataset_for_targets)
    for (const auto& e : dataset_for_targets->episodes)
      if (e.complete()) returns.push_back(models::model_return(e.ret, e.length, shift));
  targets = models::target_choices(player->task(), returns, shift);
  if (options.target)
    targets.insert(targets.begin(),
                   {*options.target, "asked for " + fixed_number(*options.target, 0)});
  if (!player->isReplay()) {
    player->reset(options.seed, targets.front().value, options.zeroing);
    if (!options.interventions.empty())
      player->branch(0, targets.front().value, options.zeroing, options.interventions);
  } else if (!options.interventions.empty() || !options.forks.empty()) {
    throw UsageError("a dataset episode replays without a policy: nothing to intervene on or fork");
  }
  live = std::make_unique<models::LivePlayer>(player);
  speed = options.speed;
  live->set_speed(speed);
  rate.emplace(live->dt());
  target_field = static_cast<float>(live->target());
  fork_target = target_field;
  seed_field = static_cast<int>(options.seed);
  effects = options.effects;
  live->set_plain_actions(effects);  // the second pass a step only while the effect is drawn
  pending_forks = options.forks;
  if (static_cast<int>(pending_forks.size()) > models::kMaxBranches)
    throw UsageError("at most " + std::to_string(models::kMaxBranches) +
                     " forks play beside the main run; " + std::to_string(pending_forks.size()) +
                     " were asked for");
  // Checked now, not when the main run gets there: a fork that cannot be made stops nothing
  // halfway through a recording.
  for (const auto& f : pending_forks) {
    auto specs = f.change.clear_interventions || !f.change.checkpoint.empty()
                     ? std::vector<std::string>{}
                     : options.interventions;
    specs.insert(specs.end(), f.change.interventions.begin(), f.change.interventions.end());
    if (!f.change.behaviour.empty())
      (void)behaviour::load_behaviour_policy(f.change.behaviour, live->task().name);
    else if (f.change.checkpoint.empty() && !live->behaviour())
      models::EpisodePlayer::check_interventions(specs, live->config());
    else if (!fs::is_regular_file(f.change.checkpoint))
      throw UsageError("--fork " + std::to_string(f.step) + ":" + f.change.label +
                       ": no such checkpoint file");
  }
}

void LiveViewer::State::make_window() {
  init_glfw();
  // No version or profile hints: Mesa then gives a compatibility context, which MuJoCo's
  // renderer needs (a core profile lacks what mjr_makeContext asks for). One sample a pixel:
  // multisampling costs most under software OpenGL.
  glfwDefaultWindowHints();
  glfwWindowHint(GLFW_SAMPLES, 0);
  glfwWindowHint(GLFW_VISIBLE, options.visible ? GLFW_TRUE : GLFW_FALSE);
  // Fitted to the screen before it is shown: made hidden, its frame asked of the window manager.
  glfwWindowHint(GLFW_VISIBLE, options.visible && !options.fit_screen ? GLFW_TRUE : GLFW_FALSE);
  window = glfwCreateWindow(options.width, options.height, ("decision-viewer: " + title).c_str(),
                            nullptr, nullptr);
  if (!window) throw render::RenderError("cannot open a window with OpenGL (is there a display?)");
  if (options.fit_screen) {
    if (GLFWmonitor* monitor = glfwGetPrimaryMonitor()) {
      ScreenRect area{};
      glfwGetMonitorWorkarea(monitor, &area[0], &area[1], &area[2], &area[3]);
      std::array<int, 4> frame{};
      glfwGetWindowFrameSize(window, &frame[0], &frame[1], &frame[2], &frame[3]);
      if (area[2] > 0 && area[3] > 0) {
        const auto fitted = fit_to_work_area(options.width, options.height, area, frame);
        glfwSetWindowSize(window, fitted[2], fitted[3]);
        glfwSetWindowPos(window, fitted[0], fitted[1]);
      }
    }
    if (options.visible) glfwShowWindow(window);
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(
      0);  // paced by the loop, not the display: the frame rate is what the machine manages

  // MuJoCo: a copy of the task's model whose floor is drawn as one quad a grid cell of 1 m
  // instead of 0.125 m (the third plane size is only the rendering grid; no physics changes).
  model = mj_copyModel(nullptr, live->physics_model().get());
  for (int g = 0; g < model->ngeom; ++g)
    if (model->geom_type[g] == mjGEOM_PLANE)
      model->geom_size[3 * g + 2] = std::max<mjtNum>(model->geom_size[3 * g + 2], 1.0);
  data = mj_makeData(model);
  mjv_defaultScene(&scene);
  mjv_defaultCamera(&camera);
  mjv_defaultOption(&vopt);
  mjr_defaultContext(&context);
  mjv_makeScene(model, &scene, 2000);
  painter = std::make_unique<render::SceneLayerPainter>(model);
  joints = env::joint_coordinates(model);
  mjr_makeContext(model, &context, mjFONTSCALE_100);
  make_lean_context();
  camera.type = mjCAMERA_FREE;
  // The task's camera: the locomotion tasks follow the torso, a maze is seen from above.
  set_camera_view(render::task_camera(live->task().camera));
  show_path = live->task().goal_reaching;

  IMGUI_CHECKVERSION();
  imgui = ImGui::CreateContext();
  ImGui::SetCurrentContext(imgui);
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // the layout is computed, nothing to remember
  // Screenshots and benches of a headless server would otherwise show the tooltip under a
  // pointer parked mid-screen.
  if (!options.mouse) io.ConfigFlags |= ImGuiConfigFlags_NoMouse;
  ImFont* font = nullptr;  // the first font added is ImGui's default
  // Latin-1 and the dashes and bullets of General Punctuation (the missing-number dash).
  static const ImWchar kGlyphs[] = {0x0020, 0x00FF, 0x2010, 0x2027, 0};
  if (fs::exists(kFont)) {
    font = io.Fonts->AddFontFromFileTTF(kFont, 15.0f, nullptr, kGlyphs);
    large_font = io.Fonts->AddFontFromFileTTF(kFont, 26.0f, nullptr, kGlyphs);
  }
  if (!font) font = large_font = io.Fonts->AddFontDefault();
  ImGui::StyleColorsDark();
  ImGui::GetStyle().WindowRounding = 0.0f;
  base_style = ImGui::GetStyle();
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 130");
}

void LiveViewer::State::apply_style() {
  ImGuiStyle& style = ImGui::GetStyle();
  style = base_style;
  if (presentation) style.ScaleAllSizes(26.0f / 15.0f);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Following the player

void LiveViewer::State::refresh_frames() {
  shown = live->state();
  if (shown.generation != generation) {
    generation = shown.generation;
    frames = live->frames(0);
    rtg.clear(), ret.clear(), entropy.clear();
    lag_by_step.clear();
    lags_dirty = true;
    effect_largest = 0.0, effect_counted = 0;
  } else {
    // New frames, and the newest one kept, which may have acted since it was read.
    const std::size_t from = frames.empty() ? 0 : frames.size() - 1;
    if (frames.empty() || !frames.back()->acted || static_cast<int>(frames.size()) < shown.frames) {
      auto fresh = live->frames(static_cast<int>(from));
      frames.resize(from);
      frames.insert(frames.end(), fresh.begin(), fresh.end());
      for (auto* trace : {&rtg, &ret, &entropy}) trace->resize(std::min(trace->size(), from));
      if (lag_by_step.size() > from) lag_by_step.resize(from);
    }
  }
  for (std::size_t i = rtg.size(); i < frames.size(); ++i) {
    const auto& f = *frames[i];
    rtg.push_back(f.return_to_go);
    ret.push_back(f.return_so_far);
    entropy.push_back(f.acted ? f.entropy : std::nan(""));
  }
  // The largest action change the interventions made so far: the limb colours' full scale.
  for (; effect_counted < frames.size() && frames[effect_counted]->acted; ++effect_counted) {
    const auto& f = *frames[effect_counted];
    for (std::size_t j = 0; j < f.action_without.size() && j < f.action.size(); ++j)
      effect_largest = std::max(effect_largest,
                                std::fabs(static_cast<double>(f.action[j] - f.action_without[j])));
  }
  // Forks asked for on the command line, once the main run has the step.
  for (auto it = pending_forks.begin(); it != pending_forks.end();) {
    if (it->step >= static_cast<int>(frames.size()) && !shown.finished) {
      ++it;
      continue;
    }
    try {
      live->fork(it->step, it->change);
    } catch (const Error& e) {
      notice("fork at step " + std::to_string(it->step) + " (" + it->change.label +
             "): " + e.what());
    }
    it = pending_forks.erase(it);
  }
  // The forks' frames: all again when forks came or went, else only what is new (the newest kept
  // one again, which may have acted since it was read).
  if (shown.branch_generation != branch_generation ||
      branches.size() != shown.branch_frames.size()) {
    branch_generation = shown.branch_generation;
    branches = live->branches();
    branch_frames.assign(branches.size(), {});
  }
  for (std::size_t b = 0; b < branch_frames.size(); ++b) {
    auto& f = branch_frames[b];
    const auto& now = shown.branch_frames.size() > b ? shown.branch_frames[b] : nullptr;
    if (!f.empty() && f.back() == now) continue;  // the newest read is the one at the cursor
    const std::size_t from = f.empty() ? 0 : f.size() - 1;
    auto fresh = live->branch_frames(static_cast<int>(b), static_cast<int>(from));
    f.resize(from);
    f.insert(f.end(), fresh.begin(), fresh.end());
    branches[b].frames = static_cast<int>(f.size());
    branches[b].finished = !f.empty() && f.back()->terminal;
  }
  if (!shown.fork_error.empty() && shown.fork_error != message) notice(shown.fork_error);
  // A seek beyond the steps taken: the policy runs at full speed until it gets there.
  if (pending_seek >= 0) {
    if (shown.frames > pending_seek + 1 ||
        shown.finished) {  // the step has acted: its map is there
      live->seek(pending_seek);
      live->set_speed(speed);
      pending_seek = -1;
      shown = live->state();
    } else if (!shown.playing) {
      live->play();
    }
  }
  displayed = shown.frame;
  display_step = shown.cursor;
  if (video) {
    // The step this recorded frame shows: the episode's time at the recording's speed (the clock
    // both viewers record by).
    const int want =
        models::recorded_step(record_first_step, recorded, record_fps, record_speed, live->dt());
    record_frame_ready = false;
    // Every run must have the step (or have ended before it): the ghosts are in the clip too.
    bool ready = want < shown.frames;
    if (ready && !frames.empty() && !frames.back()->terminal &&
        want >= static_cast<int>(frames.size()))
      ready = false;
    for (std::size_t b = 0; ready && b < branch_frames.size(); ++b) {
      const auto& f = branch_frames[b];
      if (!f.empty() && !f.back()->terminal && want >= static_cast<int>(f.size())) ready = false;
    }
    if (ready) {
      displayed = at_step(frames, want);
      display_step = want;
      record_frame_ready = true;
    } else if (shown.finished || !shown.error.empty()) {
      finish_recording(shown.finished
                           ? "the episode ended at step " + std::to_string(shown.frames - 1)
                           : shown.error);
    } else if (!frames.empty()) {
      displayed = at_step(frames, std::min(want, static_cast<int>(frames.size()) - 1));
      display_step = displayed->step;
    }
  }
}

void LiveViewer::State::refresh_map() {
  if (!displayed || displayed.get() == map_of) return;
  map_of = displayed.get();
  map = {};
  lag = {};
  map_source = models::acted_window(frames, displayed);
  if (map_source) {
    try {
      map = analysis::select_window_map(*map_source->inspection, selection);
      lag = analysis::window_lag_profile(*map_source->inspection, selection);
    } catch (const Error& e) {
      message = e.what();
    }
  }
  // The episode's mean up to the step on screen, for the same selection.
  if (lags_dirty) lag_by_step.clear(), lags_dirty = false;
  for (std::size_t i = lag_by_step.size(); i < frames.size(); ++i) {
    if (!frames[i]->acted) break;
    analysis::LagProfile p;
    if (frames[i]->inspection) {
      try {
        p = analysis::window_lag_profile(*frames[i]->inspection, selection);
      } catch (const Error&) {
      }
    }
    lag_by_step.push_back(std::move(p));
  }
  lag_episode = {};
  int count = 0;
  const auto last = std::min<std::size_t>(
      lag_by_step.size(),
      static_cast<std::size_t>(map_source ? map_source->step : displayed->step) + 1);
  for (std::size_t i = 0; i < last; ++i) {
    const auto& p = lag_by_step[i];
    if (p.weight.empty()) continue;
    if (lag_episode.weight.size() < p.weight.size())
      lag_episode.weight.resize(p.weight.size(), 0.0);
    for (std::size_t k = 0; k < p.weight.size(); ++k) lag_episode.weight[k] += p.weight[k];
    ++count;
  }
  for (auto& w : lag_episode.weight) w /= std::max(1, count);
}

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

// ---------------------------------------------------------------------------------------------
// [SECTION] Readouts and the overlay

std::vector<double> LiveViewer::State::effect_values() const {
  // The action that brought the body here (a frame that has not acted yet shows its parent's).
  models::FramePtr f = displayed;
  if (f && !f->acted && f->step > 0) f = at_step(frames, f->step - 1);
  return f ? models::action_change(*f, model->nu)
           : std::vector<double>(static_cast<std::size_t>(std::max(0, model->nu)), 0.0);
}

std::string LiveViewer::State::readout() const {
  if (!displayed) return shown.error.empty() ? "starting" : shown.error;
  const auto& f = *displayed;
  std::string text = "step " + std::to_string(f.step);
  // A behaviour policy is conditioned on nothing; a replay's return-to-go is the recorded
  // episode's rest, and it had no target.
  if (!live->replay() && !live->behaviour()) text += "  ·  target " + fixed_number(f.target, 0);
  if (!live->behaviour()) text += "  ·  return-to-go " + fixed_number(f.return_to_go, 0);
  text += "  ·  return " + fixed_number(f.return_so_far, 1);
  if (f.acted) text += "  ·  reward " + fixed_number(f.reward, 2);
  if (f.acted && std::isfinite(f.entropy))
    text += "  ·  entropy " + fixed_number(f.entropy, 2) + " nats";
  if (f.zeroing != models::ModalityZeroing::None)
    text += std::string("  ·  zeroing ") + models::zeroing_label(f.zeroing);
  if (f.terminal) text += "  ·  " + env::episode_end_reason(live->task(), f.terminated);
  return text;
}

void LiveViewer::State::measure_rate() {
  // While playing at the speed asked for: a recording and a seek play at full speed on purpose.
  if (!shown.playing || video || pending_seek >= 0) return rate->reset();
  rate->add(std::chrono::duration<double>(Clock::now() - rate_epoch).count(), shown.cursor);
}

std::string LiveViewer::State::speed_status() const {
  return models::speed_status(speed, shown.playing && !video ? rate->rate() : std::nullopt);
}

std::vector<std::string> LiveViewer::State::fork_legend() const {
  std::vector<std::string> lines;
  if (branches.empty()) return lines;
  lines.emplace_back(palette::kGhostMeaning);
  for (std::size_t b = 0; b < branches.size(); ++b) {
    std::string line =
        models::fork_legend(static_cast<int>(b), branches[b].fork_step, branches[b].label);
    if (const auto f = b < branch_frames.size() ? at_step(branch_frames[b], display_step) : nullptr)
      line += "  ·  return " + fixed_number(f->return_so_far, 1) +
              (f->terminal && f->step < display_step ? " (ended)" : "");
    lines.push_back(std::move(line));
  }
  return lines;
}

std::vector<env::SubTask> LiveViewer::State::task_elements() const {
  std::vector<env::SubTask> so_far;
  const auto& task = live->task();
  if (!task.subtasks || frames.empty()) return so_far;
  const int last = std::min(display_step, static_cast<int>(frames.size()) - 1);
  for (int i = 0; i <= last; ++i) {
    const auto& f = *frames[static_cast<std::size_t>(i)];
    env::accumulate_subtasks(so_far, task.subtasks(f.observation, f.physics.task_state));
  }
  return so_far;
}

void LiveViewer::State::draw_overlay() {
  ImGui::SetNextWindowPos(ImVec2(8, 8));
  // Over the sky: the bodies stand in the lower part of the scene (render::viewer_camera).
  ImGui::SetNextWindowSizeConstraints(ImVec2(0, 0), ImVec2(static_cast<float>(scene_w) - 16.0f,
                                                           static_cast<float>(scene_h) * 0.42f));
  ImGui::SetNextWindowBgAlpha(0.7f);
  ImGui::Begin("##overlay", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize |
                   ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoFocusOnAppearing |
                   ImGuiWindowFlags_NoNav | ImGuiWindowFlags_NoInputs);
  // The readout wraps inside the scene rather than running under the panels.
  ImGui::PushTextWrapPos(static_cast<float>(scene_w) - 32.0f);
  ImGui::TextUnformatted(title.c_str());
  ImGui::TextUnformatted(readout().c_str());
  std::string status = video
                           ? "REC " + fixed_number(static_cast<double>(recorded) / record_fps, 1) +
                                 " s (" + std::to_string(recorded) + " frames)"
                       : shown.playing ? "playing"
                                       : "paused";
  status += "  ·  " + speed_status();
  if (pending_seek >= 0) status += "  ·  going to step " + std::to_string(pending_seek);
  if (!shown.error.empty()) status += "  ·  " + shown.error;
  // Light grey, not ImGui's disabled grey, which vanished over the kitchen's bright cabinets.
  if (video)
    ImGui::TextColored(ImVec4(1.0f, 0.35f, 0.3f, 1.0f), "%s", status.c_str());
  else
    ImGui::TextColored(ImVec4(0.72f, 0.72f, 0.72f, 1.0f), "%s", status.c_str());
  if (!message.empty() && Clock::now() < notice_until)
    ImGui::TextColored(ImVec4(1.0f, 0.85f, 0.4f, 1.0f), "%s", message.c_str());
  // What was done, so that a screenshot or a clip says it.
  if (displayed && !displayed->interventions.empty()) {
    std::string list;
    for (const auto& i : displayed->interventions) list += (list.empty() ? "" : ", ") + i;
    ImGui::TextColored(ImVec4(0.95f, 0.75f, 0.45f, 1.0f), "interventions: %s", list.c_str());
  }
  // A task done in stages lists its elements, ticked off from the step each was first done.
  for (const auto& e : task_elements()) {
    if (e.done)
      ImGui::TextColored(ImVec4(0.45f, 0.85f, 0.45f, 1.0f), "[x] %s  done", e.name.c_str());
    else
      ImGui::TextColored(ImVec4(0.85f, 0.85f, 0.85f, 1.0f), "[ ] %s  %s from its goal",
                         e.name.c_str(), fixed_number(e.distance, 2).c_str());
  }
  // A success counted over the episode (Adroit's goal-achieved steps); a replay's task state
  // holds the episode's values, not the count.
  if (displayed && !live->replay() && live->task().progress) {
    const auto progress = live->task().progress(displayed->physics.task_state);
    if (!progress.text.empty())
      ImGui::TextColored(
          progress.success ? ImVec4(0.45f, 0.85f, 0.45f, 1.0f) : ImVec4(0.85f, 0.85f, 0.85f, 1.0f),
          "%s", progress.text.c_str());
  }
  // The forks' legend: what a ghost is, then each ghost by its colour's name and its change.
  const auto legend = fork_legend();
  for (std::size_t i = 0; i < legend.size(); ++i) {
    if (i == 0) {
      ImGui::TextUnformatted(legend[0].c_str());
      continue;
    }
    const auto& style = palette::kBranches[(i - 1) % palette::kBranches.size()];
    const float side = ImGui::GetTextLineHeight();
    const ImVec2 at = ImGui::GetCursorScreenPos();
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(at.x, at.y + 0.15f * side),
                                              ImVec2(at.x + 0.7f * side, at.y + 0.85f * side),
                                              im_colour(style.colour));
    ImGui::Dummy(ImVec2(0.7f * side, side));
    ImGui::SameLine();
    ImGui::TextColored(im_vec(style.colour), "%s", legend[i].c_str());
  }
  if (effects) {
    // The legend of the limb colours: the colour scale from no change to the full scale.
    ImGui::TextUnformatted("limb colour: action change on its joint");
    const float w = std::min(220.0f, static_cast<float>(scene_w) * 0.3f),
                h = ImGui::GetTextLineHeight() * 0.8f;
    const ImVec2 at = ImGui::GetCursorScreenPos();
    auto* draw = ImGui::GetWindowDrawList();
    constexpr int kSteps = 24;
    for (int i = 0; i < kSteps; ++i) {
      const auto c = palette::effect_colour((i + 0.5) / kSteps);
      draw->AddRectFilled(ImVec2(at.x + w * i / kSteps, at.y),
                          ImVec2(at.x + w * (i + 1) / kSteps + 0.5f, at.y + h), im_colour(c));
    }
    ImGui::Dummy(ImVec2(w, h));
    ImGui::Text("0");
    ImGui::SameLine(
        std::max(0.0f, w - ImGui::CalcTextSize("0.000").x + ImGui::GetStyle().WindowPadding.x));
    ImGui::Text("%s", general_number(effect_scale()).c_str());
    if (effect_largest == 0.0)
      ImGui::TextDisabled("(no intervention has changed an action since the colours came on)");
  }
  ImGui::PopTextWrapPos();
  ImGui::End();
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The side panel's controls

void LiveViewer::State::draw_controls() {
  const bool replay = live->replay() || live->behaviour();  // nothing to condition or intervene
  // Transport.
  if (ImGui::Button("|<")) live->seek(0);
  ImGui::SameLine();
  if (ImGui::Button("<")) live->step_back();
  ImGui::SameLine();
  if (ImGui::Button(shown.playing ? "Pause" : "Play "))
    shown.playing ? live->pause() : live->play();
  ImGui::SameLine();
  if (ImGui::Button(">")) live->step_forward();
  ImGui::SameLine();
  if (ImGui::Button(">|")) live->seek(std::max(0, shown.frames - 1));
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::CalcTextSize("0.125x").x + ImGui::GetFrameHeight() * 1.6f);
  if (ImGui::BeginCombo("speed", speed_text(speed).c_str())) {
    for (double s : models::playback_speeds())
      if (ImGui::Selectable(speed_text(s).c_str(), s == speed))
        speed = s, live->set_speed(s), rate->reset();
    ImGui::EndCombo();
  }
  // The machine behind the speed asked for: the rate it really plays at, beside it.
  if (const auto status = speed_status(); status != speed_text(speed)) {
    ImGui::SameLine();
    ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.35f, 1.0f), "%s",
                       status.substr(status.rfind(", ") + 2).c_str());
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "The episode plays at this rate of real time: the policy, the physics and the drawing "
          "of a step take longer than the step lasts on this machine. A recording still plays "
          "at the speed asked for.");
  }
  // While recording, the policy runs ahead of the frame recorded: the slider shows the frame on
  // screen, and holds still (a seek would cut the clip).
  int cursor = video && displayed ? displayed->step : shown.cursor;
  ImGui::SetNextItemWidth(-ImGui::CalcTextSize("step").x -
                          ImGui::GetStyle().ItemInnerSpacing.x * 2);
  ImGui::BeginDisabled(video != nullptr);
  if (ImGui::SliderInt("step", &cursor, 0, std::max(0, shown.frames - 1))) live->seek(cursor);
  ImGui::EndDisabled();

  // Conditioning: acts on the running policy from the step on screen (a replay has none), or in
  // fork mode forks the episode there with the change.
  const auto apply_target = [&](double target) {
    if (!fork_mode) return live->set_target(target);
    models::BranchChange change;
    change.target = target;
    change.label = "target=" + fixed_number(target, 0);
    request_fork(change);
  };
  const auto apply_zeroing = [&](models::ModalityZeroing z) {
    if (!fork_mode) return live->set_zeroing(z);
    models::BranchChange change;
    change.zeroing = z;
    change.label = std::string("zeroing=") + models::to_string(z);
    request_fork(change);
  };
  ImGui::BeginDisabled(replay);
  ImGui::SetNextItemWidth(ImGui::CalcTextSize("000000").x + ImGui::GetFrameHeight() * 2);
  ImGui::InputInt("seed", &seed_field);
  ImGui::SameLine();
  if (ImGui::Button("New episode"))
    live->restart(static_cast<std::uint64_t>(std::max(0, seed_field)));
  // What acts on the policy, a tab each, so that the attention map below keeps its room. The
  // command line's interventions or forks open their tab first.
  const auto first_open = [&](bool wanted) {
    return wanted && !tabs_opened ? ImGuiTabItemFlags_SetSelected : ImGuiTabItemFlags_None;
  };
  const bool show_forks = !options.forks.empty(),
             show_interventions = !show_forks && (!options.interventions.empty() || effects);
  ImGui::Spacing();
  if (!ImGui::BeginTabBar("##acting")) {
    ImGui::EndDisabled();
    return;
  }
  // A behaviour policy (an MLP on the observation) has no target, no tokens to zero and no
  // forward pass of mixers to intervene in; forks to a checkpoint still apply.
  const bool behaviour = live->behaviour();
  if (ImGui::BeginTabItem("Conditioning", nullptr,
                          first_open(!show_forks && !show_interventions))) {
    if (behaviour)
      ImGui::TextWrapped("A behaviour policy is conditioned on nothing: no target, no tokens.");
    ImGui::BeginDisabled(behaviour);
    draw_conditioning(apply_target, apply_zeroing);
    ImGui::EndDisabled();
    ImGui::EndTabItem();
  }
  if (!replay && !behaviour &&
      ImGui::BeginTabItem("Interventions", nullptr, first_open(show_interventions))) {
    draw_interventions();
    ImGui::EndTabItem();
  }
  if (!replay && ImGui::BeginTabItem("Forks", nullptr, first_open(show_forks))) {
    draw_forks();
    ImGui::EndTabItem();
  }
  tabs_opened = true;
  ImGui::EndTabBar();
  ImGui::EndDisabled();
  draw_view_and_recording();
}

template <typename Target, typename Zeroing>
void LiveViewer::State::draw_conditioning(const Target& apply_target,
                                          const Zeroing& apply_zeroing) {
  section("Target return");
  double top = 0.0;
  for (const auto& t : targets) top = std::max(top, t.value);
  const float hi = static_cast<float>(std::max(1000.0, 1.5 * top));
  ImGui::SetNextItemWidth(-1);
  ImGui::SliderFloat("##target", &target_field, 0.0f, hi, "target %.0f");
  if (ImGui::IsItemDeactivatedAfterEdit()) apply_target(target_field);
  ImGui::SetNextItemWidth(ImGui::CalcTextSize("000000").x + ImGui::GetFrameHeight() * 2);
  if (ImGui::InputFloat("##target-field", &target_field, 100.0f, 1000.0f, "%.0f",
                        ImGuiInputTextFlags_EnterReturnsTrue))
    apply_target(target_field);
  if (ImGui::IsItemDeactivatedAfterEdit()) apply_target(target_field);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(-1);
  if (ImGui::BeginCombo("##targets", "targets on offer")) {
    for (const auto& t : targets)
      if (ImGui::Selectable(t.label.c_str(), std::abs(t.value - live->target()) < 1e-9)) {
        target_field = static_cast<float>(t.value);
        apply_target(t.value);
      }
    ImGui::EndCombo();
  }
  section("Modality zeroing");
  const auto zeroing = live->zeroing();
  for (std::size_t i = 0; i < models::kModalityZeroings.size(); ++i) {
    const auto z = models::kModalityZeroings[i];
    if (i > 0) ImGui::SameLine();
    if (ImGui::RadioButton(models::zeroing_label(z), zeroing == z)) apply_zeroing(z);
  }
}

void LiveViewer::State::draw_view_and_recording() {
  section("View");
  // A fixed workspace (the hand, the kitchen) has nothing to follow: the box is greyed out.
  const bool followable = live->task().camera.track || live->task().camera.followable;
  ImGui::BeginDisabled(!followable);
  if (bool on = tracking; ImGui::Checkbox("track", &on)) apply_tracking(on);
  ImGui::EndDisabled();
  if (!followable && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("this task's camera stays on its workspace; drag to orbit, scroll to zoom");
  ImGui::SameLine();
  // The task's own camera: following the torso, or over the whole maze.
  if (ImGui::Button("reset camera")) set_camera_view(render::task_camera(live->task().camera));
  // The way the body went, where that is what a task is about (reaching a goal).
  if (live->task().goal_reaching) {
    ImGui::SameLine();
    ImGui::Checkbox("path", &show_path);
  }
  ImGui::SameLine();
  if (ImGui::Checkbox("presentation (F11)", &presentation)) apply_style();
  // One toggle: red while recording, with the seconds recorded.
  if (video) {
    ImGui::PushStyleColor(ImGuiCol_Button, ImVec4(0.75f, 0.15f, 0.12f, 1.0f));
    ImGui::PushStyleColor(ImGuiCol_ButtonHovered, ImVec4(0.85f, 0.22f, 0.18f, 1.0f));
  }
  const std::string record_label =
      video ? "Stop recording (" + fixed_number(static_cast<double>(recorded) / record_fps, 1) +
                  " s)###record"
            : std::string("Record###record");
  const bool record_clicked = ImGui::Button(record_label.c_str());
  if (video) ImGui::PopStyleColor(2);
  if (record_clicked) {
    if (video)
      finish_recording();
    else
      start_recording(output_folder() / (title + "-step" + std::to_string(shown.cursor)),
                      record_fps);
  }
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::CalcTextSize("60 fps").x + ImGui::GetFrameHeight() * 1.6f);
  if (ImGui::BeginCombo("##fps", (std::to_string(record_fps) + " fps").c_str())) {
    for (int f : {24, 30, 60})
      if (ImGui::Selectable((std::to_string(f) + " fps").c_str(), f == record_fps)) record_fps = f;
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  if (ImGui::Button("Screenshot"))
    screenshot_to = output_folder() / (title + "-step" + std::to_string(shown.cursor) + ".png");
  if (!message.empty()) ImGui::TextWrapped("%s", message.c_str());
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Interventions and forks

void LiveViewer::State::change_interventions(const std::vector<std::string>& specs) {
  try {
    if (!fork_mode) return live->set_interventions(specs);
    models::BranchChange change;
    change.clear_interventions = true;
    change.interventions = specs;
    for (const auto& i : specs) change.label += (change.label.empty() ? "" : ", ") + i;
    if (specs.empty()) change.label = "no interventions";
    request_fork(change);
  } catch (const Error& e) {
    notice(e.what());
  }
}

void LiveViewer::State::request_fork(const models::BranchChange& change) {
  try {
    live->fork(display_step, change);
  } catch (const Error& e) {
    notice(e.what());
  }
}

void LiveViewer::State::draw_interventions() {
  const auto& c = live->config();
  const auto specs = live->interventions();
  ImGui::TextDisabled("from the step on screen; a click cycles zero, mean, off");
  // Or a click patches the site from the window at another target.
  ImGui::RadioButton("ablate", &click_patches, 0);
  ImGui::SameLine();
  ImGui::RadioButton("patch from target", &click_patches, 1);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::CalcTextSize("000000").x + ImGui::GetFrameHeight());
  ImGui::InputFloat("##patch-target", &patch_target, 0.0f, 0.0f, "%.0f");
  const auto site_button = [&](const std::string& label, const std::string& site) {
    const auto now = models::ablation_of(specs, site);
    const bool from_other = models::patched(specs, site);
    const bool on = !now.empty() || from_other;
    if (on)
      ImGui::PushStyleColor(ImGuiCol_Button, from_other      ? im_vec(palette::kBluishGreen)
                                             : now == "zero" ? im_vec(palette::kVermillion)
                                                             : im_vec(palette::kBlue));
    const bool clicked = ImGui::SmallButton((label + "##" + site).c_str());
    if (on) ImGui::PopStyleColor();
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("%s: %s", site.c_str(),
                        from_other ? "patched from the other target; click to restore it"
                        : on       ? (now + "; click for the next").c_str()
                                   : "as trained; click to change it");
    if (!clicked) return;
    if (click_patches)
      change_interventions(models::with_patch(
          specs, site, from_other ? std::nullopt : std::optional<double>(patch_target)));
    else
      change_interventions(models::with_ablation(models::with_patch(specs, site, std::nullopt),
                                                 site, models::next_ablation(now)));
  };
  for (int l = 1; l <= c.layers; ++l) {
    ImGui::Text("layer %d", l);
    const int heads = models::layer_heads(c, l);
    if (heads > 0) {
      for (int h = 1; h <= heads; ++h) {
        ImGui::SameLine();
        // Built piece by piece: GCC 12 warns falsely (-Wrestrict) on "h" + std::to_string(h).
        std::string label = std::to_string(h), site = "head:" + std::to_string(l) + ".";
        site += label;
        label.insert(0, 1, 'h');
        site_button(label, site);
      }
    } else if (models::layer_mixer(c, l) != "none") {
      ImGui::SameLine();
      site_button(models::layer_mixer(c, l), "mixer:" + std::to_string(l));
    }
    ImGui::SameLine();
    site_button("MLP", "mlp:" + std::to_string(l));
  }
  // The context: how far back every mixer may look.
  const int K = c.context_length;
  int steps_back = models::context_of(specs);
  if (steps_back <= 0) steps_back = K;
  ImGui::SetNextItemWidth(-ImGui::CalcTextSize("context").x -
                          ImGui::GetStyle().ItemInnerSpacing.x * 2);
  ImGui::SliderInt("context", &steps_back, 1, K, steps_back == K ? "all %d steps" : "%d steps");
  if (ImGui::IsItemDeactivatedAfterEdit())
    change_interventions(models::with_context(specs, steps_back >= K ? 0 : steps_back));
  // Steering: ALPHA times a saved direction after a block.
  ImGui::SetNextItemWidth(-ImGui::CalcTextSize("direction").x -
                          ImGui::GetStyle().ItemInnerSpacing.x * 2);
  ImGui::InputTextWithHint("direction", "direction_L2.json (dstudio analyze steering)", steer_file,
                           sizeof steer_file);
  ImGui::SetNextItemWidth(ImGui::GetFrameHeight() * 4);
  ImGui::SliderInt("after block", &steer_layer, 1, std::max(1, c.layers));
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFrameHeight() * 5);
  ImGui::SliderFloat("ALPHA", &steer_alpha, -4.0f, 4.0f, "%.2f");
  ImGui::BeginDisabled(steer_file[0] == '\0');
  if (ImGui::SmallButton("steer"))
    change_interventions(models::with_steering(specs, steer_layer, steer_alpha, steer_file));
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (ImGui::SmallButton("off##steer"))
    change_interventions(models::with_steering(specs, steer_layer, 0.0, {}));
  if (ImGui::SmallButton("clear all")) change_interventions({});
  ImGui::SameLine();
  if (ImGui::Checkbox("colour the limbs by the change", &effects)) live->set_plain_actions(effects);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Each actuated limb in the colour of how much the interventions in force "
        "change its joint's action (legend over the scene)");
}

void LiveViewer::State::draw_forks() {
  ImGui::Checkbox("changes above fork the episode", &fork_mode);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "On: a new target, zeroing or intervention set plays as a ghost beside the "
        "episode from the step on screen, instead of changing it");
  const bool full = static_cast<int>(branches.size()) >= models::kMaxBranches;
  ImGui::BeginDisabled(full);
  ImGui::SetNextItemWidth(ImGui::CalcTextSize("000000").x + ImGui::GetFrameHeight());
  ImGui::InputFloat("##fork-target", &fork_target, 0.0f, 0.0f, "%.0f");
  ImGui::SameLine();
  if (ImGui::Button("fork with this target")) {
    models::BranchChange change;
    change.target = fork_target;
    change.label = "target=" + fixed_number(fork_target, 0);
    request_fork(change);
  }
  ImGui::SetNextItemWidth(-ImGui::CalcTextSize("fork with checkpoint").x -
                          ImGui::GetStyle().ItemSpacing.x * 3);
  ImGui::InputTextWithHint("##fork-checkpoint", "another checkpoint (.pt)", fork_checkpoint,
                           sizeof fork_checkpoint);
  ImGui::SameLine();
  if (ImGui::Button("fork with checkpoint") && fork_checkpoint[0] != '\0') {
    models::BranchChange change;
    change.checkpoint = fork_checkpoint;
    change.label = std::string("checkpoint=") + fork_checkpoint;
    request_fork(change);
  }
  ImGui::EndDisabled();
  // Each fork: its buttons first, so that a long change cut at the panel's edge leaves them in
  // reach; its line in the words of the legend over the scene.
  for (std::size_t b = 0; b < branches.size(); ++b) {
    const auto& style = palette::kBranches[b % palette::kBranches.size()];
    const float line = ImGui::GetTextLineHeight();
    ImGui::ColorButton(("##swatch" + std::to_string(b)).c_str(), im_vec(style.colour),
                       ImGuiColorEditFlags_NoTooltip, ImVec2(line, line));
    ImGui::SameLine();
    if (ImGui::SmallButton(("rewind##" + std::to_string(b)).c_str()))
      live->seek(branches[b].fork_step);
    ImGui::SameLine();
    if (ImGui::SmallButton(("remove##" + std::to_string(b)).c_str()))
      live->remove_branch(static_cast<int>(b));
    ImGui::SameLine();
    ImGui::TextUnformatted(
        models::fork_legend(static_cast<int>(b), branches[b].fork_step, branches[b].label).c_str());
  }
  if (!branches.empty() && ImGui::SmallButton("remove every fork")) live->clear_branches();
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Attention, traces and the panels

void LiveViewer::State::draw_attention() {
  if (live->replay()) {
    ImGui::TextWrapped("A dataset episode replays without a policy: no mixing to show.");
    return;
  }
  if (live->behaviour()) {
    ImGui::TextWrapped(
        "A behaviour policy acts on the current observation alone (an MLP): no mixing to show.");
    return;
  }
  // Which map: a layer (a head or the mean over heads), the mean over layers, or rollout.
  const int layers = live->config().layers, heads = live->config().heads;
  std::vector<std::string> maps;
  for (int l = 1; l <= layers; ++l) maps.push_back("layer " + std::to_string(l));
  maps.emplace_back("mean over layers");
  maps.emplace_back("rollout");
  int current = selection.kind == analysis::MapKind::Layer            ? selection.layer - 1
                : selection.kind == analysis::MapKind::MeanOverLayers ? layers
                                                                      : layers + 1;
  const float half = (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x) * 0.5f;
  ImGui::SetNextItemWidth(half);
  if (ImGui::BeginCombo("##map", maps[static_cast<std::size_t>(current)].c_str())) {
    for (int i = 0; i < static_cast<int>(maps.size()); ++i)
      if (ImGui::Selectable(maps[static_cast<std::size_t>(i)].c_str(), i == current)) {
        analysis::MapSelection next = selection;
        next.kind = i < layers    ? analysis::MapKind::Layer
                    : i == layers ? analysis::MapKind::MeanOverLayers
                                  : analysis::MapKind::Rollout;
        if (i < layers) next.layer = i + 1;
        selection = next, map_of = nullptr, lags_dirty = true;
      }
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  ImGui::BeginDisabled(selection.kind != analysis::MapKind::Layer || heads <= 1);
  ImGui::SetNextItemWidth(-1);
  const std::string head =
      selection.head == 0 ? "mean over heads" : "head " + std::to_string(selection.head);
  if (ImGui::BeginCombo("##head", head.c_str())) {
    for (int h = 0; h <= heads; ++h)
      if (ImGui::Selectable(h == 0 ? "mean over heads" : ("head " + std::to_string(h)).c_str(),
                            h == selection.head))
        selection.head = h, map_of = nullptr, lags_dirty = true;
    ImGui::EndCombo();
  }
  ImGui::EndDisabled();
  const float w = ImGui::GetContentRegionAvail().x;
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const models::PlayerFrame* source = map_source.get();
  // A fork another checkpoint plays: its map beside this one's, for the same step and selection.
  models::FramePtr other;
  std::string other_name;
  analysis::TokenMatrix other_map;
  for (std::size_t b = 0; b < branches.size() && b < branch_frames.size(); ++b) {
    if (branches[b].checkpoint.empty()) continue;
    const auto& f = branch_frames[b];
    const auto shown_there = at_step(f, display_step);
    other = shown_there && shown_there->step == display_step ? models::acted_window(f, shown_there)
                                                             : nullptr;
    other_name =
        "fork " + std::to_string(b + 1) + ": " + fs::path(branches[b].checkpoint).stem().string();
    if (other) {
      try {
        other_map = analysis::select_window_map(*other->inspection, selection);
      } catch (const Error& e) {
        other_name += " (" + std::string(e.what()) + ")";
      }
    }
    break;
  }
  const bool pair = !other_name.empty();
  const float map_w = pair ? (w - ImGui::GetStyle().ItemSpacing.x) * 0.5f : w;
  const float map_side =
      std::max(60.0f, std::min(map_w, ImGui::GetContentRegionAvail().y - 5.5f * line));
  if (pair) {
    ImGui::TextUnformatted(title.c_str());
    ImGui::SameLine(map_w + ImGui::GetStyle().ItemSpacing.x);
    ImGui::TextUnformatted(other_name.c_str());
  }
  imgui::token_map(
      "##attention", map, source ? source->inspection->token_types : std::vector<char>{},
      source ? source->inspection->token_steps : std::vector<int>{},
      source ? source->inspection->valid : std::vector<char>{}, ImVec2(map_w, map_side),
      map_cells.upload(map, source ? source->inspection->valid : std::vector<char>{}));
  if (pair) {
    ImGui::SameLine();
    imgui::token_map(
        "##attention-fork", other_map, other ? other->inspection->token_types : std::vector<char>{},
        other ? other->inspection->token_steps : std::vector<int>{},
        other ? other->inspection->valid : std::vector<char>{}, ImVec2(map_w, map_side),
        fork_map_cells.upload(other_map, other ? other->inspection->valid : std::vector<char>{}));
  }
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
  // The newest step has not acted yet: its map is the window acted on one step before.
  if (source && displayed && source->step != displayed->step)
    ImGui::TextWrapped("the window acted on at step %d (step %d has not acted yet)", source->step,
                       displayed->step);
  else if (source)
    ImGui::TextWrapped("the window acted on at step %d", source->step);
  ImGui::TextWrapped("weight by lag (steps): this window, and the episode so far");
  ImGui::PopStyleColor();
  imgui::lag_bars("##lag", lag, ImVec2(w, std::max(3.5f * line, ImGui::GetContentRegionAvail().y)),
                  &lag_episode, "episode");
}

void LiveViewer::State::draw_traces() {
  const int steps = std::max(static_cast<int>(frames.size()), shown.frames);
  const int cursor = displayed ? display_step : -1;
  const int span = std::max(steps, static_cast<int>(live->task().max_episode_steps));
  if (!branches.empty()) {
    // The forks against the main run on one timeline: their returns, and the action difference
    // (or a joint) beside it, each with the cursor on the step on screen.
    const auto by_step = [&](const std::vector<models::FramePtr>& f, auto value) {
      std::vector<double> out(f.size(), std::nan(""));
      for (std::size_t t = 0; t < f.size(); ++t) out[t] = value(t);
      return out;
    };
    const int joint = plot_joint;
    // Recomputed only when a run has new frames or the plot changed, not at every frame drawn.
    std::size_t key = std::hash<const void*>{}(frames.empty() ? nullptr : frames.back().get()) ^
                      (frames.size() * 1315423911u) ^ static_cast<std::size_t>(joint + 7) * 31u;
    for (const auto& f : branch_frames)
      key = key * 1099511628211u ^ std::hash<const void*>{}(f.empty() ? nullptr : f.back().get()) ^
            f.size();
    auto& returns = divergence_returns;
    auto& other = divergence_other;
    const bool fresh = key != divergence_key || returns.size() != branch_frames.size() + 1;
    divergence_key = key;
    if (fresh) returns.clear(), other.clear();
    if (fresh)
      returns.push_back(by_step(frames, [&](std::size_t t) { return frames[t]->return_so_far; }));
    const auto joint_of = [&](const std::vector<models::FramePtr>& f) {
      return models::joint_trace(f, joints[static_cast<std::size_t>(joint)].qpos_index);
    };
    if (fresh && joint >= 0) other.push_back(joint_of(frames));
    for (const auto& f : branch_frames) {
      if (!fresh) break;
      returns.push_back(by_step(f, [&](std::size_t t) { return f[t]->return_so_far; }));
      if (joint >= 0) {
        other.push_back(joint_of(f));
        continue;
      }
      other.push_back(models::action_difference(f, frames));
    }
    std::vector<imgui::Trace> left, right;
    left.push_back({"main run", im_colour(palette::kMainRun), &returns[0], false, false});
    std::size_t o = 0;
    if (joint >= 0)
      right.push_back({"main run", im_colour(palette::kMainRun), &other[o++], false, false});
    for (std::size_t b = 0; b < branch_frames.size(); ++b) {
      const auto c = im_colour(palette::kBranches[b % palette::kBranches.size()].colour);
      const auto name = "fork " + std::to_string(b + 1);
      left.push_back({name, c, &returns[b + 1], false, false});
      right.push_back({name, c, &other[o++], false, false});
    }
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float half = (avail.x - ImGui::GetStyle().ItemSpacing.x) * 0.5f;
    ImGui::BeginGroup();
    ImGui::TextUnformatted("return so far");
    int seek_to = imgui::traces("##returns", left, span, cursor,
                                ImVec2(half, ImGui::GetContentRegionAvail().y));
    ImGui::EndGroup();
    ImGui::SameLine();
    ImGui::BeginGroup();
    ImGui::SetNextItemWidth(half);
    const std::string what = joint < 0 ? std::string(models::kActionDifferenceName)
                                       : joints[static_cast<std::size_t>(joint)].name + " (qpos)";
    if (ImGui::BeginCombo("##divergence", what.c_str())) {
      if (ImGui::Selectable(models::kActionDifferenceName, joint < 0)) plot_joint = -1;
      for (std::size_t j = 0; j < joints.size(); ++j)
        if (ImGui::Selectable((joints[j].name + " (qpos)").c_str(), joint == static_cast<int>(j)))
          plot_joint = static_cast<int>(j);
      ImGui::EndCombo();
    }
    const int seek_right = imgui::traces("##divergence-plot", right, span, cursor,
                                         ImVec2(half, ImGui::GetContentRegionAvail().y));
    ImGui::EndGroup();
    if (seek_right >= 0) seek_to = seek_right;
    if (seek_to >= 0 && seek_to < steps && seek_to != shown.cursor) live->seek(seek_to);
    return;
  }
  // The studio's Viewer tab draws the same traces in the same colours (dstudio/common/palette.h).
  const auto colour = [](palette::Rgb c) { return IM_COL32(c.r, c.g, c.b, 255); };
  std::vector<imgui::Trace> series = {
      {std::string(palette::kReturnToGo.name), colour(palette::kReturnToGo.colour), &rtg, false,
       palette::kReturnToGo.dashed},
      {std::string(palette::kReturnSoFar.name), colour(palette::kReturnSoFar.colour), &ret, false,
       palette::kReturnSoFar.dashed},
      {std::string(palette::kEntropy.name) + " (right, nats)", colour(palette::kEntropy.colour),
       &entropy, true, palette::kEntropy.dashed},
  };
  // A behaviour policy asks for no return and attends to nothing: its return alone. A replay
  // has its recorded return-to-go but no policy's attention.
  if (live->behaviour()) series = {series[1]};
  if (live->replay()) series.pop_back();
  const int seek_to =
      imgui::traces("##traces", series, span, cursor, ImGui::GetContentRegionAvail());
  if (seek_to >= 0 && seek_to < steps && seek_to != shown.cursor) live->seek(seek_to);
}

void LiveViewer::State::draw_panels() {
  ImGuiIO& io = ImGui::GetIO();
  if (presentation) ImGui::PushFont(large_font);
  const ImGuiWindowFlags fixed = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize |
                                 ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings |
                                 ImGuiWindowFlags_NoBringToFrontOnFocus;
  draw_overlay();

  ImGui::SetNextWindowPos(ImVec2(static_cast<float>(scene_w), 0));
  ImGui::SetNextWindowSize(ImVec2(static_cast<float>(side_w), io.DisplaySize.y));
  ImGui::Begin(live->replay() ? "Episode" : "Policy", nullptr, fixed);
  if (!presentation) {
    draw_controls();
    section("Attention of the window acted on");
  }
  draw_attention();
  ImGui::End();

  ImGui::SetNextWindowPos(ImVec2(0, static_cast<float>(scene_h)));
  ImGui::SetNextWindowSize(ImVec2(static_cast<float>(scene_w), static_cast<float>(bottom_h)));
  ImGui::Begin("##traces", nullptr, fixed | ImGuiWindowFlags_NoTitleBar);
  draw_traces();
  ImGui::End();
  if (presentation) ImGui::PopFont();

  // Keys, as in simulate: space plays, arrows step, Home/End, [ ] speed, F11 presentation.
  if (!io.WantTextInput) {
    if (ImGui::IsKeyPressed(GLFW_KEY_SPACE, false)) shown.playing ? live->pause() : live->play();
    if (ImGui::IsKeyPressed(GLFW_KEY_RIGHT)) live->step_forward();
    if (ImGui::IsKeyPressed(GLFW_KEY_LEFT)) live->step_back();
    if (ImGui::IsKeyPressed(GLFW_KEY_HOME, false)) live->seek(0);
    if (ImGui::IsKeyPressed(GLFW_KEY_END, false)) live->seek(std::max(0, shown.frames - 1));
    if (ImGui::IsKeyPressed(GLFW_KEY_F11, false)) presentation = !presentation, apply_style();
    if (ImGui::IsKeyPressed(GLFW_KEY_T, false)) apply_tracking(!tracking);
    if (ImGui::IsKeyPressed(GLFW_KEY_RIGHT_BRACKET, false))
      speed = models::next_speed(speed, true), live->set_speed(speed), rate->reset();
    if (ImGui::IsKeyPressed(GLFW_KEY_LEFT_BRACKET, false))
      speed = models::next_speed(speed, false), live->set_speed(speed), rate->reset();
  }
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Recording

render::Image LiveViewer::State::read_pixels() const {
  int w = 0, h = 0;
  glfwGetFramebufferSize(window, &w, &h);
  render::Image image;
  image.width = w, image.height = h;
  std::vector<std::uint8_t> flipped(static_cast<std::size_t>(3) * w * h);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, w, h, GL_RGB, GL_UNSIGNED_BYTE, flipped.data());
  image.rgb.resize(flipped.size());
  const std::size_t row = static_cast<std::size_t>(3) * w;
  for (int y = 0; y < h; ++y) std::memcpy(&image.rgb[y * row], &flipped[(h - 1 - y) * row], row);
  return image;
}

void LiveViewer::State::record_step() {
  if (!video || !record_frame_ready) return;
  if (!video->add(read_pixels())) {
    message = "recording failed: " + video->error();
    video.reset();
    live->set_speed(speed);
    return;
  }
  ++recorded;
  if (clip_log && displayed) {
    models::ClipLog::Frame f;
    f.step = display_step;
    f.return_so_far = displayed->return_so_far;
    f.target = displayed->target;
    f.zeroing = models::to_string(displayed->zeroing);
    f.interventions = displayed->interventions;
    for (std::size_t b = 0; b < branches.size() && b < branch_frames.size(); ++b)
      if (const auto bf = at_step(branch_frames[b], display_step))
        f.branches.push_back(
            {branches[b].label, branches[b].fork_step, bf->step, bf->return_so_far});
    clip_log->add(std::move(f));
  }
}

bool LiveViewer::State::start_recording(const fs::path& base, int fps) {
  if (video) {
    message = "already recording to " + video->path().string();
    return false;
  }
  if (!displayed) {
    message = "nothing to record yet";
    return false;
  }
  // At the end of an ended episode there is nothing after the step on screen: no one-frame file.
  if (shown.at_end()) {
    notice("nothing to record: the episode ended at step " + std::to_string(shown.cursor) +
           "; go back (Home) or start a new episode first");
    return false;
  }
  record_fps = std::clamp(fps, 1, 120);
  video = std::make_unique<render::VideoFile>(base, record_fps);
  record_first_step = shown.cursor;
  record_speed = speed > 0 ? speed : 1.0;
  // "max" has no clock to record by: the clip plays at 1x, and the user is told.
  const std::string at_1x =
      speed > 0 ? std::string() : " (at 1x: \"max\" plays as fast as the policy acts, no clock)";
  recorded = 0;
  clip_log = std::make_unique<models::ClipLog>(
      "decision-viewer",
      live->replay() ? options.dataset.string() + " episode " + std::to_string(options.episode)
                     : options.checkpoint.string(),
      shown.seed, record_first_step, record_fps, record_speed);
  // The policy runs ahead at full speed; each recorded frame waits for the step it shows.
  live->set_speed(0.0);
  live->play();
  message = "recording to " + video->path().string() + at_1x;
  return true;
}

void LiveViewer::State::finish_recording(const std::string& why) {
  if (!video) return;
  last_recording = video->path();
  std::string prefix = why.empty() ? std::string() : "recording ended (" + why + "): ";
  if (clip_log && video->frames() > 0) {
    try {
      clip_log->write(models::ClipLog::path_for(video->path()));
    } catch (const Error& e) {
      prefix += std::string(e.what()) + "; ";
    }
  }
  clip_log.reset();
  if (video->finish())
    notice(prefix + "saved " + video->path().string() + " (" + std::to_string(video->frames()) +
           " frames, " + fixed_number(static_cast<double>(video->frames()) / record_fps, 1) +
           " s)");
  else
    notice(prefix + "recording failed: " + video->error());
  video.reset();
  live->pause();
  live->set_speed(speed);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Running the window

LiveViewer::LiveViewer(ViewerOptions options) : s_(new State) {
  s_->options = std::move(options);
  s_->presentation = s_->options.presentation;
  s_->record_fps = s_->options.record_fps;
  s_->open_player();
  s_->make_window();
  s_->apply_style();
  // A replay keeps every frame from the start, its cursor on the last: start at the beginning.
  if (s_->options.step > 0)
    seek(s_->options.step);
  else
    s_->live->seek(0);
  if (s_->options.step == 0 && !s_->options.paused) s_->live->play();
}

LiveViewer::~LiveViewer() {
  auto& s = *s_;
  s.finish_recording();
  s.live.reset();  // the player thread stops before the window goes
  if (s.imgui) {
    ImGui::SetCurrentContext(s.imgui);
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext(s.imgui);
  }
  if (s.window) {
    glfwMakeContextCurrent(s.window);
    s.map_cells.release();
    s.fork_map_cells.release();
    mjr_freeContext(&s.context);
    mjr_freeContext(&s.lean_context);
    mjv_freeScene(&s.scene);
    glfwDestroyWindow(s.window);
  }
  if (s.data) mj_deleteData(s.data);
  if (s.model) mj_deleteModel(s.model);
  if (s.lean_model) mj_deleteModel(s.lean_model);
}

bool LiveViewer::frame() {
  auto& s = *s_;
  glfwMakeContextCurrent(s.window);
  ImGui::SetCurrentContext(s.imgui);
  glfwPollEvents();
  s.refresh_frames();
  s.refresh_map();
  s.measure_rate();
  int w = 0, h = 0;
  glfwGetWindowSize(s.window, &w, &h);
  s.layout(w, h);

  const auto t_ui = Clock::now();
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  ImGui::NewFrame();
  s.camera_input();
  s.draw_panels();
  ImGui::Render();
  const double build_ms = ms_since(t_ui);

  // Lean while playing; the full picture for pauses, screenshots and recordings. The scale
  // follows the time whole frames take, from one frame's start to the next.
  const auto t_frame = Clock::now();
  const bool playing = s.shown.playing && !s.video;
  if (playing && s.was_playing)
    s.render_scale.add_frame(ms_between(s.last_frame_start, t_frame));
  else if (!playing)
    s.render_scale.reset();
  s.was_playing = playing;
  s.last_frame_start = t_frame;
  s.draw_scene(playing && s.screenshot_to.empty() && !s.capture_next);
  const auto t_draw = Clock::now();
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  s.last_ui_ms = build_ms + ms_since(t_draw);
  s.record_step();
  if (!s.screenshot_to.empty()) {
    try {
      render::write_png(s.screenshot_to, s.read_pixels());
      s.message = "saved " + s.screenshot_to.string();
    } catch (const render::RenderError& e) {
      s.message = e.what();
    }
    s.screenshot_to.clear();
  }
  if (s.capture_next) s.captured = s.read_pixels(), s.capture_next = false;
  const auto t_swap = Clock::now();
  glfwSwapBuffers(s.window);
  s.last_swap_ms = ms_since(t_swap);
  return !glfwWindowShouldClose(s.window);
}

int LiveViewer::run() {
  while (frame()) {
  }
  return 0;
}

bool LiveViewer::run_until(const std::function<bool(const models::PlaybackState&)>& done,
                           double timeout_seconds) {
  const auto start = Clock::now();
  while (ms_since(start) < timeout_seconds * 1000.0) {
    frame();
    if (done(shown()) && s_->pending_seek < 0) return true;
    if (!s_->shown.playing && s_->pending_seek < 0 && !s_->video)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

BenchReport LiveViewer::bench(double seconds) {
  auto& s = *s_;
  BenchReport r;
  s.live->set_speed(s.speed);
  s.live->play();
  const auto warm = Clock::now();
  while (ms_since(warm) < 1000.0) frame();
  std::vector<double> frame_ms, render_ms, ui_ms, swap_ms, scales;
  std::uint64_t seed = s.shown.seed;
  long steps_shown = 0, forks_drawn = 0;
  int last_step = s.shown.frame ? s.shown.frame->step : 0;
  const auto start = Clock::now();
  auto previous = start;
  while (ms_since(start) < seconds * 1000.0) {
    frame();
    const auto now = Clock::now();
    frame_ms.push_back(std::chrono::duration<double, std::milli>(now - previous).count());
    previous = now;
    render_ms.push_back(s.last_render_ms), ui_ms.push_back(s.last_ui_ms),
        swap_ms.push_back(s.last_swap_ms);
    scales.push_back(s.render_scale.scale());
    if (s.map.tokens > 0) ++r.frames_with_map;
    forks_drawn += static_cast<long>(s.branches.size());
    const int step = s.shown.frame ? s.shown.frame->step : 0;
    if (step > last_step) steps_shown += step - last_step;
    last_step = step;
    if (s.shown.at_end()) {
      // Another episode: the bench measures a policy that keeps acting (a replay starts again).
      // Taken up before the next frame, which would otherwise still see the end and restart again.
      s.live->restart(++seed);
      s.live->wait_until([](const models::PlaybackState& p) { return !p.at_end(); },
                         std::chrono::minutes(1));
      if (!s.options.forks.empty()) {
        // The new episode is forked as the first was, once it has begun (its forks made now
        // would count against the old episode's, which it drops).
        s.live->wait_until([seed](const models::PlaybackState& p) { return p.seed == seed; },
                           std::chrono::minutes(1));
        s.pending_forks = s.options.forks;
      }
      s.live->play();
      ++r.episodes;
      last_step = 0;
    }
  }
  r.seconds = ms_since(start) / 1000.0;
  r.frames = static_cast<long>(frame_ms.size());
  r.fps = static_cast<double>(r.frames) / r.seconds;
  r.forks = r.frames > 0 ? static_cast<double>(forks_drawn) / static_cast<double>(r.frames) : 0.0;
  r.map_share =
      r.frames > 0 ? static_cast<double>(r.frames_with_map) / static_cast<double>(r.frames) : 0.0;
  r.frame_ms_median = quantile(frame_ms, 0.5), r.frame_ms_p90 = quantile(frame_ms, 0.9);
  r.frame_ms_p99 = quantile(frame_ms, 0.99),
  r.frame_ms_max = *std::max_element(frame_ms.begin(), frame_ms.end());
  r.render_ms_median = quantile(render_ms, 0.5), r.ui_ms_median = quantile(ui_ms, 0.5),
  r.swap_ms_median = quantile(swap_ms, 0.5);
  r.scale_median = quantile(scales, 0.5);
  r.scale_min = *std::min_element(scales.begin(), scales.end());
  r.steps_per_second = static_cast<double>(steps_shown) / r.seconds;
  r.steps_per_second_wanted = s.speed > 0 ? s.speed / s.live->dt() : 0.0;
  r.episodes += 1;
  r.renderer = render::current_renderer();
  r.blas = active_blas_name();
  int w = 0, h = 0;
  glfwGetFramebufferSize(s.window, &w, &h);
  std::ostringstream c;
  c << w << "x" << h << " window, " << s.title << " (" << s.live->config().variant << ") on "
    << s.live->task().name << ", speed " << speed_text(s.speed) << ", scene " << s.scene_w << "x"
    << s.scene_h << " without shadows or reflections while playing, no multisampling, no vsync, "
    << "drawn while playing from a lean copy (" << s.lean_drawing.meshes_simplified
    << " meshes simplified, " << s.lean_drawing.triangles_before << " triangles to "
    << s.lean_drawing.triangles_after << "; 12 slices) at a scale held to the 60 Hz budget, "
    << s.scene.ngeom << " geoms in the last frame" << (s.show_path ? " (the path included)" : "")
    << ", camera " << (s.tracking ? "following the body" : "free (the task's view)") << "; "
    << std::thread::hardware_concurrency() << " cores, policy on its own thread";
  const char* lp = std::getenv("LP_NUM_THREADS");
  if (lp) c << ", LP_NUM_THREADS=" << lp;
  r.configuration = c.str();
  return r;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Driving and reading the viewer

void LiveViewer::play() {
  s_->live->play();
}
void LiveViewer::pause() {
  s_->live->pause();
}
void LiveViewer::toggle_play() {
  s_->live->state().playing ? pause() : play();
}
void LiveViewer::step_forward() {
  s_->live->step_forward();
}
void LiveViewer::step_back() {
  s_->live->step_back();
}

void LiveViewer::seek(int step) {
  auto& s = *s_;
  const auto state = s.live->state();
  if (step < state.frames || state.finished) {
    s.live->seek(step);
    return;
  }
  // Not there yet: act at full speed until the policy is, then pause there.
  s.pending_seek = step;
  s.live->set_speed(0.0);
  s.live->play();
}

void LiveViewer::set_speed(double speed) {
  s_->speed = speed;  // a seek under way keeps full speed and returns to this once there
  s_->rate->reset();
  if (s_->pending_seek < 0) s_->live->set_speed(speed);
}
void LiveViewer::set_target(double target) {
  s_->target_field = static_cast<float>(target);
  const auto generation = s_->live->state().generation;
  s_->live->set_target(target);
  wait_for_branch(generation);
}
void LiveViewer::set_zeroing(models::ModalityZeroing zeroing) {
  const auto generation = s_->live->state().generation;
  s_->live->set_zeroing(zeroing);
  wait_for_branch(generation);
}

void LiveViewer::wait_for_branch(std::uint64_t generation) {
  // A branch cuts the kept frames and re-conditions one (reading the dataset once for the first
  // mean ablation). Waiting for it means the next seek sees the frames that follow the new
  // conditioning.
  s_->live->wait_until(
      [generation](const models::PlaybackState& p) {
        return p.generation != generation || !p.error.empty();
      },
      std::chrono::minutes(2));
}

void LiveViewer::set_interventions(const std::vector<std::string>& interventions) {
  const auto generation = s_->live->state().generation;
  s_->live->set_interventions(interventions);
  wait_for_branch(generation);
  const auto state = s_->live->state();
  if (!state.error.empty()) throw Error(state.error);
}

void LiveViewer::fork(const models::BranchChange& change) {
  auto& s = *s_;
  const auto before = s.live->state().branch_generation;
  s.live->fork(s.display_step, change);
  const auto state = s.live->wait_until(
      // Idle once the request (which keeps the player busy while it waits) has been taken up.
      [before](const models::PlaybackState& p) { return p.branch_generation != before || !p.busy; },
      std::chrono::minutes(2));
  if (state.branch_generation == before)
    throw Error(state.fork_error.empty() ? "the fork was not made within two minutes"
                                         : state.fork_error);
}

void LiveViewer::remove_forks() {
  s_->pending_forks.clear();
  s_->live->clear_branches();
  s_->live->wait_until([](const models::PlaybackState& p) { return p.branch_frames.empty(); },
                       std::chrono::minutes(2));
}

void LiveViewer::set_effects(bool on) {
  s_->effects = on;
  s_->live->set_plain_actions(on);
}
bool LiveViewer::effects() const {
  return s_->effects;
}
double LiveViewer::effect_scale() const {
  return s_->effect_scale();
}
void LiveViewer::restart(std::uint64_t seed) {
  s_->live->restart(seed);
}
void LiveViewer::set_presentation(bool on) {
  s_->presentation = on;
  ImGui::SetCurrentContext(s_->imgui);
  s_->apply_style();
}
bool LiveViewer::presentation() const {
  return s_->presentation;
}
void LiveViewer::set_tracking(bool on) {
  s_->apply_tracking(on);
}
std::vector<env::SubTask> LiveViewer::task_elements() const {
  return s_->task_elements();
}
bool LiveViewer::tracking() const {
  return s_->tracking;
}
void LiveViewer::set_map(const analysis::MapSelection& selection) {
  s_->selection = selection;
  s_->map_of = nullptr;
  s_->lags_dirty = true;
}
analysis::MapSelection LiveViewer::map() const {
  return s_->selection;
}

render::Image LiveViewer::capture() {
  // The back buffer, read once the next frame is drawn and before it is shown.
  s_->capture_next = true;
  frame();
  return std::move(s_->captured);
}

void LiveViewer::save_screenshot(const fs::path& png) {
  render::write_png(png, capture());
}

bool LiveViewer::start_recording(const fs::path& base, int frames_per_second) {
  return s_->start_recording(base, frames_per_second);
}

void LiveViewer::stop_recording() {
  s_->finish_recording();
}
bool LiveViewer::recording() const {
  return s_->video != nullptr;
}
fs::path LiveViewer::recording_path() const {
  return s_->video ? s_->video->path() : s_->last_recording;
}
int LiveViewer::recorded_frames() const {
  return s_->recorded;
}
models::PlaybackState LiveViewer::shown() const {
  auto state = s_->shown;
  if (s_->displayed) state.frame = s_->displayed;
  if (s_->video && s_->displayed)
    state.cursor = s_->displayed->step;  // the player runs ahead of a recording
  return state;
}
const models::LivePlayer& LiveViewer::player() const {
  return *s_->live;
}
const analysis::TokenMatrix& LiveViewer::shown_map() const {
  return s_->map;
}
std::string LiveViewer::readout() const {
  return s_->readout();
}
std::string LiveViewer::speed_status() const {
  return s_->speed_status();
}
std::vector<std::string> LiveViewer::fork_legend() const {
  return s_->fork_legend();
}
std::string LiveViewer::message() const {
  return s_->message;
}
std::array<int, 4> LiveViewer::scene_rect() const {
  return {0, 0, s_->scene_w, s_->scene_h};
}
ScreenRect LiveViewer::window_rect() const {
  ScreenRect r{};
  glfwGetWindowPos(s_->window, &r[0], &r[1]);
  glfwGetWindowSize(s_->window, &r[2], &r[3]);
  return r;
}

}  // namespace dstudio::viewer

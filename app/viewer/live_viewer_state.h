#pragma once
/// \file
/// The live viewer's state and the helpers its files share: private to the viewer, not installed.
/// LiveViewer (live_viewer.h) holds one State; its methods live in the file of their part of the
/// window: live_viewer.cpp runs the window and answers LiveViewer's methods,
/// live_viewer_player.cpp opens the player and the window and follows the player's frames,
/// live_viewer_scene.cpp lays out the window and draws the scene, live_viewer_panels.cpp the
/// overlay, the attention map and the traces, live_viewer_controls.cpp the side panel's controls
/// with the interventions and forks, and live_viewer_recording.cpp records the window.

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dstudio/analysis/locality.h"
#include "dstudio/common/palette.h"
#include "dstudio/imgui/plots.h"
#include "dstudio/models/playback.h"
#include "dstudio/models/targets.h"
#include "dstudio/render/lean_drawing.h"
#include "dstudio/render/scene_layers.h"
#include "dstudio/render/video_file.h"
#include "live_viewer.h"

namespace dstudio::viewer {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Times, colours and frames as every part of the window reads them.
namespace detail {

inline double ms_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

inline double ms_since(Clock::time_point t) {
  return ms_between(t, Clock::now());
}

inline std::string speed_text(double speed) {
  return models::speed_label(speed);
}

inline ImU32 im_colour(palette::Rgb c, int alpha = 255) {
  return IM_COL32(c.r, c.g, c.b, alpha);
}

inline ImVec4 im_vec(palette::Rgb c) {
  return ImVec4(c.r / 255.0f, c.g / 255.0f, c.b / 255.0f, 1.0f);
}

// The frame of `frames` (consecutive from step 0) at `step`, or its last when it ended before.
inline models::FramePtr at_step(const std::vector<models::FramePtr>& frames, int step) {
  if (frames.empty()) return nullptr;
  return frames[static_cast<std::size_t>(std::clamp(step, 0, static_cast<int>(frames.size()) - 1))];
}

// A titled rule between groups of controls.
inline void section(const char* title) {
  ImGui::Spacing();
  ImGui::TextDisabled("%s", title);
  ImGui::Separator();
}

}  // namespace detail

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

  bool tabs_opened = false;  // the first tab shown has been chosen

  // Opening the player and the window, and following the player (live_viewer_player.cpp).
  void open_player();
  void make_window();
  void apply_style();
  void refresh_frames();
  void refresh_map();

  // Layout, the camera and the scene (live_viewer_scene.cpp).
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
  void draw_scene(bool lean);
  void make_lean_context();

  // Readouts, the overlay and the panels (live_viewer_panels.cpp).
  [[nodiscard]] std::vector<double> effect_values() const;
  // The body's own scale (render::limb_colour_scale): a colour means the same change in every run.
  [[nodiscard]] double effect_scale() const { return render::limb_colour_scale(model); }
  std::string readout() const;
  void measure_rate();
  [[nodiscard]] std::string speed_status() const;
  [[nodiscard]] std::vector<std::string> fork_legend() const;
  /// The task's elements at the step on screen, each done from the step it was first done.
  [[nodiscard]] std::vector<env::SubTask> task_elements() const;
  void draw_overlay();
  void draw_attention();
  void draw_traces();
  void draw_panels();

  // The side panel's controls, the interventions and the forks (live_viewer_controls.cpp).
  void draw_controls();
  template <typename Target, typename Zeroing>
  void draw_conditioning(const Target& apply_target, const Zeroing& apply_zeroing);
  void draw_view_and_recording();
  void draw_interventions();
  void draw_forks();
  /// Applies `specs` from the step on screen, or forks with them in fork mode; says why not.
  void change_interventions(const std::vector<std::string>& specs);
  void request_fork(const models::BranchChange& change);

  // Recording, and the window's pixels (live_viewer_recording.cpp).
  render::Image read_pixels() const;
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
};

}  // namespace dstudio::viewer

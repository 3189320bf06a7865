#pragma once
/// \file
/// `decision-viewer`: a checkpoint's policy acting in MuJoCo in a window of its own, in the spirit
/// of MuJoCo's `simulate`. The scene is drawn straight into a GLFW window's framebuffer and Dear
/// ImGui panels sit beside it: transport, target return and modality zeroing acting on the
/// running policy, the attention map of the window the policy acts on with the mixing weight by
/// lag, and the return-to-go, return and entropy traces with a cursor on the step on screen.
/// Interventions inside the forward pass (a layer x head grid, MLP toggles, the context, steering)
/// act from the step on screen too, and counterfactual forks play beside the main run on the same
/// clock, drawn as translucent ghost bodies in their own colours with their returns, a joint and
/// their action difference plotted under the scene; the limbs can be coloured by the action change
/// of the interventions in force. The policy acts on the player's own thread (models::LivePlayer);
/// the loop here only reads its immutable frames, so drawing never waits for the model.
///
/// Everything the window does is also a method, so tests and `--screenshot`/`--bench` drive it
/// exactly as the keyboard and mouse do.

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dstudio/analysis/window_maps.h"
#include "dstudio/models/episode_player.h"
#include "dstudio/models/playback.h"
#include "dstudio/render/scene_renderer.h"

namespace dstudio::viewer {

/// What to open and how to start.
struct ViewerOptions {
  std::filesystem::path checkpoint;  ///< the policy (required unless a dataset episode is replayed)
  std::filesystem::path dataset;     ///< with `episode`: replay that episode instead of a policy
  int episode = -1;
  std::string env_id;  ///< overrides the checkpoint's task (e.g. "hopper-po")
  /// A behaviour policy plays instead of a checkpoint: "dapg" (the Adroit task's shipped DAPG
  /// expert), a D4RL file with metadata/policy, or a policy JSON; its mean action, clipped.
  std::string behaviour;
  std::uint64_t seed = 0;
  std::optional<double> target;  ///< default: the first of the task's targets on offer
  models::ModalityZeroing zeroing = models::ModalityZeroing::None;
  int step = 0;         ///< shown first, paused there when > 0
  bool paused = false;  ///< start paused (at `step`)
  double speed = 1.0;   ///< times real time; 0 as fast as the policy goes
  int width = 1280, height = 800;
  /// Shrink the window, frame included, to the screen's work area when it would not fit (the
  /// default size on a laptop's 1280 x 800; not a size asked for, nor a screenshot's or clip's).
  bool fit_screen = false;
  bool presentation = false;
  bool visible = true;  ///< a hidden window still draws (tests)
  bool mouse = true;    ///< false: the pointer changes nothing (screenshots, benches, tests)
  std::filesystem::path
      record_folder;  ///< where recordings and screenshots go (default: the working folder)
  int record_fps = 30;
  /// Interventions inside the forward pass from the first step (`dstudio predict`'s grammar).
  std::vector<std::string> interventions;
  /// Counterfactual forks, each made when the main run reaches its step.
  std::vector<models::ForkSpec> forks;
  bool effects = false;  ///< limbs coloured by the interventions' action change on their joint
};

/// What `--bench` measured.
struct BenchReport {
  double seconds = 0.0;
  long frames = 0;
  double fps = 0.0;
  double frame_ms_median = 0.0, frame_ms_p90 = 0.0, frame_ms_p99 = 0.0, frame_ms_max = 0.0;
  double render_ms_median = 0.0;  ///< MuJoCo's mjr_render alone
  double ui_ms_median = 0.0;      ///< building and drawing the ImGui panels
  double swap_ms_median = 0.0;    ///< handing the frame to the display
  /// The scale of the window the scene was drawn at (render::RenderScale), median and least.
  double scale_median = 1.0, scale_min = 1.0;
  double steps_per_second = 0.0;         ///< policy steps shown per second
  double steps_per_second_wanted = 0.0;  ///< real time at the speed asked
  int episodes = 0;
  double forks = 0.0;  ///< forks playing beside the main run, on average over the frames drawn
  long frames_with_map = 0;  ///< drawn frames that showed an attention map
  double map_share = 0.0;    ///< frames_with_map / frames
  std::string renderer, blas, configuration;
  /// The report as printed: medians, percentiles and the configuration.
  [[nodiscard]] std::string text() const;
};

/// A rectangle on the screen: x, y from the top left, width, height.
using ScreenRect = std::array<int, 4>;
/// Where a window of `width` x `height` (its client area) goes so that it and its frame
/// (`frame`: left, top, right, bottom, as the window manager draws them) lie inside `work_area`:
/// at the work area's top left, shrunk where it is larger. Returns the client area's rectangle.
ScreenRect fit_to_work_area(int width, int height, const ScreenRect& work_area,
                            const std::array<int, 4>& frame);

class LiveViewer {
 public:
  /// Opens the window and the player. Throws Error (or a subclass) naming what does not fit: a
  /// missing or mismatched checkpoint, a dataset without simulator states, no display.
  explicit LiveViewer(ViewerOptions options);
  ~LiveViewer();
  LiveViewer(const LiveViewer&) = delete;
  LiveViewer& operator=(const LiveViewer&) = delete;

  /// One pass of the loop: input, a frame drawn and shown. False once the window was asked to
  /// close.
  bool frame();
  /// Runs frames until the window closes; returns the exit code.
  int run();
  /// Plays for `seconds` (after a second of warm-up) and measures every frame.
  BenchReport bench(double seconds);
  /// Draws frames until `done(shown())` holds or `timeout_seconds` pass; returns whether it held.
  bool run_until(const std::function<bool(const models::PlaybackState&)>& done,
                 double timeout_seconds);

  // The controls, as the keys and panels use them.
  void play();
  void pause();
  void toggle_play();
  void step_forward();
  void step_back();
  /// Shows `step`, acting until the policy gets there if it has not yet (then pauses there).
  void seek(int step);
  void set_speed(double speed);
  /// The target return, from the step on screen on; returns once the player has branched there.
  void set_target(double target);
  /// The modality zeroing, from the step on screen on; returns once the player has branched there.
  void set_zeroing(models::ModalityZeroing zeroing);
  void restart(std::uint64_t seed);
  /// Interventions inside the forward pass, from the step on screen on (as the target); returns
  /// once the player has branched there. Throws UsageError for a spec it refuses.
  void set_interventions(const std::vector<std::string>& interventions);
  /// Forks the episode at the step on screen with `change` (LivePlayer::fork); returns once the
  /// branch plays. Throws what LivePlayer::fork throws; a fork that failed on the player's thread
  /// throws Error with its reason.
  void fork(const models::BranchChange& change);
  /// Drops every fork; returns once they are gone.
  void remove_forks();
  /// Colours the limbs by the action change of the interventions in force (off by default).
  void set_effects(bool on);
  [[nodiscard]] bool effects() const;
  /// The full scale of the limb colours' legend (a round number above the largest change so far).
  [[nodiscard]] double effect_scale() const;
  void set_presentation(bool on);
  [[nodiscard]] bool presentation() const;
  void set_tracking(bool on);
  [[nodiscard]] bool tracking() const;
  /// The elements of a task done in stages (the kitchen's four) at the step on screen, as the
  /// overlay lists them: each done from the step it was first done. Empty for other tasks.
  [[nodiscard]] std::vector<env::SubTask> task_elements() const;
  void set_map(const analysis::MapSelection& selection);
  [[nodiscard]] analysis::MapSelection map() const;

  /// Draws a frame and returns its pixels as shown (ImGui panels included).
  [[nodiscard]] render::Image capture();
  /// Writes capture() as PNG; throws render::RenderError when it cannot.
  void save_screenshot(const std::filesystem::path& png);
  /// Records from the step on screen: a frame per 1/fps seconds of the episode at the speed set,
  /// each drawn before it is taken, to `base`.mp4 (PNG frames in `base`/ without ffmpeg), until
  /// stop_recording() or the episode's end. Returns false, with message() saying why, when it
  /// cannot start.
  bool start_recording(const std::filesystem::path& base, int frames_per_second);
  /// Ends the recording; its file is then recording_path().
  void stop_recording();
  [[nodiscard]] bool recording() const;
  [[nodiscard]] std::filesystem::path recording_path() const;
  [[nodiscard]] int recorded_frames() const;

  /// The frame on screen, as last drawn.
  [[nodiscard]] models::PlaybackState shown() const;
  [[nodiscard]] const models::LivePlayer& player() const;
  /// The map drawn at the step on screen (empty for a replay) and its lag profile.
  [[nodiscard]] const analysis::TokenMatrix& shown_map() const;
  /// The line over the scene: step, target, return-to-go, return, reward, entropy.
  [[nodiscard]] std::string readout() const;
  /// The speed as the overlay shows it: the speed asked for, and the rate the episode really plays
  /// at beside it when the machine falls behind (models::speed_status), measured over the last
  /// seconds of playing.
  [[nodiscard]] std::string speed_status() const;
  /// The forks' legend over the scene: what a ghost is, then a line per fork naming its ghost's
  /// colour, its step and its change, with its return (empty without forks).
  [[nodiscard]] std::vector<std::string> fork_legend() const;
  /// The last thing the viewer wants the user to know (a recording saved, an error).
  [[nodiscard]] std::string message() const;
  /// The scene's rectangle in the window (x, y from the top left, width, height).
  [[nodiscard]] std::array<int, 4> scene_rect() const;
  /// The window's client area on the screen (x, y from the top left, width, height).
  [[nodiscard]] ScreenRect window_rect() const;

 private:
  void wait_for_branch(std::uint64_t generation);
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace dstudio::viewer

// decision-viewer's window: GLFW, MuJoCo's renderer and Dear ImGui. See live_viewer.h; the
// state its files share, and which file draws what, are in live_viewer_state.h.

// Index of this file:
//   [SECTION] Window placement and bench reports
//   [SECTION] Running the window
//   [SECTION] Driving and reading the viewer

#include "live_viewer.h"

#include <imgui/backends/imgui_impl_glfw.h>
#include <imgui/backends/imgui_impl_opengl3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <thread>

#include "dstudio/common/error.h"
#include "dstudio/common/system_info.h"
#include "dstudio/common/text.h"
#include "live_viewer_state.h"

namespace dstudio::viewer {

using detail::ms_between;
using detail::ms_since;
using detail::speed_text;

namespace {

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const double x = q * static_cast<double>(v.size() - 1);
  const auto i = static_cast<std::size_t>(x);
  const double f = x - static_cast<double>(i);
  return i + 1 < v.size() ? v[i] + f * (v[i + 1] - v[i]) : v[i];
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

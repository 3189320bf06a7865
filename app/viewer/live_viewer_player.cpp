// decision-viewer opening its player and its window, and following the player's frames. See
// live_viewer.h.

// Index of this file:
//   [SECTION] Opening the player and the window
//   [SECTION] Following the player

#include <imgui/backends/imgui_impl_glfw.h>
#include <imgui/backends/imgui_impl_opengl3.h>

#include <cmath>
#include <cstdio>
#include <mutex>

#include "dstudio/behaviour/d4rl_policy.h"
#include "dstudio/common/error.h"
#include "dstudio/common/text.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/models/checkpoint_info.h"
#include "dstudio/models/dataset_fit.h"
#include "live_viewer_state.h"

namespace dstudio::viewer {

using detail::at_step;

namespace {

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

}  // namespace

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

}  // namespace dstudio::viewer

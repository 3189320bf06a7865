// decision-viewer: a policy acting in MuJoCo, live, beside the attention of the window it acts on.

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "dstudio/common/error.h"
#include "dstudio/common/exit_code.h"
#include "dstudio/common/system_info.h"
#include "dstudio/models/interventions.h"
#include "dstudio/models/playback.h"
#include "dstudio/models/targets.h"
#include "dstudio/plugins/loader.h"
#include "dstudio/render/scene_renderer.h"
#include "live_viewer.h"
#include "number_options.h"

namespace dstudio::viewer {
namespace {

// The command line as read: the window's options, and the options that are text until the
// viewer's run turns them into its options (where a wrong one is a UsageError).
struct CommandLine {
  ViewerOptions o;
  std::string zeroing = "none", screenshot, record_out;
  double target = 0.0, bench = 0.0, record = 0.0;
  std::vector<int> size{o.width, o.height};
  std::vector<std::string> forks;
  bool no_plugins = false;  // read before the plugins load (apply_no_plugins_option)
  CLI::Option* target_option = nullptr;
  CLI::Option* size_option = nullptr;
};

// Plugins' token mixers may be inside the checkpoint.
void load_plugins_reporting_refusals(int argc, char** argv) {
  plugins::apply_no_plugins_option(argc, argv);
  for (const auto& r : plugins::load_default_plugins())
    if (!r.loaded)
      std::fprintf(stderr, "decision-viewer: plugin %s refused: %s\n", r.file.c_str(),
                   r.error.c_str());
}

// What plays, and how: the policy or episode, its task, seed, conditioning and speed.
void add_playing_options(CLI::App& app, CommandLine& c) {
  auto& o = c.o;
  app.add_option("checkpoint", o.checkpoint, "The policy: a checkpoint (.pt) of any variant")
      ->check(CLI::ExistingFile);
  app.add_option(
         "--dataset", o.dataset,
         "A dataset: its episode returns add targets on offer; with --episode, replay that episode")
      ->check(CLI::ExistingPath);
  app.add_option("--episode", o.episode,
                 "Replay this episode of --dataset from its simulator states (no policy)")
      ->check(dstudio::cli::whole_number(0, std::numeric_limits<int>::max()));
  app.add_option("--behaviour", o.behaviour,
                 "Play a behaviour policy instead of a checkpoint, with its mean action: dapg (an "
                 "Adroit task's DAPG expert, shipped), a D4RL expert file whose metadata/policy "
                 "holds it, or a policy JSON. Beside a checkpoint, fork to it: --fork "
                 "STEP:behaviour=dapg");
  app.add_option("--env", o.env_id,
                 "Act in this task instead of the checkpoint's (e.g. hopper-po)");
  app.add_option("--seed", o.seed, "The episode's seed")
      ->check(dstudio::cli::seed_number())
      ->default_val(0);
  c.target_option =
      app.add_option("--target", c.target, "The target return (default: the first on offer)")
          ->check(dstudio::cli::real_number(-models::kMaxTargetReturn, models::kMaxTargetReturn));
  app.add_option("--zeroing", c.zeroing, "Modality zeroing: none, rtg, states or actions")
      ->check(CLI::IsMember({"none", "rtg", "states", "actions"}))
      ->default_val("none");
  app.add_option("--step", o.step, "Open at this step, paused (the policy acts up to it first)")
      ->check(dstudio::cli::whole_number(0, 1'000'000));
  app.add_flag("--paused", o.paused, "Start paused");
  app.add_flag("--no-plugins", c.no_plugins, "Load no plugin (also DSTUDIO_NO_PLUGINS=1)");
  app.add_option("--speed", o.speed,
                 "Times real time; 0 as fast as the policy goes (not with --record: a clip needs "
                 "a clock)")
      ->check(dstudio::cli::real_number(0.0, 64.0))
      ->default_val(1.0);
}

// The window, and the pictures and clips it writes.
void add_window_options(CLI::App& app, CommandLine& c) {
  auto& o = c.o;
  c.size_option = app.add_option("--size", c.size,
                                 "Window size in pixels: width height (default 1280 800, made "
                                 "smaller to fit the screen "
                                 "with its frame)")
                      ->expected(2)
                      ->check(dstudio::cli::whole_number(320, 8192))
                      ->default_str("1280 800");
  app.add_flag("--presentation", o.presentation,
               "Start in presentation mode (large type, controls hidden; F11 toggles)");
  app.add_option("--record-folder", o.record_folder,
                 "Where Record and Screenshot write (default: the working folder)");
  app.add_option("--screenshot", c.screenshot,
                 "Draw the window at --step (playing until there), write it as PNG and exit");
  auto* record_option = app.add_option("--record", c.record,
                                       "Record this many seconds of the episode from --step (at "
                                       "--speed) to --out, and exit: a clip "
                                       "for lecture material, each frame drawn before it is taken")
                            ->check(dstudio::cli::real_number(0.1, 3600.0));
  auto* out_option = app.add_option(
      "--out", c.record_out,
      "With --record: the clip (.mp4; PNG frames in a folder of that name without ffmpeg)");
  record_option->needs(out_option);
  out_option->needs(record_option);
  app.add_option("--fps", o.record_fps, "Frames per second of recordings")
      ->check(dstudio::cli::whole_number(1, 120))
      ->default_val(30);
}

// An option given once per value (--fork A --fork B), each use taking one.
void add_repeatable_option(CLI::App& app, const std::string& name, std::vector<std::string>& values,
                           const std::string& description) {
  app.add_option(name, values, description)
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

// Interventions, forks and the limb colours, and the bench.
void add_intervention_options(CLI::App& app, CommandLine& c) {
  auto& o = c.o;
  add_repeatable_option(
      app, "--intervene", o.interventions,
      "An intervention inside the forward pass from the first step, in dstudio "
      "predict's grammar, e.g. head:2.1=zero, mlp:3=mean, context:3, "
      "steer:2=1.5*direction_L2.json, or a patch from the window at another target, "
      "patch[1200]:head:1.1 (repeatable)");
  add_repeatable_option(
      app, "--fork", c.forks,
      "Fork the episode when it reaches STEP and play the branch beside it as a ghost: "
      "STEP:CHANGE, CHANGE being target=NUMBER, zeroing=NAME, checkpoint=PATH, "
      "behaviour=dapg|FILE (a behaviour policy takes over), interventions=none, "
      "interventions=SPEC;SPEC (these in place of those in force) or an "
      "intervention such as head:2.1=zero (repeatable, up "
      "to 4)");
  app.add_flag("--effects", o.effects,
               "Colour each actuated limb by how much the interventions change its joint's action");
  app.add_option("--bench", c.bench,
                 "Play for this many seconds, print frame times and the configuration, and exit")
      ->check(dstudio::cli::real_number(1.0, 3600.0));
}

// kExitUsage, said on stderr, for options that do not go together; else kExitOk.
int check_usage(const CommandLine& c) {
  const auto& o = c.o;
  if (o.checkpoint.empty() && o.behaviour.empty() && (o.dataset.empty() || o.episode < 0)) {
    std::fprintf(stderr,
                 "decision-viewer: error: give a checkpoint, --behaviour, or --dataset with "
                 "--episode\nRun 'decision-viewer --help' for usage.\n");
    return kExitUsage;
  }
  if (!o.behaviour.empty() && (!o.checkpoint.empty() || o.episode >= 0)) {
    std::fprintf(stderr,
                 "decision-viewer: error: --behaviour plays instead of a checkpoint or a replay; "
                 "beside a checkpoint, fork to it: --fork STEP:behaviour=%s\nRun "
                 "'decision-viewer --help' for usage.\n",
                 o.behaviour.c_str());
    return kExitUsage;
  }
  // A clip plays at a speed of real time; "as fast as the policy goes" has no clock to record by.
  if (c.record > 0 && o.speed <= 0.0) {
    std::fprintf(stderr,
                 "decision-viewer: error: --record with --speed 0: a clip plays at a speed of real "
                 "time, and 0 (as fast as the policy goes) has none; give --speed 1 (or 0.25, "
                 "2...)\nRun 'decision-viewer --help' for usage.\n");
    return kExitUsage;
  }
  return kExitOk;
}

// The window's options from the command line; throws UsageError for a fork or intervention it
// cannot read.
ViewerOptions viewer_options(const CommandLine& c) {
  ViewerOptions o = c.o;
  o.width = c.size.at(0), o.height = c.size.at(1);
  o.zeroing = models::zeroing_from_string(c.zeroing);
  for (const auto& f : c.forks) o.forks.push_back(models::parse_fork(f));
  for (const auto& i : o.interventions)
    if (!models::parse_live_patch(i)) models::parse_intervention(i);
  if (c.target_option->count()) o.target = c.target;
  const bool scripted = !c.screenshot.empty() || c.bench > 0 || c.record > 0;
  if (!c.screenshot.empty() || c.record > 0) o.paused = true;
  if (scripted) o.mouse = false;
  // The default size on a smaller screen: the window and its frame fit it. A size asked for,
  // and the pictures a script takes, keep their size.
  o.fit_screen = !c.size_option->count() && !scripted;
  return o;
}

// --record: the clip from the step asked for, then the program ends.
int record_clip(LiveViewer& viewer, const CommandLine& c, const ViewerOptions& o) {
  const int first = o.step;
  if (!viewer.run_until(
          [first](const models::PlaybackState& s) { return s.frame && s.frame->step == first; },
          600.0))
    throw Error("the policy did not reach step " + std::to_string(first) + " within 10 minutes");
  std::filesystem::path base = c.record_out;
  if (base.extension() == ".mp4") base.replace_extension();
  if (!viewer.start_recording(base, o.record_fps))
    throw Error(c.record_out + ": " + viewer.message());
  const long want = std::lround(c.record * o.record_fps);
  // Each frame waits for the step it shows: allow a slow policy a minute per recorded second.
  viewer.run_until(
      [&](const models::PlaybackState&) {
        return viewer.recorded_frames() >= want || !viewer.recording();
      },
      60.0 + 60.0 * c.record);
  const bool ended_first = !viewer.recording();
  const int frames = viewer.recorded_frames();
  viewer.stop_recording();
  const auto path = viewer.recording_path();
  if (frames == 0 || !std::filesystem::exists(path))
    throw Error(c.record_out + ": " + viewer.message());
  std::printf("wrote %s (%d frames, %.1f s at %d frames per second)%s\n", path.c_str(), frames,
              static_cast<double>(frames) / o.record_fps, o.record_fps,
              ended_first && frames < want ? "; the episode ended first" : "");
  return kExitOk;
}

// --screenshot: the window at the step asked for, with the map of its window drawn.
int take_screenshot(LiveViewer& viewer, const CommandLine& c, const ViewerOptions& o) {
  if (!viewer.run_until([](const models::PlaybackState& s) { return s.frame != nullptr; }, 300.0))
    throw Error("the policy did not reach step " + std::to_string(o.step) + " within 5 minutes");
  viewer.save_screenshot(c.screenshot);
  std::printf("wrote %s\n", c.screenshot.c_str());
  return kExitOk;
}

// The window, run as the command line asks: a bench, a clip, a screenshot, or until it is closed.
int run_viewer(const CommandLine& c) {
  const ViewerOptions o = viewer_options(c);
  LiveViewer viewer(o);
  if (c.bench > 0) {
    std::fputs(viewer.bench(c.bench).text().c_str(), stdout);
    return kExitOk;
  }
  if (c.record > 0) return record_clip(viewer, c, o);
  if (!c.screenshot.empty()) return take_screenshot(viewer, c, o);
  return viewer.run();
}

}  // namespace
}  // namespace dstudio::viewer

int main(int argc, char** argv) {
  using namespace dstudio;
  viewer::load_plugins_reporting_refusals(argc, argv);
  CLI::App app{
      "decision-viewer: a checkpoint's policy acting in its MuJoCo task, live, beside the "
      "attention map of the window it\n"
      "acts on and the episode's return-to-go, return and entropy. Keys: Space play/pause, "
      "Left/Right step, Home/End,\n"
      "[ ] speed, T camera tracking, F11 presentation; mouse: left rotates, right moves, wheel "
      "zooms (Shift: horizontal).\n"
      "Exit codes: 0 done, 1 the work failed (bad input, no display), 2 wrong usage.",
      "decision-viewer"};
  // "program (package) version", as GNU tools and help2man read it.
  const std::string version = studio_version();
  app.set_version_flag(
      "--version", "decision-viewer (Decision Studio) " + version.substr(version.rfind(' ') + 1));
  // The options in the order --help lists them.
  viewer::CommandLine c;
  viewer::add_playing_options(app, c);
  viewer::add_window_options(app, c);
  viewer::add_intervention_options(app, c);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  if (const int usage = viewer::check_usage(c); usage != kExitOk) return usage;
  return run_reporting("decision-viewer", [&] { return viewer::run_viewer(c); });
}

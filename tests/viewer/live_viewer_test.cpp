// decision-viewer as a user drives it, in a real GLFW window under a virtual X server (CTest starts
// this binary with xvfb-run): stepping, seeking, the target return and the modality zeroing, with
// the picture checked to follow, and the policy's actions checked against an EpisodePlayer that
// makes the same requests on its own.

#include "live_viewer.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "dstudio/analysis/locality.h"
#include "dstudio/common/error.h"
#include "dstudio/common/palette.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/env/environment.h"
#include "dstudio/models/episode_player.h"
#include "dstudio/models/playback.h"
#include "dstudio/render/video_file.h"
#include "h5_fixture.h"
#include "maze_episode.h"

namespace dstudio::viewer {
namespace {

namespace fs = std::filesystem;

const fs::path kCheckpoint =
    fs::path(DSTUDIO_RESOURCES_DIR) / "checkpoints" / "hopper-medium-expert-dt.pt";

ViewerOptions paused_at_start() {
  ViewerOptions o;
  o.checkpoint = kCheckpoint;
  o.paused = true;
  o.seed = 3;
  o.target = 3600.0;
  o.width = 1024;
  o.height = 640;
  o.mouse = false;  // the virtual screen's pointer sits over the window
  return o;
}

// How many of the pixels inside `rect` (x, y, w, h) differ between two captures.
long differing_pixels(const render::Image& a, const render::Image& b,
                      const std::array<int, 4>& rect) {
  long n = 0;
  for (int y = rect[1]; y < rect[1] + rect[3]; ++y)
    for (int x = rect[0]; x < rect[0] + rect[2]; ++x) {
      const std::size_t i = (static_cast<std::size_t>(y) * a.width + x) * 3;
      if (a.rgb[i] != b.rgb[i] || a.rgb[i + 1] != b.rgb[i + 1] || a.rgb[i + 2] != b.rgb[i + 2]) ++n;
    }
  return n;
}

bool at_step(LiveViewer& v, int step) {
  return v.run_until(
      [step](const models::PlaybackState& s) { return s.frame && s.frame->step == step; }, 120.0);
}

// Appends the state `e` is in, seen as `obs`, to `d`: a transition's start.
void record_state(data::TransitionArrays& d, const env::Environment& e,
                  const std::vector<float>& obs) {
  d.observations.insert(d.observations.end(), obs.begin(), obs.end());
  d.qpos.insert(d.qpos.end(), e.qpos().begin(), e.qpos().end());
  d.qvel.insert(d.qvel.end(), e.qvel().begin(), e.qvel().end());
}

// Appends what the step taken with `action` did: a transition's end.
void record_step(data::TransitionArrays& d, const std::vector<float>& action,
                 const env::StepResult& r, bool timeout) {
  d.actions.insert(d.actions.end(), action.begin(), action.end());
  d.rewards.push_back(static_cast<float>(r.reward));
  d.terminals.push_back(r.terminated ? 1 : 0);
  d.timeouts.push_back(timeout ? 1 : 0);
}

// A window paused on the first episode of the dataset `file`, replayed.
ViewerOptions replaying(const fs::path& file) {
  ViewerOptions o;
  o.dataset = file;
  o.episode = 0;
  o.paused = true;
  o.width = 1024, o.height = 640;
  o.mouse = false;
  return o;
}

std::string run(const std::string& command) {
  std::string out;
  if (FILE* p = popen((command + " 2>&1").c_str(), "r")) {
    char buffer[4096];
    while (const auto n = std::fread(buffer, 1, sizeof buffer, p)) out.append(buffer, n);
    out += "\n[exit " + std::to_string(WEXITSTATUS(pclose(p))) + "]";
  }
  return out;
}

TEST(LiveViewer, StepsSeeksAndThePictureFollowsTheStepOnScreen) {
  LiveViewer v(paused_at_start());
  ASSERT_TRUE(at_step(v, 0));
  const auto scene = v.scene_rect();
  const auto start = v.capture();
  ASSERT_EQ(start.width, 1024);
  ASSERT_EQ(start.height, 640);

  for (int i = 0; i < 5; ++i) v.step_forward();
  ASSERT_TRUE(at_step(v, 5));
  EXPECT_FALSE(v.shown().playing);
  v.step_back();
  ASSERT_TRUE(at_step(v, 4));
  const auto four = v.capture();
  EXPECT_GT(differing_pixels(start, four, scene), 500) << "the hopper moved between steps 0 and 4";

  // A step the policy has not reached: it acts until there, then pauses with the map drawn.
  v.seek(40);
  ASSERT_TRUE(at_step(v, 40));
  EXPECT_FALSE(v.shown().playing);
  const auto& map = v.shown_map();
  ASSERT_EQ(map.tokens, 60) << "K = 20 steps of R, s, a";
  // Each real query's weights sum to 1 and nothing is above the diagonal.
  const auto& inspection = *v.shown().frame->inspection;
  for (int q = 0; q < map.tokens; ++q) {
    if (!inspection.valid[static_cast<std::size_t>(q)]) continue;
    double sum = 0.0;
    for (int k = 0; k < map.tokens; ++k) {
      if (k > q) {
        EXPECT_EQ(map.at(q, k), 0.0);
      }
      sum += map.at(q, k);
    }
    EXPECT_NEAR(sum, 1.0, 1e-4) << "query " << q;
  }
  const auto forty = v.capture();
  EXPECT_GT(differing_pixels(four, forty, scene), 500);

  // Back to step 4: the same step draws the same picture.
  v.seek(4);
  ASSERT_TRUE(at_step(v, 4));
  const auto four_again = v.capture();
  EXPECT_EQ(differing_pixels(four, four_again, scene), 0);
  EXPECT_NE(v.readout().find("step 4"), std::string::npos) << v.readout();
}

TEST(LiveViewer, TargetAndZeroingActOnThePolicyFromTheStepOnScreen) {
  const auto o = paused_at_start();
  LiveViewer v(o);
  v.seek(20);
  ASSERT_TRUE(at_step(v, 20));
  const auto before = v.capture();
  v.set_target(900.0);
  v.seek(35);
  ASSERT_TRUE(at_step(v, 35));
  v.seek(35);
  v.set_zeroing(models::ModalityZeroing::PastStates);
  v.seek(50);
  ASSERT_TRUE(at_step(v, 50));
  const auto frames = v.player().frames();
  ASSERT_GT(frames.size(), 50u);
  EXPECT_EQ(frames[10]->target, 3600.0);
  EXPECT_EQ(frames[20]->target, 900.0);
  EXPECT_NEAR(frames[20]->return_to_go, 900.0 - frames[20]->return_so_far,
              1e-3);  // rewards summed in float
  EXPECT_EQ(frames[34]->zeroing, models::ModalityZeroing::None);
  EXPECT_EQ(frames[35]->zeroing, models::ModalityZeroing::PastStates);
  EXPECT_NE(v.readout().find("target 900"), std::string::npos) << v.readout();
  EXPECT_NE(v.readout().find("past states"), std::string::npos) << v.readout();

  // The same requests made directly of a player: the same actions, bit for bit.
  models::EpisodePlayer reference(o.checkpoint);
  reference.reset(o.seed, 3600.0);
  while (static_cast<int>(reference.frames().size()) <= 20) reference.step();
  reference.branch(20, 900.0, models::ModalityZeroing::None);
  while (static_cast<int>(reference.frames().size()) <= 35) reference.step();
  reference.branch(35, 900.0, models::ModalityZeroing::PastStates);
  while (static_cast<int>(reference.frames().size()) <= 50) reference.step();
  for (int t : {5, 20, 30, 35, 49}) {
    ASSERT_TRUE(frames[static_cast<std::size_t>(t)]->acted);
    EXPECT_EQ(frames[static_cast<std::size_t>(t)]->action,
              reference.frames()[static_cast<std::size_t>(t)]->action)
        << "step " << t;
  }
  // The picture follows: the conditioning changed what the policy did.
  v.seek(20);
  ASSERT_TRUE(at_step(v, 20));
  const auto after = v.capture();
  EXPECT_GT(differing_pixels(before, after, {0, 0, after.width, after.height}), 0)
      << "the overlay names the new target";
}

// Interventions toggled live at the step on screen act as the same set given to a headless
// player from that step; the limbs, coloured by the change, look different from uncoloured ones.
TEST(LiveViewer, InterventionsToggledLiveActAsTheSameSetFromThatStepHeadless) {
  const auto o = paused_at_start();
  LiveViewer v(o);
  EXPECT_FALSE(v.effects()) << "off by default";
  EXPECT_EQ(v.effect_scale(), 1.0) << "the body's scale, before any change";
  v.set_effects(true);  // the plain action is computed beside the intervened one from now on
  v.seek(15);
  ASSERT_TRUE(at_step(v, 15));
  const std::vector<std::string> specs{"head:2.1=zero", "mlp:3=zero", "context:3"};
  v.set_interventions(specs);
  v.seek(40);
  ASSERT_TRUE(at_step(v, 40));
  const auto frames = v.player().frames();
  ASSERT_GT(frames.size(), 40u);

  models::EpisodePlayer reference(o.checkpoint);
  reference.reset(o.seed, 3600.0);
  while (static_cast<int>(reference.frames().size()) <= 15) reference.step();
  reference.branch(15, 3600.0, models::ModalityZeroing::None, specs);
  while (static_cast<int>(reference.frames().size()) <= 40) reference.step();
  for (std::size_t t = 0; t < 40; ++t)
    ASSERT_EQ(frames[t]->action, reference.frames()[t]->action) << "step " << t;
  EXPECT_TRUE(frames[14]->interventions.empty());
  EXPECT_EQ(frames[15]->interventions, specs);
  EXPECT_EQ(v.player().interventions(), specs);
  EXPECT_THROW(v.set_interventions({"head:4.1=zero"}), UsageError);

  // The effect drawn on the body, one toggle: the plain actions were kept beside the others.
  EXPECT_FALSE(frames[20]->action_without.empty());
  EXPECT_NE(frames[20]->action_without, frames[20]->action);
  EXPECT_TRUE(frames[10]->action_without.empty()) << "nothing to compare with before step 15";
  EXPECT_EQ(v.effect_scale(), 1.0) << "half of hopper's action range, [-1, 1]";
  const auto coloured = v.capture();
  v.set_effects(false);
  const auto plain = v.capture();
  EXPECT_GT(differing_pixels(plain, coloured, v.scene_rect()), 200);
}

// Forks asked for on the command line are made when the main run reaches their step and play
// beside it on one clock, drawn as ghosts; a clip of them lists them frame by frame.
TEST(LiveViewer, ForksPlayBesideTheMainRunAsGhostsAndAreListedInTheirClip) {
  auto o = paused_at_start();
  o.forks = {models::parse_fork("10:target=1200"), models::parse_fork("10:head:1.1=zero")};
  LiveViewer v(o);
  v.seek(60);
  // The viewer asks for each fork once the main run has its step; the player makes it between
  // steps: both forks are there once the state says so.
  ASSERT_TRUE(v.run_until(
      [](const models::PlaybackState& s) {
        return s.frame && s.frame->step == 60 && s.branch_frames.size() == 2 && !s.busy;
      },
      120.0));
  const auto branches = v.player().branches();
  ASSERT_EQ(branches.size(), 2u);
  EXPECT_EQ(branches[0].fork_step, 10);
  EXPECT_EQ(branches[1].label, "head:1.1=zero");
  models::EpisodePlayer reference(o.checkpoint);
  reference.reset(o.seed, 3600.0);
  while (static_cast<int>(reference.frames().size()) <= 10) reference.step();
  reference.branch(10, 1200.0, models::ModalityZeroing::None);
  while (static_cast<int>(reference.frames().size()) <= 60) reference.step();
  const auto lower = v.player().branch_frames(0);
  ASSERT_GT(lower.size(), 59u);
  for (std::size_t t = 0; t < 60; ++t)
    ASSERT_EQ(lower[t]->action, reference.frames()[t]->action) << "step " << t;

  // The legend over the scene: what a ghost is, then each fork by its ghost's colour and change.
  const auto legend = v.fork_legend();
  ASSERT_EQ(legend.size(), 3u);
  EXPECT_EQ(legend[0], std::string(palette::kGhostMeaning));
  EXPECT_EQ(legend[1].rfind("fork 1, green ghost: target=1200 from step 10", 0), 0u) << legend[1];
  EXPECT_EQ(legend[2].rfind("fork 2, violet ghost: head:1.1=zero from step 10", 0), 0u)
      << legend[2];

  const auto with_ghosts = v.capture();
  v.remove_forks();
  EXPECT_TRUE(v.player().branches().empty());
  const auto without = v.capture();
  EXPECT_GT(differing_pixels(with_ghosts, without, v.scene_rect()), 300) << "the ghosts are drawn";

  if (!render::VideoFile::ffmpeg_available()) return;
  test::TempDir dir;
  v.fork(models::parse_branch_change("target=500"));
  ASSERT_TRUE(v.start_recording(dir / "forked", 30));
  ASSERT_TRUE(
      v.run_until([&](const models::PlaybackState&) { return v.recorded_frames() >= 10; }, 120.0));
  v.stop_recording();
  const auto log = models::ClipLog::path_for(dir / "forked.mp4");
  ASSERT_TRUE(fs::exists(log));
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"change\": \"target=500\""), std::string::npos) << text.substr(0, 600);
  EXPECT_NE(text.find("\"fork_step\": 60"), std::string::npos);
  const auto steps = models::ClipLog::read_steps(log);
  ASSERT_GE(steps.size(), 10u);
  EXPECT_EQ(steps.front(), 60);
}

// While the policy plays, the newest step has not acted yet; every drawn frame still shows the
// map of the window acted on to reach it (the step before), not "no map for this step".
TEST(LiveViewer, EveryFrameDrawnWhilePlayingShowsTheMapOfTheWindowActedOn) {
  auto o = paused_at_start();
  o.paused = false;
  LiveViewer v(o);
  ASSERT_TRUE(v.run_until(
      [](const models::PlaybackState& s) { return s.playing && s.frame && s.frame->step >= 2; },
      120.0));
  int drawn = 0, with_map = 0, unacted = 0;
  while (drawn < 60 && v.shown().playing) {
    ASSERT_TRUE(v.frame());
    const auto shown = v.shown();
    ++drawn;
    if (!shown.frame->acted) ++unacted;
    if (v.shown_map().tokens == 0) continue;
    ++with_map;
    // The map is the one of the step before when the step on screen has not acted.
    const auto frames = v.player().frames();
    const auto source = models::acted_window(frames, shown.frame);
    ASSERT_TRUE(source);
    EXPECT_EQ(source->step, shown.frame->acted ? shown.frame->step : shown.frame->step - 1);
    const auto expected = analysis::select_window_map(*source->inspection, v.map());
    ASSERT_EQ(v.shown_map().values, expected.values) << "step " << shown.frame->step;
  }
  ASSERT_GT(drawn, 10);
  EXPECT_GT(unacted, 0) << "playing shows steps that have not acted yet";
  EXPECT_EQ(with_map, drawn);
}

// At the end of an ended episode Record has nothing to take: it says so and writes no file; a
// recording the episode's end stops says so, with where it went.
TEST(LiveViewer, RecordingSaysWhenTheEpisodeEndsItAndRefusesAnEndedEpisode) {
  if (!render::VideoFile::ffmpeg_available()) GTEST_SKIP() << "no ffmpeg with libx264";
  test::TempDir dir;
  auto o = paused_at_start();
  o.target = 100.0;  // a short episode: the hopper falls
  o.speed = 0.0;
  LiveViewer v(o);
  v.play();
  ASSERT_TRUE(v.run_until([](const models::PlaybackState& s) { return s.at_end(); }, 300.0));
  const int last = v.shown().cursor;
  EXPECT_FALSE(v.start_recording(dir / "nothing", 30));
  EXPECT_NE(v.message().find("episode ended at step " + std::to_string(last)), std::string::npos)
      << v.message();
  EXPECT_FALSE(fs::exists(dir / "nothing.mp4"));
  v.seek(last - 5);
  ASSERT_TRUE(at_step(v, last - 5));
  ASSERT_TRUE(v.start_recording(dir / "end", 30));
  ASSERT_TRUE(v.run_until([&](const models::PlaybackState&) { return !v.recording(); }, 120.0));
  EXPECT_NE(
      v.message().find("recording ended (the episode ended at step " + std::to_string(last) + ")"),
      std::string::npos)
      << v.message();
  EXPECT_NE(v.message().find((dir / "end.mp4").string()), std::string::npos) << v.message();
  EXPECT_TRUE(fs::exists(dir / "end.mp4"));
}

// No machine shows hopper's 8,000 steps a second of 64 times real time: the overlay says the rate
// the episode really plays at beside the speed asked for, and the speed alone once paused.
TEST(LiveViewer, TheSpeedSaysTheRealRateWhenTheMachineFallsBehind) {
  auto o = paused_at_start();
  o.paused = false;
  o.speed = 64.0;
  LiveViewer v(o);
  ASSERT_TRUE(v.run_until(
      [&](const models::PlaybackState&) {
        return v.speed_status().find(" real") != std::string::npos;
      },
      120.0))
      << v.speed_status();
  const auto status = v.speed_status();
  ASSERT_EQ(status.rfind("64x asked, ", 0), 0u) << status;
  const double real = std::stod(status.substr(std::string("64x asked, ").size()));
  EXPECT_GT(real, 0.0) << status;
  EXPECT_LT(real, 0.9 * 64.0) << status;
  v.pause();
  (void)v.capture();
  EXPECT_EQ(v.speed_status(), "64x");
}

// An episode that has ended has nothing after its last step to fork: refused, saying so; a step
// before the end still forks.
TEST(LiveViewer, AForkAtTheEndOfAnEndedEpisodeIsRefused) {
  auto o = paused_at_start();
  o.target = 100.0;  // a short episode: the hopper falls
  o.speed = 0.0;
  LiveViewer v(o);
  v.play();
  ASSERT_TRUE(v.run_until([](const models::PlaybackState& s) { return s.at_end(); }, 300.0));
  const int last = v.shown().cursor;
  try {
    v.fork(models::parse_branch_change("target=3600"));
    ADD_FAILURE() << "a fork of the ended episode's last step was taken";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("the episode ended at step " + std::to_string(last)),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(v.player().branches().empty());
  v.seek(last - 10);
  ASSERT_TRUE(at_step(v, last - 10));
  v.fork(models::parse_branch_change("target=3600"));
  EXPECT_EQ(v.player().branches().size(), 1u);
}

// The default 1280 x 800 on a laptop's 1280 x 800 screen with a panel and a title bar: the window
// and its frame inside the work area, at its top left; on a larger screen, as asked.
TEST(LiveViewer, TheDefaultWindowAndItsFrameFitTheScreensWorkArea) {
  // Work area under a 28-pixel panel; a frame of 1 pixel with a 24-pixel title bar.
  const auto fitted = fit_to_work_area(1280, 800, {0, 28, 1280, 772}, {1, 24, 1, 1});
  EXPECT_EQ(fitted, (ScreenRect{1, 52, 1278, 747}));
  EXPECT_LE(fitted[0] + fitted[2] + 1, 1280);
  EXPECT_LE(fitted[1] + fitted[3] + 1, 800);
  EXPECT_EQ(fit_to_work_area(1280, 800, {0, 0, 1920, 1080}, {1, 24, 1, 1}),
            (ScreenRect{1, 24, 1280, 800}));
  EXPECT_EQ(fit_to_work_area(1280, 800, {0, 0, 1280, 800}, {0, 0, 0, 0}),
            (ScreenRect{0, 0, 1280, 800}))
      << "no window manager: no frame";
}

TEST(LiveViewer, TheLagProfileIsTheCoreAnalysisOfTheWindowOnScreen) {
  LiveViewer v(paused_at_start());
  v.set_map({analysis::MapKind::Layer, 2, 0});
  v.seek(30);
  ASSERT_TRUE(at_step(v, 30));
  const auto& window = *v.shown().frame->inspection;
  const auto expected = analysis::select_window_map(window, {analysis::MapKind::Layer, 2, 0});
  ASSERT_EQ(v.shown_map().values.size(), expected.values.size());
  for (std::size_t i = 0; i < expected.values.size(); ++i)
    ASSERT_EQ(v.shown_map().values[i], expected.values[i]);
}

TEST(LiveViewer, PresentationModeGivesThePanelsMoreRoom) {
  LiveViewer v(paused_at_start());
  ASSERT_TRUE(at_step(v, 0));
  const auto normal = v.scene_rect();
  v.set_presentation(true);
  (void)v.capture();
  const auto large = v.scene_rect();
  EXPECT_LT(large[2] * large[3], normal[2] * normal[3]);
  v.set_presentation(false);
  (void)v.capture();
  EXPECT_EQ(v.scene_rect(), normal);
}

TEST(LiveViewer, RecordsFrameByFrameAtAFixedRate) {
  if (!render::VideoFile::ffmpeg_available()) GTEST_SKIP() << "no ffmpeg with libx264";
  test::TempDir dir;
  LiveViewer v(paused_at_start());
  v.seek(10);
  ASSERT_TRUE(at_step(v, 10));
  ASSERT_TRUE(v.start_recording(dir / "clip", 30));
  // 24 frames at 30 fps at 1x: frame i shows step 10 + floor(i / 30 / dt), dt the task's seconds a
  // step.
  ASSERT_TRUE(
      v.run_until([&](const models::PlaybackState&) { return v.recorded_frames() >= 24; }, 120.0));
  const int last_step = v.shown().frame->step;
  // The step on screen (the slider's) is the frame recorded, not the player's, which runs ahead.
  EXPECT_EQ(v.shown().cursor, last_step);
  v.stop_recording();
  EXPECT_FALSE(v.recording());
  EXPECT_EQ(last_step, 10 + static_cast<int>(std::floor(23.0 / 30.0 / v.player().dt() + 1e-9)));
  ASSERT_TRUE(fs::exists(dir / "clip.mp4")) << v.message();
  EXPECT_FALSE(fs::exists(dir / "clip.mp4.part"));
  const auto probe =
      run("ffprobe -v error -count_frames -select_streams v:0 -show_entries "
          "stream=nb_read_frames,width,height,r_frame_rate -of "
          "default=noprint_wrappers=1 " +
          (dir / "clip.mp4").string());
  EXPECT_NE(probe.find("nb_read_frames=24"), std::string::npos) << probe;
  EXPECT_NE(probe.find("r_frame_rate=30/1"), std::string::npos) << probe;
  EXPECT_NE(probe.find("width=1024"), std::string::npos) << probe;
}

// A dataset episode replays from its recorded simulator states: no policy, the same states.
TEST(LiveViewer, ReplaysADatasetEpisodeFromItsRecordedStates) {
  test::TempDir dir;
  env::Environment e("hopper");
  data::TransitionArrays d;
  d.obs_dim = 11, d.act_dim = 3, d.qpos_dim = 6, d.qvel_dim = 6;
  std::vector<float> obs(11);
  e.reset(7, obs);
  const int n = 60;
  for (int t = 0; t < n; ++t) {
    record_state(d, e, obs);
    const std::vector<float> action = {0.1f * std::sin(0.2f * static_cast<float>(t)), 0.05f,
                                       -0.05f};
    const auto r = e.step(action, obs);
    record_step(d, action, r, !r.terminated && t == n - 1);
    if (r.terminated) break;
  }
  const auto file = dir / "replay.hdf5";
  data::write_d4rl(file, d, {{"env", "hopper"}});
  auto o = replaying(file);
  o.width = 800, o.height = 500;
  LiveViewer v(o);
  EXPECT_TRUE(v.player().replay());
  ASSERT_TRUE(at_step(v, 0));
  const auto first = v.capture();
  const int recorded = static_cast<int>(d.rewards.size());
  ASSERT_GE(recorded, 20);
  const int middle = recorded / 2;
  v.seek(middle);
  ASSERT_TRUE(at_step(v, middle));
  const auto& physics = v.shown().frame->physics;
  for (int k = 0; k < 6; ++k)
    EXPECT_NEAR(physics.qpos[static_cast<std::size_t>(k)],
                d.qpos[static_cast<std::size_t>(middle * 6 + k)], 1e-6);
  EXPECT_EQ(v.shown_map().tokens, 0) << "no policy, no map";
  EXPECT_GT(differing_pixels(first, v.capture(), v.scene_rect()), 500);
}

// Pixels inside `rect` (x, y, w, h) for which `colour(r, g, b)` holds.
template <typename Colour>
long pixels_where(const render::Image& image, const std::array<int, 4>& rect, Colour colour) {
  long n = 0;
  for (int y = rect[1]; y < rect[1] + rect[3]; ++y)
    for (int x = rect[0]; x < rect[0] + rect[2]; ++x) {
      const std::size_t i = (static_cast<std::size_t>(y) * image.width + x) * 3;
      if (colour(int{image.rgb[i]}, int{image.rgb[i + 1]}, int{image.rgb[i + 2]})) ++n;
    }
  return n;
}

// AntMaze: a replayed episode is seen from the maze's own camera, over the whole maze, with the
// goal it was collected towards (red-orange) and the navigator's waypoint (blue) on the floor;
// tracking comes down over the ant, and off goes back to the same picture.
TEST(LiveViewer, AMazeEpisodeIsSeenWholeWithItsGoalAndWaypoint) {
  test::TempDir dir;
  const auto file = dir / "maze.hdf5";
  test::write_maze_episode(file, 200);
  LiveViewer v(replaying(file));
  ASSERT_TRUE(at_step(v, 0));
  EXPECT_FALSE(v.tracking()) << "a maze is not followed";
  const auto scene = v.scene_rect();
  const auto overview = v.capture();
  // Lit, the goal (0.95, 0.3, 0.2) has green and blue under 60% of its red, the walls
  // (0.7, 0.5, 0.3) and the ant's legs over 75%; the waypoint (0.2, 0.45, 0.95) is a light blue
  // far bluer than red, the floor's dark blue and the ant's green are not.
  const auto goal_red = [](int r, int g, int b) {
    return r > 120 && 100 * g < 65 * r && 100 * b < 65 * r;
  };
  const auto waypoint_blue = [](int r, int, int b) { return b > r + 100; };
  EXPECT_GT(pixels_where(overview, scene, goal_red), 30) << "the goal's disc";
  EXPECT_GT(pixels_where(overview, scene, waypoint_blue), 10) << "the waypoint's disc";
  v.set_tracking(true);
  EXPECT_TRUE(v.tracking());
  const auto close = v.capture();
  EXPECT_GT(differing_pixels(overview, close, scene), scene[2] * scene[3] / 4);
  v.set_tracking(false);
  EXPECT_EQ(differing_pixels(overview, v.capture(), scene), 0) << "back over the whole maze";
}

// The pen: a replayed episode draws the target pen turned to the file's infos/desired_orien, the
// episode's goal, at every step; the same states with another goal differ only there.
TEST(LiveViewer, APenEpisodeDrawsItsTargetAtTheEpisodesGoal) {
  test::TempDir dir;
  const auto write = [&dir](const std::string& name, const std::vector<float>* goal) {
    env::Environment e("pen");
    data::TransitionArrays d;
    d.obs_dim = 45, d.act_dim = 24, d.qpos_dim = 30, d.qvel_dim = 30;
    std::vector<float> obs(45);
    e.reset(5, obs);
    auto& orien = d.state_infos["desired_orien"];
    orien.dim = 4;
    const std::vector<float> still(24, 0.0f);
    for (int t = 0; t < 10; ++t) {
      record_state(d, e, obs);
      const auto recorded = e.recorded_state().at("desired_orien");
      if (goal)
        orien.values.insert(orien.values.end(), goal->begin(), goal->end());
      else
        for (double q : recorded) orien.values.push_back(static_cast<float>(q));
      record_step(d, still, e.step(still, obs), t == 9);
    }
    const auto file = dir / name;
    data::write_d4rl(file, d, {{"env", "pen"}});
    return file;
  };
  env::Environment reference("pen");
  std::vector<float> obs(45);
  reference.reset(5, obs);
  struct Drawn {
    render::Image image;
    std::vector<double> task_state;
    std::array<int, 4> scene;
  };
  const auto drawn = [](const std::filesystem::path& file, int step) {
    LiveViewer v(replaying(file));
    EXPECT_TRUE(at_step(v, 0));
    v.seek(step);
    EXPECT_TRUE(at_step(v, step));
    auto image = v.capture();
    return Drawn{std::move(image), v.shown().frame->physics.task_state, v.scene_rect()};
  };
  const auto own = write("pen-own.hdf5", nullptr);
  const std::vector<float> upright = {1.0f, 0.0f, 0.0f, 0.0f};
  const auto other = write("pen-other.hdf5", &upright);
  const auto first = drawn(own, 6);
  ASSERT_GE(first.task_state.size(), 4u);
  for (std::size_t k = 0; k < 4; ++k)
    EXPECT_NEAR(first.task_state[k], reference.task_state()[k], 1e-6)
        << "the episode's goal, replayed";
  const auto again = drawn(own, 6);
  const auto moved = drawn(other, 6);
  EXPECT_EQ(moved.task_state[0], 1.0);
  const auto rect = first.scene;
  ASSERT_GT(rect[2] * rect[3], 0);
  EXPECT_EQ(differing_pixels(first.image, again.image, rect), 0)
      << "the same episode draws the same";
  EXPECT_GT(differing_pixels(first.image, moved.image, rect), 200)
      << "another goal turns the target pen";
}

// The kitchen: a replayed episode lists the task's four elements; the microwave, opened at step
// 10 and shut again at step 20, is ticked off from step 11 (the first observation within 0.3 of
// its goal) and stays ticked off, as D4RL pays it once; the camera cannot be made to follow.
TEST(LiveViewer, AKitchenEpisodeTicksOffItsElementsAsTheyAreDone) {
  test::TempDir dir;
  env::Environment e("kitchen-complete-v0");
  data::TransitionArrays d;
  d.obs_dim = 60, d.act_dim = 9, d.qpos_dim = 30, d.qvel_dim = 29;
  std::vector<float> obs(60);
  e.reset(3, obs);
  const std::vector<float> still(9, 0.0f);
  const int n = 30;
  for (int t = 0; t < n; ++t) {
    record_state(d, e, obs);
    if (t == 10 || t == 20) {
      std::vector<double> qpos(e.qpos().begin(), e.qpos().end());
      qpos[22] = t == 10 ? -0.7 : 0.0;  // the microwave's hinge: open, then shut
      e.set_state(qpos, std::vector<double>(29, 0.0));
    }
    const auto r = e.step(still, obs);
    EXPECT_FALSE(r.terminated) << "the kitchen ends an episode on its horizon only";
    record_step(d, still, r, t == n - 1);
  }
  EXPECT_EQ(d.rewards[10], 1.0f) << "the step that opened it paid it";
  const auto file = dir / "kitchen-complete-v0.hdf5";
  data::write_d4rl(file, d, {{"env", "kitchen-complete-v0"}});
  LiveViewer v(replaying(file));
  ASSERT_TRUE(v.player().replay());
  ASSERT_TRUE(at_step(v, 0));
  auto list = v.task_elements();
  ASSERT_EQ(list.size(), 4u);
  EXPECT_EQ(list[0].name, "microwave");
  for (const auto& el : list) EXPECT_FALSE(el.done) << el.name;
  v.seek(10);
  ASSERT_TRUE(at_step(v, 10));
  EXPECT_FALSE(v.task_elements()[0].done);
  v.seek(11);
  ASSERT_TRUE(at_step(v, 11));
  EXPECT_TRUE(v.task_elements()[0].done);
  EXPECT_NEAR(v.task_elements()[0].distance, std::fabs(d.observations[11 * 60 + 22] + 0.75), 1e-6);
  v.seek(25);
  ASSERT_TRUE(at_step(v, 25));
  list = v.task_elements();
  EXPECT_TRUE(list[0].done) << "shut again, still done";
  EXPECT_GT(list[0].distance, 0.7);
  for (std::size_t k = 1; k < 4; ++k) EXPECT_FALSE(list[k].done) << list[k].name;
  v.seek(5);
  ASSERT_TRUE(at_step(v, 5));
  EXPECT_FALSE(v.task_elements()[0].done) << "back before it was opened";
  EXPECT_FALSE(v.tracking());
  const auto before = v.capture();
  v.set_tracking(true);
  EXPECT_FALSE(v.tracking()) << "the kitchen's camera stays on the counter";
  EXPECT_EQ(differing_pixels(before, v.capture(), v.scene_rect()), 0);
}

TEST(VideoFile, PngFramesWithoutFfmpegAndNothingLeftOfAnAbandonedVideo) {
  test::TempDir dir;
  render::Image odd{5, 3, std::vector<std::uint8_t>(45, 200)};
  {
    render::VideoFile frames(dir / "frames", 24, /*frames_only=*/true);
    ASSERT_TRUE(frames.add(odd)) << frames.error();
    ASSERT_TRUE(frames.add(odd)) << frames.error();
    ASSERT_TRUE(frames.finish()) << frames.error();
    EXPECT_EQ(frames.width(), 4);
    EXPECT_EQ(frames.height(), 2);
  }
  EXPECT_TRUE(fs::exists(dir / "frames" / "frame-000001.png"));
  EXPECT_TRUE(fs::exists(dir / "frames" / "recording.txt"));
  if (render::VideoFile::ffmpeg_available()) {
    {
      render::VideoFile video(dir / "gone", 30);
      ASSERT_TRUE(video.add(odd));
    }
    EXPECT_FALSE(fs::exists(dir / "gone.mp4"));
    EXPECT_FALSE(fs::exists(dir / "gone.mp4.part"));
    render::VideoFile empty(dir / "empty", 30);
    EXPECT_FALSE(empty.finish());
    EXPECT_FALSE(fs::exists(dir / "empty.mp4"));
  }
}

TEST(DecisionViewer, ScreenshotBenchAndBadInputFromTheCommandLine) {
  test::TempDir dir;
  const std::string exe = DSTUDIO_VIEWER;
  const auto shot = dir / "shot.png";
  auto out = run(exe + " " + kCheckpoint.string() + " --step 25 --size 900 600 --screenshot " +
                 shot.string());
  EXPECT_NE(out.find("[exit 0]"), std::string::npos) << out;
  ASSERT_TRUE(fs::exists(shot)) << out;
  EXPECT_GT(fs::file_size(shot), 20000u);

  out = run(exe + " " + kCheckpoint.string() + " --bench 2");
  EXPECT_NE(out.find("[exit 0]"), std::string::npos) << out;
  EXPECT_NE(out.find("frames/s"), std::string::npos) << out;
  EXPECT_NE(out.find("p99"), std::string::npos) << out;
  EXPECT_NE(out.find("BLAS"), std::string::npos) << out;
  EXPECT_NE(out.find("attention map shown on"), std::string::npos) << out;

  // A scripted clip: a second of the episode from step 10 at 1x, 24 frames a second.
  out = run(exe + " " + kCheckpoint.string() + " --step 10 --record 1 --fps 24 --out " +
            (dir / "clip.mp4").string());
  EXPECT_NE(out.find("[exit 0]"), std::string::npos) << out;
  EXPECT_NE(out.find("(24 frames, 1.0 s at 24 frames per second)"), std::string::npos) << out;
  if (render::VideoFile::ffmpeg_available()) {
    const auto probe =
        run("ffprobe -v error -count_frames -select_streams v:0 -show_entries "
            "stream=nb_read_frames -of default=noprint_wrappers=1 " +
            (dir / "clip.mp4").string());
    EXPECT_NE(probe.find("nb_read_frames=24"), std::string::npos) << probe;
  }
  out = run(exe + " " + kCheckpoint.string() + " --record 1");
  EXPECT_NE(out.find("[exit 2]"), std::string::npos) << "--record needs --out: " << out;
  // A clip plays at a speed of real time: "as fast as the policy goes" is refused, not taken as 1x.
  out = run(exe + " " + kCheckpoint.string() + " --speed 0 --record 1 --out " +
            (dir / "max.mp4").string());
  EXPECT_NE(out.find("[exit 2]"), std::string::npos) << out;
  EXPECT_NE(out.find("--speed 0"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(dir / "max.mp4"));

  out = run(exe + " " + (dir / "missing.pt").string());
  EXPECT_NE(out.find("[exit 2]"), std::string::npos) << out;
  EXPECT_NE(out.find("missing.pt"), std::string::npos) << out;
  std::ofstream(dir / "not-a-checkpoint.pt") << "hello";
  out = run(exe + " " + (dir / "not-a-checkpoint.pt").string());
  EXPECT_NE(out.find("[exit 1]"), std::string::npos) << out;
  EXPECT_NE(out.find("not-a-checkpoint.pt"), std::string::npos) << out;
  out = run(exe + " " + kCheckpoint.string() + " --zeroing velocity");
  EXPECT_NE(out.find("[exit 2]"), std::string::npos) << out;

  // Interventions and forks are checked before a window opens, naming what does not fit.
  for (const auto& [args, says] : std::vector<std::pair<std::string, std::string>>{
           {"--intervene head:4.1=zero", "the model has 3 layers"},
           {"--intervene head:1.1=resample", "needs a second input"},
           {"--fork 250", "give STEP:CHANGE"},
           {"--fork 10:speed=2", "a fork's change is"},
           {"--fork 10:head:9.1=zero", "head:9.1"},
           {"--fork 10:checkpoint=" + (dir / "gone.pt").string(), "gone.pt"},
           {"--fork 1:target=1 --fork 2:target=2 --fork 3:target=3 --fork 4:target=4 --fork "
            "5:target=5",
            "at most 4 forks"}}) {
    out = run(exe + " " + kCheckpoint.string() + " " + args + " --screenshot " +
              (dir / "no.png").string());
    EXPECT_NE(out.find("[exit 2]"), std::string::npos) << args << ": " << out;
    EXPECT_NE(out.find(says), std::string::npos) << args << ": " << out;
    EXPECT_FALSE(fs::exists(dir / "no.png")) << args;
  }
  // A scripted clip of a fork: the ghost and its curve in every frame, the fork in the log.
  out = run(exe + " " + kCheckpoint.string() + " --step 20 --fork 5:target=1200 --intervene " +
            "mlp:3=zero --effects --record 0.5 --fps 20 --out " + (dir / "fork.mp4").string());
  EXPECT_NE(out.find("[exit 0]"), std::string::npos) << out;
  const auto log = models::ClipLog::path_for(dir / "fork.mp4");
  ASSERT_TRUE(fs::exists(log)) << out;
  EXPECT_EQ(models::ClipLog::read_steps(log).size(), 10u);
}

// Every numeric option refuses what is not a finite number in its range, before a window opens:
// an infinite target once reached an assertion of the target slider, a NaN one never ended.
TEST(DecisionViewer, NumericOptionsRefuseNanInfinitiesAndOutOfRangeValues) {
  const std::string exe = DSTUDIO_VIEWER;
  for (const char* bad :
       {"--target inf", "--target -inf", "--target nan", "--target 1e39", "--target 3e38",
        "--seed 18446744073709551616", "--seed -1", "--seed 9223372036854775808", "--speed nan",
        "--speed inf", "--bench inf", "--bench nan", "--record nan --out x.mp4", "--size 900 nan",
        "--size 1e9 600", "--step -1", "--step 1e9", "--fps nan", "--episode -1"}) {
    const auto out = run("env -u DISPLAY " + exe + " " + kCheckpoint.string() + " " + bad);
    EXPECT_NE(out.find("[exit 2]"), std::string::npos) << bad << ": " << out;
    EXPECT_NE(out.find(std::string(bad).substr(0, std::string(bad).find(' '))), std::string::npos)
        << bad << ": " << out;
  }
}

// A device or a FIFO named as the checkpoint is refused at once, without reading it.
TEST(DecisionViewer, ADeviceOrAFifoAsTheCheckpointIsRefused) {
  test::TempDir dir;
  const std::string exe = DSTUDIO_VIEWER;
  auto out = run(exe + " /dev/zero");
  EXPECT_NE(out.find("[exit 1]"), std::string::npos) << out;
  EXPECT_NE(out.find("/dev/zero: is not a regular file (a character device)"), std::string::npos)
      << out;
  const auto fifo = dir / "policy.pt";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  out = run(exe + " " + fifo.string());
  EXPECT_NE(out.find("[exit 1]"), std::string::npos) << out;
  EXPECT_NE(out.find("not a regular file (a FIFO)"), std::string::npos) << out;
}

}  // namespace
}  // namespace dstudio::viewer

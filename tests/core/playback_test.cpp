// The clock both viewers play and record by, and the changes a fork makes: worked by hand.

#include "dstudio/models/playback.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "dstudio/common/error.h"
#include "h5_fixture.h"

namespace dstudio::models {
namespace {

using testing::HasSubstr;

TEST(Playback, OneListOfSpeedsWithItsNamesAndNeighbours) {
  const std::vector<double> speeds{0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 0.0};
  EXPECT_EQ(playback_speeds(), speeds);
  EXPECT_EQ(speed_label(0.25), "0.25x");
  EXPECT_EQ(speed_label(1.0), "1x");
  EXPECT_EQ(speed_label(0.0), "max");
  EXPECT_EQ(next_speed(1.0, true), 2.0);
  EXPECT_EQ(next_speed(4.0, true), 0.0);
  EXPECT_EQ(next_speed(0.0, true), 0.0) << "max is the end";
  EXPECT_EQ(next_speed(0.1, false), 0.1);
  EXPECT_EQ(next_speed(0.5, false), 0.25);
  EXPECT_EQ(next_speed(3.0, true), 3.0) << "not on the list: left as it is";
}

// Hopper steps are 0.008 s. At 30 frames/s and 1x a frame is 1/30 s = 4.1666 steps: frames 0..6
// show steps 0, 4, 8, 12, 16, 20, 25 (6/30 s = 0.2 s = 25 steps exactly); at 0.5x half as far.
TEST(Playback, ARecordedFrameShowsTheStepReachedAtItsTime) {
  const std::vector<int> at_1x{0, 4, 8, 12, 16, 20, 25};
  for (int i = 0; i < 7; ++i) EXPECT_EQ(recorded_step(0, i, 30, 1.0, 0.008), at_1x[i]) << i;
  EXPECT_EQ(recorded_step(100, 6, 30, 1.0, 0.008), 125) << "from the step recording began";
  EXPECT_EQ(recorded_step(0, 6, 30, 0.5, 0.008), 12);  // 0.1 s = 12.5 steps
  EXPECT_EQ(recorded_step(0, 6, 30, 0.0, 0.008), 25) << "max records at 1x";
  EXPECT_EQ(recorded_step(0, 30, 30, 4.0, 0.008), 500);
  // 1.4 s of 0.008 s steps is step 175, not 174 (35 / 25 / 0.008 is 174.99999999999997).
  EXPECT_EQ(recorded_step(0, 35, 25, 1.0, 0.008), 175);
  EXPECT_EQ(recorded_step(7, 3, 0, 1.0, 0.008), 7) << "no rate: the first step";
}

TEST(Playback, AForkSaysWhenAndWhatItChanges) {
  auto f = parse_fork("250:target=1800");
  EXPECT_EQ(f.step, 250);
  ASSERT_TRUE(f.change.target);
  EXPECT_EQ(*f.change.target, 1800.0);
  EXPECT_EQ(f.change.label, "target=1800");

  f = parse_fork("0:checkpoint=/a/b:c.pt");
  EXPECT_EQ(f.step, 0);
  EXPECT_EQ(f.change.checkpoint, "/a/b:c.pt") << "only the first colon splits";

  EXPECT_EQ(short_label(f.change.label), "checkpoint=b:c.pt");
  EXPECT_EQ(short_label("target=1800"), "target=1800");

  f = parse_fork("12:head:2.1=zero");
  EXPECT_EQ(f.change.interventions, std::vector<std::string>{"head:2.1=zero"});
  EXPECT_FALSE(f.change.target);
  EXPECT_EQ(parse_fork("3:zeroing=states").change.zeroing, ModalityZeroing::PastStates);
  EXPECT_TRUE(parse_fork("3:interventions=none").change.clear_interventions);
  f = parse_fork("4:interventions=head:2.1=zero;mlp:1=mean@step:2");
  EXPECT_TRUE(f.change.clear_interventions) << "a list takes the place of those in force";
  EXPECT_EQ(f.change.interventions,
            (std::vector<std::string>{"head:2.1=zero", "mlp:1=mean@step:2"}));

  // Every kind of change a fork on screen has is written so that it reads back the same: what the
  // studio hands decision-viewer for its forks.
  BranchChange typed;
  typed.clear_interventions = true;
  typed.interventions = {"head:1.1=zero", "context:3"};
  BranchChange cleared;
  cleared.clear_interventions = true;
  for (const std::string spec : {"target=1800.5", "zeroing=states", "checkpoint=/a/b:c.pt",
                                 "interventions=none", "head:2.1=zero"})
    EXPECT_EQ(change_text(parse_branch_change(spec)), spec);
  const auto again = parse_branch_change(change_text(typed));
  EXPECT_TRUE(again.clear_interventions);
  EXPECT_EQ(again.interventions, typed.interventions);
  EXPECT_EQ(change_text(cleared), "interventions=none");

  const std::vector<std::pair<std::string, std::string>> refused{
      {"target=1800", "give STEP:CHANGE"},
      {"-1:target=1", "whole number from 0"},
      {"2.5:target=1", "whole number from 0"},
      {"x:target=1", "is not a number"},
      {"5:target=lots", "\"lots\" is not a number"},
      {"5:zeroing=legs", "legs"},
      {"5:checkpoint=", "name the checkpoint"},
      {"5:interventions=some", "interventions=none clears them"},
      {"5:interventions=head:1.1=zero;", "interventions=none clears them"},
      {"5:speed=2", "a fork's change is target=NUMBER"}};
  for (const auto& [spec, message] : refused) {
    try {
      parse_fork(spec);
      ADD_FAILURE() << spec << " was taken";
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr(message)) << spec;
    }
  }
}

// A click on a head in the viewers' grid cycles it: alone, zeroed, mean-ablated, alone again;
// other specs stay where they were.
TEST(Playback, LiveEditsTouchOneSiteAndLeaveTheRest) {
  std::vector<std::string> specs{"context:4", "head:1.2=zero@step:3"};
  EXPECT_EQ(ablation_of(specs, "head:1.2"), "") << "limited to a step: not the grid's";
  auto a = with_ablation(specs, "head:2.1", next_ablation(ablation_of(specs, "head:2.1")));
  EXPECT_EQ(a, (std::vector<std::string>{"context:4", "head:1.2=zero@step:3", "head:2.1=zero"}));
  a = with_ablation(a, "head:2.1", next_ablation(ablation_of(a, "head:2.1")));
  EXPECT_EQ(a.back(), "head:2.1=mean");
  EXPECT_EQ(a.size(), 3u);
  a = with_ablation(a, "head:2.1", next_ablation(ablation_of(a, "head:2.1")));
  EXPECT_EQ(a, specs);
  a = with_ablation(a, "mlp:3", "zero");
  EXPECT_EQ(ablation_of(a, "mlp:3"), "zero");
  EXPECT_EQ(ablation_of(a, "mlp:2"), "");
  EXPECT_THROW(with_ablation(a, "mlp:3", "twice"), UsageError);

  EXPECT_EQ(context_of(a), 4);
  a = with_context(a, 2);
  EXPECT_EQ(context_of(a), 2);
  EXPECT_EQ(std::count(a.begin(), a.end(), "context:2"), 1);
  EXPECT_EQ(context_of(with_context(a, 0)), 0);

  a = with_steering({}, 2, 1.5, "direction_L2.json");
  EXPECT_EQ(a, std::vector<std::string>{"steer:2=1.5*direction_L2.json"});
  a = with_steering(a, 2, -0.25, "direction_L2.json");
  EXPECT_EQ(a, std::vector<std::string>{"steer:2=-0.25*direction_L2.json"});
  EXPECT_TRUE(with_steering(a, 2, 0.0, "direction_L2.json").empty());
}

TEST(Playback, APatchFromAnotherTargetIsOneSpecTheGridToggles) {
  const auto p = parse_live_patch("patch[1200]:head:2.1");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->target, 1200.0);
  EXPECT_EQ(p->site, "head:2.1");
  EXPECT_FALSE(parse_live_patch("head:2.1=zero"));
  EXPECT_THROW(parse_live_patch("patch[1200]head:2.1"), UsageError);
  EXPECT_THROW(parse_live_patch("patch[1200]:head:2"), UsageError);
  EXPECT_EQ(live_patch_spec(1200.0, "resid:2.14"), "patch[1200]:resid:2.14");
  auto specs = with_patch({"head:2.1=zero", "context:3"}, "head:2.1", 1200.0);
  EXPECT_EQ(specs, (std::vector<std::string>{"context:3", "patch[1200]:head:2.1"}));
  EXPECT_TRUE(patched(specs, "head:2.1"));
  EXPECT_FALSE(patched(specs, "head:1.1"));
  specs = with_patch(specs, "head:2.1", 900.0);
  EXPECT_EQ(specs.back(), "patch[900]:head:2.1");
  EXPECT_EQ(specs.size(), 2u);
  EXPECT_EQ(with_patch(specs, "head:2.1", std::nullopt), std::vector<std::string>{"context:3"});
}

// Hopper steps are 0.008 s: 125 steps a second is 1x. A machine that shows 50 steps a second
// plays at 0.4x; the label says so beside the speed asked for, and says nothing while it keeps up.
TEST(Playback, TheRealRateIsMeasuredFromTheStepsShownAndSaidWhenItFallsBehind) {
  PlaybackRate rate(0.008, 2.0);
  EXPECT_FALSE(rate.rate()) << "nothing measured yet";
  for (int i = 0; i <= 10; ++i) rate.add(100.0 + 0.05 * i, 2 * i);  // 0.5 s, 20 steps
  EXPECT_FALSE(rate.rate()) << "half a second is too short to say";
  for (int i = 11; i <= 60; ++i) rate.add(100.0 + 0.05 * i, 2 * i);  // 3 s at 40 steps/s
  ASSERT_TRUE(rate.rate());
  EXPECT_NEAR(*rate.rate(), 40 * 0.008, 1e-9);
  // Faster from here: after a whole window, only the new pace counts.
  for (int i = 1; i <= 60; ++i) rate.add(103.0 + 0.05 * i, 120 + 5 * i);  // 100 steps/s
  EXPECT_NEAR(*rate.rate(), 0.8, 1e-9);
  rate.add(106.1, 3);  // a seek back, or a new episode: measured afresh
  EXPECT_FALSE(rate.rate());
  rate.add(107.2, 3 + 125);
  EXPECT_NEAR(*rate.rate(), 1.0 / 1.1, 1e-9);
  rate.reset();
  EXPECT_FALSE(rate.rate());

  EXPECT_FALSE(falls_behind(1.0, std::nullopt));
  EXPECT_FALSE(falls_behind(1.0, 0.95));
  EXPECT_TRUE(falls_behind(1.0, 0.42));
  EXPECT_FALSE(falls_behind(0.0, 0.42)) << "max is as fast as the policy acts: never behind";
  EXPECT_EQ(speed_status(1.0, std::nullopt), "1x");
  EXPECT_EQ(speed_status(1.0, 0.97), "1x");
  EXPECT_EQ(speed_status(1.0, 0.4237), "1x asked, 0.42x real");
  EXPECT_EQ(speed_status(4.0, 0.4), "4x asked, 0.4x real");
  EXPECT_EQ(speed_status(0.25, 0.031), "0.25x asked, 0.031x real");
  EXPECT_EQ(speed_status(0.0, 3.104), "max, 3.1x real");
  EXPECT_EQ(speed_status(0.0, std::nullopt), "max");
}

// A fork's legend says which ghost it is, in the word its colour is called by, and what changed.
TEST(Playback, AForksLegendNamesItsGhostsColourAndItsChange) {
  EXPECT_EQ(fork_legend(0, 100, "target=1200"), "fork 1, green ghost: target=1200 from step 100");
  EXPECT_EQ(fork_legend(1, 100, "context:1"), "fork 2, violet ghost: context:1 from step 100");
  EXPECT_EQ(fork_legend(2, 0, "checkpoint=/a/b/gdt.pt"),
            "fork 3, yellow ghost: checkpoint=gdt.pt from step 0");
  EXPECT_EQ(std::string(kActionDifferenceName).find("L2"), std::string::npos)
      << "L2 names a layer beside it";
}

// A clip's log says what each frame showed; read back with a standard JSON reader.
TEST(Playback, AClipLogSaysWhatEachFrameShowedAndReadsBack) {
  test::TempDir dir;
  ClipLog log("decision-viewer", "dt.pt", 7, 120, 30, 0.5);
  log.add({120, 285.5, 3600.0, "none", {}, {}});
  log.add({122, 291.0, 3600.0, "none", {"head:2.1=zero"}, {{"target=1200", 60, 122, 280.25}}});
  const auto path = ClipLog::path_for(dir / "clip.mp4");
  EXPECT_EQ(path, dir / "clip.json");
  EXPECT_EQ(ClipLog::path_for(dir / "frames"), dir / "frames.json");
  log.write(path);
  EXPECT_EQ(ClipLog::read_steps(path), (std::vector<int>{120, 122}));
  const auto j = nlohmann::json::parse(std::ifstream(path));
  EXPECT_EQ(j["seed"], 7);
  EXPECT_EQ(j["speed"], 0.5);
  EXPECT_EQ(j["frames"][1]["interventions"][0], "head:2.1=zero");
  EXPECT_EQ(j["frames"][1]["forks"][0]["change"], "target=1200");
  EXPECT_EQ(j["frames"][1]["forks"][0]["return"], 280.25);
  EXPECT_FALSE(j["frames"][0].contains("forks"));
  std::ofstream(dir / "other.json") << R"({"frames": [{"step": 1.5}]})";
  EXPECT_THROW(ClipLog::read_steps(dir / "other.json"), Error);
  std::ofstream(dir / "list.json") << "[1, 2]";
  EXPECT_THROW(ClipLog::read_steps(dir / "list.json"), Error);
}

// The log as its writer wrote it before its table, key for key, forks included; and a log the
// studio recorded then (tests/data/saved/clip-log) still reads.
TEST(Playback, AClipLogIsWrittenAsBeforeAndOldLogsRead) {
  ClipLog log("decision-studio", "dt (dt)", 3, 40, 30, 1.0);
  log.add({40, 100.5, 3600.0, "none", {}, {}});
  log.add({42, 104.25, 1800.0, "states", {"head:1.1=zero"}, {{"zeroing=states", 41, 42, 103.0}}});
  nlohmann::ordered_json before = {{"viewer", "decision-studio"},
                                   {"source", "dt (dt)"},
                                   {"seed", 3},
                                   {"first_step", 40},
                                   {"fps", 30},
                                   {"speed", 1.0},
                                   {"frames", nlohmann::ordered_json::array()}};
  before["frames"].push_back({{"step", 40},
                              {"return", 100.5},
                              {"target", 3600.0},
                              {"zeroing", "none"},
                              {"interventions", nlohmann::ordered_json::array()}});
  before["frames"].push_back(
      {{"step", 42},
       {"return", 104.25},
       {"target", 1800.0},
       {"zeroing", "states"},
       {"interventions", {"head:1.1=zero"}},
       {"forks",
        {{{"change", "zeroing=states"}, {"fork_step", 41}, {"step", 42}, {"return", 103.0}}}}});
  EXPECT_EQ(log.json(), before.dump(1) + "\n");
  const auto steps =
      ClipLog::read_steps(std::string(DSTUDIO_TEST_DATA) + "/saved/clip-log/viewer.json");
  ASSERT_GE(steps.size(), 3u);
  EXPECT_EQ(steps[0], 180);
  EXPECT_EQ(steps[1], 184);
  test::TempDir dir;
  std::ofstream(dir / "no-frames.json") << R"({"viewer": "x"})";
  EXPECT_THAT([&] { (void)ClipLog::read_steps(dir / "no-frames.json"); },
              testing::ThrowsMessage<Error>(testing::HasSubstr("no frames (not a clip log)")));
}

}  // namespace
}  // namespace dstudio::models

// The clock both viewers play and record by, and the changes a fork makes: worked by hand.

#include "dstudio/models/playback.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dstudio/common/error.h"

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

  f = parse_fork("12:head:2.1=zero");
  EXPECT_EQ(f.change.interventions, std::vector<std::string>{"head:2.1=zero"});
  EXPECT_FALSE(f.change.target);
  EXPECT_EQ(parse_fork("3:zeroing=states").change.zeroing, ModalityZeroing::PastStates);
  EXPECT_TRUE(parse_fork("3:interventions=none").change.clear_interventions);

  const std::vector<std::pair<std::string, std::string>> refused{
      {"target=1800", "give STEP:CHANGE"},
      {"-1:target=1", "whole number from 0"},
      {"2.5:target=1", "whole number from 0"},
      {"x:target=1", "is not a number"},
      {"5:target=lots", "\"lots\" is not a number"},
      {"5:zeroing=legs", "legs"},
      {"5:checkpoint=", "name the checkpoint"},
      {"5:interventions=some", "interventions=none clears them"},
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

}  // namespace
}  // namespace dstudio::models

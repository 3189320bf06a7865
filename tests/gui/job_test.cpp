// The window's one way of running work off its thread (job.h): results delivered on the GUI
// thread, failures with their message, cancellation, visible restarts, a destructor that waits.

#include "job.h"

#include <gtest/gtest.h>

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QThread>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <thread>

#include "dstudio/common/error.h"
#include "test_application.h"

namespace dstudio::studio {
namespace {

class JobTest : public testing::Test {
 protected:
  static void SetUpTestSuite() { test::ensure_application(); }
};

// Work that polls until it is cancelled (or ten seconds pass, which a test then reports).
Job::Work until_cancelled(std::shared_ptr<std::atomic<bool>> returned = nullptr) {
  return [returned](const Progress& progress) -> Job::Deliver {
    for (int i = 0; i < 10000; ++i) {
      try {
        progress.update(i / 10000.0, "waiting");
      } catch (...) {
        if (returned) *returned = true;
        throw;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return [] {};
  };
}

TEST_F(JobTest, DeliversTheResultOnTheGuiThreadAfterTheWork) {
  Job job("Computing");
  QSignalSpy finished(&job, &Job::finished);
  QSignalSpy started(&job, &Job::started);
  const auto gui = std::this_thread::get_id();
  std::thread::id worker, delivered_on;
  int value = 0;
  // The work waits until the test has seen it running: a quick worker could end before the check.
  std::promise<void> go;
  auto released = go.get_future().share();
  job.start(
      [&, released](const Progress& progress) -> Job::Deliver {
        worker = std::this_thread::get_id();
        released.wait_for(std::chrono::seconds(10));
        progress.update(0.5, "half way");
        const int v = 6 * 7;
        return [&, v] {
          delivered_on = std::this_thread::get_id();
          value = v;
        };
      },
      "the answer");
  EXPECT_TRUE(job.isRunning());
  ASSERT_EQ(started.size(), 1);
  EXPECT_EQ(started.front().front().toString(), "the answer");
  go.set_value();
  ASSERT_TRUE(finished.wait(10000));
  EXPECT_EQ(value, 42);
  EXPECT_EQ(delivered_on, gui);
  EXPECT_NE(worker, gui);
  EXPECT_EQ(job.lastEnd(), Job::End::Done);
  EXPECT_EQ(finished.front().front().value<Job::End>(), Job::End::Done);
  EXPECT_FALSE(job.isRunning());
  EXPECT_EQ(job.stage(), "half way");
}

TEST_F(JobTest, AFailureEndsTheRunWithItsMessageAndDeliversNothing) {
  Job job("Reading");
  QSignalSpy finished(&job, &Job::finished);
  bool delivered = false;
  job.start([&](const Progress&) -> Job::Deliver {
    throw Error("broken.pt: not a checkpoint");
    return [&] { delivered = true; };
  });
  ASSERT_TRUE(finished.wait(10000));
  EXPECT_EQ(job.lastEnd(), Job::End::Failed);
  EXPECT_EQ(job.lastError(), "broken.pt: not a checkpoint");
  EXPECT_EQ(finished.front().at(1).toString(), "broken.pt: not a checkpoint");
  EXPECT_FALSE(delivered);
}

TEST_F(JobTest, ShowingAResultThatThrowsIsAFailureToo) {
  Job job("Showing");
  QSignalSpy finished(&job, &Job::finished);
  job.start(
      [](const Progress&) -> Job::Deliver { return [] { throw Error("the maps do not fit"); }; });
  ASSERT_TRUE(finished.wait(10000));
  EXPECT_EQ(job.lastEnd(), Job::End::Failed);
  EXPECT_EQ(job.lastError(), "the maps do not fit");
}

TEST_F(JobTest, CancelStopsTheWorkAtItsNextPoll) {
  Job job("Waiting");
  QSignalSpy finished(&job, &Job::finished);
  job.start(until_cancelled());
  ASSERT_TRUE(test::wait_until([&] { return job.fraction() > 0.0; }, 10000));
  QElapsedTimer clock;
  clock.start();
  job.cancel();
  ASSERT_TRUE(finished.wait(10000));
  EXPECT_LT(clock.elapsed(), 2000);
  EXPECT_EQ(job.lastEnd(), Job::End::Cancelled);
  EXPECT_FALSE(job.isRunning());
}

TEST_F(JobTest, ASecondRequestStopsTheFirstVisiblyAndOnlyTheNewestDelivers) {
  Job job("Inspecting");
  QSignalSpy finished(&job, &Job::finished);
  QSignalSpy restarting(&job, &Job::restarting);
  auto first_returned = std::make_shared<std::atomic<bool>>(false);
  job.start(until_cancelled(first_returned), "first");
  int delivered = 0;
  job.start([&](const Progress&) -> Job::Deliver { return [&] { delivered = 2; }; }, "second");
  ASSERT_EQ(restarting.size(), 1);
  EXPECT_EQ(restarting.front().front().toString(), "second");
  EXPECT_TRUE(job.isRunning());
  ASSERT_TRUE(finished.wait(10000));
  EXPECT_EQ(finished.size(), 1) << "the replaced run reports nothing";
  EXPECT_TRUE(*first_returned);
  EXPECT_EQ(delivered, 2);
  EXPECT_EQ(job.label(), "second");
  EXPECT_EQ(job.lastEnd(), Job::End::Done);
}

TEST_F(JobTest, CancelAlsoDropsARequestWaitingBehindTheRun) {
  Job job("Inspecting");
  QSignalSpy finished(&job, &Job::finished);
  bool delivered = false;
  job.start(until_cancelled(), "first");
  job.start([&](const Progress&) -> Job::Deliver { return [&] { delivered = true; }; }, "second");
  job.cancel();
  ASSERT_TRUE(finished.wait(10000));
  // The worker is done and every queued signal delivered: a second end would be here by now.
  ASSERT_TRUE(test::wait_until([&] { return !job.isRunning(); }, 10000));
  test::deliver_posted_events();
  EXPECT_EQ(finished.size(), 1);
  EXPECT_EQ(job.lastEnd(), Job::End::Cancelled);
  EXPECT_FALSE(delivered);
  EXPECT_FALSE(job.isRunning());
}

TEST_F(JobTest, TheDestructorCancelsAndWaitsForTheWorker) {
  auto returned = std::make_shared<std::atomic<bool>>(false);
  auto job = std::make_unique<Job>("Waiting");
  job->start(until_cancelled(returned));
  ASSERT_TRUE(test::wait_until([&] { return job->fraction() > 0.0; }, 10000));
  QElapsedTimer clock;
  clock.start();
  job.reset();
  EXPECT_TRUE(*returned) << "the worker has returned before the job is gone";
  EXPECT_LT(clock.elapsed(), 2000);
}

}  // namespace
}  // namespace dstudio::studio

// The token t-SNE: the token cloud the command line and the view share, the view fed with layouts
// as a worker sends them, colour by modality, timestep or return-to-go, and a run on a worker
// that animates the view and can be cancelled.

#include <gtest/gtest.h>

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QImage>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>
#include <QToolTip>
#include <cmath>
#include <filesystem>
#include <functional>
#include <qcustomplot.h>
#include <random>

#include "dstudio/common/error.h"
#include "dstudio/models/token_cloud.h"
#include "dstudio/viz/tsne_view.h"
#include "h5_fixture.h"
#include "default_dataset.h"
#include "tsne_job.h"

#include "test_application.h"

namespace dstudio::studio {
namespace {

class Tsne : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    test::ensure_application();
    QDir().mkpath(DSTUDIO_SCREENSHOT_DIR);
  }

  // Tokens as a model would embed them: per step an R, s and a token, each modality its own
  // cluster in `dims` dimensions, drifting with the timestep.
  static models::TokenCloud clusters(int steps, int dims, int windows = 4) {
    models::TokenCloud c;
    c.dims = dims;
    std::mt19937 rng(7);
    std::normal_distribution<float> noise(0.0f, 1.0f);
    for (int w = 0; w < windows; ++w)
      for (int t = 0; t < steps; ++t)
        for (int m = 0; m < 3; ++m) {
          for (int q = 0; q < dims; ++q)
            c.points.push_back(noise(rng) + (q == m ? 12.0f : 0.0f) + (q == 3 ? 0.3f * static_cast<float>(t) : 0.0f));
          c.modality.push_back(std::string(1, "Rsa"[m]));
          c.window.push_back(w);
          c.timestep.push_back(t);
          c.return_to_go.push_back(3000.0 - 40.0 * t - 100.0 * w);
        }
    return c;
  }

  static bool wait_until(const std::function<bool()>& done, int ms) { return test::wait_until(done, ms); }

  static QString screenshot(const char* name) { return QDir(DSTUDIO_SCREENSHOT_DIR).filePath(name); }

  static int index_where(const models::TokenCloud& c, const std::function<bool(int)>& f) {
    for (int i = 0; i < c.count(); ++i)
      if (f(i)) return i;
    return -1;
  }
};

TEST_F(Tsne, TokenCloudGathersRealStepsBeforeAndAfterMerging) {
  // Triplet tokens: K = 2 steps, the first one padding; H = 2.
  models::Window win;
  win.steps = 2;
  win.mask = {0.0f, 1.0f};
  win.timesteps = {0, 7};
  win.returns_to_go = {0.0f, 250.0f};
  models::WindowInspection ins;
  ins.hidden = 2;
  ins.token_types = {'R', 's', 'a', 'R', 's', 'a'};
  for (int k = 0; k < 6; ++k) {
    ins.tokens_before_merge.insert(ins.tokens_before_merge.end(), {static_cast<float>(k), 0.5f});
    ins.tokens.insert(ins.tokens.end(), {static_cast<float>(10 + k), 1.5f});
  }
  const auto c = models::token_cloud({win}, {ins});
  ASSERT_EQ(c.count(), 6);
  EXPECT_EQ(c.dims, 2);
  EXPECT_EQ(c.modality, (std::vector<std::string>{"R", "s", "a", "R in block", "s in block", "a in block"}));
  EXPECT_EQ(c.points, (std::vector<float>{3, 0.5f, 4, 0.5f, 5, 0.5f, 13, 1.5f, 14, 1.5f, 15, 1.5f}));  // step 1 only
  EXPECT_EQ(c.timestep, std::vector<int>(6, 7));
  EXPECT_EQ(c.return_to_go, std::vector<double>(6, 250.0));
  EXPECT_EQ(c.modalities().size(), 6u);
  // One merged token per step, no embeddings before merging.
  ins.token_types = {'t', 't'};
  ins.tokens_before_merge.clear();
  ins.tokens = {1, 2, 3, 4};
  win.mask = {1.0f, 1.0f};
  const auto merged = models::token_cloud({win, win}, {ins, ins});
  EXPECT_EQ(merged.count(), 4);
  EXPECT_EQ(merged.modalities(), std::vector<std::string>{"merged"});
  EXPECT_EQ(merged.timestep, (std::vector<int>{0, 7, 0, 7}));
  EXPECT_EQ(merged.window, (std::vector<int>{0, 0, 1, 1}));
  EXPECT_THROW(models::token_cloud({win}, {}), dstudio::Error);
}

TEST_F(Tsne, ViewDrawsEveryPointOfEachLayoutAndReplaysThem) {
  viz::TsneView view;
  view.resize(900, 600);
  auto cloud = clusters(10, 6, 3);
  const int n = cloud.count();  // 90
  view.setTokens("DT", cloud);
  EXPECT_EQ(view.pointCount(), n);
  EXPECT_FALSE(view.hasFigure());
  view.setRunning(true);
  // Layouts arrive faster than the screen redraws: each is kept, the newest drawn.
  for (int k = 1; k <= 5; ++k) {
    std::vector<double> xy;
    for (int i = 0; i < n; ++i) xy.push_back(k * std::cos(i)), xy.push_back(k * std::sin(i) + i % 3);
    view.showLayout(10 * k, xy);
  }
  view.showLayout(60, std::vector<double>(10, 0.0));  // not these tokens: ignored
  EXPECT_EQ(view.snapshotCount(), 5);
  EXPECT_EQ(view.shownSnapshot(), 4);
  ASSERT_TRUE(wait_until([&] { return view.pointsDrawn() == n; }, 2000)) << view.pointsDrawn();
  EXPECT_EQ(view.groupsDrawn(), 3);  // R, s, a
  EXPECT_TRUE(view.status().startsWith("iteration 50")) << view.status().toStdString();
  // The axes hold the newest layout (radius 5 around the origin).
  EXPECT_GT(view.plot()->xAxis->range().upper, 4.9);
  view.finish(0.8124, 1.5);
  EXPECT_FALSE(view.isRunning());
  EXPECT_TRUE(view.status().contains("KL 0.812")) << view.status().toStdString();
  // Replay: the first layout, every point again.
  view.showSnapshot(0);
  EXPECT_EQ(view.shownSnapshot(), 0);
  EXPECT_EQ(view.pointsDrawn(), n);
  EXPECT_LT(view.plot()->xAxis->range().upper, 1.5);
  EXPECT_EQ(view.snapshotIteration(0), 10);
}

TEST_F(Tsne, HoveringAPointShowsWhichTokenItIs) {
  viz::TsneView view;
  view.resize(900, 600);
  auto cloud = clusters(10, 6, 3);
  const int n = cloud.count();
  view.setTokens("DT", cloud);
  std::vector<double> xy;
  for (int i = 0; i < n; ++i) xy.push_back(10.0 * std::cos(i)), xy.push_back(10.0 * std::sin(i) + i % 3);
  view.showLayout(10, xy);
  view.finish(0.5, 1.0);
  view.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&view));
  ASSERT_TRUE(wait_until([&] { return view.pointsDrawn() == n; }, 2000));
  view.plot()->replot();
  for (int i : {0, 17, n - 1}) {
    const QPointF at(view.plot()->xAxis->coordToPixel(xy[2 * i]), view.plot()->yAxis->coordToPixel(xy[2 * i + 1]));
    EXPECT_EQ(view.pointAt(at + QPointF(2, -2)), i);
    const QString text = view.describePoint(i);
    EXPECT_TRUE(text.startsWith(QString::fromStdString(cloud.modality[i]) + " token")) << text.toStdString();
    EXPECT_TRUE(text.contains(QString("timestep %1").arg(cloud.timestep[i]))) << text.toStdString();
    EXPECT_TRUE(text.contains(QString("window %1").arg(cloud.window[i]))) << text.toStdString();
  }
  // Far from every point: nothing.
  EXPECT_EQ(view.pointAt(QPointF(-100, -100)), -1);
  // The mouse over a point shows its tooltip.
  const int i = 17;
  const QPoint at(static_cast<int>(view.plot()->xAxis->coordToPixel(xy[2 * i])), static_cast<int>(view.plot()->yAxis->coordToPixel(xy[2 * i + 1])));
  QTest::mouseMove(view.plot(), at);
  ASSERT_TRUE(wait_until([&] { return QToolTip::isVisible(); }, 2000));
  EXPECT_EQ(QToolTip::text(), view.describePoint(view.pointAt(at)));
}

TEST_F(Tsne, ColourBySwitchesBetweenModalityTimestepAndReturnToGo) {
  viz::TsneView view;
  view.resize(900, 600);
  auto cloud = clusters(12, 6, 2);
  const int n = cloud.count();
  view.setTokens("DT", cloud);
  std::vector<double> xy;
  for (int i = 0; i < n; ++i) xy.push_back(i % 7), xy.push_back(i / 7);
  view.showLayout(10, xy);
  view.showSnapshot(0);
  const int r = index_where(cloud, [&](int i) { return cloud.modality[static_cast<std::size_t>(i)] == "R"; });
  const int s = index_where(cloud, [&](int i) { return cloud.modality[static_cast<std::size_t>(i)] == "s"; });
  const int a = index_where(cloud, [&](int i) { return cloud.modality[static_cast<std::size_t>(i)] == "a"; });
  // Modality: Okabe-Ito blue, vermillion and bluish green; a legend, no colour scale.
  EXPECT_EQ(view.colourBy(), viz::TsneView::ColourBy::Modality);
  EXPECT_EQ(view.groupsDrawn(), 3);
  EXPECT_EQ(view.colourOf(r), QColor(0, 114, 178));
  EXPECT_EQ(view.colourOf(s), QColor(213, 94, 0));
  EXPECT_EQ(view.colourOf(a), QColor(0, 158, 115));
  EXPECT_TRUE(view.plot()->legend->visible());
  EXPECT_FALSE(view.colourScaleShown());
  // Timestep: viridis from dark violet (first step) to yellow (last), with a colour scale.
  view.setColourBy(viz::TsneView::ColourBy::Timestep);
  EXPECT_TRUE(view.colourScaleShown());
  EXPECT_FALSE(view.plot()->legend->visible());
  EXPECT_EQ(view.pointsDrawn(), n);
  EXPECT_GT(view.groupsDrawn(), 3);
  const int first = index_where(cloud, [&](int i) { return cloud.timestep[static_cast<std::size_t>(i)] == 0; });
  const int last = index_where(cloud, [&](int i) { return cloud.timestep[static_cast<std::size_t>(i)] == 11; });
  EXPECT_LT(view.colourOf(first).green(), 60);
  EXPECT_GT(view.colourOf(first).blue(), view.colourOf(first).green());
  EXPECT_GT(view.colourOf(last).green(), 200);
  EXPECT_GT(view.colourOf(last).red(), 200);
  EXPECT_EQ(view.colourOf(r), view.colourOf(first)) << "same step, same colour whatever the modality";
  // Return-to-go falls with the step: the colours turn round.
  view.setColourBy(viz::TsneView::ColourBy::ReturnToGo);
  EXPECT_TRUE(view.colourScaleShown());
  EXPECT_GT(view.colourOf(first).green(), view.colourOf(last).green());
  // And back: three groups again, the scale gone.
  view.setColourBy(viz::TsneView::ColourBy::Modality);
  EXPECT_EQ(view.groupsDrawn(), 3);
  EXPECT_FALSE(view.colourScaleShown());
}

TEST_F(Tsne, JobAnimatesTheViewFromAWorkerAndCanBeCancelled) {
  viz::TsneView view;
  view.resize(1000, 650);
  view.show();
  TsneJob job(&view);
  const auto cloud = clusters(25, 8, 4);  // 300 tokens
  analysis::TsneConfig config;
  config.perplexity = 20;
  config.iterations = 400;
  QSignalSpy finished(&job, &TsneJob::finished);
  QElapsedTimer clock;
  clock.start();
  job.start("synthetic tokens", cloud, config);
  EXPECT_LT(clock.elapsed(), 500) << "start returns at once: the work is on a worker";
  EXPECT_TRUE(job.isRunning());
  EXPECT_TRUE(view.isRunning());
  // Mid-animation, while the worker iterates and the GUI thread keeps drawing.
  ASSERT_TRUE(wait_until([&] { return view.snapshotCount() >= 12; }, 60000));
  QTest::qWait(50);
  view.grab().save(screenshot("tsne-mid-animation.png"));
  ASSERT_TRUE(wait_until([&] { return finished.count() == 1; }, 120000));
  EXPECT_FALSE(job.outcome().cancelled);
  EXPECT_TRUE(job.outcome().error.isEmpty()) << job.outcome().error.toStdString();
  ASSERT_TRUE(wait_until([&] { return view.snapshotCount() == 40; }, 5000)) << view.snapshotCount();  // every 10 iterations
  EXPECT_EQ(view.snapshotIteration(39), 400);
  EXPECT_GT(view.kl(), 0.0);
  EXPECT_EQ(view.pointsDrawn(), 300);
  EXPECT_FALSE(view.isRunning());
  view.grab().save(screenshot("tsne-after.png"));
  view.setColourBy(viz::TsneView::ColourBy::Timestep);
  view.grab().save(screenshot("tsne-by-timestep.png"));
  // The figure for a paper: IEEE's column, coloured as on screen, with the coordinates as CSV.
  viz::FigureStyle ieee;
  for (const auto& p : viz::venue_presets())
    if (p.name.startsWith("IEEE")) ieee = p.style;
  const auto by_step = view.exportFigure(screenshot("tsne-ieee-timestep").toStdString(), ieee);
  EXPECT_EQ(by_step.size(), 4u);
  view.setColourBy(viz::TsneView::ColourBy::Modality);
  const auto by_modality = view.exportFigure(screenshot("tsne-ieee-modality").toStdString(), ieee);
  ASSERT_EQ(by_modality.size(), 4u);
  const QImage png(screenshot("tsne-ieee-modality.png"));
  EXPECT_EQ(png.width(), 1980);
  EXPECT_EQ(png.height(), 1500);

  // A long run, cancelled after its first layouts: the worker stops at its next poll.
  config.iterations = 200000;
  job.start("synthetic tokens", cloud, config);
  ASSERT_TRUE(wait_until([&] { return view.snapshotCount() >= 3; }, 60000));
  clock.restart();
  job.cancel();
  ASSERT_TRUE(wait_until([&] { return finished.count() == 2; }, 10000));
  EXPECT_LT(clock.elapsed(), 5000);
  EXPECT_TRUE(job.outcome().cancelled);
  EXPECT_FALSE(job.isRunning());
  EXPECT_FALSE(view.isRunning());
  EXPECT_LT(view.snapshotCount(), 20000);
  EXPECT_TRUE(view.status().contains("cancelled")) << view.status().toStdString();
  EXPECT_TRUE(view.hasFigure()) << "the layouts so far stay for replay and export";
  // The view's Cancel button asks the job to stop too.
  job.start("synthetic tokens", cloud, config);
  ASSERT_TRUE(wait_until([&] { return view.snapshotCount() >= 1; }, 60000));
  emit view.cancelRequested();
  ASSERT_TRUE(wait_until([&] { return finished.count() == 3; }, 10000));
  EXPECT_TRUE(job.outcome().cancelled);
}

// The studio's path: a checkpoint's own tokens, gathered on the worker as the command line
// gathers them, then laid out.
TEST_F(Tsne, JobLaysOutTheTokensOfACheckpoint) {
  viz::TsneView view;
  view.resize(1000, 650);
  view.show();
  TsneJob job(&view);
  QSignalSpy finished(&job, &TsneJob::finished);
  job.setCheckpoint(studio::defaultCheckpoint(), "DT", 6);
  view.setParameters(30, 250);
  emit view.runRequested(view.perplexity(), view.iterations());  // what Run does
  ASSERT_TRUE(wait_until([&] { return finished.count() == 1; }, 120000));
  ASSERT_TRUE(job.outcome().error.isEmpty()) << job.outcome().error.toStdString();
  // DT's triplets: 6 windows of K = 20 real steps, R, s, a before merging and in the block.
  EXPECT_EQ(job.outcome().points, 6 * 20 * 6);
  EXPECT_EQ(view.pointCount(), job.outcome().points);
  EXPECT_EQ(view.snapshotCount(), 25);
  EXPECT_EQ(view.groupsDrawn(), 6);
  EXPECT_EQ(view.pointsDrawn(), view.pointCount());
  EXPECT_GT(view.kl(), 0.0);
  view.grab().save(screenshot("tsne-dt-checkpoint.png"));
  view.setColourBy(viz::TsneView::ColourBy::ReturnToGo);
  view.grab().save(screenshot("tsne-dt-checkpoint-rtg.png"));
}

TEST_F(Tsne, JobIsCancelledWhenItsOwnerGoesAway) {
  viz::TsneView view;
  auto cloud = clusters(25, 8, 4);
  analysis::TsneConfig config;
  config.perplexity = 20;
  config.iterations = 200000;
  QElapsedTimer clock;
  {
    TsneJob job(&view);
    job.start("synthetic tokens", cloud, config);
    ASSERT_TRUE(wait_until([&] { return view.snapshotCount() >= 1; }, 60000));
    clock.start();
  }  // the destructor cancels and waits
  EXPECT_LT(clock.elapsed(), 5000);
}

}  // namespace
}  // namespace dstudio::studio

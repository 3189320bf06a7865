// The token t-SNE: the token cloud the command line and the view share, the view fed with layouts
// as a worker sends them, colour by modality, timestep or return-to-go, and a run on a worker
// that animates the view and can be cancelled.

#include "dstudio/viz/tsne_view.h"

#include <gtest/gtest.h>
#include <qcustomplot.h>

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QImage>
#include <QLocale>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>
#include <QTimer>
#include <QToolTip>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <thread>

#include "default_dataset.h"
#include "dstudio/common/error.h"
#include "dstudio/common/resources.h"
#include "dstudio/models/token_cloud.h"
#include "h5_fixture.h"
#include "test_application.h"
#include "tsne_job.h"

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
            c.points.push_back(noise(rng) + (q == m ? 12.0f : 0.0f) +
                               (q == 3 ? 0.3f * static_cast<float>(t) : 0.0f));
          c.modality.push_back(std::string(1, "Rsa"[m]));
          c.window.push_back(w);
          c.timestep.push_back(t);
          c.return_to_go.push_back(3000.0 - 40.0 * t - 100.0 * w);
        }
    return c;
  }

  static bool wait_until(const std::function<bool()>& done, int ms) {
    return test::wait_until(done, ms);
  }

  static QString screenshot(const char* name) {
    return QDir(DSTUDIO_SCREENSHOT_DIR).filePath(name);
  }

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
  EXPECT_EQ(c.modality,
            (std::vector<std::string>{"R", "s", "a", "R in block", "s in block", "a in block"}));
  EXPECT_EQ(c.points, (std::vector<float>{3, 0.5f, 4, 0.5f, 5, 0.5f, 13, 1.5f, 14, 1.5f, 15,
                                          1.5f}));  // step 1 only
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

// A goal-reaching task's tokens carry their step's distance to the goal, and the view offers to
// colour by it while the tokens have it.
TEST_F(Tsne, GoalReachingTokensCanBeColouredByTheirDistanceToTheGoal) {
  models::Window win;
  win.steps = 2;
  win.state_dim = 3;
  win.mask = {1.0f, 1.0f};
  win.timesteps = {4, 5};
  win.returns_to_go = {1.0f, 1.0f};
  win.states = {3.0f, 4.0f, 9.0f, 0.0f, 1.0f, 9.0f};  // x, y and a third value per step
  models::WindowInspection ins;
  ins.hidden = 1;
  ins.token_types = {'t', 't'};
  ins.tokens = {0.5f, 0.25f};
  const auto distance = [](std::span<const float> s) { return std::hypot(s[0], s[1]); };
  auto c = models::token_cloud({win}, {ins}, distance);
  ASSERT_EQ(c.goal_distance, (std::vector<double>{5.0, 1.0}));
  EXPECT_TRUE(models::token_cloud({win}, {ins}).goal_distance.empty());

  viz::TsneView view;
  auto cloud = clusters(6, 4, 2);
  for (int i = 0; i < cloud.count(); ++i) cloud.goal_distance.push_back(0.1 * i);
  view.setTokens("DT", cloud);
  view.setColourBy(viz::TsneView::ColourBy::GoalDistance);
  EXPECT_EQ(view.colourBy(), viz::TsneView::ColourBy::GoalDistance);
  // The nearest and the farthest tokens take the two ends of the colour map.
  EXPECT_NE(view.colourOf(0), view.colourOf(cloud.count() - 1));
  EXPECT_EQ(view.figureText().title, QStringLiteral("DT: tokens by distance to goal"));
  // Tokens of a task without a goal: the choice goes, the colouring falls back to modality.
  view.setTokens("DT", clusters(6, 4, 2));
  EXPECT_EQ(view.colourBy(), viz::TsneView::ColourBy::Modality);
  view.setColourBy(viz::TsneView::ColourBy::GoalDistance);
  EXPECT_NE(view.colourBy(), viz::TsneView::ColourBy::GoalDistance);
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
    for (int i = 0; i < n; ++i)
      xy.push_back(k * std::cos(i)), xy.push_back(k * std::sin(i) + i % 3);
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
  for (int i = 0; i < n; ++i)
    xy.push_back(10.0 * std::cos(i)), xy.push_back(10.0 * std::sin(i) + i % 3);
  view.showLayout(10, xy);
  view.finish(0.5, 1.0);
  view.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&view));
  ASSERT_TRUE(wait_until([&] { return view.pointsDrawn() == n; }, 2000));
  view.plot()->replot();
  for (int i : {0, 17, n - 1}) {
    const QPointF at(view.plot()->xAxis->coordToPixel(xy[2 * i]),
                     view.plot()->yAxis->coordToPixel(xy[2 * i + 1]));
    EXPECT_EQ(view.pointAt(at + QPointF(2, -2)), i);
    const QString text = view.describePoint(i);
    EXPECT_TRUE(text.startsWith(QString::fromStdString(cloud.modality[i]) + " token"))
        << text.toStdString();
    EXPECT_TRUE(text.contains(QString("timestep %1").arg(cloud.timestep[i]))) << text.toStdString();
    EXPECT_TRUE(text.contains(QString("window %1").arg(cloud.window[i]))) << text.toStdString();
  }
  // Far from every point: nothing.
  EXPECT_EQ(view.pointAt(QPointF(-100, -100)), -1);
  // The mouse over a point shows its tooltip.
  const int i = 17;
  const QPoint at(static_cast<int>(view.plot()->xAxis->coordToPixel(xy[2 * i])),
                  static_cast<int>(view.plot()->yAxis->coordToPixel(xy[2 * i + 1])));
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
  const int r =
      index_where(cloud, [&](int i) { return cloud.modality[static_cast<std::size_t>(i)] == "R"; });
  const int s =
      index_where(cloud, [&](int i) { return cloud.modality[static_cast<std::size_t>(i)] == "s"; });
  const int a =
      index_where(cloud, [&](int i) { return cloud.modality[static_cast<std::size_t>(i)] == "a"; });
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
  const int first =
      index_where(cloud, [&](int i) { return cloud.timestep[static_cast<std::size_t>(i)] == 0; });
  const int last =
      index_where(cloud, [&](int i) { return cloud.timestep[static_cast<std::size_t>(i)] == 11; });
  EXPECT_LT(view.colourOf(first).green(), 60);
  EXPECT_GT(view.colourOf(first).blue(), view.colourOf(first).green());
  EXPECT_GT(view.colourOf(last).green(), 200);
  EXPECT_GT(view.colourOf(last).red(), 200);
  EXPECT_EQ(view.colourOf(r), view.colourOf(first))
      << "same step, same colour whatever the modality";
  // Return-to-go falls with the step: the colours turn round.
  view.setColourBy(viz::TsneView::ColourBy::ReturnToGo);
  EXPECT_TRUE(view.colourScaleShown());
  EXPECT_GT(view.colourOf(first).green(), view.colourOf(last).green());
  // And back: three groups again, the scale gone.
  view.setColourBy(viz::TsneView::ColourBy::Modality);
  EXPECT_EQ(view.groupsDrawn(), 3);
  EXPECT_FALSE(view.colourScaleShown());
}

// `colour` blended over `under` with the points' alpha (170), as the plot draws a point.
static QColor over(const QColor& colour, const QColor& under) {
  const auto mix = [](int c, int u) { return (c * 170 + u * 85 + 127) / 255; };
  return QColor(mix(colour.red(), under.red()), mix(colour.green(), under.green()),
                mix(colour.blue(), under.blue()));
}

// Every channel within `tolerance`.
static bool near_colour(const QColor& a, const QColor& b, int tolerance = 10) {
  return std::abs(a.red() - b.red()) <= tolerance && std::abs(a.green() - b.green()) <= tolerance &&
         std::abs(a.blue() - b.blue()) <= tolerance;
}

static std::string rgb(const QColor& c) {
  return QString("(%1, %2, %3)").arg(c.red()).arg(c.green()).arg(c.blue()).toStdString();
}

TEST_F(Tsne, ViewRastersEveryPointInItsGroupsColourAndNothingElse) {
  viz::TsneView view;
  view.resize(900, 600);
  // Six tokens at known places: R, s and a apart, an R and an a on the same spot (a, a later
  // group, on top), and a triplet token in the block (an outline triangle).
  models::TokenCloud cloud;
  cloud.modality = {"R", "s", "a", "R", "a", "R in block"};
  cloud.window = std::vector<int>(6, 0);
  cloud.timestep = {0, 1, 2, 3, 4, 5};
  cloud.return_to_go = std::vector<double>(6, 0.0);
  view.setTokens("DT", cloud);
  const std::vector<double> xy = {-10, -10, 10, -10, 10, 10, -10, 10, -10, 10, 0, 0};
  view.showLayout(10, xy);
  view.finish(0.1, 0.1);
  ASSERT_EQ(view.pointsDrawn(), 6);
  EXPECT_EQ(view.groupsDrawn(), 4);
  // The axes hold the layout with a margin of 6 %.
  EXPECT_NEAR(view.plot()->xAxis->range().upper, 10.6, 1e-9);
  EXPECT_NEAR(view.plot()->yAxis->range().lower, -10.6, 1e-9);
  for (const double scale : {1.0, 2.0}) {  // the screen, and an export at twice its resolution
    SCOPED_TRACE(scale);
    const QCustomPlot& plot = *view.plot();
    const QImage image = view.plot()->toPixmap(plot.width(), plot.height(), scale).toImage();
    const auto at = [&](int i) {
      return image.pixelColor(static_cast<int>(plot.xAxis->coordToPixel(xy[2 * i]) * scale),
                              static_cast<int>(plot.yAxis->coordToPixel(xy[2 * i + 1]) * scale));
    };
    const QColor white(255, 255, 255);
    for (int i : {0, 1, 2})
      EXPECT_TRUE(near_colour(at(i), over(view.colourOf(i), white)))
          << i << ": " << rgb(at(i)) << " for " << rgb(view.colourOf(i));
    const QColor stacked = over(view.colourOf(4), over(view.colourOf(3), white));
    EXPECT_TRUE(near_colour(at(3), stacked))
        << rgb(at(3)) << " for " << rgb(stacked) << ": a over R";
    // The triangle (an outline, as QCP draws it) tints a few pixels around its centre blue.
    int outline = 0;
    const int reach = 5 * static_cast<int>(scale);
    const QPoint centre(static_cast<int>(plot.xAxis->coordToPixel(0) * scale),
                        static_cast<int>(plot.yAxis->coordToPixel(0) * scale));
    for (int dy = -reach; dy <= reach; ++dy)
      for (int dx = -reach; dx <= reach; ++dx) {
        const QColor c = image.pixelColor(centre + QPoint(dx, dy));
        outline += c.blue() > c.red() + 40 && c.blue() > c.green() + 20;
      }
    EXPECT_GE(outline, 8 * static_cast<int>(scale));
    EXPECT_LT(outline, (2 * reach + 1) * (2 * reach + 1) / 2) << "an outline, not a filled shape";
    // Between the points, and across most of the plot: the background, untouched.
    for (const auto& [x, y] :
         std::vector<std::pair<double, double>>{{-5, -5}, {5, 5}, {0, -10}, {-10, 0}, {5, 0}})
      EXPECT_EQ(image.pixelColor(static_cast<int>(plot.xAxis->coordToPixel(x) * scale),
                                 static_cast<int>(plot.yAxis->coordToPixel(y) * scale)),
                white)
          << x << ", " << y;
  }
  // A point moved: drawn where it is now, gone from where it was.
  auto moved = xy;
  moved[2] = -5, moved[3] = -5;
  view.showLayout(20, moved);
  view.showSnapshot(1);
  const QImage image = view.plot()->toPixmap().toImage();
  const auto pixel = [&](double x, double y) {
    return image.pixelColor(static_cast<int>(view.plot()->xAxis->coordToPixel(x)),
                            static_cast<int>(view.plot()->yAxis->coordToPixel(y)));
  };
  EXPECT_TRUE(near_colour(pixel(-5, -5), over(view.colourOf(1), Qt::white))) << rgb(pixel(-5, -5));
  EXPECT_EQ(pixel(10, -10), QColor(Qt::white));
}

// `count` tokens of a triplet model: R, s and a before merging and in the block, 100 steps a
// window.
static models::TokenCloud many_tokens(int count) {
  models::TokenCloud c;
  const char* names[] = {"R", "s", "a", "R in block", "s in block", "a in block"};
  for (int i = 0; i < count; ++i) {
    c.modality.emplace_back(names[i % 6]);
    c.window.push_back(i / 600);
    c.timestep.push_back((i / 6) % 100);
    c.return_to_go.push_back(3000.0 - 25.0 * ((i / 6) % 100) - 7.0 * (i / 600));
  }
  return c;
}

// A layout of them with a cluster per modality, the tokens in the block beside their embeddings
// before merging, `spread` wide.
static std::vector<double> many_points(const models::TokenCloud& c, double spread,
                                       unsigned seed = 3) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, 1.0);
  std::vector<double> xy;
  xy.reserve(static_cast<std::size_t>(c.count()) * 2);
  for (int i = 0; i < c.count(); ++i) {
    const int m = i % 3;
    const double angle =
        2.0944 * m + 0.6 * (i % 6 >= 3) + 0.004 * c.timestep[static_cast<std::size_t>(i)];
    const double radius = spread * (1.0 + 0.35 * (i % 6 >= 3));
    xy.push_back(radius * std::cos(angle) + 0.25 * spread * noise(rng));
    xy.push_back(radius * std::sin(angle) + 0.25 * spread * noise(rng));
  }
  return xy;
}

template <typename F>
static double median_ms(int times, F&& f) {
  std::vector<double> ms;
  for (int k = 0; k < times; ++k) {
    QElapsedTimer clock;
    clock.start();
    f();
    ms.push_back(static_cast<double>(clock.nsecsElapsed()) / 1e6);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

TEST_F(Tsne, ViewDrawsASubsetOf100000TokensWhileItRunsAndAllOfThemAtTheEnd) {
  viz::TsneView view;
  view.resize(1600, 1000);
  view.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&view));
  const auto cloud = many_tokens(100000);
  view.setTokens("DT", cloud);
  view.setRunning(true);
  view.showLayout(10, many_points(cloud, 5.0));
  ASSERT_TRUE(wait_until([&] { return view.pointsDrawn() > 0; }, 2000));
  EXPECT_EQ(view.pointsDrawn(), viz::TsneView::kLivePoints);
  EXPECT_TRUE(view.drawsSubset());
  EXPECT_EQ(view.groupsDrawn(), 6);
  EXPECT_TRUE(view.status().contains(QLocale().toString(viz::TsneView::kLivePoints) + " of " +
                                     QLocale().toString(100000)))
      << view.status().toStdString();
  // The same tokens in every frame: the same layout again draws the same picture.
  const QImage first = view.plot()->toPixmap().toImage();
  view.showLayout(20, many_points(cloud, 5.0));
  ASSERT_TRUE(wait_until(
      [&] { return view.snapshotCount() == 2 && view.status().startsWith("iteration 20"); }, 2000));
  test::deliver_posted_events();  // the replot it queued
  EXPECT_EQ(view.plot()->toPixmap().toImage(), first);
  // Hovering finds the drawn points while it runs too.
  const int hovered = view.pointAt(
      QPointF(view.plot()->xAxis->coordToPixel(5.0), view.plot()->yAxis->coordToPixel(0.0)));
  ASSERT_GE(hovered, 0);
  view.grab().save(screenshot("tsne-100k-live.png"));
  view.showLayout(1000, many_points(cloud, 40.0));
  view.finish(1.25, 56.0);
  EXPECT_EQ(view.pointsDrawn(), 100000);
  EXPECT_FALSE(view.drawsSubset());
  EXPECT_EQ(view.groupsDrawn(), 6);
  EXPECT_FALSE(view.status().contains("drawing")) << view.status().toStdString();
  EXPECT_GT(view.plot()->xAxis->range().upper, 40.0);
  view.grab().save(screenshot("tsne-100k.png"));
  view.setColourBy(viz::TsneView::ColourBy::ReturnToGo);
  EXPECT_EQ(view.pointsDrawn(), 100000);
  EXPECT_GT(view.groupsDrawn(), 6);
  view.grab().save(screenshot("tsne-100k-rtg.png"));
  view.setColourBy(viz::TsneView::ColourBy::Modality);
  // A layout chosen with the slider: every point.
  view.showSnapshot(0);
  EXPECT_EQ(view.pointsDrawn(), 100000);
  // The replay draws the subset while it plays, every point once it is over.
  QPushButton* play = nullptr;
  for (auto* b : view.findChildren<QPushButton*>())
    if (b->text() == "Replay") play = b;
  ASSERT_NE(play, nullptr);
  view.showSnapshot(2);
  play->click();  // from the first layout
  EXPECT_EQ(view.shownSnapshot(), 0);
  EXPECT_EQ(view.pointsDrawn(), viz::TsneView::kLivePoints);
  EXPECT_TRUE(view.status().contains("while it plays")) << view.status().toStdString();
  ASSERT_TRUE(wait_until([&] { return view.pointsDrawn() == 100000; }, 5000));
  EXPECT_EQ(view.shownSnapshot(), 2);
  EXPECT_EQ(play->text(), "Replay");
}

// A benchmark, not a test (run it with --gtest_also_run_disabled_tests): 100,000 tokens whose
// layouts come from another thread every 15 ms, as t-SNE's worker sends them; it reports the
// longest the GUI thread went without serving its event loop, and the time of one replot.
TEST_F(Tsne, DISABLED_BenchmarkOf100000TokensArrivingFromAWorker) {
  viz::TsneView view;
  view.resize(1600, 1000);
  view.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&view));
  const auto cloud = many_tokens(100000);
  view.setTokens("DT", cloud);
  view.setRunning(true);
  const auto layout = many_points(cloud, 30.0);
  // The event loop's pulse: a 1 ms timer; a gap between its ticks is a stall.
  QElapsedTimer clock;
  clock.start();
  qint64 last = 0, stall = 0;
  QTimer pulse;
  pulse.setInterval(1);
  QObject::connect(&pulse, &QTimer::timeout, [&] {
    stall = std::max(stall, clock.elapsed() - last);
    last = clock.elapsed();
  });
  pulse.start();
  // And the longest replot and the longest delivery of a layout, to tell what a stall is made of.
  qint64 replot_started = 0, longest_replot = 0, longest_delivery = 0;
  QObject::connect(view.plot(), &QCustomPlot::beforeReplot,
                   [&] { replot_started = clock.nsecsElapsed(); });
  QObject::connect(view.plot(), &QCustomPlot::afterReplot, [&] {
    longest_replot = std::max(longest_replot, clock.nsecsElapsed() - replot_started);
  });
  constexpr int kLayouts = 150;
  std::thread worker([&] {
    for (int k = 1; k <= kLayouts; ++k) {
      auto xy = layout;
      for (auto& v : xy)
        v *= 0.5 + 0.5 * k / kLayouts;  // the layout grows, as in early exaggeration
      QMetaObject::invokeMethod(
          &view,
          [&, k, xy = std::move(xy)]() mutable {
            const qint64 started = clock.nsecsElapsed();
            view.showLayout(10 * k, std::move(xy));
            longest_delivery = std::max(longest_delivery, clock.nsecsElapsed() - started);
          },
          Qt::QueuedConnection);
      std::this_thread::sleep_for(std::chrono::milliseconds(15));
    }
  });
  ASSERT_TRUE(wait_until(
      [&] {
        return view.snapshotCount() > 0 &&
               view.snapshotIteration(view.snapshotCount() - 1) == 10 * kLayouts;
      },
      60000));
  worker.join();
  test::deliver_posted_events();  // what the worker sent last
  pulse.stop();
  const double live_replot_ms = static_cast<double>(longest_replot) / 1e6,
               delivery_ms = static_cast<double>(longest_delivery) / 1e6;
  EXPECT_EQ(view.pointsDrawn(), viz::TsneView::kLivePoints);
  EXPECT_LE(view.snapshotCount(), viz::TsneView::kMaxLayouts);
  const double live_ms = median_ms(7, [&] { view.showSnapshot(view.shownSnapshot()); });
  clock.restart();
  view.finish(1.0, 1.0);
  const qint64 finish_ms = clock.elapsed();
  ASSERT_EQ(view.pointsDrawn(), 100000);
  const QSize rect = view.plot()->axisRect()->rect().size();
  const double full_ms = median_ms(7, [&] { view.plot()->replot(); });
  // The same replot with 90 tokens: what is not the points (axes, legend, the image's copy).
  view.setTokens("DT", clusters(10, 6, 3));
  view.showLayout(10, many_points(clusters(10, 6, 3), 30.0));
  view.showSnapshot(0);
  const double few_ms = median_ms(7, [&] { view.plot()->replot(); });
  std::printf(
      "[ bench  ] while %d layouts of 100,000 tokens arrived: longest stall %lld ms, replot %.1f "
      "ms, delivery of a layout %.1f ms\n",
      kLayouts, static_cast<long long>(stall), live_replot_ms, delivery_ms);
  std::printf("[ bench  ] replot of %d live points: %.1f ms; finish (all points): %lld ms\n",
              viz::TsneView::kLivePoints, live_ms, static_cast<long long>(finish_ms));
  std::printf(
      "[ bench  ] replot into a %dx%d axis rect: 100,000 points %.1f ms, 90 points %.1f ms "
      "(medians of 7)\n",
      rect.width(), rect.height(), full_ms, few_ms);
}

TEST_F(Tsne, ViewKeepsAtMostFiftyLayoutsSpreadOverALongRun) {
  viz::TsneView view;
  view.resize(900, 600);
  auto cloud = clusters(10, 6, 1);
  const int n = cloud.count();
  view.setTokens("DT", cloud);
  view.setRunning(true);
  const auto layout = [&](int iteration) {
    std::vector<double> xy;
    for (int i = 0; i < n; ++i)
      xy.push_back(iteration * std::cos(i)), xy.push_back(iteration * std::sin(i));
    return xy;
  };
  for (int k = 1; k <= 120; ++k) {
    view.showLayout(10 * k, layout(10 * k));
    ASSERT_LE(view.snapshotCount(), viz::TsneView::kMaxLayouts);
    EXPECT_EQ(view.shownSnapshot(), view.snapshotCount() - 1);
    EXPECT_EQ(view.snapshotIteration(view.shownSnapshot()), 10 * k) << "the newest is drawn";
  }
  view.finish(0.5, 2.0);
  const int count = view.snapshotCount();
  EXPECT_GE(count, viz::TsneView::kMaxLayouts / 2);
  EXPECT_EQ(view.snapshotIteration(0), 10);
  EXPECT_EQ(view.snapshotIteration(count - 1), 1200);
  int widest = 0;
  for (int k = 1; k < count; ++k) {
    EXPECT_LT(view.snapshotIteration(k - 1), view.snapshotIteration(k));
    widest = std::max(widest, view.snapshotIteration(k) - view.snapshotIteration(k - 1));
  }
  EXPECT_LE(widest, 2 * 1200 / (viz::TsneView::kMaxLayouts / 2)) << "spread over the whole run";
  // Each kept layout is the one of its iteration.
  view.showSnapshot(count / 2);
  EXPECT_NEAR(view.plot()->xAxis->range().upper, 1.06 * view.snapshotIteration(count / 2),
              0.06 * view.snapshotIteration(count / 2));
  EXPECT_EQ(view.pointsDrawn(), n);
  // A new run starts again from one layout an arrival.
  view.setRunning(true);
  for (int k = 1; k <= 40; ++k) view.showLayout(10 * k, layout(10 * k));
  EXPECT_EQ(view.snapshotCount(), 40);
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
  test::deliver_posted_events();
  view.grab().save(screenshot("tsne-mid-animation.png"));
  ASSERT_TRUE(wait_until([&] { return finished.count() == 1; }, 120000));
  EXPECT_FALSE(job.outcome().cancelled);
  EXPECT_TRUE(job.outcome().error.isEmpty()) << job.outcome().error.toStdString();
  ASSERT_TRUE(wait_until([&] { return view.snapshotCount() == 40; }, 5000))
      << view.snapshotCount();  // every 10 iterations
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

// A shown view at the tests' size, a job driving it, and its `finished` signals counted.
struct JobOnAView {
  JobOnAView() {
    view.resize(1000, 650);
    view.show();
  }
  viz::TsneView view;
  TsneJob job{&view};
  QSignalSpy finished{&job, &TsneJob::finished};
};

// The studio's path: a checkpoint's own tokens, gathered on the worker as the command line
// gathers them, then laid out.
TEST_F(Tsne, JobLaysOutTheTokensOfACheckpoint) {
  JobOnAView on;
  auto& [view, job, finished] = on;
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

// A goal-reaching checkpoint's tokens reach the view with their distance to the goal: the shipped
// AntMaze DT plays one episode, and the view offers that colouring with a value for every token.
TEST_F(Tsne, JobBringsAnAntMazeCheckpointsDistancesToTheGoal) {
  JobOnAView on;
  auto& [view, job, finished] = on;
  const QString checkpoint =
      QString::fromStdString((resources_dir() / "checkpoints" / "antmaze-umaze-v2-dt.pt").string());
  job.setCheckpoint(checkpoint, "DT on antmaze-umaze-v2");
  models::TokenSource source;
  source.kind = models::TokenSource::Kind::Rollouts;
  source.count = 1;
  source.max_tokens = 600;
  job.setTokenSource(source);
  job.startFromCheckpoint(30, 250);
  ASSERT_TRUE(wait_until([&] { return finished.count() == 1; }, 180000));
  ASSERT_TRUE(job.outcome().error.isEmpty()) << job.outcome().error.toStdString();
  ASSERT_GT(view.pointCount(), 0);
  view.setColourBy(viz::TsneView::ColourBy::GoalDistance);
  EXPECT_EQ(view.colourBy(), viz::TsneView::ColourBy::GoalDistance);
  EXPECT_EQ(view.figureText().title,
            QStringLiteral("DT on antmaze-umaze-v2: tokens by distance to goal"));
  view.grab().save(screenshot("tsne-antmaze-goal-distance.png"));
}

// "Tokens from": the view's choice reaches the job, the job's shows in the view, and Run lays out
// every step of the dataset's longest episode once.
TEST_F(Tsne, JobTakesEveryStepOfTheLongestEpisodesWhenAskedTo) {
  viz::TsneView view;
  view.resize(1000, 650);
  view.show();
  TsneJob job(&view);
  QSignalSpy finished(&job, &TsneJob::finished);
  job.setCheckpoint(studio::defaultCheckpoint(), "DT", 6);
  EXPECT_EQ(view.tokenSource(), viz::TsneView::Source::Windows);
  EXPECT_EQ(view.tokenCount(), 6);
  emit view.tokenSourceChanged(viz::TsneView::Source::Rollouts,
                               3);  // what choosing in the view does
  EXPECT_EQ(job.tokenSource().kind, models::TokenSource::Kind::Rollouts);
  EXPECT_EQ(job.tokenSource().count, 3);
  models::TokenSource source;
  source.kind = models::TokenSource::Kind::Episodes;
  source.count = 1;
  source.max_tokens = 600;  // DT: 6 tokens a step, so the episode's first 100 steps
  job.setTokenSource(source);
  EXPECT_EQ(view.tokenSource(), viz::TsneView::Source::Episodes);
  EXPECT_EQ(view.tokenCount(), 1);
  view.setParameters(30, 250);
  emit view.runRequested(view.perplexity(), view.iterations());
  ASSERT_TRUE(wait_until([&] { return finished.count() == 1; }, 120000));
  ASSERT_TRUE(job.outcome().error.isEmpty()) << job.outcome().error.toStdString();
  EXPECT_EQ(job.outcome().points, 600);
  EXPECT_EQ(job.outcome().method, "barnes-hut");
  ASSERT_EQ(view.pointCount(), 600);
  // Every step 0..99 of one episode, each with its six tokens; the tooltip names the episode.
  std::map<int, int> per_step;
  for (int i = 0; i < view.pointCount(); ++i) {
    const QString text = view.describePoint(i);
    ASSERT_TRUE(text.contains("episode ")) << text.toStdString();
    const auto at = text.indexOf("timestep ");
    ++per_step[text.mid(at + 9).section('\n', 0, 0).toInt()];
  }
  ASSERT_EQ(per_step.size(), 100u);
  EXPECT_EQ(per_step.begin()->first, 0);
  EXPECT_EQ(per_step.rbegin()->first, 99);
  for (const auto& [step, n] : per_step) EXPECT_EQ(n, 6) << "step " << step;
  view.grab().save(screenshot("tsne-dt-episode.png"));
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

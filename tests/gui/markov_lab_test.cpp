// The Markov lab tab: the floor follows the controls, a run trains on a worker and draws its loss
// point by point down to the floor, the previous run stays for comparison, the learned matrix is
// shown, Cancel stops a run and keeps its curve, and the export writes both panels.

#include <gtest/gtest.h>
#include <qcustomplot.h>

#include <QApplication>
#include <QDir>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>
#include <cmath>
#include <filesystem>

#include "dstudio/viz/markov_lab_view.h"
#include "h5_fixture.h"
#include "job.h"
#include "markov_lab_job.h"
#include "test_application.h"

namespace dstudio::studio {
namespace {

class MarkovLabTab : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    test::ensure_application();
    QDir().mkpath(DSTUDIO_SCREENSHOT_DIR);
  }
  // Trains the options the view shows and waits for the run to end.
  static void train(viz::MarkovLabView& view, MarkovLabJob& job) {
    QSignalSpy finished(&job, &MarkovLabJob::finished);
    view.trainButton()->click();
    ASSERT_TRUE(view.running());
    ASSERT_TRUE(finished.wait(60000));
    EXPECT_FALSE(view.running());
    EXPECT_EQ(view.trainButton()->text(), "Train");
  }
};

TEST_F(MarkovLabTab, TheFloorFollowsTheControls) {
  viz::MarkovLabView view;
  auto o = view.options();
  o.chain = analysis::MarkovChain::make(0.1, 0.4);
  view.setOptions(o);
  // The closed form, worked out here.
  const auto h = [](double x) { return -x * std::log(x) - (1 - x) * std::log(1 - x); };
  EXPECT_NEAR(view.floor(), (0.4 * h(0.1) + 0.1 * h(0.4)) / 0.5, 1e-12);
  QApplication::processEvents();
  // Before a run, the plot's floor line is the controls' floor.
  auto* floor = view.lossPlot()->graph(3);
  ASSERT_EQ(floor->dataCount(), 2);
  EXPECT_NEAR(floor->data()->at(0)->value, view.floor(), 1e-12);
  // Symbols above 2 switch with p alone: q is greyed out.
  o.chain = analysis::MarkovChain::make(0.1, 0.4, 1, 4);
  view.setOptions(o);
  EXPECT_NEAR(view.floor(), h(0.1) + 0.1 * std::log(3.0), 1e-12);
  EXPECT_EQ(view.options().chain.states, 4);
}

TEST_F(MarkovLabTab, ARunDrawsItsLossDownToTheFloorAndKeepsThePreviousOne) {
  viz::MarkovLabView view;
  MarkovLabJob job(&view);
  view.resize(1200, 760);
  view.show();
  auto o = view.options();
  o.chain = analysis::MarkovChain::make(0.2, 0.3, 2);
  o.window = 1;
  o.steps = 300;
  view.setOptions(o);
  train(view, job);
  ASSERT_TRUE(view.hasResult()) << view.summary()->text().toStdString();
  auto* loss = view.lossPlot()->graph(0);
  // About 60 points and the one before training, all arrived through the queue.
  EXPECT_GE(loss->dataCount(), 50);
  EXPECT_EQ(loss->data()->at(0)->key, 0.0);
  EXPECT_EQ(loss->data()->at(loss->dataCount() - 1)->key, 300.0);
  const double floor = analysis::MarkovChain::make(0.2, 0.3, 2).entropy_rate();
  EXPECT_NEAR(view.lossPlot()->graph(3)->data()->at(0)->value, floor, 1e-12);
  const double narrow_end = loss->data()->at(loss->dataCount() - 1)->value;
  EXPECT_GT(narrow_end, floor + 0.02) << "a window of 1 cannot see an order-2 chain's memory";

  o.window = 2;
  view.setOptions(o);
  train(view, job);
  ASSERT_TRUE(view.hasResult());
  // The first run is now the faint previous one, whole; the new one reaches the floor.
  auto* previous = view.lossPlot()->graph(2);
  EXPECT_GE(previous->dataCount(), 50);
  EXPECT_DOUBLE_EQ(previous->data()->at(previous->dataCount() - 1)->value, narrow_end);
  EXPECT_TRUE(previous->name().contains("k = 1"));
  EXPECT_LT(loss->data()->at(loss->dataCount() - 1)->value, floor * 1.02);
  EXPECT_TRUE(view.summary()->text().contains("floor"));
  // The matrix: pooling of 2 is 1/2 on the diagonal and the cell before it, nothing above.
  auto* m = view.matrix()->data();
  EXPECT_EQ(m->keySize(), 32);
  EXPECT_NEAR(m->cell(9, 10), 0.5, 1e-6);
  EXPECT_NEAR(m->cell(10, 10), 0.5, 1e-6);
  EXPECT_NEAR(m->cell(5, 10), 0.0, 1e-6);
  EXPECT_TRUE(std::isnan(m->cell(11, 10)));
  QApplication::processEvents();
  view.grab().save(DSTUDIO_SCREENSHOT_DIR "/markov-lab.png");

  // The export writes the loss (with the previous run) and the matrix, each with its numbers.
  test::TempDir dir;
  viz::FigureStyle style;
  style.pdf = style.svg = false;
  const auto written = view.exportFigure((dir / "lab").string(), style);
  for (const char* file : {"lab_loss.png", "lab_loss.csv", "lab_mixing.png", "lab_mixing.csv"})
    EXPECT_TRUE(std::filesystem::exists(dir / file)) << file;
  EXPECT_EQ(written.size(), 4u);

  // Its recipe names both runs: the one shown and the faint one before it, whole.
  const auto recipe = view.figureRecipe();
  ASSERT_TRUE(recipe);
  EXPECT_EQ(recipe->analysis, "studio-markov-lab");
  EXPECT_EQ(recipe->options.at("window"), "2");
  EXPECT_EQ(recipe->options.at("previous-window"), "1");
  EXPECT_EQ(recipe->options.at("steps"), "300");
  EXPECT_EQ(recipe->options.at("previous-points"), std::to_string(previous->dataCount()));
}

TEST_F(MarkovLabTab, CancelStopsTheRunAndKeepsItsCurve) {
  viz::MarkovLabView view;
  MarkovLabJob job(&view);
  auto o = view.options();
  o.steps = 20000;
  view.setOptions(o);
  QSignalSpy finished(&job, &MarkovLabJob::finished);
  view.trainButton()->click();
  ASSERT_TRUE(view.running());
  EXPECT_EQ(view.trainButton()->text(), "Cancel");
  // A few points arrive, then Cancel.
  QTRY_VERIFY_WITH_TIMEOUT(view.lossPlot()->graph(0)->dataCount() >= 3, 30000);
  view.trainButton()->click();
  ASSERT_TRUE(finished.wait(30000));
  EXPECT_EQ(job.job()->lastEnd(), Job::End::Cancelled);
  EXPECT_FALSE(view.running());
  EXPECT_FALSE(view.hasResult());
  EXPECT_GE(view.lossPlot()->graph(0)->dataCount(), 3);
  EXPECT_TRUE(view.summary()->text().contains("Cancelled"));
}

}  // namespace
}  // namespace dstudio::studio

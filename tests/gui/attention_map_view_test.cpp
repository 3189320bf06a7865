// The attention view compares two models on the same windows: side by side on one colour scale,
// or as a difference, with both models' heads in the entropy table.

#include "dstudio/viz/attention_map_view.h"

#include <gtest/gtest.h>
#include <qcustomplot.h>

#include <QApplication>
#include <QDir>
#include <QTabWidget>
#include <QTableWidget>
#include <QTest>
#include <QToolTip>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "test_application.h"

namespace dstudio::viz {
namespace {

namespace fs = std::filesystem;

constexpr int kSteps = 4, kTokens = 3 * kSteps, kLayers = 2, kHeads = 2;

// Windows of a model whose every head attends uniformly to the keys it sees (`focused` false) or
// only to its own token (`focused` true).
std::vector<models::WindowInspection> windows_of(bool focused) {
  std::vector<models::WindowInspection> windows(2);
  for (auto& w : windows) {
    for (int k = 0; k < kSteps; ++k) {
      w.token_types.insert(w.token_types.end(), {'R', 's', 'a'});
      w.token_steps.insert(w.token_steps.end(), {k, k, k});
      w.valid.insert(w.valid.end(), {1, 1, 1});
    }
    for (int l = 0; l < kLayers; ++l) {
      analysis::LayerMixing layer{
          kHeads, kTokens,
          std::vector<float>(static_cast<std::size_t>(kHeads) * kTokens * kTokens, 0.0f),
          "attention"};
      for (int h = 0; h < kHeads; ++h)
        for (int i = 0; i < kTokens; ++i)
          for (int j = 0; j <= i; ++j)
            layer.values[(static_cast<std::size_t>(h) * kTokens + i) * kTokens + j] =
                focused ? (i == j ? 1.0f : 0.0f) : 1.0f / static_cast<float>(i + 1);
      w.layers.push_back(layer);
    }
  }
  return windows;
}

class AttentionComparison : public testing::Test {
 protected:
  static void SetUpTestSuite() { test::ensure_application(); }
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("dstudio-attention-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(AttentionComparison, SideBySideShowsBothMapsOnOneScaleAndBothModelsHeads) {
  AttentionMapView view;
  view.resize(1100, 600);
  view.setInspections("uniform (dt)", windows_of(false));
  EXPECT_EQ(view.mapsShown(), 1);
  EXPECT_EQ(view.entropyTable()->rowCount(), kLayers * kHeads);
  EXPECT_TRUE(view.entropyTable()->isColumnHidden(AttentionMapView::ColumnModel));
  view.setComparisonMode(AttentionMapView::Comparison::SideBySide);
  EXPECT_EQ(view.comparisonMode(), AttentionMapView::Comparison::Alone)
      << "nothing to compare with yet";

  view.setComparison("focused (gdt)", windows_of(true));
  view.setComparisonMode(AttentionMapView::Comparison::SideBySide);
  ASSERT_EQ(view.mapsShown(), 2);
  ASSERT_NE(view.comparisonRect(), nullptr);
  // This model's map on the left, the compared model's on the right, the same cells.
  EXPECT_NEAR(view.matrix().at(5, 2), 1.0 / 6.0, 1e-6);
  EXPECT_NEAR(view.comparisonMatrix().at(5, 2), 0.0, 1e-9);
  EXPECT_NEAR(view.comparisonMatrix().at(5, 5), 1.0, 1e-6);
  // One colour scale for both maps: equal colours are equal weights.
  auto* left = qobject_cast<QCPColorMap*>(view.plot()->axisRect()->plottables().value(0));
  auto* right = qobject_cast<QCPColorMap*>(view.comparisonRect()->plottables().value(0));
  ASSERT_TRUE(left && right);
  EXPECT_EQ(left->colorScale(), right->colorScale());
  EXPECT_NEAR(right->data()->cell(5, 5), 1.0, 1e-6);
  EXPECT_TRUE(std::isnan(right->data()->cell(6, 5))) << "the mask stays blank";
  // Each map names its model above it.
  EXPECT_EQ(view.plot()->axisRect()->axis(QCPAxis::atTop)->label(), "uniform (dt)");
  EXPECT_EQ(view.comparisonRect()->axis(QCPAxis::atTop)->label(), "focused (gdt)");
  // A cell names both weights, whichever map the mouse is over.
  const QString text = view.cellText(5, 2);
  EXPECT_TRUE(text.contains("uniform (dt) 0.1667") && text.contains("focused (gdt) 0"))
      << text.toStdString();
  view.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&view));
  view.plot()->replot();
  auto* rect = view.comparisonRect();
  const QPoint at(static_cast<int>(rect->axis(QCPAxis::atBottom)->coordToPixel(2)),
                  static_cast<int>(rect->axis(QCPAxis::atLeft)->coordToPixel(5)));
  ASSERT_TRUE(rect->rect().contains(at));
  QTest::mouseMove(view.plot(), at);
  for (int i = 0; i < 100 && !QToolTip::isVisible(); ++i) QTest::qWait(20);
  EXPECT_EQ(QToolTip::text(), view.cellText(5, 2));
  QDir().mkpath(DSTUDIO_SCREENSHOT_DIR);
  view.grab().save(DSTUDIO_SCREENSHOT_DIR "/attention-side-by-side.png");

  // The entropy table: each head of this model, then the same head of the compared one, which
  // attends to one key only (entropy 0).
  auto* table = view.entropyTable();
  ASSERT_EQ(table->rowCount(), 2 * kLayers * kHeads);
  EXPECT_FALSE(table->isColumnHidden(AttentionMapView::ColumnModel));
  for (int r = 0; r < table->rowCount(); ++r) {
    const bool compared = r % 2 == 1;
    EXPECT_EQ(table->item(r, AttentionMapView::ColumnModel)->text(),
              compared ? "focused (gdt)" : "uniform (dt)");
    EXPECT_EQ(table->item(r, AttentionMapView::ColumnLayer)->text().toInt(), r / (2 * kHeads) + 1);
    EXPECT_EQ(table->item(r, AttentionMapView::ColumnHead)->text().toInt(), (r / 2) % kHeads + 1);
    const double entropy = table->item(r, AttentionMapView::ColumnEntropy)->text().toDouble();
    if (compared)
      EXPECT_NEAR(entropy, 0.0, 1e-3);
    else
      EXPECT_GT(entropy, 0.5);
  }

  // Exported as one figure of two maps, and each model's numbers.
  const auto written = view.exportFigure((dir_ / "pair").string());
  EXPECT_EQ(written.size(), 5u);
  std::ifstream csv(dir_ / "pair_compared.csv");
  std::string header, row0, row1;
  std::getline(csv, header), std::getline(csv, row0), std::getline(csv, row1);
  EXPECT_EQ(row1.substr(row1.find(',') + 1, 3), "0,1")
      << row1;  // the second query's weights: 0 on the first key, 1 on itself

  // The difference: one map, this minus the compared.
  view.setComparisonMode(AttentionMapView::Comparison::Difference);
  EXPECT_EQ(view.mapsShown(), 1);
  EXPECT_EQ(view.comparisonRect(), nullptr);
  EXPECT_NEAR(view.matrix().at(5, 5), 1.0 / 6.0 - 1.0, 1e-6);
  // "This model alone" with the comparison still loaded: this model's heads only, and back.
  view.setComparisonMode(AttentionMapView::Comparison::Alone);
  EXPECT_EQ(table->rowCount(), kLayers * kHeads);
  EXPECT_TRUE(table->isColumnHidden(AttentionMapView::ColumnModel));
  view.setComparisonMode(AttentionMapView::Comparison::Difference);
  EXPECT_EQ(table->rowCount(), 2 * kLayers * kHeads);
  EXPECT_FALSE(table->isColumnHidden(AttentionMapView::ColumnModel));
  // Alone again, and without a comparison the table is this model's heads only.
  view.setComparisonMode(AttentionMapView::Comparison::SideBySide);
  view.clearComparison();
  EXPECT_EQ(view.mapsShown(), 1);
  EXPECT_EQ(view.comparisonMode(), AttentionMapView::Comparison::Alone);
  EXPECT_EQ(table->rowCount(), kLayers * kHeads);
  EXPECT_TRUE(table->isColumnHidden(AttentionMapView::ColumnModel));
  EXPECT_NEAR(view.matrix().at(5, 5), 1.0 / 6.0, 1e-6);
}

TEST_F(AttentionComparison, LocalityCurvesFollowTheMapOnScreen) {
  AttentionMapView view;
  view.resize(1100, 600);
  view.setInspections("uniform (dt)", windows_of(false));
  // Uniform causal rows over 3 tokens a step: query i (step i / 3) spreads 1/(i+1) over keys
  // 0..i; the share at lag L, worked out here, averaged over the 12 queries.
  std::vector<double> expected(kSteps, 0.0);
  for (int i = 0; i < kTokens; ++i)
    for (int j = 0; j <= i; ++j)
      expected[static_cast<std::size_t>(i / 3 - j / 3)] += 1.0 / (i + 1) / kTokens;
  const auto& p = view.lagProfile();
  ASSERT_EQ(p.weight.size(), static_cast<std::size_t>(kSteps));
  for (int l = 0; l < kSteps; ++l)
    EXPECT_NEAR(p.weight[static_cast<std::size_t>(l)], expected[static_cast<std::size_t>(l)], 1e-6)
        << l;
  auto* plot = view.localityPlot();
  ASSERT_EQ(plot->graph(0)->dataCount(), kSteps);
  EXPECT_NEAR(plot->graph(0)->data()->at(1)->value, expected[1], 1e-6);
  EXPECT_EQ(plot->graph(1)->dataCount(), 0);
  // A focused model compared: all its weight at lag 0, drawn as the second curve and named.
  view.setComparison("focused (gdt)", windows_of(true));
  ASSERT_EQ(view.comparisonLagProfile().weight.size(), static_cast<std::size_t>(kSteps));
  EXPECT_NEAR(view.comparisonLagProfile().weight[0], 1.0, 1e-6);
  EXPECT_DOUBLE_EQ(view.comparisonLagProfile().mean_lag(), 0.0);
  EXPECT_EQ(plot->graph(1)->dataCount(), kSteps);
  EXPECT_TRUE(plot->graph(1)->name().contains("mean lag 0.00"));
  EXPECT_GT(view.lagProfile().mean_lag(), 0.5);
  view.sideTabs()->setCurrentWidget(plot);
  view.show();
  QApplication::processEvents();
  view.grab().save(DSTUDIO_SCREENSHOT_DIR "/attention-locality.png");
  view.clear("nothing");
  EXPECT_EQ(plot->graph(0)->dataCount(), 0);
}

}  // namespace
}  // namespace dstudio::viz

// Figures at every venue's size keep their text apart and on the page: every figure type, and
// every view's export, is drawn at each preset and its text boxes are compared. The check
// itself is shown to catch overlapping and clipped text first, so that a clean result means
// something.

#include <gtest/gtest.h>
#include <qcustomplot.h>

#include <QApplication>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "csv_check.h"
#include "dstudio/analysis/attention_maps.h"
#include "dstudio/viz/attention_map_view.h"
#include "dstudio/viz/entropy_reward_view.h"
#include "dstudio/viz/episode_timeline.h"
#include "dstudio/viz/figures.h"
#include "dstudio/viz/markov_lab_view.h"
#include "dstudio/viz/return_analysis_view.h"
#include "dstudio/viz/run_curves_view.h"
#include "dstudio/viz/tsne_view.h"
#include "h5_fixture.h"
#include "test_application.h"

namespace dstudio::viz {
namespace {

namespace fs = std::filesystem;

class FigureLayout : public testing::Test {
 protected:
  static void SetUpTestSuite() { test::ensure_application(); }

  // Every figure a log saw, with what is wrong with it, one line each.
  static std::string report(const TextLayoutLog& log) {
    std::string out;
    for (const auto& [base, layout] : log.figures)
      for (const auto& problem : layout.problems())
        out += fs::path(base).filename().string() + ": " + problem + "\n";
    return out;
  }

  // The labels of a K-step window: R, s, a a step, relative to the last step (as averaged maps).
  static std::vector<std::string> relative_labels(int K) {
    std::vector<char> types;
    for (int k = 0; k < K; ++k) types.insert(types.end(), {'R', 's', 'a'});
    return analysis::relative_token_labels(types);
  }

  // A causal map whose rows sum to one, with a bump along the diagonal.
  static analysis::TokenMatrix causal_map(int T, double sign = 1.0) {
    analysis::TokenMatrix m{T, std::vector<double>(static_cast<std::size_t>(T) * T, 0.0)};
    for (int i = 0; i < T; ++i)
      for (int j = 0; j <= i; ++j)
        m.values[static_cast<std::size_t>(i) * T + j] =
            sign * (1.0 + (i == j ? 4.0 : 0.0) + std::sin(j)) / (i + 5.0);
    return m;
  }

  // A rollout of one 1000-step episode, entropy and reward oscillating.
  static models::RolloutResult long_episode() {
    models::RolloutResult result;
    models::EpisodeTrace trace;
    trace.length = 1000;
    for (int t = 0; t < 1000; ++t) {
      trace.rewards.push_back(3.0 + std::sin(t * 0.05));
      trace.entropy.push_back(2.5 + 0.2 * std::cos(t * 0.03));
    }
    result.episodes.push_back(trace);
    return result;
  }

  test::TempDir dir;
};

TEST_F(FigureLayout, TheCheckFindsOverlappingClippedAndCoveringText) {
  QCustomPlot plot;
  QSharedPointer<QCPAxisTickerText> crowded(new QCPAxisTickerText);
  crowded->addTick(0.0, "first label");
  crowded->addTick(0.02, "second label");
  plot.xAxis->setTicker(crowded);
  plot.xAxis->setRange(-1, 1);
  auto* outside = new QCPItemText(&plot);
  outside->position->setType(QCPItemPosition::ptAbsolute);
  outside->position->setCoords(-20, 50);
  outside->setText("beyond the edge");
  plot.addGraph()->setName("a curve");
  plot.legend->setVisible(true);  // inside the data, as QCustomPlot puts it
  plot.resize(300, 200);
  plot.setViewport(QRect(0, 0, 300, 200));
  plot.replot();
  const TextLayout layout = text_layout(plot);
  EXPECT_EQ(layout.page, QSizeF(300, 200));
  const auto problems = layout.problems();
  std::string all;
  for (const auto& p : problems) all += p + "\n";
  EXPECT_NE(all.find("\u00abfirst label\u00bb overlaps \u00absecond label\u00bb"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("\u00abbeyond the edge\u00bb reaches the page's left edge"), std::string::npos)
      << all;
  EXPECT_NE(all.find("the legend covers the data"), std::string::npos) << all;
  EXPECT_NE(all.find("tick marks reach into the data"), std::string::npos)
      << all;  // QCustomPlot's default ticks
  // The boxes are where the text is: the legend's entry inside the legend, rotated text tall.
  bool found = false;
  for (const auto& t : layout.texts)
    if (t.text == "a curve") {
      found = true;
      EXPECT_TRUE(layout.legend.contains(t.box)) << t.box.x() << "," << t.box.y();
    }
  EXPECT_TRUE(found);
  plot.yAxis->setLabel("a rotated title");
  plot.replot();
  for (const auto& t : text_layout(plot).texts)
    if (t.text == "a rotated title") {
      EXPECT_GT(t.box.height(), 3 * t.box.width());
    }
}

// What a reader of an exported figure saw go wrong, each caught by the check: a legend entry cut
// to "R (r…-go)", a value alone on a title's second line, a marker halved by the data's edge, a
// count written over an error bar's cap.
TEST_F(FigureLayout, TheCheckFindsCutNamesLoneValuesHalvedMarkersAndNotesOnCaps) {
  QCustomPlot plot;
  plot.plotLayout()->insertRow(0);
  plot.plotLayout()->addElement(0, 0,
                                new QCPTextElement(&plot, "DT: Pearson 0.12, Spearman\n-0.27"));
  auto* g = plot.addGraph();
  g->setName("R (r\u2026-go)");
  g->setData({1.0, 2.0, 3.0}, {1.0, 2.0, 1.5});
  g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 8));
  plot.xAxis->setRange(1.0, 3.0);  // the first and last markers sit on the edges
  plot.yAxis->setRange(0.0, 5.0);
  auto* bars = new QCPBars(plot.xAxis, plot.yAxis);
  bars->setData({2.0}, {2.5});
  auto* err = new QCPErrorBars(plot.xAxis, plot.yAxis);
  err->setDataPlottable(bars);
  err->setData({1.0});
  auto* note = new QCPItemText(&plot);
  note->position->setCoords(2.0, 3.5);  // at the cap
  note->setPositionAlignment(Qt::AlignHCenter | Qt::AlignVCenter);
  note->setText("n=2");
  plot.legend->setVisible(true);
  plot.resize(400, 300);
  plot.setViewport(QRect(0, 0, 400, 300));
  plot.replot();
  std::string all;
  for (const auto& p : text_layout(plot).problems()) all += p + "\n";
  EXPECT_NE(all.find("\u00abR (r\u2026-go)\u00bb is cut short"), std::string::npos) << all;
  EXPECT_NE(all.find("\u00ab-0.27\u00bb stands alone on a title's line"), std::string::npos) << all;
  EXPECT_NE(all.find("a marker of \u00abR (r\u2026-go)\u00bb is cut by the data's edge"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("\u00abn=2\u00bb is drawn on an error bar's cap"), std::string::npos) << all;
}

TEST_F(FigureLayout, EveryFigureTypeAtEveryVenueKeepsItsTextApartAndOnThePage) {
  // What the views and the analyses draw, with their longest labels and titles.
  std::vector<std::string> merged;
  for (int k = -19; k <= 0; ++k) merged.push_back(std::string(1, 't').append(std::to_string(k)));
  std::vector<std::string> episode_start;  // absolute steps, padding before the first step
  for (int k = 0; k < 12; ++k) episode_start.insert(episode_start.end(), {"pad", "pad", "pad"});
  for (int k = 0; k < 8; ++k)
    for (const char t : {'R', 's', 'a'})
      episode_start.push_back(std::string(1, t).append(std::to_string(990 + k)));
  Series entropy{"entropy (layer 1)", {}, {}, {}, {}, false},
      reward{"reward", {}, {}, {}, {}, true};
  for (int t = 0; t < 1000; ++t) {
    entropy.x.push_back(t), entropy.y.push_back(2.5 + 0.3 * std::sin(t * 0.05));
    reward.x.push_back(t), reward.y.push_back(3.0 + std::cos(t * 0.04));
  }
  Series dt{"hopper-medium-expert-dt-seed0-20261125", {}, {}, {}, {}, false},
      gdt{"hopper-medium-expert-gdt-seed1-20261125", {}, {}, {}, {}, false};
  for (double m : {0.5, 1.0, 2.0, 5.0, 10.0, 20.0}) {
    dt.x.push_back(3600 * m), dt.y.push_back(m < 1 ? 46 : 98);
    gdt.x.push_back(3600 * m), gdt.y.push_back(m < 1 ? 61 : 97);
  }
  std::vector<Series> runs;
  for (int r = 0; r < 5; ++r) {
    Series s{QString("dt-seed%1-20261125-0137%2").arg(r).arg(r), {}, {}, {}, {}, false};
    for (int step = 100; step <= 100000; step += 100)
      s.x.push_back(step), s.y.push_back(0.32 + 0.03 * std::exp(-step / 2e4) + 0.001 * r);
    runs.push_back(s);
  }
  std::vector<ScatterGroup> groups;
  std::vector<double> x, y, value;
  const char* modality[] = {"R", "s", "a", "merged", "R (after merging)", "s (after merging)"};
  for (int g = 0; g < 6; ++g) {
    ScatterGroup group{modality[g], {}, {}};
    for (int i = 0; i < 60; ++i) {
      group.x.push_back(g * 10 + std::sin(i) * 4), group.y.push_back(std::cos(i * 1.3) * 6 + g);
      x.push_back(group.x.back()), y.push_back(group.y.back()), value.push_back(i * 60.0);
    }
    groups.push_back(group);
  }
  const std::vector<Bar> bars{{"nothing", 96.4, 0.5},
                              {"RTG", 29.9, 3.5},
                              {"past states", 94.3, 1.0},
                              {"actions", 96.0, 0.5}};

  for (const auto& preset : venue_presets()) {
    SCOPED_TRACE(preset.name.toStdString());
    TextLayoutLog log;
    FigureStyle s = preset.style;
    s.svg = s.pdf = s.png = false;  // drawn and laid out, not written
    const auto at = [&](const char* name) {
      return (dir / (preset.slug.toStdString() + "_" + name)).string();
    };
    s.title =
        "hopper-medium-expert-dt-seed0-20261125 minus "
        "hopper-medium-expert-gdt-seed1-20261125\nmean over heads, layer 1, head 1";
    save_heatmap(at("map60"), causal_map(60), relative_labels(20), false, "weight", s);
    save_heatmap(at("difference60"), analysis::difference(causal_map(60), causal_map(60, -0.5)),
                 relative_labels(20), true, "weight difference", s);
    save_heatmap(at("merged20"), causal_map(20), merged, false, "weight", s);
    save_heatmap(at("episode_start"), causal_map(60), episode_start, false, "weight", s);
    save_heatmap(at("map3"), causal_map(3), relative_labels(1), false, "weight", s);
    save_heatmap_pair(at("pair60"), causal_map(60), causal_map(60, 0.7), relative_labels(20),
                      "hopper-medium-expert-dt-seed0-20261125 (dt)",
                      "hopper-medium-expert-gdt-seed1-20261125 (gdt)", "weight", s);
    save_heatmap_pair(at("pair_merged20"), causal_map(20), causal_map(20, 0.5), merged, "dhi",
                      "udt", "weight", s);
    s.title = "hopper-medium-expert-dt, episode 1\nPearson 0.29, Spearman 0.37 over 1962 steps";
    save_lines(at("entropy_reward"), {entropy, reward}, "step", "attention entropy", s, "reward");
    s.title = "Returns as the target leaves the data";
    save_lines(at("sweep"), {dt, gdt}, "target return", "normalised score", s, {},
               {{"best episode in the data", 100.0}}, true);
    s.title = "training loss";
    save_lines(at("training_loss"), runs, "training step", "training loss", s);
    s.title = "hopper-medium-expert-dt-seed0-20261125: modality zeroed at inference";
    save_bars(at("zeroing"), bars, "normalised score", s);
    s.title = "hopper-medium-expert-dt-merger: tokens by modality";
    save_scatter(at("tsne_modality"), groups, s);
    save_value_scatter(at("tsne_rtg"), x, y, value, "return-to-go", s);
    save_scatter(at("correlation"), {groups.front()}, s, "attention entropy, layer 1", "reward");
    // A sweep's results: seeds counted over each bar's whisker, a correlation in the title.
    s.title = "Final score over seeds";
    save_clustered_bars(at("sweep_scores"), {"medium", "medium-expert"},
                        {{"dt", {{"", 42.0, 2.8}, {"", 70.5, 0.7}}, {"n=2", "n=2"}, {}},
                         {"dc", {{"", 44.0, 1.4}, {"", 80.0, 5.0}}, {"n=2", "n=1 of 2"}, {}}},
                        "normalised score", s);
    s.title = "hopper-medium-expert-dt-seed0-20261125: Pearson 0.12, Spearman -0.27";
    save_scatter(at("correlation_titled"), {groups.front()}, s, "attention entropy, layer 1",
                 "reward");
    ASSERT_EQ(log.figures.size(), 16u);
    EXPECT_EQ(report(log), "");
    // Maps use the page: the data at least 55% of its width, square-ish cells on a column.
    for (const auto& [base, layout] : log.figures)
      if (base.find("map60") != std::string::npos) {
        EXPECT_GE(layout.plot_area.width(), 0.55 * layout.page.width()) << base;
        EXPECT_FALSE(layout.ticks_inside) << base;
      }
  }
}

// Numbers are set as in print: negative tick labels with a minus sign (U+2212), not a hyphen, and
// an axis whose data are whole numbers (layers 1 to 3) ticked at whole numbers only, where the
// default ticker would write 1.5 and 2.5.
TEST_F(FigureLayout, TicksOfWholeNumbersAreWholeAndNegativesHaveAMinusSign) {
  Series errors{"error", {1, 2, 3}, {-0.4, 0.1, 0.3}, {}, {}, false};
  TextLayoutLog log;
  FigureStyle style = *venue_preset("icml");
  style.pdf = style.svg = false;
  save_lines((dir / "layers").string(), {errors}, "layer", "change", style);
  ASSERT_EQ(log.figures.size(), 1u);
  const auto& texts = log.figures.front().second.texts;
  const QChar minus(0x2212);
  bool negative = false;
  for (const auto& t : texts) {
    EXPECT_FALSE(t.text.startsWith('-')) << t.text.toStdString() << ": a hyphen for a minus";
    EXPECT_NE(t.text, "1.5");
    EXPECT_NE(t.text, "2.5");
    negative = negative || t.text.startsWith(minus);
  }
  EXPECT_TRUE(negative) << "no negative tick label";
  for (const char* whole : {"1", "2", "3"})
    EXPECT_TRUE(std::any_of(texts.begin(), texts.end(), [&](const auto& t) {
      return t.text == whole;
    })) << whole;
}

// A reference line's name stands above its line inside the data rectangle, even when the line is
// at the top of the data (a target sweep that reaches the data's best episode): the value axis
// makes room for it rather than cutting it.
TEST_F(FigureLayout, AReferenceLinesNameAtTheTopOfTheDataIsWhole) {
  const std::vector<double> targets = {1800, 3600, 7200, 18000, 36000, 72000};
  Series dt{"dt", targets, {52.1, 96.8, 97.0, 97.2, 97.5, 97.6}, {}, {}, false};
  Series gdt{"gdt", targets, {46.6, 96.5, 96.7, 96.9, 96.2, 96.9}, {}, {}, false};
  for (auto& s : {&dt, &gdt})
    for (double y : s->y) s->low.push_back(y - 12), s->high.push_back(y + 1);
  for (const auto& venue : {"icml", "neurips", "ieee"}) {
    TextLayoutLog log;
    // A title of two lines, as the Zeroing and target sweep tab's: the data rectangle is short.
    FigureStyle style = *venue_preset(venue);
    style.title = "hopper-medium-expert-dt and hopper-medium-expert-gdt: target-return sweep";
    save_lines((dir / venue).string(), {dt, gdt}, "target return", "normalised score", style, {},
               {{"dataset's best episode", 100.2}}, true);
    ASSERT_EQ(log.figures.size(), 1u);
    const auto& layout = log.figures.front().second;
    const auto label = std::find_if(layout.texts.begin(), layout.texts.end(), [](const auto& t) {
      return t.text == "dataset's best episode";
    });
    ASSERT_NE(label, layout.texts.end()) << venue;
    EXPECT_GE(label->box.top(), layout.plot_area.top() - 0.5) << venue << ": cut by the top";
    EXPECT_LE(label->box.bottom(), layout.plot_area.bottom()) << venue;
    EXPECT_EQ(report(log), "") << venue;
  }
}

TEST_F(FigureLayout, ErrorWhiskersStandOutInsideTheirBars) {
  // One bar, 50 +/- 20: the whisker's lower half runs inside the bar and must contrast with its
  // fill (a dark fill hid a black whisker).
  FigureStyle s;
  s.pdf = s.svg = false;
  s.show_title = false;
  const auto base = (dir / "bar").string();
  save_bars(base, {{"RTG", 50.0, 20.0}}, "normalised score", s);
  const QImage image(QString::fromStdString(base + ".png"));
  ASSERT_FALSE(image.isNull());
  // The bar: the widest run of one non-white, non-black colour in the middle row of the image.
  int best_left = 0, best_right = -1;
  const int row = image.height() / 2;
  for (int x = 0; x < image.width();) {
    const QRgb c = image.pixel(x, row);
    int end = x;
    while (end + 1 < image.width() && image.pixel(end + 1, row) == c) ++end;
    if (qGray(c) > 60 && qGray(c) < 245 && end - x > best_right - best_left)
      best_left = x, best_right = end;
    x = end + 1;
  }
  ASSERT_GT(best_right - best_left, 50) << "no bar found";
  const QRgb fill = image.pixel(best_left + (best_right - best_left) / 4, row);
  // The whisker splits that row of the bar in two: the bar runs from the first pixel of its fill
  // to the last.
  for (int x = 0; x < image.width(); ++x)
    if (image.pixel(x, row) == fill) best_right = x;
  for (int x = image.width() - 1; x >= 0; --x)
    if (image.pixel(x, row) == fill) best_left = x;
  // The bar's top: going up the quarter column until the fill ends; the whisker goes 40% of the
  // bar's height below it, through the centre column.
  const int quarter = best_left + (best_right - best_left) / 4,
            centre = (best_left + best_right) / 2;
  int top = 0;
  while (top < row && image.pixel(quarter, top) != fill) ++top;
  int darkest = 255;
  for (int x = centre - 3; x <= centre + 3; ++x)
    darkest = std::min(darkest, qGray(image.pixel(x, top + (row - top) / 4)));
  EXPECT_GT(qGray(fill) - darkest, 100)
      << "whisker " << darkest << " on fill " << qGray(fill) << " at row " << top + (row - top) / 4
      << ", column " << centre << "; the figure: " << DSTUDIO_SCREENSHOT_DIR "/whisker.png";
  if (HasFailure()) image.save(QStringLiteral(DSTUDIO_SCREENSHOT_DIR "/whisker.png"));
}

TEST_F(FigureLayout, EveryViewsExportAtIcmlNeuripsAndIeeeKeepsItsTextApartAndOnThePage) {
  AttentionMapView attention;
  std::vector<models::WindowInspection> windows(2), other(2);
  for (auto* set : {&windows, &other})
    for (auto& w : *set) {
      for (int k = 0; k < 20; ++k) {
        w.token_types.insert(w.token_types.end(), {'R', 's', 'a'});
        w.token_steps.insert(w.token_steps.end(), {k, k, k});
        w.valid.insert(w.valid.end(), {1, 1, 1});
      }
      for (int l = 0; l < 3; ++l) {
        const auto map = causal_map(60, set == &windows ? 1.0 : 0.7);
        analysis::LayerMixing layer{1, 60, std::vector<float>(map.values.begin(), map.values.end()),
                                    "attention"};
        w.layers.push_back(layer);
      }
    }
  attention.setInspections("hopper-medium-expert-dt-seed0-20261125", windows);
  attention.setComparison("hopper-medium-expert-gdt-seed1-20261125", other);
  attention.setComparisonMode(viz::AttentionMapView::Comparison::Difference);
  ReturnAnalysisView returns;
  returns.setAblation("hopper-medium-expert-dt-seed0-20261125", {{0, 5, 3000, 100, 90, 3},
                                                                 {0, 5, 1000, 200, 30, 6},
                                                                 {0, 5, 2500, 90, 75, 3},
                                                                 {0, 5, 2000, 50, 60, 2}});
  std::vector<models::TargetSummary> sweep;
  for (double m : {0.5, 1.0, 2.0, 5.0, 10.0, 20.0})
    sweep.push_back({3600 * m, 5, 3000, 100, m < 1 ? 46.0 : 98.0, 2});
  returns.setSweep("hopper-medium-expert-dt-seed0-20261125", sweep, 100.0);
  for (auto& point : sweep) point.mean_score -= 10.0;
  returns.addSweep("hopper-medium-expert-gdt-seed1-20261125", sweep);
  EntropyRewardView rollout;
  rollout.setRollout("hopper-medium-expert-dt-seed0-20261125", long_episode(), 20);
  TsneView tsne;
  models::TokenCloud cloud;
  std::vector<double> xy;
  for (int i = 0; i < 90; ++i) {
    cloud.modality.push_back(i % 3 == 0 ? "R" : i % 3 == 1 ? "s" : "a");
    cloud.window.push_back(i / 30);
    cloud.timestep.push_back(i / 3);
    cloud.return_to_go.push_back(3600.0 - 30 * i);
    xy.push_back(std::sin(i) * 10 + (i % 3) * 20), xy.push_back(std::cos(i * 0.7) * 10);
  }
  tsne.setTokens("hopper-medium-expert-dt-merger", cloud);
  tsne.showLayout(1000, xy);
  // The Markov lab after two runs: the loss of both against the floor, and the mixing matrix.
  MarkovLabView lab;
  models::MarkovLabResult result;
  for (int run = 0; run < 2; ++run) {
    lab.beginRun();
    result = {};
    result.entropy_rate = lab.floor();
    for (int step = 0; step <= 600; step += 10)
      result.curve.push_back(
          {step, 0.7,
           result.entropy_rate + (run == 0 ? 0.03 : 0.0) + 0.1 * std::exp(-step / 50.0)});
    lab.addPoints(result.curve);
    result.final_loss = result.curve.back().loss;
    result.gap = result.final_loss - result.entropy_rate;
    result.length = 32;
    result.mixing_matrix.assign(32 * 32, 0.0);
    for (int n = 0; n < 32; ++n)
      for (int i = std::max(0, n - 1); i <= n; ++i)
        result.mixing_matrix[static_cast<size_t>(n * 32 + i)] = 1.0 / std::min(2, n + 1);
    result.mixing_by_lag = {0.5, 0.5};
    lab.showResult(result);
  }
  // The Viewer's timeline with a fork, a joint on its right axis: a legend of two rows of long
  // names under the plot.
  EpisodeTimeline timeline;
  std::vector<double> fork_return, fork_joint, main_joint;
  for (int t = 0; t < 200; ++t) {
    timeline.addStep(t, 3600.0 - 3 * t, 3.0 * t, 2.0 + 0.1 * std::sin(t * 0.1));
    fork_return.push_back(2.8 * t);
    fork_joint.push_back(-0.3 + 0.3 * std::sin(t * 0.07));
    main_joint.push_back(-0.3 + 0.3 * std::cos(t * 0.05));
  }
  timeline.setForks({{"fork 1", QColor(213, 94, 0), fork_return, fork_joint}});
  timeline.setDivergence("thigh_joint (qpos)", main_joint);
  timeline.replotIfChanged();
  for (const char* venue : {"icml", "neurips", "ieee"}) {
    SCOPED_TRACE(venue);
    TextLayoutLog log;
    auto style = *venue_preset(venue);
    style.pdf = style.svg = style.png = false;
    export_all({&attention, &returns, &rollout, &tsne, &lab, &timeline}, (dir / venue).string(),
               style);
    EXPECT_GE(log.figures.size(), 8u);
    EXPECT_EQ(report(log), "");
    // Every view's numbers: CSV a standard reader parses to each header's width.
    const auto csv_report = test::check_csv_files(dir / venue);
    EXPECT_TRUE(test::all_ok(csv_report)) << test::joined(csv_report);
    EXPECT_GE(csv_report.size(), 6u) << test::joined(csv_report);
    // Two models swept: the title names both.
    QString sweep_text;
    for (const auto& [base, layout] : log.figures)
      if (base.find("returns_sweep") != std::string::npos)
        for (const auto& t : layout.texts) sweep_text += t.text + ' ';
    EXPECT_TRUE(sweep_text.contains("gdt-seed1") && sweep_text.contains("dt-seed0"))
        << sweep_text.toStdString();
    // The two models side by side: one figure of two maps on one scale.
    attention.setComparisonMode(viz::AttentionMapView::Comparison::SideBySide);
    TextLayoutLog pair;
    EXPECT_EQ(attention.exportFigure((dir / venue / "pair").string(), style).size(),
              2u);  // the two maps' CSVs
    EXPECT_EQ(pair.figures.size(), 1u);
    EXPECT_EQ(report(pair), "");
    if (HasFailure()) {
      auto shown = style;
      shown.png = true;
      attention.exportFigure(std::string(DSTUDIO_SCREENSHOT_DIR "/pair-") + venue, shown);
    }
    attention.setComparisonMode(viz::AttentionMapView::Comparison::Difference);
  }
}

// Before any run the comparison's axes fill its width (an empty legend left in the layout is only
// its margins wide and used to narrow the plot to a strip), and come back with their legend.
TEST_F(FigureLayout, AnEmptyComparisonSpansItsWidth) {
  RunComparisonView comparison;
  comparison.setGroups({}, "loss (action MSE)", true,
                       "Start runs or add run folders to compare them.");
  comparison.resize(420, 220);
  comparison.show();
  QApplication::processEvents();
  auto* plot = comparison.findChild<QCustomPlot*>();
  plot->replot();
  EXPECT_GT(plot->axisRect()->rect().width(), 0.6 * plot->width());
  CurveGroup group{"dt", {1, 2, 3}, {1, 0.5, 0.25}, {1, 0.5, 0.25}, {1, 0.5, 0.25}, {}, {}};
  comparison.setGroups({group}, "loss (action MSE)", true);
  plot->replot();
  EXPECT_TRUE(plot->legend->visible());
  EXPECT_EQ(plot->legend->layout(), plot->plotLayout());
  EXPECT_GT(plot->axisRect()->rect().width(), 0.6 * plot->width());
  comparison.setGroups({}, "loss (action MSE)", true, "No checked run has loss yet.");
  plot->replot();
  EXPECT_FALSE(plot->legend->visible());
  EXPECT_GT(plot->axisRect()->rect().width(), 0.6 * plot->width());
}

TEST_F(FigureLayout, OnScreenPlotsKeepTickLabelsApartAndLegendsOffTheCurves) {
  // The training loss on a log axis spanning four decades, in a small panel; the entropy and
  // reward of a long episode; the run comparison on a log axis.
  TrainingCurvesView training;
  analysis::RunMetrics metrics;
  for (int step = 100; step <= 100000; step += 100) {
    metrics.columns["loss"].x.push_back(step);
    metrics.columns["loss"].y.push_back(5.0 * std::pow(step / 100.0, -1.3));
    metrics.columns["learning_rate"].x.push_back(step);
    metrics.columns["learning_rate"].y.push_back(1e-4 * std::min(1.0, step / 1e4));
  }
  training.setRun("dt-seed0-20261125-013708", metrics);
  EntropyRewardView rollout;
  rollout.setRollout("hopper-medium-expert-dt", long_episode(), 20);
  RunComparisonView comparison;
  CurveGroup group{"dt (3 runs)", {}, {}, {}, {}, {}, {}};
  for (int step = 100; step <= 100000; step += 100) {
    const double loss = 2.0 * std::pow(step / 100.0, -1.1);
    group.x.push_back(step), group.mean.push_back(loss), group.low.push_back(0.8 * loss),
        group.high.push_back(1.2 * loss);
  }
  comparison.setGroups({group}, "training loss", true);
  for (QWidget* view : std::initializer_list<QWidget*>{&training, &rollout, &comparison})
    for (const QSize size : {QSize(460, 330), QSize(900, 700)}) {
      view->resize(size);
      view->show();
      QApplication::processEvents();
      for (auto* plot : view->findChildren<QCustomPlot*>()) {
        if (!plot->isVisible()) continue;
        plot->replot();
        QApplication::processEvents();  // a queued replot with fewer ticks
        plot->replot();
        std::string wrong;
        for (const auto& problem : text_layout(*plot).problems(0.0))
          if (problem.find("overlaps") != std::string::npos ||
              problem.find("legend covers") != std::string::npos)
            wrong += problem + "\n";
        EXPECT_EQ(wrong, "") << view->metaObject()->className() << " at " << size.width() << "x"
                             << size.height() << ", plot " << plot->yAxis->label().toStdString();
        if (!wrong.empty())
          plot->grab().save(QStringLiteral(DSTUDIO_SCREENSHOT_DIR "/on-screen-overlap.png"));
      }
    }
}

TEST_F(FigureLayout, PresentationScaleGrowsEveryTextOnceAndRestoresIt) {
  // Axis titles, tick labels and each legend entry grow by the scale exactly once (a legend
  // passes its font on to its entries, which must not then be scaled again), and 1 restores them.
  QCustomPlot plot;
  plot.addGraph()->setName("loss");
  plot.addGraph()->setName("floor");
  plot.legend->setVisible(true);
  legend_above(&plot);
  plot.legend->item(1)->setFont(QFont("DejaVu Sans", 7));  // an entry with a font of its own
  const double label = plot.xAxis->labelFont().pointSizeF(),
               ticks = plot.yAxis->tickLabelFont().pointSizeF();
  const double entry0 = plot.legend->item(0)->font().pointSizeF(),
               entry1 = plot.legend->item(1)->font().pointSizeF();
  ASSERT_GT(label, 0);
  set_plot_text_scale(&plot, 1.5);
  EXPECT_DOUBLE_EQ(plot.xAxis->labelFont().pointSizeF(), 1.5 * label);
  EXPECT_DOUBLE_EQ(plot.yAxis->tickLabelFont().pointSizeF(), 1.5 * ticks);
  EXPECT_DOUBLE_EQ(plot.legend->item(0)->font().pointSizeF(), 1.5 * entry0);
  EXPECT_DOUBLE_EQ(plot.legend->item(1)->font().pointSizeF(), 1.5 * entry1);
  set_plot_text_scale(&plot, 1.0);
  EXPECT_DOUBLE_EQ(plot.xAxis->labelFont().pointSizeF(), label);
  EXPECT_DOUBLE_EQ(plot.legend->item(0)->font().pointSizeF(), entry0);
  EXPECT_DOUBLE_EQ(plot.legend->item(1)->font().pointSizeF(), entry1);
}

TEST_F(FigureLayout, PresentationScaleSkipsALegendsEmptyCells) {
  // Three entries in rows of two leave the legend's grid a cell with no item in it.
  QCustomPlot plot;
  for (const char* name : {"dt", "dc", "udc"}) plot.addGraph()->setName(name);
  plot.legend->setVisible(true);
  plot.legend->setWrap(2);
  plot.legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);
  ASSERT_EQ(plot.legend->itemCount(), 4);
  ASSERT_EQ(plot.legend->item(3), nullptr);
  const double entry = plot.legend->item(2)->font().pointSizeF();
  set_plot_text_scale(&plot, 2.0);
  EXPECT_DOUBLE_EQ(plot.legend->item(2)->font().pointSizeF(), 2.0 * entry);
}

}  // namespace
}  // namespace dstudio::viz

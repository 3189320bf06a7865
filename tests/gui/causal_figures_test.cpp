// The causal analyses' figures at the venues' widths keep their text apart and on the page: each
// of the seven analyses run on a small model and a dataset written here, its figures drawn at
// ICML, NeurIPS and IEEE sizes under the text-layout check.

// LibTorch before Qt: Qt's `slots` macro breaks LibTorch's headers.
#include <torch/torch.h>

// The rest.
#include <gtest/gtest.h>

#include <QDir>
#include <QSignalSpy>
#include <filesystem>
#include <string>
#include <vector>

#include "analyses_panel.h"
#include "dstudio/analysis/analysis_registry.h"
#include "dstudio/models/checkpoint_model.h"
#include "dstudio/models/decision_model.h"
#include "dstudio/models/intervene.h"
#include "dstudio/viz/analysis_view.h"
#include "dstudio/viz/figures.h"
#include "h5_fixture.h"
#include "test_application.h"

namespace dstudio::viz {
namespace {

namespace fs = std::filesystem;

TEST(CausalFigures, EveryCausalAnalysisAtIcmlNeuripsAndIeeeKeepsItsTextApartAndOnThePage) {
  test::ensure_application();
  test::TempDir dir;
  // Ten episodes of 30 steps with hopper's shapes, and a random two-head DT of K 5 named as a
  // long run folder would name it (the titles carry it).
  test::D4rlSpec spec;
  spec.n = 300;
  spec.obs_dim = 11;
  spec.act_dim = 3;
  spec.timeouts.assign(300, 0);
  for (int k = 29; k < 300; k += 30) spec.timeouts[static_cast<std::size_t>(k)] = 1;
  const auto dataset = dir / "data.hdf5";
  test::write_d4rl_fixture(dataset, spec);
  auto c = models::make_variant("dt");
  c.state_dim = 11;
  c.act_dim = 3;
  c.hidden = 32;
  c.layers = 2;
  c.heads = 2;
  c.context_length = 5;
  torch::manual_seed(3);
  models::DecisionModel model(c);
  models::CheckpointInfo info;
  info.variant = c;
  info.env_id = "hopper";
  info.state_mean.assign(11, 0.0f);
  info.state_std.assign(11, 100.0f);
  info.metrics = "{}";
  const auto checkpoint = dir / "hopper-medium-expert-dt-seed0-20261125.pt";
  models::save_weights_checkpoint(checkpoint, model, info, "test");

  const std::vector<std::pair<std::string, std::map<std::string, std::string>>> runs{
      {"knockout", {{"windows", "8"}, {"episodes", "2"}}},
      {"heads", {{"windows", "8"}, {"episodes", "1"}}},
      {"action-lens", {{"windows", "8"}}},
      {"patching", {{"windows", "8"}}},
      {"attribution", {{"windows", "8"}}},
      {"probes", {{"windows", "40"}}},
      {"steering", {{"windows", "8"}, {"episodes", "1"}, {"alphas", "0,1,2"}}}};
  std::vector<analysis::AnalysisResult> results;
  for (const auto& [name, options] : runs) {
    SCOPED_TRACE(name);
    const auto definition = analysis::analysis_registry().find(name);
    ASSERT_NE(definition, nullptr);
    analysis::AnalysisInputs in;
    in.checkpoint = checkpoint.string();
    in.dataset = dataset.string();
    in.options = analysis::resolve_options(*definition, options);
    results.push_back(definition->run(in, {}));
    EXPECT_FALSE(results.back().figures.empty());
  }
  for (const char* venue : {"icml", "neurips", "ieee"}) {
    SCOPED_TRACE(venue);
    TextLayoutLog log;
    auto style = *venue_preset(venue);
    style.svg = style.pdf = style.png = false;  // drawn and laid out, not written
    std::size_t figures = 0;
    for (const auto& result : results)
      for (const auto& figure : result.figures) {
        save_analysis_figure((dir / venue / figure.name).string(), figure, style, false);
        ++figures;
      }
    EXPECT_EQ(log.figures.size(), figures);
    std::string problems;
    for (const auto& [base, layout] : log.figures)
      for (const auto& problem : layout.problems())
        problems += fs::path(base).filename().string() + ": " + problem + "\n";
    EXPECT_EQ(problems, "");
  }
}

// The steering analysis run in the window keeps its directions where the summary says, so the
// live viewer can steer with them: each file is read back by the steer spec's reader for the same
// checkpoint.
TEST(CausalFigures, TheWindowsSteeringKeepsItsDirectionsForLiveSteering) {
  test::ensure_application();
  test::TempDir dir;
  test::D4rlSpec spec;
  spec.n = 300;
  spec.obs_dim = 11;
  spec.act_dim = 3;
  spec.timeouts.assign(300, 0);
  for (int k = 29; k < 300; k += 30) spec.timeouts[static_cast<std::size_t>(k)] = 1;
  const auto dataset = dir / "data.hdf5";
  test::write_d4rl_fixture(dataset, spec);
  auto c = models::make_variant("dt");
  c.state_dim = 11;
  c.act_dim = 3;
  c.hidden = 16;
  c.layers = 2;
  c.context_length = 5;
  torch::manual_seed(4);
  models::DecisionModel model(c);
  models::CheckpointInfo info;
  info.variant = c;
  info.env_id = "hopper";
  info.dataset_path = dataset.string();
  info.state_mean.assign(11, 0.0f);
  info.state_std.assign(11, 100.0f);
  info.metrics = "{}";
  const auto checkpoint = dir / "steered.pt";
  models::save_weights_checkpoint(checkpoint, model, info, "test");

  studio::AnalysesPanel panel;
  panel.setResultsDirectory(QString::fromStdString((dir / "analyses").string()));
  panel.setCheckpoint(QString::fromStdString(checkpoint.string()), "steered");
  auto* view = panel.view("steering");
  ASSERT_NE(view, nullptr);
  for (const auto& [key, value] : std::map<std::string, std::string>{
           {"windows", "4"}, {"episodes", "1"}, {"alphas", "0,1"}, {"layers", "2"}})
    ASSERT_TRUE(view->setOption(key, value)) << key;
  QSignalSpy written(&panel, &studio::AnalysesPanel::resultsWritten);
  QSignalSpy shown(&panel, &studio::AnalysesPanel::resultShown);
  ASSERT_TRUE(panel.run("steering"));
  ASSERT_TRUE(shown.wait(240000)) << view->status().toStdString();
  ASSERT_EQ(written.size(), 1);
  const QString folder = panel.writtenFolder("steering");
  EXPECT_EQ(written.front().at(1).toString(), folder);
  EXPECT_TRUE(folder.startsWith(QString::fromStdString((dir / "analyses").string())));
  EXPECT_TRUE(view->status().contains(folder)) << view->status().toStdString();
  for (const char* file : {"direction_L1.json", "direction_L2.json", "summary.json"})
    EXPECT_TRUE(QFileInfo::exists(QDir(folder).filePath(file))) << file;
  models::CheckpointInfo read;
  read.path = checkpoint.string();
  read.variant = c;
  const auto direction =
      models::read_direction(QDir(folder).filePath("direction_L2.json").toStdString(), read);
  EXPECT_EQ(direction.numel(), 16);
}

}  // namespace
}  // namespace dstudio::viz

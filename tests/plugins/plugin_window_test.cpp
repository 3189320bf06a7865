// The example plugins of plugins/ (built out of tree against the installed SDK by the
// plugin_examples fixture) as a user meets them in the window: the diagonal state-space mixer in
// the training form with its own options, trained for a few steps, and the token-distance
// analysis as a panel of the Analyses tab, run on the shipped DT.

// LibTorch before Qt: Qt's keyword macros (slots, emit) would rewrite LibTorch's headers.
#include "dstudio/models/decision_model.h"
#include "dstudio/models/token_mixer.h"
// Then the rest.
#include <gtest/gtest.h>

#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QScrollArea>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableWidget>
#include <QTreeWidget>
#include <filesystem>

#include "analyses_panel.h"
#include "default_dataset.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/data/synthetic.h"
#include "dstudio/models/variant_registry.h"
#include "dstudio/plugins/loader.h"
#include "dstudio/viz/analysis_view.h"
#include "h5_fixture.h"
#include "job.h"
#include "main_window.h"
#include "plugins_dialog.h"
#include "test_application.h"
#include "training_panel.h"

namespace dstudio::studio {
namespace {

class PluginWindow : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    test::ensure_application();
    const auto records = plugins::load_plugins({DSTUDIO_EXAMPLE_PLUGINS});
    for (const auto& r : records) ASSERT_TRUE(r.loaded) << r.file << ": " << r.error;
    ASSERT_EQ(records.size(), 3u);  // diagonal-ssm, token-distance, inverted-pendulum
  }
  static void save(QWidget& w, const QString& name) {
    test::deliver_posted_events();  // laid out and drawn
    QDir().mkpath(DSTUDIO_SCREENSHOT_DIR);
    w.grab().save(QDir(DSTUDIO_SCREENSHOT_DIR).filePath(name));
  }
  test::TempDir dir;
};

// The studio's pooling and the example plugin's diagonal-ssm: one registry entry and one module
// registration each, refused alike when taken again, made alike into a model's blocks.
TEST_F(PluginWindow, ABuiltInMixerAndAPluginMixerGoThroughOneRegistrationPath) {
  for (const std::string name : {"pooling", "diagonal-ssm"}) {
    SCOPED_TRACE(name);
    const auto definition = models::mixer_registry().find(name);
    ASSERT_TRUE(definition);
    EXPECT_TRUE(definition->flops);
    models::MixerDefinition again;
    again.name = name;
    EXPECT_THROW(models::mixer_registry().add(again), UsageError) << "the registry holds both";
    try {
      models::register_token_mixer(
          name, [](const models::VariantConfig&) { return std::shared_ptr<models::TokenMixer>(); });
      ADD_FAILURE() << "a second module was taken";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("'" + name + "' already has a module"),
                std::string::npos)
          << e.what();
    }
    auto config = models::make_variant("hier", "none", name);  // DT's triplets, this mixer
    EXPECT_EQ(config.mixer, name);
    config.state_dim = 3;
    config.act_dim = 2;
    config.hidden = 16;
    config.context_length = 4;
    config.validate();
    models::DecisionModel model(config);
    models::ModelInputs in;
    in.states = torch::randn({2, 4, 3});
    in.actions = torch::randn({2, 4, 2});
    in.returns_to_go = torch::randn({2, 4, 1});
    in.timesteps = torch::arange(4).repeat({2, 1});
    models::Inspection inspection;
    model->forward(in, &inspection);
    ASSERT_EQ(inspection.mixers.size(), static_cast<std::size_t>(config.layers));
    EXPECT_EQ(inspection.mixers.front(), name);
  }
  EXPECT_TRUE(models::mixer_registry().find("pooling")->origin.builtin());
  EXPECT_EQ(models::mixer_registry().find("diagonal-ssm")->origin.plugin, "diagonal-ssm");
}

TEST_F(PluginWindow, ThePluginMixerIsInTheTrainingFormWithItsOptionsAndTrains) {
  data::SyntheticSpec spec;
  spec.transitions = 4000;
  const auto path = dir / "small.hdf5";
  data::write_d4rl(path, data::make_synthetic(spec));
  TrainingPanel panel;
  panel.resize(1300, 800);
  panel.setRunsDirectory(QString::fromStdString((dir / "runs").string()));
  panel.setDataset(std::make_shared<const data::Dataset>(data::load_dataset(path)),
                   QString::fromStdString(path.string()));
  const int index = panel.variantChooser()->findText("dssm");
  ASSERT_GE(index, 0) << "the plugin's variant is offered";
  panel.variantChooser()->setCurrentIndex(index);
  // Its mixer's own options, with the plugin's defaults.
  ASSERT_TRUE(panel.variantKeys().contains("mixer_options.timescale_max"))
      << panel.variantKeys().join(", ").toStdString();
  ASSERT_TRUE(panel.variantKeys().contains("mixer_options.gate"));
  auto* timescale = qobject_cast<QDoubleSpinBox*>(panel.field("mixer_options.timescale_max"));
  ASSERT_NE(timescale, nullptr);
  EXPECT_EQ(timescale->value(), 30.0);
  ASSERT_TRUE(panel.setField("mixer_options.timescale_max", 12.0));
  ASSERT_TRUE(panel.setField("hidden", 32));
  ASSERT_TRUE(panel.setField("steps", 20));
  ASSERT_TRUE(panel.setField("log_every", 5));
  ASSERT_TRUE(panel.setField("eval_every", 0));
  const auto config = panel.variantConfig();
  EXPECT_EQ(config.plugin, "diagonal-ssm");
  EXPECT_EQ(config.mixer_options.at("timescale_max"), 12.0);
  panel.show();
  // The mixer's options are at the form's end: scrolled into view for the picture.
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&panel));
  test::deliver_posted_events();
  for (QWidget* p = timescale->parentWidget(); p; p = p->parentWidget())
    if (auto* area = qobject_cast<QScrollArea*>(p)) area->ensureWidgetVisible(timescale);
  save(panel, "plugin-training-form.png");
  QSignalSpy finished(&panel, &TrainingPanel::runFinished);
  ASSERT_TRUE(panel.startTraining()) << panel.lastError().toStdString();
  ASSERT_TRUE(finished.wait(120000));
  EXPECT_EQ(finished.front().at(1).toString(), "Finished") << panel.lastError().toStdString();
  const auto info = models::read_checkpoint_info(
      (std::filesystem::path(finished.front().at(0).toString().toStdString()) / "checkpoint.pt")
          .string());
  EXPECT_EQ(info.variant.plugin, "diagonal-ssm");
  EXPECT_EQ(info.variant.mixer_options.at("timescale_max"), 12.0);
}

TEST_F(PluginWindow, ThePluginAnalysisHasItsPanelAndRunsOnTheOpenCheckpoint) {
  MainWindow w;
  w.resize(1300, 800);
  auto* panel = w.analysesPanel();
  ASSERT_TRUE(panel->names().contains("token-distance")) << panel->names().join(", ").toStdString();
  auto* view = panel->view("token-distance");
  QSignalSpy shown(&w, &MainWindow::checkpointShown);
  w.openDefaultCheckpoint();
  ASSERT_TRUE(shown.wait(180000));
  ASSERT_TRUE(view->setOption("windows", "8"));
  QSignalSpy result(panel, &AnalysesPanel::resultShown);
  ASSERT_TRUE(panel->run("token-distance"));
  ASSERT_TRUE(result.wait(120000)) << view->status().toStdString();
  ASSERT_TRUE(view->hasResult());
  // One row per layer of the shipped DT, its mean distance within the window's 20 steps.
  auto* table = qobject_cast<QTableWidget*>(view->tables()->widget(0));
  ASSERT_NE(table, nullptr);
  ASSERT_EQ(table->rowCount(), 3);
  for (int r = 0; r < 3; ++r) {
    const double steps = table->item(r, 1)->text().toDouble();
    EXPECT_GT(steps, 0.0);
    EXPECT_LT(steps, 19.0);
  }
  w.showPage(panel);
  panel->select("token-distance");
  w.show();
  save(w, "plugin-analysis-panel.png");
}

// Help ▸ Plugins lists both examples as loaded, with what each added.
TEST_F(PluginWindow, HelpPluginsListsTheExamplesAndWhatTheyAdded) {
  PluginsDialog dialog;
  dialog.resize(900, 420);
  dialog.show();
  auto* tree = dialog.findChild<QTreeWidget*>();
  ASSERT_NE(tree, nullptr);
  QStringList loaded;
  for (int i = 0; i < tree->topLevelItemCount(); ++i)
    if (tree->topLevelItem(i)->text(1) == "loaded") loaded << tree->topLevelItem(i)->text(0);
  EXPECT_TRUE(loaded.join(' ').contains("diagonal-ssm")) << loaded.join(", ").toStdString();
  EXPECT_TRUE(loaded.join(' ').contains("token-distance")) << loaded.join(", ").toStdString();
  tree->expandAll();
  save(dialog, "plugins-dialog.png");
}

}  // namespace
}  // namespace dstudio::studio

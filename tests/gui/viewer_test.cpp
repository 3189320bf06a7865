// The live viewer and workspaces, driven as a user drives them: open the shipped checkpoint,
// step, step back, seek, re-condition the running policy; save a workspace and open it in a new
// window. On Qt's offscreen platform the 3-D scene itself is not drawn (no OpenGL there);
// viewer_render_test.cpp covers it under a virtual X server.

// LibTorch before Qt: Qt's `slots` macro would otherwise rewrite LibTorch's headers.
#include <torch/torch.h>

// The rest.
#include <gtest/gtest.h>
#include <qcustomplot.h>

#include <QApplication>
#include <QComboBox>
#include <QDialog>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QSplitter>
#include <QStandardPaths>
#include <QTabBar>
#include <QTabWidget>
#include <QTableView>
#include <QTest>
#include <QTextBrowser>
#include <QTimer>
#include <QTreeWidget>
#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "adroit_expert_file.h"
#include "default_dataset.h"
#include "dstudio/behaviour/d4rl_policy.h"
#include "dstudio/common/error.h"
#include "dstudio/common/figure_recipe.h"
#include "dstudio/common/palette.h"
#include "dstudio/common/read_file.h"
#include "dstudio/data/dataset.h"
#include "dstudio/models/checkpoint.h"
#include "dstudio/models/checkpoint_model.h"
#include "dstudio/models/decision_model.h"
#include "dstudio/viz/attention_map_view.h"
#include "dstudio/viz/dataset_view.h"
#include "dstudio/viz/entropy_reward_view.h"
#include "dstudio/viz/episode_timeline.h"
#include "dstudio/viz/return_analysis_view.h"
#include "dstudio/viz/run_curves_view.h"
#include "dstudio/viz/scene_view.h"
#include "dstudio/viz/step_marks.h"
#include "dstudio/viz/workspace_view.h"
#include "figure_render.h"
#include "figure_render_job.h"
#include "h5_fixture.h"
#include "main_window.h"
#include "sweep_panel.h"
#include "test_application.h"
#include "training_panel.h"
#include "view_recipes.h"
#include "viewer_panel.h"

namespace dstudio::studio {
namespace {

class Viewer : public testing::Test {
 protected:
  static void SetUpTestSuite() { test::ensure_application(); }
  void SetUp() override { QSettings().clear(); }

  // Opens the shipped DT and waits until the viewer has its player, paused on a fresh episode.
  static void openCheckpoint(MainWindow& w) {
    QSignalSpy shown(&w, &MainWindow::checkpointShown);
    QSignalSpy failed(&w, &MainWindow::checkpointFailed);
    w.openDefaultCheckpoint();
    ASSERT_TRUE(shown.wait(180000))
        << (failed.isEmpty() ? "timed out" : failed.front().front().toString().toStdString());
    ASSERT_TRUE(w.viewer()->hasPlayer());
  }

  // Processes events until `done` holds for what the viewer shows (at most 20 s).
  template <typename Predicate>
  static bool waitFor(ViewerPanel* v, Predicate done) {
    for (int i = 0; i < 2000; ++i) {
      v->sync();
      if (done(v->shown())) return true;
      QTest::qWait(10);
    }
    return false;
  }

  test::TempDir dir;
};

// The step on screen has not acted yet, so its entropy is NaN: the caption shows the newest
// number instead of "nan" in every frame.
TEST(SceneOverlay, TheCaptionShowsTheNewestEntropyThatIsANumber) {
  const double nan = std::nan("");
  EXPECT_EQ(viz::SceneView::overlayPlotCaption("entropy, layer 1", {1.5, 2.25, nan}),
            "entropy, layer 1  2.25");
  EXPECT_EQ(viz::SceneView::overlayPlotCaption("entropy, layer 1", {nan, 1.0}),
            "entropy, layer 1  1.00");
  EXPECT_EQ(viz::SceneView::overlayPlotCaption("entropy, layer 1", {nan}), "entropy, layer 1  —");
  EXPECT_EQ(viz::SceneView::overlayPlotCaption("entropy, layer 1", {}), "entropy, layer 1  —");
}

// The timeline exports as a figure: the episode alone, or with forks the divergence plot (their
// returns, and their action difference from the main run on the right axis), values in its CSV.
TEST_F(Viewer, TheTimelineExportsWithForksAsTheDivergencePlotWithItsValues) {
  viz::EpisodeTimeline timeline;
  EXPECT_FALSE(timeline.hasFigure());
  for (int t = 0; t < 4; ++t) timeline.addStep(t, 3600.0 - t, 3.0 * t, 2.0);
  EXPECT_EQ(timeline.figureName(), "episode");
  timeline.setForks(
      {{"fork 1", QColor(213, 94, 0), {0.0, 3.0, 5.5, 7.0}, {std::nan(""), 0.0, 0.25, 0.5}}});
  EXPECT_EQ(timeline.figureName(), "divergence");
  ASSERT_TRUE(timeline.hasFigure());
  const QString folder = QDir::temp().filePath(
      QStringLiteral("dstudio-divergence-%1").arg(QCoreApplication::applicationPid()));
  QDir(folder).removeRecursively();
  QDir().mkpath(folder);
  viz::FigureStyle style;
  style.pdf = style.svg = false;
  const auto written =
      timeline.exportFigure(QDir(folder).filePath("divergence").toStdString(), style);
  ASSERT_FALSE(written.empty());
  for (const auto& file : written) EXPECT_TRUE(QFileInfo::exists(QString::fromStdString(file)));
  QFile csv(QDir(folder).filePath("divergence.csv"));
  ASSERT_TRUE(csv.open(QIODevice::ReadOnly));
  const QString text = QString::fromUtf8(csv.readAll());
  EXPECT_TRUE(text.contains("fork 1: return")) << text.toStdString();
  EXPECT_TRUE(text.contains("fork 1: action difference")) << text.toStdString();
  EXPECT_TRUE(text.contains("5.5")) << text.toStdString();
  EXPECT_TRUE(text.contains("0.25")) << text.toStdString();
  const QString shots = DSTUDIO_SCREENSHOT_DIR;
  QDir().mkpath(shots);
  QFile::remove(QDir(shots).filePath("divergence.png"));
  QFile::copy(QDir(folder).filePath("divergence.png"), QDir(shots).filePath("divergence.png"));
  // A joint on the right axis: the main run's values beside the fork's, named by the joint.
  timeline.setDivergence("thigh_joint (qpos)", {-0.5, -0.25, 0.125, 0.0625});
  timeline.replotIfChanged();
  const auto joint_files =
      timeline.exportFigure(QDir(folder).filePath("joint").toStdString(), style);
  ASSERT_FALSE(joint_files.empty());
  QFile joint_csv(QDir(folder).filePath("joint.csv"));
  ASSERT_TRUE(joint_csv.open(QIODevice::ReadOnly));
  const QString joint_text = QString::fromUtf8(joint_csv.readAll());
  EXPECT_TRUE(joint_text.contains("main run: thigh_joint (qpos)")) << joint_text.toStdString();
  EXPECT_TRUE(joint_text.contains("fork 1: thigh_joint (qpos)")) << joint_text.toStdString();
  EXPECT_FALSE(joint_text.contains("action difference")) << joint_text.toStdString();
  EXPECT_TRUE(joint_text.contains("0.0625")) << joint_text.toStdString();
  EXPECT_EQ(timeline.plot()->yAxis2->label(), "thigh_joint (qpos)");
  QDir(folder).removeRecursively();
  timeline.setForks({});
  EXPECT_EQ(timeline.figureName(), "episode");
}

// A checkpoint opens with its policy paused at step 0, not running on a tab out of sight.
TEST_F(Viewer, ACheckpointOpensPausedAtStepZero) {
  MainWindow w;
  openCheckpoint(w);
  auto* v = w.viewer();
  ASSERT_TRUE(waitFor(v, [](const models::PlaybackState& s) { return s.frame != nullptr; }));
  test::deliver_posted_events();
  v->sync();
  EXPECT_FALSE(v->shown().playing);
  EXPECT_EQ(v->shown().cursor, 0);
  EXPECT_EQ(v->shown().frames, 1);
  v->play();
  ASSERT_TRUE(waitFor(v, [](const models::PlaybackState& s) { return s.cursor >= 3; }));
}

// The scene and the panels under it share a divider: a maze wants more of the height than a
// hopper, and dragging the divider gives it to the scene, never all of it.
TEST_F(Viewer, TheSceneAndThePanelsBelowShareADividerTheUserDrags) {
  ViewerPanel v;
  v.resize(1280, 760);
  v.show();
  test::deliver_posted_events();
  auto* split = v.findChild<QSplitter*>("playerSplitter");
  ASSERT_NE(split, nullptr);
  ASSERT_EQ(split->count(), 2);
  EXPECT_TRUE(split->widget(0)->isAncestorOf(v.scene()));
  EXPECT_FALSE(split->childrenCollapsible());
  const int before = v.scene()->height();
  auto sizes = split->sizes();
  sizes[0] += 60;
  sizes[1] -= 60;
  split->setSizes(sizes);
  test::deliver_posted_events();
  EXPECT_GT(v.scene()->height(), before);
}

// A speed chosen from the list gives the keyboard back to the panel: after a dialog, the arrow
// keys do not land in the list and change the speed.
TEST_F(Viewer, AChoiceInAListGivesTheKeyboardBackToThePanel) {
  MainWindow w;
  w.resize(1300, 850);
  w.show();
  w.activateWindow();
  ASSERT_TRUE(QTest::qWaitForWindowActive(&w));
  openCheckpoint(w);  // the transport is enabled with a policy to play
  auto* v = w.viewer();
  w.showPage(v);
  QComboBox* speed = nullptr;
  for (auto* box : v->findChildren<QComboBox*>())
    if (box->toolTip().startsWith("Speed")) speed = box;
  ASSERT_NE(speed, nullptr);
  speed->setFocus();
  ASSERT_EQ(QApplication::focusWidget(), speed);
  speed->setCurrentIndex(2);
  emit speed->activated(2);  // as the popup does when an item is clicked
  EXPECT_EQ(QApplication::focusWidget(), v)
      << (QApplication::focusWidget() ? QApplication::focusWidget()->metaObject()->className()
                                      : "none")
      << " " << v->isVisible();
  QDialog dialog(&w);
  QTimer::singleShot(50, &dialog, &QDialog::accept);
  dialog.exec();
  QApplication::processEvents();
  EXPECT_FALSE(qobject_cast<QComboBox*>(QApplication::focusWidget()))
      << "focus came back to a list";
  QTest::keyClick(QApplication::focusWidget() ? QApplication::focusWidget() : v, Qt::Key_Down);
  QTest::keyClick(QApplication::focusWidget() ? QApplication::focusWidget() : v, Qt::Key_Up);
  EXPECT_EQ(speed->currentIndex(), 2);
}

// Before the first step the timeline has no numbers on its axes (QCustomPlot's 0 to 5 would pass
// for values) and says what it will show; with a step, its axes and legend are back.
TEST_F(Viewer, TheTimelineBeforeTheFirstStepSaysSoWithoutPlaceholderAxes) {
  viz::EpisodeTimeline timeline;
  timeline.replotIfChanged();
  EXPECT_TRUE(timeline.placeholderShown());
  for (auto* axis : {timeline.plot()->xAxis, timeline.plot()->yAxis, timeline.plot()->yAxis2})
    EXPECT_FALSE(axis->tickLabels()) << axis->label().toStdString();
  timeline.addStep(0, 3600.0, 0.0, 2.5);
  timeline.replotIfChanged();
  EXPECT_FALSE(timeline.placeholderShown());
  EXPECT_TRUE(timeline.plot()->yAxis->tickLabels());
  EXPECT_TRUE(timeline.plot()->legend->visible());
  timeline.clear();
  timeline.replotIfChanged();
  EXPECT_TRUE(timeline.placeholderShown()) << "a new episode, before its first step";
}

// A behaviour policy's timeline has no return-to-go: the returns' axis is the return so far's.
TEST_F(Viewer, TheTimelineWithoutAReturnToGoScalesToTheReturnSoFar) {
  viz::EpisodeTimeline timeline;
  for (int t = 0; t < 50; ++t) timeline.addStep(t, std::nan(""), 20.0 * t, std::nan(""));
  timeline.replotIfChanged();
  const auto range = timeline.plot()->yAxis->range();
  EXPECT_LE(range.lower, 0.0);
  EXPECT_GE(range.upper, 20.0 * 49) << range.lower << " .. " << range.upper;
  EXPECT_LT(range.upper, 1.2 * 20.0 * 49) << "not the axis of some other value";
  // Its legend names the one curve there is.
  ASSERT_EQ(timeline.plot()->legend->itemCount(), 1);
  auto* item = qobject_cast<QCPPlottableLegendItem*>(timeline.plot()->legend->item(0));
  ASSERT_NE(item, nullptr);
  EXPECT_EQ(item->plottable()->name(), QStringLiteral("return so far"));
  EXPECT_FALSE(timeline.plot()->yAxis2->visible()) << "no entropy: no entropy axis";
  // A policy's timeline names all three once its entropy has values.
  viz::EpisodeTimeline policy;
  policy.addStep(0, 300.0, 0.0, std::nan(""));
  for (int t = 1; t < 5; ++t) policy.addStep(t, 300.0 - t, 1.0 * t, 0.5);
  policy.replotIfChanged();
  EXPECT_EQ(policy.plot()->legend->itemCount(), 3);
  EXPECT_TRUE(policy.plot()->yAxis2->visible());
}

// CIE 1976 colour difference of two colours (sRGB, D65).
double delta_e(const QColor& a, const QColor& b) {
  const auto lab = [](const QColor& c) {
    const auto linear = [](double u) {
      return u <= 0.04045 ? u / 12.92 : std::pow((u + 0.055) / 1.055, 2.4);
    };
    const double r = linear(c.redF()), g = linear(c.greenF()), bl = linear(c.blueF());
    const double x = (0.4124 * r + 0.3576 * g + 0.1805 * bl) / 0.95047,
                 y = 0.2126 * r + 0.7152 * g + 0.0722 * bl,
                 z = (0.0193 * r + 0.1192 * g + 0.9505 * bl) / 1.08883;
    const auto f = [](double t) { return t > 0.008856 ? std::cbrt(t) : 7.787 * t + 16.0 / 116.0; };
    return std::array<double, 3>{116.0 * f(y) - 16.0, 500.0 * (f(x) - f(y)), 200.0 * (f(y) - f(z))};
  };
  const auto p = lab(a), q = lab(b);
  return std::hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]);
}

// Forks as a class sees them: the legend over the scene says what a ghost is and names each fork
// by the colour its ghost and its curves are drawn in, with what it changed; the timeline draws a
// fork's return in a colour apart from the return so far's; the norm of the action difference is
// not "L2" beside the grid's layers; the patch target is labelled; the attention map of the one
// window acted on says "1 window"; a fork at the end of an ended episode is refused.
TEST_F(Viewer, ForksAreNamedByTheirGhostsColoursAndAnEndedEpisodeIsNotForked) {
  MainWindow w;
  openCheckpoint(w);
  auto* v = w.viewer();
  v->pause();
  v->restart();
  ASSERT_TRUE(
      waitFor(v, [](const models::PlaybackState& s) { return s.frames == 1 && s.cursor == 0; }));
  models::BranchChange lower;
  lower.target = 1200.0;
  lower.label = "target=1200";
  v->forkAt(5, lower);
  v->setSpeed(0.0);
  v->play();
  ASSERT_TRUE(waitFor(v, [](const models::PlaybackState& s) {
    return s.cursor >= 20 && s.branch_frames.size() == 1;
  }));
  v->pause();
  ASSERT_TRUE(waitFor(v, [](const models::PlaybackState& s) { return !s.playing && !s.busy; }));
  v->sync();
  const auto& ghost = palette::kBranches[0];
  const QColor ghost_colour(ghost.colour.r, ghost.colour.g, ghost.colour.b);
  const QStringList overlay = v->scene()->overlay();
  const int meaning = static_cast<int>(overlay.indexOf(QString::fromUtf8(
      palette::kGhostMeaning.data(), static_cast<qsizetype>(palette::kGhostMeaning.size()))));
  ASSERT_GE(meaning, 0) << overlay.join(" | ").toStdString();
  ASSERT_GT(overlay.size(), meaning + 1);
  const QString line = overlay[meaning + 1];
  EXPECT_TRUE(line.contains("fork 1, green ghost: target=1200 from step 5")) << line.toStdString();
  EXPECT_EQ(std::string(ghost.colour_word), "green");
  ASSERT_GT(v->scene()->overlayColours().size(), static_cast<std::size_t>(meaning + 1));
  EXPECT_EQ(v->scene()->overlayColours()[static_cast<std::size_t>(meaning + 1)], ghost_colour)
      << "the line in its ghost's colour";
  ASSERT_EQ(v->timeline()->forks().size(), 1u);
  const QColor fork_curve = v->timeline()->forks()[0].colour;
  EXPECT_EQ(fork_curve, ghost_colour);
  const QColor return_so_far(palette::kReturnSoFar.colour.r, palette::kReturnSoFar.colour.g,
                             palette::kReturnSoFar.colour.b);
  EXPECT_GT(delta_e(fork_curve, return_so_far), 25.0)
      << "the fork's return and the return so far in colours told apart";
  EXPECT_FALSE(v->timeline()->plot()->yAxis2->label().contains("L2"))
      << v->timeline()->plot()->yAxis2->label().toStdString();
  auto* axis = v->findChild<QComboBox*>("divergence");
  ASSERT_NE(axis, nullptr);
  EXPECT_FALSE(axis->itemText(0).contains("L2")) << axis->itemText(0).toStdString();
  QStringList layers;
  for (auto* label : v->findChildren<QLabel*>()) {
    EXPECT_FALSE(QRegularExpression(QStringLiteral("^L\\d+$")).match(label->text()).hasMatch())
        << label->text().toStdString();
    if (label->text().startsWith("layer ")) layers << label->text();
  }
  EXPECT_EQ(layers, (QStringList{"layer 1", "layer 2", "layer 3"}));
  auto* patch = v->findChild<QDoubleSpinBox*>("patchTarget");
  ASSERT_NE(patch, nullptr);
  EXPECT_FALSE(patch->prefix().isEmpty()) << "the 1200 says what it is";
  EXPECT_EQ(patch->value(), 1200.0);
  QString caption;
  for (auto* label : v->attention()->findChildren<QLabel*>())
    if (label->text().contains(QStringLiteral(" — "))) caption = label->text();
  EXPECT_TRUE(caption.contains("— 1 window.")) << caption.toStdString();

  // An episode that ends (the hopper falls asked for 100): nothing follows its last step to fork.
  v->removeForks();
  v->setTarget(100.0);
  v->play();
  ASSERT_TRUE(QTest::qWaitFor(
      [&] {
        v->sync();
        return v->shown().at_end();
      },
      240000));
  const int last = v->shown().cursor;
  try {
    v->fork(lower);
    ADD_FAILURE() << "a fork of the last step of an ended episode was taken";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("the episode ended at step " + std::to_string(last)),
              std::string::npos)
        << e.what();
  }
  v->seek(last - 10);
  v->sync();
  EXPECT_NO_THROW(v->fork(lower)) << "a step before the end still forks";
}

// No machine shows hopper's 8,000 steps a second of 64 times real time: the transport says the
// rate it really plays at beside the speed, and says nothing once paused. The limb colours keep
// the body's scale (half the action's range) whatever the interventions and the episode.
TEST_F(Viewer, TheSpeedSaysTheRealRateAndTheLimbColoursKeepOneScale) {
  MainWindow w;
  openCheckpoint(w);
  auto* v = w.viewer();
  auto* rate = v->findChild<QLabel*>("realRate");
  ASSERT_NE(rate, nullptr);
  v->setSpeed(64.0);
  v->play();
  ASSERT_TRUE(QTest::qWaitFor(
      [&] { return !rate->isHidden() && v->speedStatus().contains("real"); }, 60000))
      << v->speedStatus().toStdString();
  const QString status = v->speedStatus();
  const auto real = QRegularExpression(QStringLiteral("asked, ([0-9.]+)x real"))
                        .match(status)
                        .captured(1)
                        .toDouble();
  EXPECT_GT(real, 0.0) << status.toStdString();
  EXPECT_LT(real, 0.9 * 64.0) << status.toStdString();
  EXPECT_TRUE(rate->text().endsWith("x real")) << rate->text().toStdString();
  v->pause();
  v->sync();
  EXPECT_TRUE(rate->isHidden());
  EXPECT_EQ(v->speedStatus(), "64x");

  v->setSpeed(0.0);
  v->setEffects(true);
  v->setInterventions({"mlp:3=zero"});
  v->play();
  ASSERT_TRUE(waitFor(v, [](const models::PlaybackState& s) { return s.cursor >= 30; }));
  v->pause();
  v->sync();
  ASSERT_FALSE(v->scene()->layers().limbs.values.empty());
  EXPECT_EQ(v->scene()->layers().limbs.scale, 1.0) << "hopper's actions are in [-1, 1]";
  v->setInterventions({"context:1"});
  v->restart();
  v->play();
  ASSERT_TRUE(waitFor(v, [](const models::PlaybackState& s) { return s.cursor >= 30; }));
  v->pause();
  v->sync();
  EXPECT_EQ(v->scene()->layers().limbs.scale, 1.0) << "another run, the same scale";
  v->setEffects(false);
}

TEST_F(Viewer, StepsStepsBackSeeksAndFollowsTheCursorEverywhere) {
  MainWindow w;
  w.resize(1300, 850);
  openCheckpoint(w);
  auto* v = w.viewer();
  v->pause();
  v->restart();
  ASSERT_TRUE(
      waitFor(v, [](const models::PlaybackState& s) { return s.frames == 1 && s.cursor == 0; }));
  for (int i = 0; i < 5; ++i) v->stepForward();
  ASSERT_TRUE(waitFor(v, [](const models::PlaybackState& s) { return s.cursor == 5; }));
  EXPECT_EQ(v->shown().frames, 6) << "each single step acted once";
  EXPECT_FALSE(v->shown().playing);

  v->stepBack();
  v->stepBack();
  ASSERT_TRUE(waitFor(v, [](const models::PlaybackState& s) { return s.cursor == 3; }));
  EXPECT_EQ(v->shown().frames, 6) << "stepping back keeps the later steps";
  EXPECT_EQ(v->shown().frame->step, 3);
  // The slider, the timeline cursor, the readout and the attention map follow the step on screen.
  EXPECT_EQ(v->slider()->value(), 3);
  EXPECT_EQ(v->slider()->maximum(), 5);
  EXPECT_EQ(v->timeline()->cursor(), 3);
  EXPECT_EQ(v->timeline()->steps(), 6);
  EXPECT_TRUE(v->readout().startsWith("Step 3 of 5 kept")) << v->readout().toStdString();
  EXPECT_EQ(v->attention()->tokenCount(), 60);
  // At step 3 the window holds 4 real steps in its last positions (16..19, tokens 48..59): the
  // newest state's query (token 58) attends to those keys only, never to the padding.
  double real_mass = 0.0;
  for (int key = 48; key <= 58; ++key) real_mass += v->attention()->matrix().at(58, key);
  EXPECT_NEAR(real_mass, 1.0, 1e-4) << "the newest state attends to the four real steps only";

  // Seeking on the timeline plot moves the shared cursor.
  emit v->timeline()->seekRequested(1);
  ASSERT_TRUE(waitFor(v, [](const models::PlaybackState& s) { return s.cursor == 1; }));
  EXPECT_EQ(v->slider()->value(), 1);

  // Playing on from a rewound step replays the kept steps, then acts.
  v->setSpeed(0.0);
  v->play();
  ASSERT_TRUE(waitFor(v, [](const models::PlaybackState& s) { return s.frames >= 40; }));
  v->pause();
  w.showPage(v);
  w.show();
  const QString shots = DSTUDIO_SCREENSHOT_DIR;
  QDir().mkpath(shots);
  w.grab().save(QDir(shots).filePath("viewer-offscreen.png"));
}

// The New Episode button is not "go to start": with forks it asks before dropping the episode's
// steps and forks (Cancel keeps them); Home goes back to the first step and keeps everything.
TEST_F(Viewer, NewEpisodeAsksBeforeDroppingForksAndHomeKeepsThem) {
  MainWindow w;
  w.show();
  openCheckpoint(w);
  auto* v = w.viewer();
  v->pause();
  v->restart();
  for (int i = 0; i < 10; ++i) v->stepForward();
  ASSERT_TRUE(waitFor(v, [](const models::PlaybackState& s) { return s.cursor == 10; }));
  models::BranchChange lower;
  lower.target = 500.0;
  lower.label = "target=500";
  v->fork(lower);
  ASSERT_TRUE(
      waitFor(v, [](const models::PlaybackState& s) { return s.branch_frames.size() == 1; }));
  const auto answer = [&](const QString& button) {
    QMessageBox* box = nullptr;
    ASSERT_TRUE(test::wait_until(
        [&] { return (box = v->findChild<QMessageBox*>("newEpisodeDialog")) != nullptr; }, 10000));
    EXPECT_TRUE(box->text().contains("11 steps and its fork")) << box->text().toStdString();
    for (auto* b : box->buttons())
      if (b->text().remove('&') == button) b->click();
  };
  v->requestNewEpisode();
  answer("Cancel");
  QApplication::processEvents();
  v->goToFirstStep();
  ASSERT_TRUE(waitFor(v, [](const models::PlaybackState& s) { return s.cursor == 0; }));
  EXPECT_EQ(v->shown().frames, 11) << "Home keeps the steps";
  EXPECT_EQ(v->shown().branch_frames.size(), 1u) << "and the fork";
  v->requestNewEpisode();
  answer("New Episode");
  ASSERT_TRUE(waitFor(
      v, [](const models::PlaybackState& s) { return s.frames == 1 && s.branch_frames.empty(); }));
}

TEST_F(Viewer, TargetAndZeroingActOnTheRunningPolicy) {
  MainWindow w;
  openCheckpoint(w);
  auto* v = w.viewer();
  v->pause();
  v->restart();
  for (int i = 0; i < 10; ++i) v->stepForward();
  ASSERT_TRUE(waitFor(v, [](const models::PlaybackState& s) { return s.cursor == 10; }));
  const double collected = v->shown().frame->return_so_far;
  v->seek(6);
  ASSERT_TRUE(waitFor(v, [](const models::PlaybackState& s) { return s.cursor == 6; }));
  const auto generation = v->shown().generation;
  v->setTarget(9000.0);
  ASSERT_TRUE(
      waitFor(v, [&](const models::PlaybackState& s) { return s.generation != generation; }));
  const auto& f = *v->shown().frame;
  EXPECT_EQ(f.step, 6);
  EXPECT_EQ(v->shown().frames, 7) << "the steps after the re-conditioned one are dropped";
  EXPECT_EQ(f.target, 9000.0);
  EXPECT_NEAR(f.return_to_go, 9000.0 - f.return_so_far, 0.05);
  EXPECT_LT(f.return_so_far, collected);
  EXPECT_EQ(v->settings().target, 9000.0);

  v->setZeroing(models::ModalityZeroing::ReturnsToGo);
  ASSERT_TRUE(waitFor(v, [](const models::PlaybackState& s) {
    return s.frame->zeroing == models::ModalityZeroing::ReturnsToGo;
  }));
  v->stepForward();
  ASSERT_TRUE(waitFor(v, [](const models::PlaybackState& s) { return s.cursor == 7; }));
  EXPECT_EQ(v->shown().frame->zeroing, models::ModalityZeroing::ReturnsToGo);
  EXPECT_EQ(v->settings().zeroing, models::ModalityZeroing::ReturnsToGo);
}

// "Open in Live Viewer" hands decision-viewer what the panel shows: checkpoint, task, seed,
// target, zeroing, speed and step, in options decision-viewer takes.
TEST_F(Viewer, OpenInLiveViewerPassesWhatThePanelShows) {
  MainWindow w;
  openCheckpoint(w);
  auto* v = w.viewer();
  v->pause();
  for (int i = 0; i < 4; ++i) v->stepForward();
  ASSERT_TRUE(waitFor(v, [](const models::PlaybackState& s) { return s.cursor == 4; }));
  v->setTarget(1800.0);
  v->setZeroing(models::ModalityZeroing::Actions);
  ASSERT_TRUE(waitFor(v, [](const models::PlaybackState& s) {
    return s.frame->zeroing == models::ModalityZeroing::Actions;
  }));
  const QStringList a = v->liveViewerArguments();
  ASSERT_FALSE(a.isEmpty());
  EXPECT_TRUE(QFileInfo(a.front()).isFile()) << a.front().toStdString();
  const auto value = [&](const char* option) {
    const auto i = a.indexOf(QString::fromLatin1(option));
    return i >= 0 && i + 1 < a.size() ? a[i + 1] : QString();
  };
  EXPECT_EQ(value("--target"), "1800");
  EXPECT_EQ(value("--zeroing"), "actions");
  EXPECT_EQ(value("--step"), "4");
  EXPECT_EQ(value("--env"), "hopper");
  EXPECT_EQ(value("--seed").toULongLong(), v->shown().seed);

  // The forks on screen go too, each at its step with its change as decision-viewer reads it.
  models::BranchChange lower;
  lower.target = 500.0;
  lower.label = "target=500";
  v->fork(lower);
  models::BranchChange typed;
  typed.clear_interventions = true;
  typed.interventions = {"head:1.1=zero", "mlp:2=mean"};
  typed.label = "head:1.1=zero, mlp:2=mean";
  v->fork(typed);
  ASSERT_TRUE(
      waitFor(v, [](const models::PlaybackState& s) { return s.branch_frames.size() == 2; }));
  QStringList forks;
  const QStringList b = v->liveViewerArguments();
  for (int i = 0; i + 1 < b.size(); ++i)
    if (b[i] == "--fork") forks << b[i + 1];
  EXPECT_EQ(forks, (QStringList{"4:target=500", "4:interventions=head:1.1=zero;mlp:2=mean"}));
  for (const auto& f : forks) {
    const auto spec = models::parse_fork(f.toStdString());
    EXPECT_EQ(spec.step, 4);
  }
}

TEST_F(Viewer, AWorkspaceIsSavedAndRestoredInANewWindow) {
  test::D4rlSpec spec;
  spec.n = 12;
  spec.terminals = {0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  spec.timeouts = {0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0};
  const QString dataset = QString::fromStdString((dir / "small.hdf5").string());
  test::write_d4rl_fixture(dataset.toStdString(), spec);
  // Saved as the studio names workspaces (.dstudio, the MIME type a file manager opens it by).
  const QString file = QString::fromStdString((dir / "workspace.dstudio").string());
  // A finished training run on disk, compared in the Training tab.
  const QString run = QString::fromStdString((dir / "dt-seed1-20260101-000000").string());
  QDir().mkpath(run);
  std::ofstream((dir / "dt-seed1-20260101-000000" / "metrics.csv").string())
      << "step,loss,learning_rate,steps_per_second\n10,0.8,1e-4,50\n20,0.4,1e-4,50\n";
  {
    MainWindow w;
    ASSERT_TRUE(w.trainingPanel()->addRunFolder(run))
        << w.trainingPanel()->lastError().toStdString();
    QSignalSpy opened(&w, &MainWindow::datasetOpened);
    w.openDataset(dataset);
    ASSERT_TRUE(opened.wait(20000));
    openCheckpoint(w);
    auto* v = w.viewer();
    v->pause();
    v->setTarget(4200.0);
    v->setZeroing(models::ModalityZeroing::Actions);
    v->setSpeed(2.0);
    w.showPage(v);
    QString error;
    ASSERT_TRUE(w.saveWorkspace(file, &error)) << error.toStdString();
  }
  QFile saved(file);
  ASSERT_TRUE(saved.open(QIODevice::ReadOnly));
  const auto json = QJsonDocument::fromJson(saved.readAll()).object();
  EXPECT_EQ(json["decision_studio_workspace"].toInt(), 1);
  EXPECT_EQ(json["dataset"].toString(), dataset);
  EXPECT_TRUE(json["checkpoint"].toString().endsWith(
      "checkpoints/" + QFileInfo(studio::defaultCheckpoint()).fileName()));
  EXPECT_EQ(json["tab"].toString(), "viewer")
      << "a tab is saved by its id, not its translated title";
  EXPECT_EQ(json["runs"].toArray().size(), 1);

  MainWindow restored;
  QSignalSpy opened(&restored, &MainWindow::datasetOpened);
  QSignalSpy shown(&restored, &MainWindow::checkpointShown);
  restored.openAny(file);  // as a double-click or the command line opens it
  ASSERT_TRUE(shown.wait(180000));
  ASSERT_TRUE(opened.count() > 0 || opened.wait(20000));
  EXPECT_EQ(restored.currentPath(), dataset);
  EXPECT_EQ(restored.checkpointPath(), json["checkpoint"].toString());
  EXPECT_EQ(restored.currentPage(), restored.viewer());
  EXPECT_EQ(restored.trainingPanel()->runFolders(), QStringList{run});
  // The Workspace tab lists each with its summary, as core describes it.
  auto* ws = restored.workspaceView();
  EXPECT_EQ(ws->section("Dataset")->text(1), "small.hdf5");
  EXPECT_EQ(ws->section("Checkpoint")->text(1), QFileInfo(studio::defaultCheckpoint()).fileName());
  EXPECT_EQ(ws->section("Training runs")->childCount(), 1);
  bool variant_listed = false;
  for (int g = 0; g < ws->section("Checkpoint")->childCount(); ++g)
    for (int k = 0; k < ws->section("Checkpoint")->child(g)->childCount(); ++k) {
      const auto* row = ws->section("Checkpoint")->child(g)->child(k);
      if (row->text(0) == "Variant") variant_listed = row->text(1) == "dt";
    }
  EXPECT_TRUE(variant_listed);
  const auto settings = restored.viewer()->settings();
  EXPECT_EQ(settings.target, 4200.0);
  EXPECT_EQ(settings.zeroing, models::ModalityZeroing::Actions);
  EXPECT_EQ(settings.speed, 2.0);
  ASSERT_TRUE(waitFor(restored.viewer(), [](const models::PlaybackState& s) {
    return s.frame && s.frame->target == 4200.0 &&
           s.frame->zeroing == models::ModalityZeroing::Actions;
  }));
}

// Bookmarks: a workspace's named steps are listed in the Viewer tab and drawn on its timeline, a
// run's on that run's curves; the workspace the window writes holds them again, equal.
TEST_F(Viewer, BookmarksSurviveAWorkspaceRoundTripAndAreDrawnWhereTheyPoint) {
  const QString run = QString::fromStdString((dir / "dt-seed2-20260101-000000").string());
  QDir().mkpath(run);
  std::ofstream((dir / "dt-seed2-20260101-000000" / "metrics.csv").string())
      << "step,loss,learning_rate,steps_per_second\n10,0.8,1e-4,50\n20,0.4,1e-4,50\n";
  MainWindow w;
  ASSERT_TRUE(w.trainingPanel()->addRunFolder(run)) << w.trainingPanel()->lastError().toStdString();
  Workspace ws;
  ws.bookmarks = {{BookmarkPlace::Viewer, "", 40, "the hop", "both feet leave the floor"},
                  {BookmarkPlace::Viewer, "", 12, "the start", ""},
                  {BookmarkPlace::Run, run.toStdString(), 10, "loss plateau", "before decay"}};
  QString error;
  ASSERT_TRUE(w.applyWorkspace(ws, &error)) << error.toStdString();
  auto* v = w.viewer();
  ASSERT_EQ(v->bookmarks().size(), 2u);
  EXPECT_EQ(v->bookmarks()[0].name, "the start") << "listed by step";
  EXPECT_EQ(viz::step_mark_count(v->timeline()->plot()), 2);
  auto* list = v->findChild<QComboBox*>("bookmarks");
  ASSERT_NE(list, nullptr);
  ASSERT_EQ(list->count(), 3);
  EXPECT_EQ(list->itemText(2), "step 40 · the hop");
  EXPECT_EQ(list->itemData(2, Qt::ToolTipRole).toString(), "both feet leave the floor");
  ASSERT_EQ(w.trainingPanel()->runBookmarks().size(), 1u);
  EXPECT_EQ(viz::step_mark_count(w.trainingPanel()->liveView()->lossPlot()), 1);

  v->addBookmark({BookmarkPlace::Viewer, "", 25, "mid-air", "added in the window"});
  const Workspace saved = w.workspace();
  ASSERT_EQ(saved.bookmarks.size(), 4u);
  EXPECT_EQ(saved.bookmarks[1].name, "mid-air");
  EXPECT_EQ(saved.bookmarks[3], ws.bookmarks[2]);
  EXPECT_EQ(parse_workspace(to_json(saved)), saved);
  MainWindow again;
  ASSERT_TRUE(again.applyWorkspaceText(QByteArray::fromStdString(to_json(saved)), &error))
      << error.toStdString();
  EXPECT_EQ(again.viewer()->bookmarks(), v->bookmarks());

  // Through the dialog: a bookmark at the step on screen (0, nothing played), named; then, on
  // that bookmarked step, the dialog offers to remove it.
  auto* add = v->findChild<QPushButton*>("addBookmark");
  ASSERT_NE(add, nullptr);
  const auto answer_dialog = [](const std::function<void(QDialog*)>& answer) {
    QTimer::singleShot(0, [answer] {
      auto* dialog = qobject_cast<QDialog*>(QApplication::activeModalWidget());
      ASSERT_NE(dialog, nullptr);
      answer(dialog);
    });
  };
  answer_dialog([](QDialog* d) {
    d->findChild<QLineEdit*>()->setText("the first step");
    d->accept();
  });
  add->click();
  ASSERT_EQ(v->bookmarks().size(), 4u);
  EXPECT_EQ(v->bookmarks()[0].step, 0);
  EXPECT_EQ(v->bookmarks()[0].name, "the first step");
  answer_dialog([](QDialog* d) {
    EXPECT_EQ(d->findChild<QLineEdit*>()->text(), "the first step") << "filled in to be edited";
    auto* remove = d->findChild<QPushButton*>("removeBookmark");
    ASSERT_NE(remove, nullptr);
    remove->click();
  });
  add->click();
  ASSERT_EQ(v->bookmarks().size(), 3u);
  EXPECT_EQ(v->bookmarks()[0].name, "the start");
}

// A paper's figures: the workspace keeps their recipes, the Workspace tab lists each with what drew
// it (or why its recipe cannot be read), and the workspace the window writes holds them again.
TEST_F(Viewer, AWorkspaceKeepsAPapersFigureRecipes) {
  FigureRecipe recipe;
  recipe.analysis = "rtg-sweep";
  recipe.checkpoint = "/papers/runs/dt.pt";
  recipe.checkpoint_hash = "xxh3-128:0123456789abcdef0123456789abcdef";
  recipe.figure.name = "rtg_sweep";
  const auto good = (dir / "rtg_sweep.recipe.json").string();
  write_figure_recipe(good, recipe);
  const auto broken = (dir / "broken.recipe.json").string();
  std::ofstream(broken) << "{\"format\": \"something else\"}";
  Workspace ws;
  ws.figures = {good, broken};
  MainWindow w;
  QString error;
  ASSERT_TRUE(w.applyWorkspace(ws, &error)) << error.toStdString();
  auto* figures = w.workspaceView()->section("Figures");
  ASSERT_NE(figures, nullptr);
  ASSERT_EQ(figures->childCount(), 2);
  EXPECT_EQ(figures->child(0)->text(0), "rtg_sweep");
  EXPECT_EQ(figures->child(0)->text(1), "rtg-sweep of dt.pt");
  EXPECT_EQ(figures->child(0)->toolTip(0).toStdString(), good);
  EXPECT_TRUE(figures->child(1)->text(1).contains("broken.recipe.json"))
      << figures->child(1)->text(1).toStdString();
  EXPECT_EQ(w.workspace().figures, ws.figures);
}

// Workspace tab ▸ Render Figures…: every recipe the workspace keeps is drawn again into a folder
// by `dstudio figure render`, byte for byte what the command line draws; one whose input changed
// is refused, saying which hash differs, and the others are still drawn.
TEST_F(Viewer, AWorkspacesFiguresAreDrawnAgainFromTheWindow) {
  models::MarkovLabOptions lab;
  lab.steps = 40;
  lab.eval_every = 20;
  auto recipe = recipes::markov_lab_recipe(lab, std::nullopt, 0);
  recipe.figure.name = "markov_lab_loss";
  recipe.figure.formats = {"png"};
  const auto good = (dir / "lab.recipe.json").string();
  write_figure_recipe(good, recipe);
  // The same figure, but made (it says) from a file whose content has changed since.
  recipe.checkpoint = good;
  recipe.checkpoint_hash = "xxh3-128:00000000000000000000000000000000";
  const auto changed = (dir / "changed.recipe.json").string();
  write_figure_recipe(changed, recipe);
  const auto reference = (dir / "reference.png").string();
  ASSERT_EQ(test::figure_render(good, reference, "/dev/null"), 0) << good;

  Workspace ws;
  ws.figures = {good, changed};
  MainWindow w;
  QString error;
  ASSERT_TRUE(w.applyWorkspace(ws, &error)) << error.toStdString();
  EXPECT_TRUE(w.workspaceView()->renderButton()->isEnabled());
  const QString out = QString::fromStdString((dir / "drawn").string());
  QSignalSpy finished(w.figureRenderJob(), &FigureRenderJob::finished);
  ASSERT_TRUE(w.renderFigures(out));
  EXPECT_EQ(w.workspaceView()->renderButton()->text(), "Cancel Drawing");
  ASSERT_TRUE(finished.wait(120000));
  EXPECT_FALSE(finished.front().at(0).toBool()) << "not cancelled";
  const auto& results = w.figureRenderJob()->results();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[0].ok) << results[0].message.toStdString();
  EXPECT_EQ(results[0].out, QDir(out).filePath("markov_lab_loss.png"));
  const auto bytes = [](const std::string& path) {
    return read_regular_file(path, std::uint64_t{1} << 30);
  };
  EXPECT_EQ(bytes(results[0].out.toStdString()), bytes(reference));
  EXPECT_FALSE(results[1].ok);
  EXPECT_EQ(results[1].out, QDir(out).filePath("markov_lab_loss-2.png")) << "names kept apart";
  EXPECT_TRUE(results[1].message.contains("xxh3-128:00000000000000000000000000000000"))
      << results[1].message.toStdString();
  EXPECT_FALSE(QFileInfo::exists(results[1].out));
  auto* figures = w.workspaceView()->section("Figures");
  ASSERT_EQ(figures->childCount(), 2);
  EXPECT_TRUE(figures->child(0)->text(1).startsWith("drawn: "))
      << figures->child(0)->text(1).toStdString();
  EXPECT_TRUE(figures->child(1)->text(1).startsWith("not drawn: "))
      << figures->child(1)->text(1).toStdString();
  EXPECT_EQ(w.workspaceView()->renderButton()->text(), "Render Figures…");
}

// A workspace of an earlier studio names its tab by the title; it still opens there. What the
// window writes is what core's typed workspace reads back equal.
TEST_F(Viewer, WorkspacesRoundTripThroughTheTypedValueAndOldTabTitlesStillOpen) {
  MainWindow w;
  QString error;
  ASSERT_TRUE(w.applyWorkspaceText(
      R"({"decision_studio_workspace": 1, "tab": "Entropy and reward"})", &error))
      << error.toStdString();
  EXPECT_EQ(w.currentPage(), static_cast<QWidget*>(w.rolloutView()));
  const Workspace saved = w.workspace();
  EXPECT_EQ(saved.tab, "entropy-reward");
  EXPECT_EQ(parse_workspace(to_json(saved)), saved);
  w.showPage(w.trainingPanel());
  ASSERT_TRUE(w.applyWorkspace(saved, &error)) << error.toStdString();
  EXPECT_EQ(w.currentPage(), static_cast<QWidget*>(w.rolloutView()));
}

TEST_F(Viewer, AFileThatIsNotAWorkspaceChangesNothing) {
  MainWindow w;
  const QString text = QString::fromStdString((dir / "notes.json").string());
  std::ofstream(text.toStdString()) << "not json {";
  QString error;
  EXPECT_FALSE(w.loadWorkspace(text, &error));
  EXPECT_TRUE(error.contains("notes.json")) << error.toStdString();
  EXPECT_TRUE(error.contains("not JSON")) << error.toStdString();

  const QString other = QString::fromStdString((dir / "other.json").string());
  std::ofstream(other.toStdString()) << R"({"layers": 3})";
  EXPECT_FALSE(w.loadWorkspace(other, &error));
  EXPECT_TRUE(error.contains("not a Decision Studio workspace")) << error.toStdString();

  EXPECT_FALSE(w.loadWorkspace(QString::fromStdString((dir / "missing.json").string()), &error));
  EXPECT_TRUE(error.contains("missing.json: no such file")) << error.toStdString();
  EXPECT_TRUE(w.currentPath().isEmpty());
  EXPECT_TRUE(w.checkpointPath().isEmpty());

  // Writing where no file can be: refused with the reason, nothing half-written.
  EXPECT_FALSE(w.saveWorkspace(QString::fromStdString((dir / "no-such-folder" / "w.json").string()),
                               &error));
  EXPECT_TRUE(error.contains("cannot be written")) << error.toStdString();
}

// A dataset episode replayed in the viewer from the file's infos/qpos and infos/qvel.
TEST_F(Viewer, ReplaysADatasetEpisodeFromItsRecordedStates) {
  MainWindow w;
  QSignalSpy opened(&w, &MainWindow::datasetOpened);
  w.openDefaultDataset();
  ASSERT_TRUE(opened.wait(180000));
  auto* table = w.datasetView()->episodeTable();
  auto* replay = w.datasetView()->replayButton();
  EXPECT_FALSE(replay->isEnabled()) << "nothing selected yet";
  table->selectRow(0);
  ASSERT_TRUE(replay->isEnabled());
  const auto& episode = w.datasetView()->dataset()->episodes.at(0);
  replay->click();
  auto* v = w.viewer();
  ASSERT_TRUE(v->hasPlayer());
  EXPECT_EQ(w.currentPage(), v);
  v->pause();
  v->seek(0);
  ASSERT_TRUE(waitFor(v, [](const models::PlaybackState& s) { return s.cursor == 0 && s.frame; }));
  EXPECT_EQ(v->shown().frames, episode.length);
  EXPECT_NEAR(v->shown().frame->return_to_go, episode.ret, 1e-3)
      << "the episode's own return-to-go";
  const auto& qpos = w.datasetView()->dataset()->data.qpos;
  EXPECT_FLOAT_EQ(static_cast<float>(v->shown().frame->physics.qpos[1]),
                  qpos[static_cast<std::size_t>(episode.start) * 6 + 1]);
  // No policy: the conditioning controls are off, and playing runs through the recorded steps.
  EXPECT_FALSE(v->findChild<QDoubleSpinBox*>("target")->isEnabled());
  EXPECT_FALSE(v->findChild<QWidget*>("targetFrom")->isEnabled()) << "nor the targets to choose";
  v->setSpeed(0.0);
  v->play();
  ASSERT_TRUE(waitFor(v, [](const models::PlaybackState& s) { return s.finished && !s.playing; }));
  EXPECT_EQ(v->shown().cursor, static_cast<int>(episode.length) - 1);
  EXPECT_EQ(v->timeline()->steps(), episode.length);
}

TEST_F(Viewer, ADatasetWithoutStatesCannotBeReplayed) {
  test::D4rlSpec spec;
  spec.n = 12;
  spec.terminals = {0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  const QString dataset = QString::fromStdString((dir / "no-states.hdf5").string());
  test::write_d4rl_fixture(dataset.toStdString(), spec);
  MainWindow w;
  QSignalSpy opened(&w, &MainWindow::datasetOpened);
  w.openDataset(dataset);
  ASSERT_TRUE(opened.wait(20000));
  w.datasetView()->episodeTable()->selectRow(0);
  EXPECT_FALSE(w.datasetView()->replayButton()->isEnabled());
  EXPECT_FALSE(w.replayEpisode(0));
  EXPECT_FALSE(w.viewer()->hasPlayer());
}

// Training from the window: the open dataset reaches the Training tab; a long run starts on its
// own thread and is cancelled while the window keeps running.
TEST_F(Viewer, StartsAndCancelsATrainingRunOnTheOpenDataset) {
  test::D4rlSpec spec;
  spec.n = 300;
  spec.terminals.assign(300, 0);
  spec.terminals[149] = 1;
  spec.terminals[299] = 1;
  const QString dataset = QString::fromStdString((dir / "train.hdf5").string());
  test::write_d4rl_fixture(dataset.toStdString(), spec);
  MainWindow w;
  QSignalSpy opened(&w, &MainWindow::datasetOpened);
  w.openDataset(dataset);
  ASSERT_TRUE(opened.wait(20000));
  auto* training = w.trainingPanel();
  training->setRunsDirectory(QString::fromStdString((dir / "runs").string()));
  training->setField("hidden", 16);
  training->setField("layers", 1);
  training->setField("context_length", 5);
  training->setField("steps", 1'000'000);
  QSignalSpy started(training, &TrainingPanel::runStarted);
  QSignalSpy finished(training, &TrainingPanel::runFinished);
  ASSERT_TRUE(training->startTraining()) << training->lastError().toStdString();
  ASSERT_EQ(started.count(), 1);
  EXPECT_TRUE(training->isTraining());
  // Cancelled once it trains, the window processing events meanwhile.
  ASSERT_TRUE(test::wait_until(
      [&] {
        return training->runList()->topLevelItem(0)->text(TrainingPanel::ColumnState) ==
               QLatin1String("Running");
      },
      60000));
  training->cancelTraining();
  ASSERT_TRUE(finished.wait(30000));
  EXPECT_EQ(finished.front().at(1).toString(), "Cancelled");
  EXPECT_FALSE(training->isTraining());
  const QDir run(started.front().front().toString());
  const QStringList saved = run.entryList({"checkpoint-*.pt"});
  ASSERT_FALSE(saved.isEmpty()) << "a cancelled run keeps a resumable checkpoint";

  // Continued from that checkpoint: the same folder, on from the saved step.
  const QString checkpoint = run.filePath(saved.front());
  const int saved_step = saved.front().section('-', 1).section('.', 0, 0).toInt();
  ASSERT_TRUE(training->resumeFromCheckpoint(checkpoint))
      << training->messageLabel()->text().toStdString();
  ASSERT_EQ(started.count(), 2);
  EXPECT_EQ(started.back().front().toString(), run.absolutePath());
  for (int i = 0; i < 500 && training->runList()
                                     ->topLevelItem(1)
                                     ->text(TrainingPanel::ColumnStep)
                                     .section(' ', 0, 0)
                                     .toInt() <= saved_step;
       ++i)
    QTest::qWait(10);
  EXPECT_GT(training->runList()
                ->topLevelItem(1)
                ->text(TrainingPanel::ColumnStep)
                .section(' ', 0, 0)
                .toInt(),
            saved_step);
  training->cancelTraining();
  ASSERT_TRUE(finished.wait(30000));
  EXPECT_EQ(finished.back().at(1).toString(), "Cancelled");

  // Another dataset's checkpoint is refused with the reason, and nothing starts.
  EXPECT_FALSE(training->resumeFromCheckpoint(studio::defaultCheckpoint()));
  EXPECT_FALSE(training->messageLabel()->text().isEmpty());
  EXPECT_EQ(started.count(), 2);
}

// Two checkpoints on the same windows: DT minus GDT on a diverging map (GDT fig. 4); a model
// whose tokens differ (DHi merges each step into one token) is refused with the reason.
// A recording's recipe hashes the steering directions its run reads (a change's and a fork's) as
// inputs, and a copy of its folder steers with the copy's direction, the one the hash names.
TEST_F(Viewer, AClipsRecipeHashesItsSteeringDirectionsAndReadsThemWhereverTheyMoved) {
  const auto original = dir / "original";
  std::filesystem::create_directories(original);
  const auto direction = (original / "direction_L1.json").string();
  std::ofstream(direction) << R"({"direction": [0.5, 0.25]})";
  recipes::ClipShown clip;
  clip.run.checkpoint = studio::defaultCheckpoint().toStdString();
  clip.run.seed = 3;
  models::StepConditions start;
  start.target = 3600.0;
  start.interventions = {"steer:1=0.5*" + direction};
  clip.run.changes = {start};
  clip.run.forks = {{2, "interventions=steer:1=1*" + direction + ";head:1.1=zero", 4, {}}};
  clip.title = "steered";
  clip.frames = 4;
  clip.width = clip.height = 64;
  clip.panel_width = clip.panel_height = 64;
  const auto recipe = recipes::clip_recipe(clip);
  const auto input = std::find_if(recipe.inputs.begin(), recipe.inputs.end(),
                                  [](const auto& i) { return i.option == "steer-1"; });
  ASSERT_NE(input, recipe.inputs.end());
  EXPECT_EQ(input->hash, file_content_hash(direction));
  EXPECT_EQ(std::count_if(recipe.inputs.begin(), recipe.inputs.end(),
                          [](const auto& i) { return i.option.rfind("steer-", 0) == 0; }),
            1)
      << "one input for one file, however many specs read it";
  write_figure_recipe(original / "clip.recipe.json", recipe);
  // The folder copied and the original gone: the copy's direction is read.
  const auto copy = dir / "copy";
  std::filesystem::copy(original, copy);
  std::filesystem::remove_all(original);
  const auto back = recipes::clip_shown(read_figure_recipe(copy / "clip.recipe.json"), "clip");
  const std::string moved = (copy / "direction_L1.json").string();
  ASSERT_EQ(back.run.changes.size(), 1u);
  EXPECT_EQ(back.run.changes.front().interventions,
            std::vector<std::string>{"steer:1=0.5*" + moved});
  ASSERT_EQ(back.run.forks.size(), 1u);
  EXPECT_EQ(back.run.forks.front().change, "interventions=steer:1=1*" + moved + ";head:1.1=zero");
}

TEST_F(Viewer, ComparesTwoCheckpointsAsADifferenceOfTheirMaps) {
  MainWindow w;
  openCheckpoint(w);
  auto* view = w.attentionView();
  const auto alone = view->matrix();
  QSignalSpy shown(&w, &MainWindow::comparisonShown);
  QSignalSpy failed(&w, &MainWindow::comparisonFailed);
  const auto parses = models::checkpoint_parse_count();
  w.compareCheckpoint(studio::defaultCheckpoint("gdt"));
  ASSERT_TRUE(shown.wait(180000)) << (failed.isEmpty()
                                          ? "timed out"
                                          : failed.front().front().toString().toStdString());
  EXPECT_EQ(models::checkpoint_parse_count() - parses, 1u) << "the compared file is read once";
  ASSERT_TRUE(view->showingDifference());
  const auto& gdt = view->comparisonMatrix();
  ASSERT_EQ(gdt.tokens, 60);
  double largest = 0.0;
  for (int i = 0; i < 60; ++i)
    for (int j = 0; j <= i; ++j) {
      EXPECT_NEAR(view->matrix().at(i, j), alone.at(i, j) - gdt.at(i, j), 1e-9);
      largest = std::max(largest, std::abs(view->matrix().at(i, j)));
    }
  EXPECT_GT(largest, 0.01) << "the two models attend differently";
  EXPECT_TRUE(view->cellText(58, 0).contains(" − ")) << view->cellText(58, 0).toStdString();
  const auto written = view->exportFigure((dir / "difference").string(), {});
  EXPECT_EQ(written.size(), 4u);
  view->setComparisonMode(viz::AttentionMapView::Comparison::Alone);
  EXPECT_NEAR(view->matrix().at(58, 0), alone.at(58, 0), 1e-12);

  // The target sweep now runs both checkpoints over the same targets and draws them together.
  w.returnsView()->setEpisodes(1);
  w.returnsView()->findChild<QLineEdit*>()->setText("1, 2");
  QSignalSpy returns(&w, &MainWindow::returnsShown);
  w.runSweep();
  ASSERT_TRUE(returns.wait(180000));
  EXPECT_EQ(w.returnsView()->sweepCount(), 2);
  const auto sweep_files = w.returnsView()->exportFigure((dir / "sweep").string(), {});
  std::ifstream csv((dir / "sweep_sweep.csv").string());
  const std::string text((std::istreambuf_iterator<char>(csv)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find(QFileInfo(studio::defaultCheckpoint()).baseName().toStdString()),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(QFileInfo(studio::defaultCheckpoint("gdt")).baseName().toStdString()),
            std::string::npos)
      << text;

  w.compareCheckpoint(studio::defaultCheckpoint("dhi"));
  ASSERT_TRUE(failed.wait(180000));
  EXPECT_TRUE(failed.back().front().toString().contains("different tokens"))
      << failed.back().front().toString().toStdString();
  EXPECT_EQ(view->comparisonMatrix().tokens, 60) << "the earlier comparison stays";
}

// `decision-studio DATASET a.pt b.pt`: the first is opened, the second compared with it; a third
// is refused, named in a message, and nothing else changes.
TEST_F(Viewer, TwoCheckpointsGivenTogetherOpenTheSecondAsTheComparison) {
  MainWindow w;
  QSignalSpy opened(&w, &MainWindow::checkpointShown);
  QSignalSpy compared(&w, &MainWindow::comparisonShown);
  QSignalSpy failed(&w, &MainWindow::comparisonFailed);
  const QString dt = studio::defaultCheckpoint(), gdt = studio::defaultCheckpoint("gdt"),
                dc = studio::defaultCheckpoint("dc");
  w.openFiles({dt, gdt, dc});
  auto* refusal = w.findChild<QMessageBox*>("checkpointErrorDialog");
  ASSERT_NE(refusal, nullptr) << "a third checkpoint is refused with a message";
  EXPECT_TRUE(refusal->informativeText().contains(QFileInfo(dc).fileName()))
      << refusal->informativeText().toStdString();
  ASSERT_TRUE(compared.wait(180000))
      << (failed.isEmpty() ? "timed out" : failed.front().front().toString().toStdString());
  ASSERT_EQ(opened.size(), 1);
  EXPECT_EQ(opened.front().front().toString(), dt);
  EXPECT_EQ(compared.front().front().toString(), gdt);
  EXPECT_TRUE(w.statusText().contains(QStringLiteral("compared with")))
      << w.statusText().toStdString();
  EXPECT_TRUE(w.statusText().contains(QFileInfo(gdt).baseName())) << w.statusText().toStdString();
  EXPECT_TRUE(w.attentionView()->showingDifference());
}

// For a lecture hall: larger type everywhere, remembered for the next start.
TEST_F(Viewer, PresentationModeEnlargesEveryTextFitsTheTabsAndIsNotCarriedOver) {
  const double base = QApplication::font().pointSizeF();
  for (const QSize screen : {QSize(1280, 800), QSize(1920, 1080)}) {
    MainWindow w;
    w.resize(screen);
    w.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&w));
    auto* lesson = w.findChild<QTextBrowser*>();
    ASSERT_NE(lesson, nullptr);
    const double lesson_normal = lesson->font().pointSizeF();
    auto* sweep_tree = w.sweepPanel()->findChild<QTreeWidget*>();
    ASSERT_NE(sweep_tree, nullptr);
    const int seed_normal = sweep_tree->columnWidth(SweepPanel::ColumnSeed);
    w.setPresentationMode(true);
    w.resize(screen);
    QApplication::processEvents();
    EXPECT_NEAR(QApplication::font().pointSizeF(), 1.6 * base, 1e-6);
    // The lesson's text and the sweep table's columns grow with the type.
    EXPECT_NEAR(lesson->font().pointSizeF(), 1.6 * lesson_normal, 0.05)
        << "the lesson text grows too";
    EXPECT_GT(sweep_tree->columnWidth(SweepPanel::ColumnSeed), seed_normal)
        << "the sweep table's columns widen with their type";
    // Every tab in view: the tab bar does not scroll; nor do the training forms sideways.
    EXPECT_LE(w.tabs()->tabBar()->sizeHint().width(), w.tabs()->width()) << screen.width();
    w.showPage(w.trainingPanel());
    QApplication::processEvents();
    auto* forms = w.trainingPanel()->formsArea();
    EXPECT_GE(forms->viewport()->width() + 1, forms->widget()->minimumSizeHint().width())
        << "the forms fit without scrolling sideways";
    w.setPresentationMode(false);
    QApplication::processEvents();
    EXPECT_NEAR(QApplication::font().pointSizeF(), base, 1e-6);
    EXPECT_NEAR(lesson->font().pointSizeF(), lesson_normal, 0.05);
    w.setPresentationMode(true);
  }
  // Quitting in presentation mode: the next start is in normal type, unless asked.
  EXPECT_NEAR(QApplication::font().pointSizeF(), base, 1e-6)
      << "a window closed in presentation mode gives the type back";
  MainWindow next;
  EXPECT_FALSE(next.presentationMode());
  next.setPresentationMode(true);
  next.setPresentationMode(false);
  EXPECT_NEAR(QApplication::font().pointSizeF(), base, 1e-6);
}

// A behaviour policy plays in the Viewer tab: the shipped DAPG expert of door from the File menu's
// action, then the open D4RL expert file's metadata/policy. Each acts with its mean action
// (clipped), the frames advance, the title names the policy, and the controls of a model (target,
// zeroing, interventions) are off; decision-viewer is opened on the same policy.
TEST_F(Viewer, PlaysTheDapgExpertAndAnExpertFilesPolicy) {
  MainWindow w;
  // Without a task or a dataset there is nothing to play, and the reason is said.
  EXPECT_FALSE(w.playBehaviour("dapg"));
  EXPECT_TRUE(w.statusText().contains("name the Adroit task")) << w.statusText().toStdString();
  EXPECT_FALSE(w.playBehaviour("dataset"));
  EXPECT_FALSE(w.viewer()->hasPlayer());
  EXPECT_FALSE(w.playBehaviour("dapg", "hopper"));
  EXPECT_TRUE(w.statusText().contains("no DAPG expert policy ships for hopper"))
      << w.statusText().toStdString();

  // The menu's action, as a user chooses it.
  auto* menu = w.findChild<QMenu*>("behaviourMenu");
  ASSERT_NE(menu, nullptr);
  QAction* door_expert = nullptr;
  for (auto* a : menu->actions())
    if (a->text() == "The DAPG Expert of door") door_expert = a;
  ASSERT_NE(door_expert, nullptr);
  door_expert->trigger();
  auto* v = w.viewer();
  ASSERT_TRUE(v->hasPlayer()) << w.statusText().toStdString();
  EXPECT_EQ(w.currentPage(), v);
  EXPECT_EQ(v->playerTitle(), "door: the DAPG expert (behaviour policy)");
  EXPECT_EQ(v->taskName(), "door");
  v->setSpeed(0.0);
  v->play();
  ASSERT_TRUE(waitFor(v, [](const models::PlaybackState& s) { return s.cursor >= 10; }));
  v->pause();
  const auto expert = behaviour::shipped_dapg_policy("door");
  const auto acts_as = [](const behaviour::MlpPolicy& p, const std::vector<models::FramePtr>& f) {
    std::vector<float> mean(static_cast<std::size_t>(p.act_dim));
    for (std::size_t t = 0; t + 1 < f.size(); ++t) {
      p.act(f[t]->observation, mean);
      for (auto& a : mean) a = std::clamp(a, -1.0f, 1.0f);
      if (f[t]->action != mean) return false;
    }
    return f.size() > 10;
  };
  EXPECT_TRUE(acts_as(expert, v->playerFrames()));
  // A step it acted at: its reward, and no return-to-go or attention entropy, which it has not.
  v->seek(5);
  v->sync();
  const QString readout = v->readout();
  EXPECT_TRUE(readout.startsWith("Step 5 of ")) << readout.toStdString();
  EXPECT_TRUE(readout.contains("reward")) << readout.toStdString();
  EXPECT_FALSE(readout.contains("return-to-go")) << readout.toStdString();
  EXPECT_FALSE(readout.contains("entropy")) << readout.toStdString();
  EXPECT_FALSE(v->findChild<QDoubleSpinBox*>("target")->isEnabled());
  EXPECT_FALSE(v->findChild<QWidget*>("targetFrom")->isEnabled()) << "nor the targets to choose";
  EXPECT_TRUE(v->findChild<QPushButton*>("expertFork")->isEnabled());
  EXPECT_THROW(v->setInterventions({"head:0.0=zero"}), UsageError);
  const QStringList args = v->liveViewerArguments();
  ASSERT_GE(args.size(), 4);
  EXPECT_EQ(args.mid(0, 4), (QStringList{"--behaviour", "dapg", "--env", "door"}));

  // A D4RL expert file's own policy, once the file is open.
  const auto file = dir / "door-expert-v1.hdf5";
  test::write_expert_file(file, "door", test::d4rl_fold(expert));
  QSignalSpy opened(&w, &MainWindow::datasetOpened);
  w.openDataset(QString::fromStdString(file.string()));
  ASSERT_TRUE(opened.wait(60000));
  ASSERT_TRUE(w.playBehaviour("dataset")) << w.statusText().toStdString();
  EXPECT_EQ(v->playerTitle(), "door: door-expert-v1.hdf5's metadata/policy (behaviour policy)");
  v->setSpeed(0.0);
  v->play();
  ASSERT_TRUE(waitFor(v, [](const models::PlaybackState& s) { return s.cursor >= 10; }));
  v->pause();
  EXPECT_TRUE(acts_as(behaviour::d4rl_policy(*w.datasetView()->dataset()), v->playerFrames()));
  // The open dataset's task is the expert's without naming it.
  ASSERT_TRUE(w.playBehaviour("dapg"));
  EXPECT_EQ(v->playerTitle(), "door: the DAPG expert (behaviour policy)");
}

// Beside a checkpoint of an Adroit task, the Forks tab's "The Expert Takes Over from Here" forks
// the episode at the step on screen to the DAPG expert; on a task without one it is off.
TEST_F(Viewer, TheExpertTakesOverACheckpointsEpisodeFromTheForksTab) {
  // A small DT of the task's sizes.
  const auto save_dt = [&](const std::string& env, int S, int A) {
    auto c = models::make_variant("dt");
    c.state_dim = S;
    c.act_dim = A;
    c.hidden = 16;
    c.layers = 1;
    c.heads = 1;
    c.context_length = 3;
    torch::manual_seed(3);
    models::DecisionModel model(c);
    models::CheckpointInfo info;
    info.variant = c;
    info.env_id = env;
    info.state_mean.assign(static_cast<std::size_t>(S), 0.0f);
    info.state_std.assign(static_cast<std::size_t>(S), 1.0f);
    info.metrics = "{}";
    const auto path = dir / (env + "-dt.pt");
    models::save_weights_checkpoint(path, model, info, "test");
    return path;
  };
  const auto path = save_dt("door", 39, 28);
  ViewerPanel v;
  v.setPlayer("door-dt", std::make_shared<models::EpisodePlayer>(path), /*autoplay=*/false);
  auto* expert = v.findChild<QPushButton*>("expertFork");
  ASSERT_NE(expert, nullptr);
  EXPECT_TRUE(expert->isEnabled());
  for (int i = 0; i < 5; ++i) v.stepForward();
  ASSERT_TRUE(waitFor(&v, [](const models::PlaybackState& s) { return s.cursor == 5; }));
  expert->click();
  v.setSpeed(0.0);
  v.play();
  ASSERT_TRUE(waitFor(&v, [](const models::PlaybackState& s) {
    return s.cursor >= 20 && !s.branch_frames.empty();
  }));
  v.pause();
  const auto state = v.shown();
  ASSERT_EQ(state.branch_frames.size(), 1u);
  EXPECT_TRUE(v.liveViewerArguments().join(' ').contains("--fork 5:behaviour=dapg"))
      << v.liveViewerArguments().join(' ').toStdString();

  // Hopper ships no expert: the button is off.
  ViewerPanel hopper;
  hopper.setPlayer("hopper-dt", std::make_shared<models::EpisodePlayer>(save_dt("hopper", 11, 3)),
                   /*autoplay=*/false);
  EXPECT_FALSE(hopper.findChild<QPushButton*>("expertFork")->isEnabled());
}

}  // namespace
}  // namespace dstudio::studio

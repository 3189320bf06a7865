// The 3-D scene as a user sees it: MuJoCo drawn in the viewer's OpenGL widget, under a virtual X
// server (CTest starts this binary with xvfb-run and Qt's xcb platform).

#include <gtest/gtest.h>

#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QGuiApplication>
#include <QImage>
#include <QProcess>
#include <QPushButton>
#include <QRegularExpression>
#include <QScreen>
#include <QSet>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <vector>

#include "default_dataset.h"
#include "dstudio/common/error.h"
#include "dstudio/common/figure_recipe.h"
#include "dstudio/common/read_file.h"
#include "dstudio/env/environment.h"
#include "dstudio/models/episode_player.h"
#include "dstudio/models/playback.h"
#include "dstudio/viz/figures.h"
#include "dstudio/viz/scene_view.h"
#include "figure_render.h"
#include "h5_fixture.h"
#include "main_window.h"
#include "maze_episode.h"
#include "test_application.h"
#include "video_probe.h"
#include "video_writer.h"
#include "view_recipes.h"
#include "viewer_panel.h"

namespace dstudio::studio {
namespace {

using test::probe_video;

class Render : public testing::Test {
 protected:
  static void SetUpTestSuite() { test::ensure_application(); }
  void SetUp() override {
    if (!viz::SceneView::openGlAvailable())
      GTEST_SKIP() << "no OpenGL on Qt platform " << QApplication::platformName().toStdString();
  }
};

// The window at the screen's corner, exposed, with the shipped DT open in its Viewer tab.
void show_viewer_on_screen(MainWindow& w) {
  w.resize(1300, 850);
  w.move(0, 0);
  w.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&w));
  QSignalSpy shown(&w, &MainWindow::checkpointShown);
  w.openDefaultCheckpoint();
  ASSERT_TRUE(shown.wait(180000));
  w.showPage(w.viewer());
}

int distinct_colours(const QImage& image) {
  QSet<QRgb> colours;
  for (int y = 0; y < image.height(); y += 3)
    for (int x = 0; x < image.width(); x += 3) colours.insert(image.pixel(x, y));
  return static_cast<int>(colours.size());
}

TEST_F(Render, DrawsTheHopperAndFollowsItsState) {
  env::Environment e("hopper");
  std::vector<float> obs(11);
  e.reset(0, obs);
  viz::SceneView view;
  view.resize(480, 320);
  QSignalSpy drawn(&view, &viz::SceneView::frameDrawn);
  QSignalSpy failed(&view, &viz::SceneView::renderFailed);
  view.setPhysicsModel(e.shared_model());
  view.setState(e.qpos(), e.qvel());
  view.show();
  ASSERT_TRUE(drawn.count() > 0 || drawn.wait(20000))
      << (failed.isEmpty() ? "nothing drawn" : failed.front().front().toString().toStdString())
      << ", frames " << view.framesDrawn();
  const QImage standing = view.lastFrame();
  ASSERT_FALSE(standing.isNull());
  EXPECT_GT(distinct_colours(standing), 50) << "a lit scene, not a cleared buffer";

  // The same state drawn with the torso tilted: the picture changes.
  std::vector<double> qpos(e.qpos().begin(), e.qpos().end());
  qpos[2] = 0.8;  // torso angle
  const int before_tilt = view.framesDrawn();
  view.setState(qpos, e.qvel());
  ASSERT_TRUE(test::wait_until([&] { return view.framesDrawn() > before_tilt; }, 20000));
  const QImage tilted = view.lastFrame();
  EXPECT_NE(tilted, standing);
  EXPECT_GT(view.framesDrawn(), 1);
  EXPECT_GT(view.lastFrameMilliseconds(), 0.0);

  // The overlay darkens its corner.
  const int before_overlay = view.framesDrawn();
  view.setOverlay({QStringLiteral("step 0"), QStringLiteral("target 3600")});
  ASSERT_TRUE(test::wait_until([&] { return view.framesDrawn() > before_overlay; }, 20000));
  const QImage overlaid = view.lastFrame();
  EXPECT_LT(qGray(overlaid.pixel(12, 12)), qGray(tilted.pixel(12, 12)));
}

// What the X server shows, read back from it (as `xwd -root` or `import -window root` do), not the
// widget's own framebuffer: a view can render into its framebuffer and still be black on screen.
QImage on_screen(const QWidget* widget) {
  const QPoint at = widget->mapToGlobal(QPoint(0, 0));
  return QGuiApplication::primaryScreen()
      ->grabWindow(0, at.x(), at.y(), widget->width(), widget->height())
      .toImage();
}

// The Viewer tab's scene is drawn on the screen, not only into its framebuffer.
TEST_F(Render, TheViewerTabsSceneIsOnTheScreenAsTheUserSeesIt) {
  if (QGuiApplication::platformName() != QLatin1String("xcb"))
    GTEST_SKIP() << "reads the X server's screen";
  MainWindow w;
  ASSERT_NO_FATAL_FAILURE(show_viewer_on_screen(w));
  auto* v = w.viewer();
  v->play();
  for (int i = 0; i < 2000 && (v->shown().cursor < 40 || v->scene()->framesDrawn() <= 3); ++i)
    QTest::qWait(10);
  const auto* scene = v->scene();
  ASSERT_GT(scene->framesDrawn(), 3);
  // The frame drawn after the last state is composed onto the screen: the screen shows a scene.
  EXPECT_TRUE(test::wait_until([&] { return distinct_colours(on_screen(scene)) > 50; }, 20000));
  const QImage screen = on_screen(scene);
  const QString shots = DSTUDIO_SCREENSHOT_DIR;
  QDir().mkpath(shots);
  on_screen(&w).save(QDir(shots).filePath("viewer-on-screen.png"));
  ASSERT_FALSE(screen.isNull());
  EXPECT_GT(distinct_colours(screen), 50) << "a lit scene on the screen, not black";
  // Dark pixels are under a third of the scene (a black scene is all of it).
  long dark = 0, all = 0;
  for (int y = 0; y < screen.height(); y += 4)
    for (int x = 0; x < screen.width(); x += 4, ++all) dark += qGray(screen.pixel(x, y)) < 16;
  EXPECT_LT(dark * 3, all) << dark << " of " << all << " sampled pixels are black";
}

// AntMaze in the Viewer tab: a replayed episode seen from the maze's own camera, its goal and the
// navigator's waypoint marked, the path up to the step on screen; tracking comes down over the ant
// and goes back; a hopper opened after it is followed from the side as before, with no markers.
TEST_F(Render, AMazeEpisodeIsSeenWholeWithItsGoalWaypointAndPath) {
  test::TempDir dir;
  const auto file = dir / "maze.hdf5";
  test::write_maze_episode(file, 300);
  MainWindow w;
  w.resize(1300, 850);
  w.show();
  QSignalSpy opened(&w, &MainWindow::datasetOpened);
  w.openDataset(QString::fromStdString(file.string()));
  ASSERT_TRUE(opened.wait(60000));
  ASSERT_TRUE(w.replayEpisode(0));
  auto* v = w.viewer();
  ASSERT_TRUE(v->scene()->hasScene());
  constexpr int kStep = 150;
  v->seek(kStep);
  for (int i = 0; i < 2000 && (v->shown().cursor != kStep || !v->shown().frame); ++i)
    QTest::qWait(10);
  ASSERT_EQ(v->shown().cursor, kStep);
  // The caption counts a replayed episode's return as the steps at the goal, not as a score.
  const QString caption = v->scene()->overlay().join(" | ");
  EXPECT_TRUE(caption.contains("(steps at the goal)")) << caption.toStdString();
  EXPECT_FALSE(caption.contains("score")) << caption.toStdString();
  const auto& task = env::task("antmaze-umaze-v2");
  EXPECT_EQ(v->scene()->cameraView(), render::task_camera(task.camera));
  EXPECT_FALSE(v->scene()->tracking());

  const auto& layers = v->scene()->layers();
  ASSERT_EQ(layers.markers.size(), 2u);
  EXPECT_EQ(layers.markers[0].label, "goal");
  EXPECT_EQ(layers.markers[1].label, "waypoint");
  const auto& frame = *v->shown().frame;
  EXPECT_NEAR(layers.markers[0].x, frame.physics.task_state[0], 1e-9) << "the episode's goal";
  EXPECT_NEAR(layers.markers[0].y, frame.physics.task_state[1], 1e-9);
  ASSERT_EQ(layers.paths.size(), 1u);
  const auto& path = layers.paths[0].points;
  ASSERT_EQ(path.size(), static_cast<std::size_t>(kStep) + 1) << "every step up to the one shown";
  EXPECT_EQ(path.back()[0], frame.physics.qpos[0]);
  EXPECT_EQ(path.back()[1], frame.physics.qpos[1]);
  // A frame drawn now shows the step.
  const int before_overview = v->scene()->framesDrawn();
  v->scene()->redraw();
  ASSERT_TRUE(test::wait_until([&] { return v->scene()->framesDrawn() > before_overview; }, 20000));
  const QImage overview = v->scene()->lastFrame();
  long goal = 0;
  for (int y = 0; y < overview.height(); ++y)
    for (int x = 0; x < overview.width(); ++x) {
      const QColor c = overview.pixelColor(x, y);
      goal += c.red() > 120 && 100 * c.green() < 65 * c.red() && 100 * c.blue() < 65 * c.red();
    }
  EXPECT_GT(goal, 20) << "the goal's disc in the picture";
  const QString shots = DSTUDIO_SCREENSHOT_DIR;
  QDir().mkpath(shots);
  overview.save(QDir(shots).filePath("viewer-maze-replay.png"));

  // Tracking on comes down over the ant; off goes back over the maze.
  v->scene()->setTracking(true);
  EXPECT_EQ(v->scene()->cameraView().track_body, 1);
  EXPECT_LT(v->scene()->cameraView().distance, render::task_camera(task.camera).distance / 2);
  v->scene()->setTracking(false);
  EXPECT_EQ(v->scene()->cameraView(), render::task_camera(task.camera));

  // A policy of a locomotion task next (the story's DT: with maze data open the default would
  // be the maze's own): no markers, no path, the camera that follows the torso.
  QSignalSpy shown(&w, &MainWindow::checkpointShown);
  w.openCheckpoint(defaultCheckpoint());
  ASSERT_TRUE(shown.wait(180000));
  for (int i = 0; i < 2000 && !v->shown().frame; ++i) QTest::qWait(10);
  EXPECT_TRUE(v->scene()->layers().markers.empty());
  EXPECT_TRUE(v->scene()->layers().paths.empty());
  EXPECT_TRUE(v->scene()->tracking());
  const auto expected = render::viewer_camera();
  const auto camera = v->scene()->cameraView();
  EXPECT_EQ(camera.distance, expected.distance);
  EXPECT_EQ(camera.azimuth, expected.azimuth);
  EXPECT_EQ(camera.elevation, expected.elevation);
  EXPECT_EQ(camera.lookat_z, expected.lookat_z);
}

TEST_F(Render, TheViewerShowsTheRunningPolicyMidEpisode) {
  MainWindow w;
  w.resize(1300, 850);
  w.show();
  QSignalSpy shown(&w, &MainWindow::checkpointShown);
  w.openDefaultCheckpoint();
  ASSERT_TRUE(shown.wait(180000));
  auto* v = w.viewer();
  ASSERT_TRUE(v->scene()->hasScene());
  w.showPage(v);
  v->pause();
  v->restart();
  v->setSpeed(0.0);
  v->play();
  // Until step 120 and a few frames drawn: on a loaded machine the policy can outrun the scene.
  for (int i = 0; i < 2000 && (v->shown().cursor < 120 || v->scene()->framesDrawn() <= 3); ++i)
    QTest::qWait(10);
  v->pause();
  // A step is on screen once the panel shows it and a frame was drawn after it.
  const auto shows = [&](int step) {
    const int before = v->scene()->framesDrawn();
    return test::wait_until([&] { return v->shown().cursor == step; }, 20000) &&
           test::wait_until([&] { return v->scene()->framesDrawn() > before; }, 20000);
  };
  v->seek(120);
  ASSERT_TRUE(shows(120)) << v->shown().cursor;
  const QImage at120 = v->scene()->lastFrame();
  v->stepBack();
  ASSERT_TRUE(shows(119)) << v->shown().cursor;
  const QImage at119 = v->scene()->lastFrame();
  EXPECT_NE(at119, at120) << "stepping back redraws the scene";
  EXPECT_GT(v->scene()->framesDrawn(), 3);
  const QString shots = DSTUDIO_SCREENSHOT_DIR;
  QDir().mkpath(shots);
  w.grab().save(QDir(shots).filePath("viewer.png"));

  // Recording: frame by frame at a fixed rate, each frame the step the episode reaches at the
  // chosen speed; the whole panel as MP4 when ffmpeg is there (PNG frames otherwise).
  const QString folder = QDir(shots).filePath("recordings");
  QDir(folder).removeRecursively();
  v->setRecordFolder(folder);
  v->setRecordFrameRate(30);
  v->setRecordArea(ViewerPanel::RecordArea::Panel);
  v->setSpeed(1.0);
  QSignalSpy finished(v, &ViewerPanel::recordingFinished);
  const int first = v->shown().cursor;
  ASSERT_TRUE(v->startRecording());
  for (int i = 0; i < 3000 && v->isRecording() && v->recordedFrames() < 30; ++i) QTest::qWait(10);
  v->stopRecording();
  ASSERT_EQ(finished.count(), 1);
  EXPECT_EQ(finished.front().at(2).toString(), "") << "no error";
  const int n = v->recordedFrames();
  EXPECT_GE(n, 30);
  // The last frame showed the step 1x speed has reached after n - 1 frames at 30 per second.
  v->sync();
  EXPECT_EQ(v->shown().cursor,
            first + static_cast<int>(std::floor((n - 1) * v->stepsPerSecond() / 30.0 + 1e-9)));
  const QString path = finished.front().at(0).toString();
  if (VideoWriter::ffmpegAvailable()) {
    ASSERT_TRUE(path.endsWith(".mp4")) << path.toStdString();
    const auto probe = probe_video(path);
    EXPECT_EQ(probe.frames, n);
    EXPECT_EQ(probe.rate, "30/1");
    EXPECT_EQ(probe.width, v->width() & ~1);
    EXPECT_EQ(probe.height, v->height() & ~1);
    EXPECT_FALSE(QFile::exists(path + ".part"));
  } else {
    EXPECT_EQ(QDir(path).entryList({"frame-*.png"}, QDir::Files).size(), n);
  }

  // decision-viewer recording the same run (checkpoint, seed, target, first step, speed, rate)
  // shows the same step in every frame: the two viewers play and record by one clock.
  const auto log_path = models::ClipLog::path_for(path.toStdString());
  ASSERT_TRUE(std::filesystem::exists(log_path)) << log_path;
  const auto log = nlohmann::json::parse(std::ifstream(log_path));
  ASSERT_EQ(log["frames"].size(), static_cast<std::size_t>(n));
  EXPECT_EQ(log["first_step"], first);
  EXPECT_EQ(log["fps"], 30);
  const auto studio_steps = models::ClipLog::read_steps(log_path);
  const QString other = QDir(folder).filePath("decision-viewer.mp4");
  QProcess viewer;
  viewer.setProcessChannelMode(QProcess::MergedChannels);
  viewer.start(DSTUDIO_VIEWER,
               {w.checkpointPath(), "--seed", QString::number(log["seed"].get<std::uint64_t>()),
                "--target", QString::number(log["frames"][0]["target"].get<double>(), 'g', 17),
                "--step", QString::number(first), "--speed", "1", "--fps", "30", "--record",
                QString::number(n / 30.0, 'g', 17), "--out", other, "--size", "640", "480"});
  ASSERT_TRUE(viewer.waitForFinished(300000));
  ASSERT_EQ(viewer.exitCode(), 0) << viewer.readAll().toStdString();
  const auto viewer_log = models::ClipLog::path_for(other.toStdString());
  const auto viewer_steps = models::ClipLog::read_steps(viewer_log);
  EXPECT_EQ(viewer_steps, studio_steps);
  // The same run: the same return in every frame.
  const auto vlog = nlohmann::json::parse(std::ifstream(viewer_log));
  for (std::size_t i = 0; i < std::min(vlog["frames"].size(), log["frames"].size()); ++i)
    ASSERT_EQ(vlog["frames"][i]["return"], log["frames"][i]["return"]) << "frame " << i;
  std::filesystem::remove(viewer_log);
  QFile::remove(other);
  QDir(other.chopped(4)).removeRecursively();

  // The scene alone, into the same folder without asking again.
  v->setRecordArea(ViewerPanel::RecordArea::Scene);
  ASSERT_TRUE(v->startRecording());
  for (int i = 0; i < 3000 && v->isRecording() && v->recordedFrames() < 5; ++i) QTest::qWait(10);
  v->stopRecording();
  ASSERT_EQ(finished.count(), 2);
  EXPECT_EQ(finished.back().at(2).toString(), "");
  if (VideoWriter::ffmpegAvailable()) {
    const auto probe = probe_video(finished.back().at(0).toString());
    EXPECT_EQ(probe.width, v->scene()->width() & ~1);
    EXPECT_EQ(probe.height, v->scene()->height() & ~1);
  }
  const auto entries = QDir(folder).entryList(QDir::Files | QDir::Dirs | QDir::NoDotAndDotDot);
  const auto json = entries.filter(QRegularExpression(QStringLiteral("\\.json$")));
  const auto recipes = entries.filter(QRegularExpression(QStringLiteral("\\.recipe\\.json$")));
  EXPECT_EQ(entries.size() - json.size(), 2) << "a file of its own for each recording";
  EXPECT_EQ(json.size() - recipes.size(), 2) << "each with the log of what its frames show";
  EXPECT_EQ(recipes.size(), 2) << "and the recipe that draws it again";
}

// The Viewer tab's surgery: interventions toggled at the step on screen act as the same set
// given to a headless player from that step; a fork plays beside the episode as a ghost in its
// colour; the limbs take the colour of the change. The window is saved as the user sees it.
TEST_F(Render, InterventionsAndForksActFromTheStepOnScreenAndAreDrawnInTheScene) {
  MainWindow w;
  ASSERT_NO_FATAL_FAILURE(show_viewer_on_screen(w));
  auto* v = w.viewer();
  v->pause();
  v->restart();
  v->setSpeed(0.0);
  const auto wait_for = [&](const std::function<bool()>& done) {
    for (int i = 0; i < 6000 && !done(); ++i) QTest::qWait(5);
    return done();
  };
  v->setEffects(true);
  v->play();
  ASSERT_TRUE(wait_for([&] { return v->shown().frames > 21; }));
  v->pause();
  v->seek(20);
  v->sync();
  ASSERT_EQ(v->shown().cursor, 20);
  const std::vector<std::string> specs{"head:1.1=zero", "mlp:3=zero"};
  v->setInterventions(specs);
  EXPECT_THROW(v->setInterventions({"head:9.1=zero"}), UsageError);
  // Taken up by the player: the frames after the step on screen dropped, the step re-conditioned.
  ASSERT_TRUE(wait_for([&] {
    v->sync();
    return v->shown().frames == 21 && v->shown().frame->interventions == specs;
  }));
  v->play();
  ASSERT_TRUE(wait_for([&] {
    v->sync();
    return v->shown().frames > 60;
  }));
  v->pause();
  v->sync();

  // The same set from step 20 of the same episode, headless.
  const auto seed = v->shown().seed;
  models::EpisodePlayer reference(w.checkpointPath().toStdString());
  reference.reset(seed, v->settings().target.value_or(0.0));
  while (static_cast<int>(reference.frames().size()) <= 20) reference.step();
  reference.branch(20, v->settings().target.value_or(0.0), models::ModalityZeroing::None, specs);
  while (static_cast<int>(reference.frames().size()) <= 60) reference.step();
  const auto played = v->playerFrames();
  ASSERT_GT(played.size(), 60u);
  for (std::size_t t = 0; t < 60; ++t)
    ASSERT_EQ(played[t]->action, reference.frames()[t]->action) << "step " << t;
  EXPECT_EQ(played[25]->interventions, specs);
  EXPECT_TRUE(played[19]->interventions.empty());

  // A fork with a lower target from step 60, drawn as a ghost.
  v->seek(60);
  v->sync();
  models::BranchChange lower;
  lower.target = 500.0;
  lower.label = "target=500";
  v->fork(lower);
  ASSERT_TRUE(wait_for([&] {
    v->sync();
    return v->shown().branch_frames.size() == 1;
  }));
  v->play();
  ASSERT_TRUE(wait_for([&] { return v->shown().cursor >= 150; }));
  v->pause();
  // A clip of the fork lists it in every frame, at the same step as the main run.
  if (VideoWriter::ffmpegAvailable()) {
    const QString folder = QDir(DSTUDIO_SCREENSHOT_DIR).filePath("fork-recordings");
    QDir(folder).removeRecursively();
    v->setRecordFolder(folder);
    QSignalSpy finished(v, &ViewerPanel::recordingFinished);
    ASSERT_TRUE(v->startRecording());
    ASSERT_TRUE(wait_for([&] { return !v->isRecording() || v->recordedFrames() >= 5; }));
    v->stopRecording();
    ASSERT_EQ(finished.count(), 1);
    const auto log = nlohmann::json::parse(
        std::ifstream(models::ClipLog::path_for(finished.front().at(0).toString().toStdString())));
    ASSERT_GE(log["frames"].size(), 5u);
    EXPECT_EQ(log["frames"][0]["forks"][0]["step"], log["frames"][0]["step"]);
    for (const auto& frame : log["frames"]) {
      ASSERT_EQ(frame["forks"].size(), 1u) << frame.dump();
      EXPECT_EQ(frame["forks"][0]["change"], "target=500");
      EXPECT_EQ(frame["forks"][0]["fork_step"], 60);
      // The fork's frame at the step (its last, had it fallen before).
      EXPECT_LE(frame["forks"][0]["step"].get<int>(), frame["step"].get<int>());
      EXPECT_EQ(frame["interventions"].size(), 2u);
    }
  }
  v->seek(150);
  v->sync();
  // The timeline's right axis on a joint: every run's thigh angle, the fork's the main run's
  // until the fork, its own after.
  auto* axis = v->findChild<QComboBox*>("divergence");
  ASSERT_NE(axis, nullptr);
  const int thigh = axis->findText("thigh_joint (qpos)");
  ASSERT_GT(thigh, 0);
  axis->setCurrentIndex(thigh);
  v->sync();
  ASSERT_EQ(v->timeline()->forks().size(), 1u);
  EXPECT_EQ(v->timeline()->divergenceName(), "thigh_joint (qpos)");
  auto* export_timeline = v->findChild<QPushButton*>("exportTimeline");
  ASSERT_NE(export_timeline, nullptr);
  EXPECT_TRUE(export_timeline->isEnabled()) << "a timeline with steps exports";
  const auto main_run = v->playerFrames();
  const auto& thigh_of_fork = v->timeline()->forks()[0].divergence;
  ASSERT_GT(thigh_of_fork.size(), 100u);
  for (std::size_t t = 0; t <= 60; ++t)
    ASSERT_EQ(thigh_of_fork[t], main_run[t]->physics.qpos[3]) << "step " << t;
  double apart = 0.0;
  for (std::size_t t = 61; t < 150 && t < thigh_of_fork.size(); ++t)
    apart = std::max(apart, std::abs(thigh_of_fork[t] - main_run[t]->physics.qpos[3]));
  EXPECT_GT(apart, 1e-3) << "target 500 moves the thigh otherwise";

  // The timeline exported has its recipe (the conditioning changed at step 20, the fork at 60, the
  // joint on the right axis, the bookmark), and `dstudio figure render` plays the episode and its
  // fork again headless and draws the same PNG bytes and numbers.
  v->addBookmark({BookmarkPlace::Viewer, {}, 40, "before the fork", "heads zeroed from 20"});
  {
    const QString folder = QDir(DSTUDIO_SCREENSHOT_DIR).filePath("timeline-recipe");
    QDir(folder).removeRecursively();
    QDir().mkpath(folder);
    viz::FigureStyle png;
    png.pdf = png.svg = false;
    const auto base = QDir(folder).filePath("timeline").toStdString();
    const auto written = viz::export_with_recipes(*v->timeline(), base, png);
    ASSERT_TRUE(std::find(written.begin(), written.end(), base + ".recipe.json") != written.end());
    const auto recipe = read_figure_recipe(base + ".recipe.json");
    EXPECT_EQ(recipe.analysis, "studio-viewer-timeline");
    EXPECT_EQ(recipe.figure.name, "divergence");
    EXPECT_EQ(recipe.seeds, std::vector<std::int64_t>{static_cast<std::int64_t>(seed)});
    ASSERT_EQ(recipe.bookmarks.size(), 1u);
    EXPECT_EQ(recipe.bookmarks[0].step, 40);
    const auto view = nlohmann::json::parse(recipe.view);
    EXPECT_NE(view.at("changes").dump().find("mlp:3=zero"), std::string::npos);
    EXPECT_NE(view.at("forks").dump().find("target=500"), std::string::npos);
    const std::string again = QDir(folder).filePath("again.png").toStdString();
    ASSERT_EQ(test::figure_render(base + ".recipe.json", again, "/dev/null"), 0) << base;
    const auto bytes = [](const std::string& path) {
      return read_regular_file(path, std::uint64_t{1} << 30);
    };
    EXPECT_EQ(bytes(again), bytes(base + ".png")) << "the timeline drawn again from its recipe";
    EXPECT_EQ(bytes(QDir(folder).filePath("again.csv").toStdString()), bytes(base + ".csv"));
  }
  // A frame drawn with the fork on screen, and one after it is gone.
  const auto fresh_frame = [&] {
    const int before = v->scene()->framesDrawn();
    v->scene()->redraw();
    return test::wait_until([&] { return v->scene()->framesDrawn() > before; }, 20000);
  };
  ASSERT_TRUE(fresh_frame());
  const QString shots = DSTUDIO_SCREENSHOT_DIR;
  QDir().mkpath(shots);
  on_screen(&w).save(QDir(shots).filePath("viewer-forks.png"));
  const QImage with_fork = v->scene()->lastFrame();
  v->removeForks();
  ASSERT_TRUE(wait_for([&] {
    v->sync();
    return v->shown().branch_frames.empty();
  }));
  ASSERT_TRUE(fresh_frame());
  const QImage without = v->scene()->lastFrame();
  ASSERT_EQ(with_fork.size(), without.size());
  long differing = 0;
  for (int y = 0; y < without.height(); ++y)
    for (int x = 0; x < without.width(); ++x)
      differing += with_fork.pixel(x, y) != without.pixel(x, y);
  EXPECT_GT(differing, 300) << "the ghost (and the fork's line in the overlay)";
  v->setEffects(false);
}

}  // namespace
}  // namespace dstudio::studio

namespace dstudio::studio {
namespace {

// What `ffmpeg -f framemd5` says of each decoded frame: its hash (the video's pictures, not how
// the container holds them).
std::vector<std::string> frame_hashes(const QString& video) {
  QProcess ffmpeg;
  ffmpeg.start(QStringLiteral("ffmpeg"), {"-v", "error", "-i", video, "-f", "framemd5", "-"});
  EXPECT_TRUE(ffmpeg.waitForFinished(120000));
  std::vector<std::string> hashes;
  for (const auto& line : QString::fromUtf8(ffmpeg.readAllStandardOutput()).split('\n')) {
    if (line.startsWith('#') || line.trimmed().isEmpty()) continue;
    hashes.push_back(line.section(',', -1).trimmed().toStdString());
  }
  return hashes;
}

// A recording of the whole panel, with the target changed at step 30, a fork at 45, the camera
// turned by hand and a joint on the timeline's right axis, has its recipe beside it; `dstudio
// figure render` draws the clip again through the studio's own panel: the same steps, returns,
// conditioning and forks in its log, the same pictures frame for frame.
TEST_F(Render, AClipIsDrawnAgainFromItsRecipeFrameForFrame) {
  if (!VideoWriter::ffmpegAvailable()) GTEST_SKIP() << "no ffmpeg with libx264";
  MainWindow w;
  ASSERT_NO_FATAL_FAILURE(show_viewer_on_screen(w));
  auto* v = w.viewer();
  const auto wait_for = [&](const std::function<bool()>& done) {
    for (int i = 0; i < 6000 && !done(); ++i) {
      QTest::qWait(5);
      v->sync();
    }
    return done();
  };
  v->pause();
  v->restart();
  v->setSpeed(0.0);
  v->play();
  ASSERT_TRUE(wait_for([&] { return v->shown().frames > 31; }));
  v->pause();
  v->seek(30);
  ASSERT_TRUE(wait_for([&] { return v->shown().cursor == 30; }));
  v->setTarget(2000.0);
  ASSERT_TRUE(
      wait_for([&] { return v->shown().frames == 31 && v->shown().frame->target == 2000.0; }));
  v->play();
  ASSERT_TRUE(wait_for([&] { return v->shown().frames > 46; }));
  v->pause();
  v->seek(45);
  ASSERT_TRUE(wait_for([&] { return v->shown().cursor == 45; }));
  models::BranchChange lower;
  lower.target = 500.0;
  lower.label = "target=500";
  v->fork(lower);
  ASSERT_TRUE(wait_for([&] { return v->shown().branch_frames.size() == 1; }));
  v->play();
  ASSERT_TRUE(wait_for([&] { return v->shown().cursor >= 70; }));
  v->pause();
  v->seek(40);
  ASSERT_TRUE(wait_for([&] { return v->shown().cursor == 40; }));
  auto* axis = v->findChild<QComboBox*>("divergence");
  ASSERT_NE(axis, nullptr);
  axis->setCurrentIndex(axis->findText("thigh_joint (qpos)"));
  auto camera = v->scene()->cameraView();
  camera.track_body = -1;
  camera.azimuth = 120.0;
  camera.elevation = -20.0;
  camera.distance = 5.0;
  camera.lookat_x = 1.5;
  v->setClipLook([&] {
    auto look = v->clipLook();
    look.camera = camera;
    return look;
  }());
  EXPECT_EQ(v->clipLook().camera, camera);

  const QString folder = QDir(DSTUDIO_SCREENSHOT_DIR).filePath("clip-recipe");
  QDir(folder).removeRecursively();
  QDir().mkpath(folder);
  v->setRecordFolder(folder);
  v->setRecordFrameRate(30);
  v->setRecordArea(ViewerPanel::RecordArea::Panel);
  v->setSpeed(1.0);
  // Record is pressed with the target field holding the keyboard's focus and the hand then resting
  // on a button: the frames show the panel at rest, as its recipe draws it again without a user.
  auto* field = v->findChild<QAbstractSpinBox*>("target");
  ASSERT_NE(field, nullptr);
  w.activateWindow();
  field->setFocus(Qt::MouseFocusReason);
  ASSERT_TRUE(test::wait_until([&] { return field->hasFocus(); }, 10000));
  QPushButton* resting = nullptr;
  for (auto* b : v->findChildren<QPushButton*>())
    if (b->isVisible() && b->text() == "Open in Live Viewer") resting = b;
  ASSERT_NE(resting, nullptr);
  QTest::mouseMove(resting, resting->rect().center());
  ASSERT_TRUE(test::wait_until([&] { return resting->underMouse(); }, 10000));
  QSignalSpy finished(v, &ViewerPanel::recordingFinished);
  ASSERT_TRUE(v->startRecording());
  ASSERT_TRUE(wait_for([&] { return !v->isRecording() || v->recordedFrames() >= 12; }));
  v->stopRecording();
  ASSERT_EQ(finished.count(), 1);
  ASSERT_EQ(finished.front().at(2).toString(), "");
  EXPECT_FALSE(field->hasFocus()) << "the focus left the panel's fields as it recorded";
  EXPECT_TRUE(resting->underMouse()) << "the hover is the button's again";
  // A clip's recipe: <clip>.recipe.json beside <clip>.mp4.
  const auto recipe_of = [](const QString& video) {
    return video.chopped(4).toStdString() + ".recipe.json";
  };
  const QString clip = finished.front().at(0).toString();
  const std::string recipe_path = recipe_of(clip);
  ASSERT_TRUE(std::filesystem::exists(recipe_path)) << "a recipe beside " << clip.toStdString();
  const auto recipe = read_figure_recipe(recipe_path);
  EXPECT_EQ(recipe.analysis, "studio-viewer-clip");
  EXPECT_EQ(recipe.step, 40);
  const auto view = nlohmann::json::parse(recipe.view);
  EXPECT_NE(view.at("changes").dump().find("2000"), std::string::npos);
  EXPECT_NE(view.at("forks").dump().find("target=500"), std::string::npos);
  EXPECT_EQ(recipe.options.at("area"), "panel");

  const std::string again = QDir(folder).filePath("again.mp4").toStdString();
  ASSERT_EQ(test::figure_render(recipe_path, again), 0) << recipe_path;
  // The log: every frame's step, return, target, zeroing, interventions and forks.
  const auto log = [](const std::string& video) {
    return nlohmann::json::parse(read_regular_file(
        models::ClipLog::path_for(std::filesystem::path(video).replace_extension()),
        std::uint64_t{1} << 26));
  };
  const auto first = log(clip.toStdString()), second = log(again);
  ASSERT_EQ(first["frames"].size(), 12u);
  EXPECT_EQ(second, first) << "the clip log drawn again";
  EXPECT_EQ(first["frames"][0]["forks"][0]["change"], "target=500");
  // The pictures.
  const auto drawn = frame_hashes(clip), redrawn = frame_hashes(QString::fromStdString(again));
  ASSERT_EQ(drawn.size(), 12u);
  EXPECT_EQ(redrawn, drawn) << "the same pictures, frame for frame";
  EXPECT_EQ(read_regular_file(again, std::uint64_t{1} << 30),
            read_regular_file(clip.toStdString(), std::uint64_t{1} << 30))
      << "x264 encodes the same pictures into the same bytes";
  // And the clip drawn again has the same recipe (but for its files and time).
  auto recipe_again = read_figure_recipe(QDir(folder).filePath("again.recipe.json").toStdString());
  recipe_again.outputs = recipe.outputs;
  recipe_again.created = recipe.created;
  EXPECT_EQ(to_json(recipe_again), to_json(recipe));

  // The scene alone, following the torso, at twice real time: drawn again as well.
  v->setRecordArea(ViewerPanel::RecordArea::Scene);
  v->setClipLook([&] {
    auto look = v->clipLook();
    look.camera.track_body = 1;
    return look;
  }());
  v->setSpeed(2.0);
  v->seek(50);
  ASSERT_TRUE(wait_for([&] { return v->shown().cursor == 50; }));
  ASSERT_TRUE(v->startRecording());
  ASSERT_TRUE(wait_for([&] { return !v->isRecording() || v->recordedFrames() >= 6; }));
  v->stopRecording();
  ASSERT_EQ(finished.count(), 2);
  ASSERT_EQ(finished.back().at(2).toString(), "");
  const QString scene_clip = finished.back().at(0).toString();
  const std::string scene_recipe = recipe_of(scene_clip);
  EXPECT_EQ(read_figure_recipe(scene_recipe).options.at("area"), "scene");
  const std::string scene_again = QDir(folder).filePath("scene-again.mp4").toStdString();
  ASSERT_EQ(test::figure_render(scene_recipe, scene_again), 0) << scene_recipe;
  EXPECT_EQ(log(scene_again), log(scene_clip.toStdString()));
  const auto scene_drawn = frame_hashes(scene_clip);
  EXPECT_EQ(scene_drawn.size(), log(scene_again)["frames"].size());
  EXPECT_EQ(frame_hashes(QString::fromStdString(scene_again)), scene_drawn);

  // From a new episode's first step, as Record is pressed once a checkpoint is open: the first
  // frame brings the map's caption and a single entropy value, laid out and scaled as again.
  v->setRecordArea(ViewerPanel::RecordArea::Panel);
  v->setSpeed(1.0);
  v->restart();
  ASSERT_TRUE(wait_for([&] { return v->shown().frames == 1 && v->shown().branch_frames.empty(); }));
  ASSERT_TRUE(v->startRecording());
  ASSERT_TRUE(wait_for([&] { return !v->isRecording() || v->recordedFrames() >= 4; }));
  v->stopRecording();
  ASSERT_EQ(finished.count(), 3);
  ASSERT_EQ(finished.back().at(2).toString(), "");
  const QString start_clip = finished.back().at(0).toString();
  const std::string start_again = QDir(folder).filePath("start-again.mp4").toStdString();
  ASSERT_EQ(test::figure_render(recipe_of(start_clip), start_again), 0) << recipe_of(start_clip);
  EXPECT_EQ(log(start_again)["frames"][0]["step"], 0);
  EXPECT_EQ(log(start_again), log(start_clip.toStdString()));
  EXPECT_EQ(frame_hashes(QString::fromStdString(start_again)), frame_hashes(start_clip));
}

}  // namespace
}  // namespace dstudio::studio

// The 3-D scene as a user sees it: MuJoCo drawn in the viewer's OpenGL widget, under a virtual X
// server (CTest starts this binary with xvfb-run and Qt's xcb platform).

#include <gtest/gtest.h>

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QSet>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>
#include <vector>

#include "dstudio/env/environment.h"
#include "dstudio/viz/scene_view.h"
#include "main_window.h"
#include "viewer_panel.h"

#include "test_application.h"

namespace dstudio::studio {
namespace {

class Render : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    test::ensure_application();
  }
  void SetUp() override {
    if (!viz::SceneView::openGlAvailable()) GTEST_SKIP() << "no OpenGL on Qt platform " << QApplication::platformName().toStdString();
  }
};

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
  ASSERT_TRUE(drawn.count() > 0 || drawn.wait(20000)) << (failed.isEmpty() ? "nothing drawn" : failed.front().front().toString().toStdString())
                                 << ", frames " << view.framesDrawn();
  const QImage standing = view.lastFrame();
  ASSERT_FALSE(standing.isNull());
  EXPECT_GT(distinct_colours(standing), 50) << "a lit scene, not a cleared buffer";

  // The same state drawn with the torso tilted: the picture changes.
  std::vector<double> qpos(e.qpos().begin(), e.qpos().end());
  qpos[2] = 0.8;  // torso angle
  view.setState(qpos, e.qvel());
  QTest::qWait(200);
  const QImage tilted = view.lastFrame();
  EXPECT_NE(tilted, standing);
  EXPECT_GT(view.framesDrawn(), 1);
  EXPECT_GT(view.lastFrameMilliseconds(), 0.0);

  // The overlay darkens its corner.
  view.setOverlay({QStringLiteral("step 0"), QStringLiteral("target 3600")});
  QTest::qWait(200);
  const QImage overlaid = view.lastFrame();
  EXPECT_LT(qGray(overlaid.pixel(12, 12)), qGray(tilted.pixel(12, 12)));
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
  w.tabs()->setCurrentWidget(v);
  v->pause();
  v->restart();
  v->setSpeed(0.0);
  v->play();
  // Until step 120 and a few frames drawn: on a loaded machine the policy can outrun the scene.
  for (int i = 0; i < 2000 && (v->shown().cursor < 120 || v->scene()->framesDrawn() <= 3); ++i) QTest::qWait(10);
  v->pause();
  v->seek(120);
  QTest::qWait(300);
  ASSERT_EQ(v->shown().cursor, 120);
  const QImage at120 = v->scene()->lastFrame();
  v->stepBack();
  QTest::qWait(300);
  const QImage at119 = v->scene()->lastFrame();
  EXPECT_NE(at119, at120) << "stepping back redraws the scene";
  EXPECT_GT(v->scene()->framesDrawn(), 3);
  const QString shots = DSTUDIO_SCREENSHOT_DIR;
  QDir().mkpath(shots);
  w.grab().save(QDir(shots).filePath("viewer.png"));

  // Recording: every frame drawn, with its overlay, as numbered PNGs and a note on the rate.
  const QString frames = QDir(shots).filePath("recording");
  QDir(frames).removeRecursively();
  ASSERT_TRUE(v->startRecording(frames));
  v->setSpeed(1.0);
  v->play();
  QTest::qWait(1000);
  v->pause();
  v->stopRecording();
  v->waitForRecording();
  EXPECT_GT(v->recordedFrames(), 5);
  const QStringList pngs = QDir(frames).entryList({"frame-*.png"}, QDir::Files, QDir::Name);
  EXPECT_EQ(pngs.size(), v->recordedFrames()) << "every frame handed over is on disk";
  ASSERT_FALSE(pngs.isEmpty());
  EXPECT_EQ(pngs.front(), "frame-000000.png");
  const QImage first(QDir(frames).filePath(pngs.front()));
  EXPECT_EQ(first.size(), v->scene()->lastFrame().size());
  QFile notes(QDir(frames).filePath("recording.txt"));
  ASSERT_TRUE(notes.open(QIODevice::ReadOnly));
  EXPECT_TRUE(notes.readAll().contains("ffmpeg -framerate"));
}

}  // namespace
}  // namespace dstudio::studio

#pragma once
// The one QApplication of a GUI test binary: on Qt's offscreen platform unless QT_QPA_PLATFORM
// says otherwise, with settings and caches in Qt's test locations, a file of its own a process.

#include <QApplication>
#include <QElapsedTimer>
#include <QStandardPaths>
#include <QTest>
#include <functional>

namespace dstudio::test {

inline void ensure_application() {
  static int argc = 1;
  static char name[] = "gui_tests";
  static char* argv[] = {name, nullptr};
  if (QApplication::instance()) return;
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QStandardPaths::setTestModeEnabled(true);  // settings and caches in a test location
  // One settings file a process: ctest runs test binaries side by side, and one test's
  // QSettings().clear() must not reach into another's (presentation mode, recent files).
  QApplication::setApplicationName(
      QStringLiteral("decision-studio-tests-%1").arg(QCoreApplication::applicationPid()));
  new QApplication(argc, argv);
}

/// Runs the event loop until `done` holds or `ms` pass (Qt's QTRY_ macros do not report to
/// GoogleTest).
inline bool wait_until(const std::function<bool()>& done, int ms) {
  QElapsedTimer clock;
  clock.start();
  while (!done()) {
    if (clock.elapsed() > ms) return false;
    QTest::qWait(10);
  }
  return true;
}

/// Delivers every event posted so far (queued signals, layout requests, queued replots) without
/// waiting for time to pass: what a test does before it looks at what those events change.
inline void deliver_posted_events() {
  for (int round = 0; round < 3; ++round) {
    QCoreApplication::sendPostedEvents();
    QCoreApplication::processEvents(QEventLoop::AllEvents);
  }
}

}  // namespace dstudio::test

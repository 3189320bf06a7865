// decision-studio: the Qt GUI.

#include <QApplication>
#include <QCommandLineParser>
#include <QTableView>
#include <QTimer>
#include <cstdio>

#include "dstudio/common/system_info.h"
#include "dstudio/viz/dataset_view.h"
#include "main_window.h"
#include "screenshot_tour.h"

int main(int argc, char** argv) {
  dstudio::keep_freed_memory();
  QApplication app(argc, argv);
  QApplication::setApplicationName("decision-studio");
  QApplication::setApplicationDisplayName("Decision Studio");
  QApplication::setApplicationVersion(DSTUDIO_VERSION);

  QCommandLineParser parser;
  parser.setApplicationDescription(
      "Decision Studio: inspect offline-RL datasets and sequence models.");
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument(
      "dataset", "A D4RL .hdf5 file or Minari dataset to open (default: the embedded dataset).");
  QCommandLineOption screenshot(
      "screenshot", "Open the dataset, save a PNG of the window to <file> and exit.", "file");
  parser.addOption(screenshot);
  QCommandLineOption screenshot_all(
      "screenshot-all", "Open the default dataset and checkpoint, fill every view, save one PNG per view into <dir> and exit.",
      "dir");
  parser.addOption(screenshot_all);
  parser.process(app);

  dstudio::studio::MainWindow window;
  const QString shot = parser.value(screenshot);
  if (!shot.isEmpty()) {
    // Headless use (tests, documentation): show the window with real content, save it, exit.
    QObject::connect(&window, &dstudio::studio::MainWindow::datasetOpened, [&] {
      window.datasetView()->episodeTable()->selectRow(0);
      QTimer::singleShot(300, [&] {
        const bool saved = window.grab().save(shot);
        std::fprintf(saved ? stdout : stderr, saved ? "saved %s\n" : "could not save %s\n",
                     qPrintable(shot));
        QApplication::exit(saved ? 0 : 1);
      });
    });
    QObject::connect(&window, &dstudio::studio::MainWindow::loadFailed, [](const QString& message) {
      std::fprintf(stderr, "decision-studio: error: %s\n", qPrintable(message));
      QApplication::exit(1);
    });
  }
  window.show();
  if (parser.isSet(screenshot_all)) {
    auto* tour = new dstudio::studio::ScreenshotTour(window, parser.value(screenshot_all));
    QObject::connect(tour, &dstudio::studio::ScreenshotTour::finished, [](bool ok, const QString& message) {
      std::fprintf(ok ? stdout : stderr, ok ? "%s\n" : "decision-studio: error: %s\n", qPrintable(message));
      QApplication::exit(ok ? 0 : 1);
    });
    tour->start();
    return QApplication::exec();
  }
  const QStringList args = parser.positionalArguments();
  if (args.isEmpty())
    window.openDefaultDataset();
  else
    window.openDataset(args.first());
  return QApplication::exec();
}

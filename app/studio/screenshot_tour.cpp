// The screenshot tour. See screenshot_tour.h.

#include "screenshot_tour.h"

#include <QDir>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>

#include "dstudio/viz/dataset_view.h"
#include "dstudio/viz/return_analysis_view.h"
#include "main_window.h"

namespace dstudio::studio {

ScreenshotTour::ScreenshotTour(MainWindow& window, QString dir) : window_(window), dir_(std::move(dir)) {
  // Each view's content arrives from a worker; the next step starts when the previous reports.
  connect(&window_, &MainWindow::datasetOpened, this, [this] {
    window_.datasetView()->episodeTable()->selectRow(0);
    save(0, "dataset.png");
    window_.openDefaultCheckpoint();
  });
  connect(&window_, &MainWindow::checkpointShown, this, [this] {
    save(1, "attention.png");
    auto config = models::RolloutConfig{};
    config.targets = {3600.0};
    config.episodes = 3;
    config.entropy = true;
    window_.runRollout(config);
  });
  connect(&window_, &MainWindow::rolloutShown, this, [this] {
    save(2, "entropy-reward.png");
    window_.returnsView()->setEpisodes(3);
    window_.runAblation();
  });
  connect(&window_, &MainWindow::returnsShown, this, [this](bool sweep) {
    if (!sweep) {
      window_.runSweep();
      return;
    }
    save(3, "zeroing-and-sweep.png");
    if (!done_) {
      done_ = true;
      emit finished(true, QString("saved %1 views to %2").arg(written_.size()).arg(dir_));
    }
  });
  connect(&window_, &MainWindow::loadFailed, this, &ScreenshotTour::fail);
  connect(&window_, &MainWindow::checkpointFailed, this, &ScreenshotTour::fail);
  connect(&window_, &MainWindow::rolloutStopped, this, &ScreenshotTour::fail);
}

void ScreenshotTour::start() {
  QDir().mkpath(dir_);
  window_.openDefaultDataset();
}

void ScreenshotTour::save(int tab, const QString& name) {
  window_.tabs()->setCurrentIndex(tab);
  const QString path = QDir(dir_).filePath(name);
  if (window_.grab().save(path)) written_ << path;
  else fail("could not save " + path);
}

void ScreenshotTour::fail(const QString& why) {
  if (done_) return;
  done_ = true;
  emit finished(false, why);
}

}  // namespace dstudio::studio

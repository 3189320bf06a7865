#pragma once
/// \file
/// `decision-studio --screenshot-all DIR`: opens the default dataset and checkpoint, fills every
/// view with real content (a rollout, the ablation, the sweep, a t-SNE of tokens, activation
/// patching in the Analyses tab, a short training run, the viewer mid-episode, the workspace, two
/// runs of the Markov lab, an AntMaze episode, an episode of the Adroit pen (DAPG's expert) and
/// one of the kitchen (random actions) replayed in the viewer, and the Sweep tab when a sweep was
/// opened with it), saves one PNG per
/// view, exports every view's figure with its recipe into DIR/figures as File ▸ Export All Views
/// does, records a short clip of the Viewer tab with its recipe into DIR/clips (where there is
/// OpenGL for its scene), and reports when done. For tests and the user guide.

#include <QObject>
#include <QString>
#include <QStringList>
#include <functional>

namespace dstudio::behaviour {
struct GeneratedDataset;
}

namespace dstudio::studio {

class MainWindow;

class ScreenshotTour : public QObject {
  Q_OBJECT
 public:
  ScreenshotTour(MainWindow& window, QString dir);
  /// The AntMaze dataset whose first episode the maze view replays (at step 300). Without one,
  /// the tour makes an episode with the shipped goal-reacher (behaviour/antmaze_data.h), and
  /// leaves the maze view out, saying why, when none ships.
  void setMazeDataset(const QString& path);
  /// Starts the tour; `finished` follows.
  void start();
  [[nodiscard]] const QStringList& written() const { return written_; }
  /// The files of the figures exported (DIR/figures), their recipes included.
  [[nodiscard]] const QStringList& figures() const { return figures_; }
  /// The Viewer tab's recording (DIR/clips/viewer.mp4, its log and recipe beside it); empty
  /// where the scene has no OpenGL, which recording needs.
  [[nodiscard]] const QString& clip() const { return clip_; }

 signals:
  void finished(bool ok, const QString& message);

 private:
  void save(int tab, const QString& name);
  void showTsne();
  void showAnalyses();
  void showTraining();
  void showViewer();
  void showMarkovLab();
  void exportFigures();
  void recordClip();
  void showPresentation();
  void showLessons();
  void showMaze();
  void replayMaze(const QString& path);
  // Replays the first episode of the dataset at `path` in the Viewer tab, saves it at `step` as
  // `name`, then goes on to `next`.
  void replay(const QString& path, int step, const QString& name, void (ScreenshotTour::*next)());
  // Makes a dataset with `make` on a worker and writes it at `path`, then replays it as `replay`
  // does.
  void makeAndReplay(const QString& what, const QString& path,
                     std::function<behaviour::GeneratedDataset()> make, int step,
                     const QString& name, void (ScreenshotTour::*next)());
  void showHand();
  void showKitchen();
  void finish();
  void fail(const QString& why);

  MainWindow& window_;
  QString dir_;
  QStringList written_;
  QStringList figures_;
  QString clip_;
  QString maze_dataset_;
  class Job* maze_job_ = nullptr;
  QStringList skipped_;
  bool done_ = false;
};

}  // namespace dstudio::studio

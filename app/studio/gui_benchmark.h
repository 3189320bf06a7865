#pragma once
/// \file
/// `decision-studio --bench-gui SECONDS`: how responsive the window stays under load. With the
/// default dataset and checkpoint open and the viewer playing on screen (at real time, or, for a
/// task that steps fewer than 60 times a second, at the locomotion tasks' 125 steps a second), it
/// measures for SECONDS each: the viewer alone, then with a training run and a rollout
/// with entropy running too, then the same with the Training tab on screen instead. Each phase
/// reports how late a 5 ms timer on the GUI thread fires (a stall is the delay beyond its interval)
/// and how many frames the viewer draws per second, with the configuration (Qt platform, OpenGL,
/// cores, BLAS), and the program exits. Given files (a dataset and a checkpoint of another task,
/// e.g. an AntMaze dataset and a checkpoint trained on it), it opens those instead of the
/// defaults and measures the same phases on them. Given a dataset alone (an Adroit or kitchen
/// one), the viewer replays its first episode from the recorded states, again and again, and the
/// load is the training run alone (without a checkpoint there is nothing to roll out).

#include <QObject>
#include <QString>
#include <QStringList>
#include <vector>

namespace dstudio::studio {

class MainWindow;

class GuiBenchmark : public QObject {
  Q_OBJECT
 public:
  GuiBenchmark(MainWindow& window, double seconds, QStringList files = {});
  void start();

 signals:
  void finished(bool ok, const QString& report);

 private:
  struct Phase {
    QString name;
    std::vector<double> gaps_ms, frame_ms, map_ms, timeline_ms, scales;
    long frames = 0;
    double seconds = 0.0;
    bool training_live = false, rollout_live = false;
  };
  void beginViewer();
  void startLoad();
  void hideViewer();
  void measure(const QString& name, void (GuiBenchmark::*next)());
  void report();
  void fail(const QString& why);
  [[nodiscard]] QString describe(const Phase& phase) const;

  MainWindow& window_;
  double seconds_;
  double speed_ = 1.0;  // the viewer's speed while measured
  QStringList files_;
  bool done_ = false;
  bool replay_ = false;  // a dataset alone: its first episode replayed, no checkpoint
  bool loaded_dataset_ = false, loaded_checkpoint_ = false, began_ = false;
  std::vector<Phase> phases_;
  long restarts_ = 0;
  double last_map_ = 0.0, last_timeline_ = 0.0;
  double start_ms_ = 0.0;
};

}  // namespace dstudio::studio

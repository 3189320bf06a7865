#pragma once
/// \file
/// `decision-studio --bench-tsne TOKENS`: how responsive the window stays while its t-SNE view
/// lays out TOKENS tokens of the shipped DHi checkpoint (every step of the dataset's longest
/// episodes, up to TOKENS). With the t-SNE tab on screen it presses Run and, until the final
/// layout has been drawn with every point, measures how long an event posted to the GUI thread
/// every 5 ms waits to be handled (what a click would wait), apart for gathering, iterating and
/// the end.
/// It prints those with the run's seconds, method, KL and the configuration (Qt platform, cores,
/// BLAS), optionally saves a picture of the window, and the program exits.

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <atomic>
#include <thread>
#include <vector>

namespace dstudio::studio {

class MainWindow;

class TsneBenchmark : public QObject {
  Q_OBJECT
 public:
  /// `screenshot`: a PNG of the window at the end (empty: none).
  TsneBenchmark(MainWindow& window, int tokens, QString screenshot = {});
  ~TsneBenchmark() override;
  TsneBenchmark(const TsneBenchmark&) = delete;
  TsneBenchmark& operator=(const TsneBenchmark&) = delete;
  void start();

 signals:
  void finished(bool ok, const QString& report);

 private:
  void run();
  void tick(qint64 posted_ns);
  void report();
  void fail(const QString& why);

  MainWindow& window_;
  int tokens_;
  QString screenshot_;
  bool started_ = false, done_ = false;
  QElapsedTimer clock_;
  std::thread probe_;
  std::atomic<bool> stop_probe_{false};
  // The waits (ms) while gathering, while iterating, and after the run (the final draw with
  // every point).
  std::vector<double> gathering_, iterating_, ending_;
  qint64 finished_ns_ = -1;
  double first_layout_s_ = -1.0;
};

}  // namespace dstudio::studio

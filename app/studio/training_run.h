#pragma once
/// \file
/// One training run of the Training tab: live (a models::Trainer on its own thread) or read from
/// a run folder. The training thread only appends to the run's inbox under a short lock; the
/// panel calls drain() on the GUI thread, which moves what arrived into the run's curves and
/// follows the trainer's state. On a final state the thread is joined; a cancelled run keeps what
/// it learnt in a checkpoint, as the command line does on Ctrl-C.

#include <QString>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "dstudio/analysis/curves.h"
#include "dstudio/data/dataset.h"
#include "dstudio/models/run_folder.h"
#include "dstudio/models/training.h"

namespace dstudio::studio {

class TrainingRun {
 public:
  enum class State { Starting, Running, Paused, Finished, Cancelled, Failed, Incomplete };

  /// A live run of `trainer` (which trains on `dataset`) into `dir`, grouped by `label`.
  TrainingRun(QString dir, QString label, std::shared_ptr<const data::Dataset> dataset,
              std::unique_ptr<models::Trainer> trainer);
  /// A run read from disk: Finished with a checkpoint, Incomplete without.
  explicit TrainingRun(models::RunFolder folder);
  /// Cancels a live run and joins its thread.
  ~TrainingRun();
  TrainingRun(const TrainingRun&) = delete;
  TrainingRun& operator=(const TrainingRun&) = delete;

  /// Starts the trainer; with `eval_every` > 0, every evaluation rolls `eval_episodes` episodes
  /// out and its numbers become curves too.
  void start(std::int64_t eval_every, int eval_episodes);
  /// Moves what the training thread reported into the curves; true when anything changed
  /// (new points or a new state). Joins the thread once the state is final.
  bool drain();
  void pause();
  void resume();
  void cancel();
  /// Blocks until a cancelled live run's thread has stopped (the panel's close).
  void wait();

  [[nodiscard]] State state() const { return state_; }
  /// "Running", "Finished", ... as the run list shows it.
  [[nodiscard]] static QString stateName(State state);
  [[nodiscard]] static bool isFinal(State state);
  /// A live run whose thread has not been joined yet.
  [[nodiscard]] bool active() const { return active_; }
  [[nodiscard]] bool pauseRequested() const { return pause_requested_; }
  [[nodiscard]] bool cancelRequested() const { return cancel_requested_; }
  /// The error of a failed run, where a cancelled run's checkpoint is, or where a run was read.
  [[nodiscard]] const QString& note() const { return note_; }
  [[nodiscard]] const QString& dir() const { return dir_; }
  [[nodiscard]] const QString& name() const { return name_; }
  [[nodiscard]] const QString& label() const { return label_; }
  [[nodiscard]] const QString& seed() const { return seed_; }
  [[nodiscard]] std::int64_t totalSteps() const { return total_; }
  [[nodiscard]] const analysis::RunMetrics& metrics() const { return metrics_; }
  /// The last value of a metric, if the run logged it.
  [[nodiscard]] std::optional<double> last(const char* key) const;
  /// Its configuration as text (models::run_config_values); empty for a folder that does not say.
  [[nodiscard]] const std::vector<std::pair<std::string, std::string>>& config() const {
    return config_;
  }
  /// One field of config(), or an empty string.
  [[nodiscard]] QString configValue(const QString& key) const;
  /// The last progress report of a live run.
  [[nodiscard]] const models::TrainingProgress& last() const { return last_; }
  /// The latest step with a loss (or the last report's step).
  [[nodiscard]] std::int64_t step() const;
  /// Replaces a finished run's curves (the folder read again).
  void setMetrics(analysis::RunMetrics metrics) { metrics_ = std::move(metrics); }

 private:
  QString dir_, name_, label_, seed_;
  std::int64_t total_ = 0;
  std::vector<std::pair<std::string, std::string>> config_;
  std::shared_ptr<const data::Dataset> dataset_;  // the trainer reads it until it is joined

  // Written on the training thread, drained on the GUI thread.
  std::mutex inbox_mutex_;
  std::vector<models::TrainingProgress> inbox_;
  std::vector<std::pair<std::int64_t, models::EvaluationResult>> inbox_evaluations_;

  analysis::RunMetrics metrics_;
  models::TrainingProgress last_;
  State state_ = State::Starting;
  QString note_;
  bool active_ = false, pause_requested_ = false, cancel_requested_ = false;

  std::unique_ptr<models::Trainer> trainer_;  // declared last: joined before the rest goes
};

}  // namespace dstudio::studio

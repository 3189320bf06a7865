#pragma once
/// \file
/// Training any variant on a dataset, in the foreground (command line) or on a background thread
/// (GUI), with progress, pause, resume and cancel that take effect within a step. Free of
/// LibTorch: the model appears only as a forward-declared type in the evaluation hook.
///
/// The reference recipe (docs/models.md): AdamW, linear warmup then optional cosine decay,
/// gradient-norm clipping, dropout, and the mean squared error of the predicted action at every
/// real position of the window (the s_t token's output predicts a_t). The same seed and thread
/// count give the same weights, and resuming from a checkpoint continues the run exactly.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "dstudio/data/dataset.h"
#include "dstudio/models/training_config.h"
#include "dstudio/models/variant_config.h"

namespace dstudio::models {

class DecisionModelImpl;

/// Numbers an evaluation returns (e.g. {"return_mean": ..., "normalized_score": ...}).
using EvaluationResult = std::map<std::string, double>;
/// Called on the training thread every eval_every steps with the model in eval mode.
using EvaluationHook = std::function<EvaluationResult(DecisionModelImpl& model, std::int64_t step)>;

/// What a new run does with a folder that holds a run already (a checkpoint or metrics).
enum class ExistingRun {
  Refuse,     ///< throw Error naming the folder: a run is never replaced by accident
  Overwrite,  ///< remove its checkpoints and metrics first
};

/// A training run writing into a folder: checkpoints (`checkpoint.pt`, and `checkpoint-<step>.pt`
/// when asked), `metrics.csv` and `metrics.jsonl`. The trainer claims the folder for as long as
/// it lives (common/folder_lock.h): a second process that starts a run there is refused with
/// FolderBusy naming this one.
class Trainer {
 public:
  /// A new run of `variant` on `dataset` (which must outlive the trainer). The variant's
  /// state_dim, act_dim are taken from the dataset. A folder holding another run is refused or
  /// cleared as `existing` says.
  Trainer(const data::Dataset& dataset, VariantConfig variant, TrainingConfig training,
          std::filesystem::path out_dir, ExistingRun existing = ExistingRun::Refuse);
  /// Continues the run saved in `checkpoint` on the same dataset (its fingerprint must match).
  /// `steps` > 0 moves the run's end (not below the checkpoint's step; a cosine decay then follows
  /// the new length); 0 keeps the saved one. The metrics rows past the checkpoint's step (written
  /// by a run stopped before its next checkpoint) are dropped, so each step has one row. Into
  /// `out_dir` other than the checkpoint's folder only when that folder holds no other run.
  static std::unique_ptr<Trainer> resume(const data::Dataset& dataset,
                                         const std::filesystem::path& checkpoint,
                                         std::filesystem::path out_dir = {},
                                         std::int64_t steps = 0);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  void on_progress(std::function<void(const TrainingProgress&)> callback);
  void on_evaluation(EvaluationHook hook);

  /// Runs to the end (or to a cancel) on the calling thread.
  void run();
  /// Runs on a background thread; returns at once.
  void start();
  void pause();
  void resume();
  void cancel();
  /// Waits for the background thread.
  void wait();

  [[nodiscard]] TrainingState state() const;
  /// Why the run failed (state Failed), e.g. a NaN loss.
  [[nodiscard]] std::string error() const;
  [[nodiscard]] std::int64_t step() const;
  /// The newest checkpoint written ("" before the first).
  [[nodiscard]] std::filesystem::path last_checkpoint() const;
  /// Writes a checkpoint of the current state now (between steps).
  std::filesystem::path save_checkpoint();
  /// Gives up the claim on the folder once the run has ended and its last checkpoint is written,
  /// so that another process may continue it while this trainer is still kept (the window's).
  void release_folder();

  [[nodiscard]] const VariantConfig& variant() const;
  [[nodiscard]] const TrainingConfig& training() const;

 private:
  Trainer();
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace dstudio::models

#pragma once
/// \file
/// One optimisation step of the reference recipe: the mean squared error of the predicted
/// actions over real (unpadded) steps, backward, gradient-norm clipping, the optimiser's step.
/// Used by the trainer and by `dstudio bench train`, so the benchmark times what training runs.
///
/// With several workers the batch is split into contiguous parts whose forward and backward
/// passes run on their own threads (one LibTorch and BLAS thread each: the GEMMs of a training
/// step do not get faster with more threads, two independent halves do). Each part's loss is
/// normalised by the whole batch's count of real steps, so the summed gradients are the
/// full batch's; they are summed in part order, and each worker draws dropout masks from its own
/// RandomStream, so a run does not depend on how threads are scheduled.

#include <torch/torch.h>

#include <vector>

#include "dstudio/models/decision_model.h"

namespace dstudio::models {

class TrainStep {
 public:
  /// `workers` >= 1; worker k's dropout stream starts at key mix(seed, k), counter 0.
  TrainStep(DecisionModel model, torch::optim::Optimizer& optimiser, double grad_clip, int workers,
            std::uint64_t seed);

  /// Runs one step and returns the loss. A NaN or infinite loss leaves the weights unchanged.
  double run(const ModelInputs& batch);

  /// The workers' dropout streams (saved in checkpoints and restored on resume).
  [[nodiscard]] std::vector<RandomStream>& streams() { return streams_; }
  [[nodiscard]] int workers() const { return static_cast<int>(streams_.size()); }

 private:
  DecisionModel model_;
  torch::optim::Optimizer& optimiser_;
  double grad_clip_;
  std::vector<RandomStream> streams_;
};

}  // namespace dstudio::models

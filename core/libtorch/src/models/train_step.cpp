// One training step, optionally split over worker threads. See train_step.h.

#include "dstudio/models/train_step.h"

#include <cmath>

#include "dstudio/common/error.h"
#include "parts.h"

namespace dstudio::models {

TrainStep::TrainStep(DecisionModel model, torch::optim::Optimizer& optimiser, double grad_clip,
                     int workers, std::uint64_t seed)
    : model_(std::move(model)), optimiser_(optimiser), grad_clip_(grad_clip) {
  if (workers < 1) throw UsageError("a training step needs at least one worker");
  for (int k = 0; k < workers; ++k) {
    // Distinct, well-mixed keys per worker (splitmix64 of seed and index).
    std::uint64_t z =
        seed * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(k + 1) * 0xD1B54A32D192ED03ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    streams_.push_back({z ^ (z >> 31), 0});
  }
}

double TrainStep::run(const ModelInputs& batch) {
  const int64_t B = batch.states.size(0);
  const int parts = static_cast<int>(std::min<int64_t>(B, static_cast<int64_t>(streams_.size())));
  const auto params = model_->parameters();
  // The whole batch's count of real action values: every part divides by it.
  const double denominator =
      batch.mask.sum().item<double>() * static_cast<double>(batch.actions.size(2));
  std::vector<std::vector<torch::Tensor>> grads(static_cast<std::size_t>(parts));
  std::vector<double> losses(static_cast<std::size_t>(parts), 0.0);
  run_parts(parts, [&](int k) {
    const int64_t first = B * k / parts, rows = B * (k + 1) / parts - first;
    const ModelInputs in = rows_of(batch, first, rows);
    DropoutStreamScope scope(streams_[static_cast<std::size_t>(k)]);
    auto predicted = model_->forward(in);
    auto loss = ((predicted - in.actions).pow(2) * in.mask.unsqueeze(-1)).sum() /
                std::max(denominator, 1.0);
    grads[static_cast<std::size_t>(k)] =
        torch::autograd::grad({loss}, params, {}, false, false, /*allow_unused=*/true);
    losses[static_cast<std::size_t>(k)] = loss.item<double>();
  });

  double loss = 0.0;
  for (double l : losses) loss += l;
  if (!std::isfinite(loss)) return loss;
  for (std::size_t i = 0; i < params.size(); ++i) {
    torch::Tensor sum;
    for (int k = 0; k < parts; ++k) {
      const auto& g = grads[static_cast<std::size_t>(k)][i];
      if (g.defined()) sum = sum.defined() ? sum + g : g;
    }
    auto p = params[i];
    p.mutable_grad() = sum.defined() ? sum : torch::zeros_like(p);
  }
  torch::nn::utils::clip_grad_norm_(params, grad_clip_);
  optimiser_.step();
  return loss;
}

}  // namespace dstudio::models

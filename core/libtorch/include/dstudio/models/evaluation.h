#pragma once
/// \file
/// Rolling a policy out in its environment: many episodes in lockstep, one batched forward pass
/// per step, for a list of target returns. Returns per-episode traces and per-target summaries
/// with D4RL's normalised score. What every analysis that acts in the environment builds on
/// (modality zeroing, target-return sweeps, entropy versus reward). Free of LibTorch.
///
/// The policy follows the Decision Transformer's evaluation: the window holds the last K steps
/// (left-padded with mask 0 at the start of an episode); states are normalised with the
/// checkpoint's mean and std; the return-to-go starts at the target divided by the rtg scale and
/// drops by each reward (plus the training's reward shift, also scaled); the action slot of the
/// current step is 0. Episode returns and scores are the task's, without the shift.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "dstudio/common/progress.h"
#include "dstudio/data/dataset.h"
#include "dstudio/models/checkpoint.h"
#include "dstudio/models/rollout.h"
#include "dstudio/models/training.h"
#include "dstudio/models/variant_config.h"

namespace dstudio::models {

class DecisionModelImpl;
class InterventionPlan;

/// Rolls out the checkpoint's model. Throws CheckpointError, env::EnvError (unknown environment,
/// dims that do not fit) or Cancelled.
RolloutResult rollout(const std::filesystem::path& checkpoint, const RolloutConfig& config,
                      const Progress& progress = {});

/// The same with a model in memory (e.g. during training) and the description of its data. With
/// `plan` (intervene.h), its interventions act at every step: the episodes are played by the
/// intervened policy. A plan whose values come from another batch (resample, patch) is refused.
RolloutResult rollout(DecisionModelImpl& model, const CheckpointInfo& info,
                      const RolloutConfig& config, const Progress& progress = {},
                      const InterventionPlan* plan = nullptr);

/// The same with a checkpoint read already (open_checkpoint): the window's rollouts share the
/// model its views and its player use, without reading the file again.
RolloutResult rollout(const LoadedCheckpoint& checkpoint, const RolloutConfig& config,
                      const Progress& progress = {});

/// Runs the ablation on the checkpoint's model (loaded once). Progress runs over all rollouts;
/// throws what rollout() throws.
AblationResult zeroing_ablation(const std::filesystem::path& checkpoint,
                                const AblationConfig& config, const Progress& progress = {});
/// The same with a checkpoint read already.
AblationResult zeroing_ablation(const LoadedCheckpoint& checkpoint, const AblationConfig& config,
                                const Progress& progress = {});

/// The trainer's periodic evaluation: `episodes` rollouts at the task's first default target, in
/// the units of the training's reward shift (normalised with the dataset's statistics,
/// returns-to-go scaled and shifted as `training` says) and the first layer's attention entropy on
/// `windows` fixed windows of the dataset. Reports eval_score, eval_score_std, eval_return and
/// entropy_layer1 (mean over heads and real queries), which the trainer writes to metrics.jsonl:
/// entropy over the course of training. The dataset must outlive the hook.
EvaluationHook evaluation_hook(const data::Dataset& dataset, const TrainingConfig& training,
                               int episodes = 5, int windows = 16);

}  // namespace dstudio::models

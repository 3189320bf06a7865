#pragma once
/// \file
/// Interventions (interventions.h) applied inside a model's forward pass. A model's forward pass
/// can be read and changed at four sites of every block (ForwardHooks, decision_model.h): the
/// heads' mixing outputs before the output projection, what the mixer adds to the stream, what the
/// MLP adds, and the stream after the block. Recording every site gives Activations; the mean and
/// resample ablations and patching read their values from Activations recorded on dataset windows
/// or on a second input, and an InterventionPlan turns checked specs and those sources into the
/// hooks of one batch. Needs LibTorch.

#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "dstudio/common/progress.h"
#include "dstudio/models/checkpoint_info.h"
#include "dstudio/models/decision_model.h"
#include "dstudio/models/interventions.h"

namespace dstudio::models {

/// What a forward pass computed at each site, per layer (index 0 is layer 1). `heads` is
/// (B, heads, T, hd), undefined for a layer whose mixer has none; the others are (B, T, H).
struct Activations {
  std::vector<torch::Tensor> heads, mixer, mlp, resid;
  /// The value at `site` of layer `layer` (1-based).
  [[nodiscard]] const torch::Tensor& at(int layer, HookSite site) const;
  /// Every layer's values at `site`.
  [[nodiscard]] std::vector<torch::Tensor>& of(HookSite site);
  [[nodiscard]] const std::vector<torch::Tensor>& of(HookSite site) const;
};

/// Runs the whole forward pass on `inputs` and records every site. Returns the actions (B, K, A).
torch::Tensor record_activations(DecisionModelImpl& model, const ModelInputs& inputs,
                                 Activations& out);
/// The mean over the batch of every site, kept as a batch of one (what mean ablation reads: each
/// token position's mean over the windows).
Activations mean_over_windows(const Activations& activations);

/// Where the values of the specs that replace come from.
struct InterventionSources {
  Activations mean;      ///< for Replacement::Mean: a batch of one (mean_over_windows)
  Activations resample;  ///< for Replacement::Resample: one window for each input window
  Activations patch;     ///< for Replacement::Patch: the second input, one for each input window
  /// Steering directions (H,) by the name a steer spec gives.
  std::map<std::string, torch::Tensor> directions;
};

/// Checked specs and their sources, ready to run a model with.
class InterventionPlan {
 public:
  /// Checks each spec against `config` (check_intervention) and that its source is there: a mean
  /// or resample ablation needs those activations, a patch the second input's, a steer spec its
  /// direction (of the model's width). Throws UsageError naming the spec.
  InterventionPlan(std::vector<Intervention> interventions, const VariantConfig& config,
                   InterventionSources sources);

  /// The inputs with the modality specs' zeroing applied.
  [[nodiscard]] ModelInputs prepare(const ModelInputs& inputs) const;
  /// The hooks of a pass over `inputs` (prepared); valid while the plan lives.
  [[nodiscard]] ForwardHooks hooks() const;
  /// forward and act of `model` with every intervention applied.
  torch::Tensor forward(DecisionModelImpl& model, const ModelInputs& inputs,
                        Inspection* inspection = nullptr) const;
  torch::Tensor act(DecisionModelImpl& model, const ModelInputs& inputs) const;

  [[nodiscard]] const std::vector<Intervention>& interventions() const { return items_; }
  [[nodiscard]] bool empty() const { return items_.empty(); }

 private:
  torch::Tensor apply(int layer, HookSite site, const torch::Tensor& value, int64_t first) const;

  std::vector<Intervention> items_;
  VariantConfig config_;
  InterventionSources sources_;
  int context_ = 0;
};

/// The action lens: the final norm and the action head (tanh included) applied to the stream
/// after each block, at the tokens actions are read from: (B, K, layers, A). The last layer's lens
/// is the model's prediction. With a plan, the stream is the intervened one.
torch::Tensor action_lens(DecisionModelImpl& model, const ModelInputs& inputs,
                          const InterventionPlan* plan = nullptr);

/// One part of a block that patching, ablation and attribution address whole: a head, a mixer
/// without heads, or an MLP.
struct BlockComponent {
  int layer = 1;                    ///< from 1
  HookSite site = HookSite::Heads;  ///< Heads (one head), Mixer (the whole mixer) or Mlp
  int head = 0;                     ///< from 1, for Heads
  std::string label;                ///< "L1 H2", "L1 mixer", "L1 MLP"
  std::string column;               ///< the label without its layer: "H2", "mixer", "MLP"
  std::string spec;                 ///< "head:1.2", "mixer:1", "mlp:1" (with no replacement)
};
/// Every layer's heads (a mixer without heads whole, none for the "none" mixer) and MLP, in
/// order.
std::vector<BlockComponent> block_components(const VariantConfig& config);

/// Activation patching at each window's last action: `clean` run with one site's value taken
/// from `other` (the same number of windows), for every stream position after every block and
/// every block component.
struct PatchingSweep {
  torch::Tensor clean, other;  ///< the unpatched actions (B, A)
  torch::Tensor stream;        ///< (layers, T, B, A): resid:L.T patched
  torch::Tensor components;    ///< (components, B, A): block_components(...)[k] patched
};
/// With `reuse`, a patch after block L (or inside it) starts from the clean stream there and runs
/// only the blocks after it, and the patches of one layer run as one batch of at most `max_rows`
/// windows; without, every patch is a whole forward pass (InterventionPlan), which the reuse must
/// agree with. Polls `progress` between batches.
PatchingSweep patching_sweep(DecisionModelImpl& model, const ModelInputs& clean,
                             const ModelInputs& other, bool reuse = true,
                             const Progress& progress = {}, int64_t max_rows = 2048);

/// Each part's contribution to the pre-tanh action at each window's last step, the final norm's
/// scale frozen at the clean run: the embedded tokens, every head (after its share of the output
/// projection), each attention mixer's biases (what it adds with every head zeroed), a mixer
/// without heads whole, every MLP, and the final norm's and action head's biases. The parts sum to
/// the pre-tanh action.
struct Attribution {
  std::vector<std::string> parts;  ///< "embeddings", "L1 H1", "L1 mixer bias", "L1 MLP", ...
  torch::Tensor contributions;     ///< (parts, B, A)
  torch::Tensor pre_tanh;          ///< (B, A): the action head on the final norm, as computed
};
Attribution attribute_actions(DecisionModelImpl& model, const ModelInputs& inputs);

/// A steering direction saved as JSON ({"direction": [...], ...}) for the checkpoint `info`
/// describes; throws UsageError naming the file when it cannot be read, is not a list of the
/// model's width of finite numbers, or was made for another checkpoint (its "checkpoint_hash" is
/// not the hash of `info.path`; both files are named).
torch::Tensor read_direction(const std::string& path, const CheckpointInfo& info);

}  // namespace dstudio::models

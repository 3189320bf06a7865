#pragma once
/// \file
/// Handing a studio model to code that uses PyTorch: files in `torch.save`'s format that Python
/// loads with `torch.load` and a module loads with `load_state_dict(strict=True)`. Free of
/// LibTorch; implemented in the models library.
///
/// - corl-dt: a studio `dt` as the state_dict of CORL's single-file DecisionTransformer
///   (algorithms/offline/dt.py), in its names, shapes, dtypes and order, with the constructor's
///   arguments and the state statistics in JSON beside it. import_corl_dt (import.h) reads it back.
/// - state-dict: any variant as a state_dict in the studio's own parameter names, its checkpoint
///   description (configuration, statistics, rtg scale) in JSON beside it. import_state_dict reads
///   it back.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "dstudio/models/checkpoint_info.h"
#include "dstudio/models/variant_config.h"

namespace dstudio::models {

/// One tensor of a state_dict: its name, shape and dtype ("float32", "bool").
struct TensorLayout {
  std::string name;
  std::vector<std::int64_t> shape;
  std::string dtype;
  bool operator==(const TensorLayout&) const = default;
};

/// Why CORL's DecisionTransformer cannot express `config`, in a sentence naming what differs
/// (the variant, its mixer, its activation, its MLP width, its action head); empty when it can.
std::string corl_dt_refusal(const VariantConfig& config);

/// The state_dict CORL's DecisionTransformer has for `config`, in the order PyTorch lists it:
/// emb_norm, out_norm, timestep_emb (max_ep_len rows: CORL's episode_len + seq_len), state_emb,
/// action_emb, return_emb, then per block causal_mask (bool, 3K x 3K), norm1, norm2,
/// attention.in_proj_*, attention.out_proj.*, mlp.0.*, mlp.2.*, and action_head.0.*.
std::vector<TensorLayout> corl_dt_layout(const VariantConfig& config);

/// Writes the model of `checkpoint` as CORL's state_dict to `out` (.pt) and CORL's constructor
/// arguments, the state mean and std and the reward scale to `out` with ".json". Throws
/// CheckpointError naming the checkpoint when it is a variant CORL cannot express
/// (corl_dt_refusal) or cannot be read. Both files are written atomically, or neither.
void export_corl_dt(const std::filesystem::path& checkpoint, const std::filesystem::path& out);

/// Writes the model of `checkpoint` (any variant) as a state_dict in the studio's parameter names
/// to `out` (.pt) and its checkpoint description to `out` with ".json". Throws CheckpointError.
void export_state_dict(const std::filesystem::path& checkpoint, const std::filesystem::path& out);

/// The JSON beside an exported state_dict: `file` with its extension replaced by ".json".
std::filesystem::path export_sidecar(const std::filesystem::path& file);

/// Reads a state_dict written by export_state_dict (or by Python from the same module) with the
/// description beside it, and writes a studio checkpoint to `out`. Throws CheckpointError naming a
/// missing, extra or misshapen tensor. Returns the description written.
CheckpointInfo import_state_dict(const std::filesystem::path& file,
                                 const std::filesystem::path& out);

}  // namespace dstudio::models

#pragma once
/// \file
/// Interventions inside a model's forward pass, written as specs (the grammar of `dstudio predict
/// --intervene` and `--patch`, of the causal analyses and of the viewers):
///
///     head:L.H=zero|mean|resample    head H of layer L: its mixing output (weights x values,
///                                     before the output projection)
///     mixer:L=zero|mean|resample     what layer L's token mixer adds to the stream (a mixer
///                                     without heads, such as a convolution or pooling, whole)
///     mlp:L=zero|mean|resample       what layer L's MLP adds to the stream
///     context:C                      every token mixer sees only the query's own step and the
///                                     C - 1 steps before it
///     modality:R|s|a=zero            the returns-to-go, the past states or the actions zeroed at
///                                     the input (ModalityZeroing)
///     steer:L=ALPHA*NAME             ALPHA times the direction saved as NAME added to the stream
///                                     after block L at every state token
///
/// and patches from a second input (`--patch`): resid:L.T (the stream after block L at token T),
/// head:L.H, mixer:L, mlp:L. Any of them may end in @T (token T only) or @step:k (the tokens of
/// step k only). Layers, heads, tokens and steps are numbered from 1, as everywhere in the studio:
/// for DT the tokens R1 s1 a1 R2 ... are 1, 2, 3, 4, ... Parsing checks the grammar;
/// check_intervention checks a spec against a model. No LibTorch.

#include <string>
#include <string_view>
#include <vector>

#include "dstudio/models/variant_config.h"

namespace dstudio::models {

/// Where an intervention acts.
enum class InterventionSite {
  Head,      ///< one head's mixing output, before the output projection
  Mixer,     ///< a token mixer's addition to the stream
  Mlp,       ///< an MLP's addition to the stream
  Resid,     ///< the stream after a block (patching only)
  Context,   ///< how far back every mixer may look
  Modality,  ///< an input modality zeroed
  Steer,     ///< a direction added to the stream
};

/// What replaces the value at a site.
enum class Replacement {
  Zero,
  Mean,      ///< its mean over the dataset's windows at the same token position
  Resample,  ///< its value on another window drawn from the dataset
  Patch,     ///< its value on the second input (`--patch-from`)
};

/// Which tokens an intervention touches.
struct TokenLimit {
  enum class Kind { All, Token, Step };
  Kind kind = Kind::All;
  int index = 0;  ///< 1-based token or step
  bool operator==(const TokenLimit&) const = default;
};

/// One parsed spec.
struct Intervention {
  InterventionSite site = InterventionSite::Head;
  Replacement replacement = Replacement::Zero;
  int layer = 0;          ///< 1-based; Head, Mixer, Mlp, Resid, Steer
  int head = 0;           ///< 1-based; Head
  int token = 0;          ///< 1-based; Resid
  int context = 0;        ///< steps; Context
  char modality = 0;      ///< 'R', 's' or 'a'; Modality
  double alpha = 0.0;     ///< Steer
  std::string direction;  ///< Steer: the saved direction's name (a file)
  TokenLimit limit;
  bool operator==(const Intervention&) const = default;
};

/// An `--intervene` spec. Throws UsageError naming the spec and what its grammar expects.
Intervention parse_intervention(std::string_view spec);
/// A `--patch` spec (resid:L.T, head:L.H, mixer:L or mlp:L, with an optional limit): its
/// replacement is Patch. Throws UsageError as parse_intervention does.
Intervention parse_patch(std::string_view spec);
/// The spec as text, in the grammar above (parse_intervention or parse_patch of it gives it back).
std::string to_spec(const Intervention& intervention);

/// Heads of layer `layer` (1-based) that head:L.H addresses: 0 when its mixer has none (it is
/// addressed whole, by mixer:L) or when the layer has no mixer.
int layer_heads(const VariantConfig& config, int layer);
/// The token mixer of layer `layer` (1-based): the configuration's, or attention for a hybrid's
/// last block; "none" for a model without token mixers.
std::string layer_mixer(const VariantConfig& config, int layer);

/// Throws UsageError when `intervention` does not fit the model of `config`, naming what is valid
/// ("head:4.1: the model has 3 layers, 1 to 3").
void check_intervention(const Intervention& intervention, const VariantConfig& config);

/// The zeroing a modality:X=zero spec stands for.
ModalityZeroing modality_zeroing(char modality);

}  // namespace dstudio::models

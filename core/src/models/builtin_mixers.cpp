// The studio's own token mixers, as registry entries: each written as a plugin writes its
// MixerDefinition (plugins/diagonal-ssm), with the configuration fields it reads and its cost.
// Their modules are registered by name in the models library (core/libtorch/src/models/mixers/).
// docs/models.md states each one.

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "dstudio/models/variant_registry.h"

namespace dstudio::models {
namespace {

// The fields a mixer reads, as a uses_field predicate.
std::function<bool(const VariantConfig&, const std::string&)> reads(std::vector<std::string> keys) {
  return [keys = std::move(keys)](const VariantConfig&, const std::string& key) {
    for (const auto& k : keys)
      if (k == key) return true;
    return false;
  };
}

// Floating-point operations of one layer over `tokens` = B T tokens (multiply-adds count 2).
double attention_flops(const VariantConfig& c, double tokens) {
  const double H = c.hidden, T = c.tokens();
  return 2.0 * tokens * H * 4 * H +
         2.0 * 2 * tokens * T * H;  // q, k, v, out; scores and weighted sum
}

// One built-in definition: what a plugin fills in, less the options (the studio's own mixers read
// VariantConfig's fields).
MixerDefinition definition(std::string name, std::string description,
                           std::function<bool(const VariantConfig&, const std::string&)> uses,
                           std::function<double(const VariantConfig&, double)> flops,
                           std::string derivation, bool in_hier_grid) {
  MixerDefinition d;
  d.name = std::move(name);
  d.description = std::move(description);
  d.uses_field = std::move(uses);
  d.flops = std::move(flops);
  d.derivation = std::move(derivation);
  d.in_hier_grid = in_hier_grid;
  return d;
}

// Decision HiFormer's Table 1 crosses its mergers with these mixers; the others are variants' own.
constexpr bool kInHierGrid = true, kNotInHierGrid = false;

// A mixer whose heads interventions address, `count` of them.
MixerDefinition with_heads(MixerDefinition d, std::function<int(const VariantConfig&)> count) {
  d.heads = std::move(count);
  return d;
}

int configured_heads(const VariantConfig& c) {
  return c.heads;
}

// A multi-head attention mixer: the configured heads, attention's cost, and `fields` read.
MixerDefinition attention_kind(std::string name, std::string description,
                               std::vector<std::string> fields, std::string derivation,
                               bool in_hier_grid) {
  return with_heads(definition(std::move(name), std::move(description), reads(std::move(fields)),
                               attention_flops, std::move(derivation), in_hier_grid),
                    configured_heads);
}

}  // namespace

std::vector<MixerDefinition> builtin_mixers() {
  return {
      attention_kind("attention", "causal self-attention, GPT-2 style (DT)",
                     {"heads", "attention_dropout"},
                     "attention weights softmax(q k^T / sqrt(d)) under the causal and padding "
                     "masks",
                     kInHierGrid),
      attention_kind("gaussian-attention",
                     "attention logits minus |w d^2 + b|, d the token distance (GDT)",
                     {"heads", "attention_dropout", "gaussian_w", "gaussian_b"},
                     "attention weights with the Gaussian bias -|w d^2 + b| added to the logits",
                     kNotInHierGrid),
      // One matrix: the heads field does not apply; its one matrix is one head.
      with_heads(definition(
                     "direct-attention",
                     "a learned lower-triangular matrix, row-softmaxed, shared by every "
                     "input (DC fig. 3b)",
                     reads({"attention_dropout"}),
                     [](const VariantConfig& c, double tokens) {
                       const double H = c.hidden, T = c.tokens();
                       return 2.0 * tokens * H * 2 * H +
                              2.0 * tokens * T * H;  // value and out; the weighted sum
                     },
                     "direct attention: the learned matrix, row-softmaxed under the causal "
                     "mask",
                     kNotInHierGrid),
                 [](const VariantConfig&) { return 1; }),
      // One filter per token type exists only for triplets: other tokens have one type.
      definition(
          "conv", "causal depthwise convolution, one filter per token type or one for all (DC)",
          [](const VariantConfig& c, const std::string& key) {
            return key == "conv_window" ||
                   (key == "single_filter" && c.tokenizer == Tokenizer::Triplet);
          },
          [](const VariantConfig& c, double tokens) {
            const double filters = c.single_filter || c.tokenizer != Tokenizer::Triplet ? 1 : 3;
            return 2.0 * tokens * c.hidden * c.conv_window * filters;
          },
          "convolution: row p holds the magnitudes of the type(p) filter's taps, averaged over "
          "channels, at columns p, p-1, ..., p-L+1",
          kInHierGrid),
      attention_kind("linear-attention", "causal linear attention, feature map elu + 1",
                     {"heads", "attention_dropout"},
                     "linear attention: phi(q).phi(k) normalised over the causal keys, phi = elu "
                     "+ 1",
                     kInHierGrid),
      definition(
          "pooling", "the mean of the last P tokens, parameter-free (Decision HiFormer)",
          reads({"pool_size"}),
          [](const VariantConfig& c, double tokens) {
            return 2.0 * tokens * c.tokens() * c.hidden;
          },
          "pooling: row i averages tokens max(0, i-P+1)..i (weights 1/count)", kInHierGrid),
      definition(
          "gated-conv", "W_o(DWConv(P1 x) * SiLU(P2 x)) (UDC)", reads({"gated_kernel"}),
          [](const VariantConfig& c, double tokens) {
            const double H = c.hidden;
            return 2.0 * tokens * H * 3 * H + 2.0 * tokens * H * c.gated_kernel;
          },
          "gated convolution: the magnitudes of the depthwise convolution's taps, averaged "
          "over channels (the input-dependent gate is left out)",
          kNotInHierGrid),
      definition(
          "none", "no mixing: each token through the MLP alone", reads({}),
          [](const VariantConfig&, double) { return 0.0; }, "no token mixer: the identity",
          kInHierGrid),
  };
}

}  // namespace dstudio::models

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
                           std::function<double(const VariantConfig&, double)> flops) {
  MixerDefinition d;
  d.name = std::move(name);
  d.description = std::move(description);
  d.uses_field = std::move(uses);
  d.flops = std::move(flops);
  return d;
}

// A mixer whose heads interventions address, `count` of them.
MixerDefinition with_heads(MixerDefinition d, std::function<int(const VariantConfig&)> count) {
  d.heads = std::move(count);
  return d;
}

int configured_heads(const VariantConfig& c) {
  return c.heads;
}

}  // namespace

std::vector<MixerDefinition> builtin_mixers() {
  return {
      with_heads(definition("attention", "causal self-attention, GPT-2 style (DT)",
                            reads({"heads", "attention_dropout"}), attention_flops),
                 configured_heads),
      with_heads(definition("gaussian-attention",
                            "attention logits minus |w d^2 + b|, d the token distance (GDT)",
                            reads({"heads", "attention_dropout", "gaussian_w", "gaussian_b"}),
                            attention_flops),
                 configured_heads),
      // One matrix: the heads field does not apply; its one matrix is one head.
      with_heads(definition("direct-attention",
                            "a learned lower-triangular matrix, row-softmaxed, shared by every "
                            "input (DC fig. 3b)",
                            reads({"attention_dropout"}),
                            [](const VariantConfig& c, double tokens) {
                              const double H = c.hidden, T = c.tokens();
                              return 2.0 * tokens * H * 2 * H +
                                     2.0 * tokens * T * H;  // value and out; the weighted sum
                            }),
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
          }),
      with_heads(definition("linear-attention", "causal linear attention, feature map elu + 1",
                            reads({"heads", "attention_dropout"}), attention_flops),
                 configured_heads),
      definition("pooling", "the mean of the last P tokens, parameter-free (Decision HiFormer)",
                 reads({"pool_size"}),
                 [](const VariantConfig& c, double tokens) {
                   return 2.0 * tokens * c.tokens() * c.hidden;
                 }),
      definition("gated-conv", "W_o(DWConv(P1 x) * SiLU(P2 x)) (UDC)", reads({"gated_kernel"}),
                 [](const VariantConfig& c, double tokens) {
                   const double H = c.hidden;
                   return 2.0 * tokens * H * 3 * H + 2.0 * tokens * H * c.gated_kernel;
                 }),
      definition("none", "no mixing: each token through the MLP alone", reads({}),
                 [](const VariantConfig&, double) { return 0.0; }),
  };
}

}  // namespace dstudio::models

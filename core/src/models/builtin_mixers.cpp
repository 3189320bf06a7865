// The studio's own token mixers, as registry entries: each written as a plugin writes its
// MixerDefinition (plugins/diagonal-ssm), with the configuration fields it reads and its cost.
// Their modules are registered by name in the models library (core/libtorch/src/models/mixers/).
// docs/models.md states each one.

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
  return 2.0 * tokens * H * 4 * H + 2.0 * 2 * tokens * T * H;  // q, k, v, out; scores and weighted sum
}

}  // namespace

std::vector<MixerDefinition> builtin_mixers() {
  std::vector<MixerDefinition> out;

  MixerDefinition attention;
  attention.name = "attention";
  attention.description = "causal self-attention, GPT-2 style (DT)";
  attention.uses_field = reads({"heads", "attention_dropout"});
  attention.flops = attention_flops;
  out.push_back(attention);

  MixerDefinition gaussian;
  gaussian.name = "gaussian-attention";
  gaussian.description = "attention logits minus |w d^2 + b|, d the token distance (GDT)";
  gaussian.uses_field = reads({"heads", "attention_dropout", "gaussian_w", "gaussian_b"});
  gaussian.flops = attention_flops;
  out.push_back(gaussian);

  MixerDefinition direct;
  direct.name = "direct-attention";
  direct.description = "a learned lower-triangular matrix, row-softmaxed, shared by every input (DC fig. 3b)";
  direct.uses_field = reads({"attention_dropout"});  // one matrix: heads do not apply
  direct.flops = [](const VariantConfig& c, double tokens) {
    const double H = c.hidden, T = c.tokens();
    return 2.0 * tokens * H * 2 * H + 2.0 * tokens * T * H;  // value and out; the weighted sum
  };
  out.push_back(direct);

  MixerDefinition conv;
  conv.name = "conv";
  conv.description = "causal depthwise convolution, one filter per token type or one for all (DC)";
  // One filter per token type exists only for triplets: other tokens have one type.
  conv.uses_field = [](const VariantConfig& c, const std::string& key) {
    return key == "conv_window" || (key == "single_filter" && c.tokenizer == Tokenizer::Triplet);
  };
  conv.flops = [](const VariantConfig& c, double tokens) {
    const double filters = c.single_filter || c.tokenizer != Tokenizer::Triplet ? 1 : 3;
    return 2.0 * tokens * c.hidden * c.conv_window * filters;
  };
  out.push_back(conv);

  MixerDefinition linear;
  linear.name = "linear-attention";
  linear.description = "causal linear attention, feature map elu + 1";
  linear.uses_field = reads({"heads", "attention_dropout"});
  linear.flops = attention_flops;
  out.push_back(linear);

  MixerDefinition pooling;
  pooling.name = "pooling";
  pooling.description = "the mean of the last P tokens, parameter-free (Decision HiFormer)";
  pooling.uses_field = reads({"pool_size"});
  pooling.flops = [](const VariantConfig& c, double tokens) { return 2.0 * tokens * c.tokens() * c.hidden; };
  out.push_back(pooling);

  MixerDefinition gated;
  gated.name = "gated-conv";
  gated.description = "W_o(DWConv(P1 x) * SiLU(P2 x)) (UDC)";
  gated.uses_field = reads({"gated_kernel"});
  gated.flops = [](const VariantConfig& c, double tokens) {
    const double H = c.hidden;
    return 2.0 * tokens * H * 3 * H + 2.0 * tokens * H * c.gated_kernel;
  };
  out.push_back(gated);

  MixerDefinition none;
  none.name = "none";
  none.description = "no mixing: each token through the MLP alone";
  none.uses_field = reads({});
  none.flops = [](const VariantConfig&, double) { return 0.0; };
  out.push_back(none);
  return out;
}

}  // namespace dstudio::models

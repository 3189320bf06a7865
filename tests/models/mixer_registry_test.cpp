// Token mixers as registry entries: every definition the studio ships has a module and says how
// its mixing matrix is derived; a mixer added through the calls a plugin makes is listed in hier's
// grid, captioned by its own text and made into a model like the studio's own.

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>

#include "dstudio/analysis/attention_maps.h"
#include "dstudio/models/config_fields.h"
#include "dstudio/models/decision_model.h"
#include "dstudio/models/token_mixer.h"
#include "dstudio/models/variant_registry.h"
#include "dstudio/plugins/loader.h"
#include "dstudio/plugins/plugin.h"

namespace dstudio::models {
namespace {

VariantConfig small(VariantConfig c) {
  c.state_dim = 3;
  c.act_dim = 2;
  c.hidden = 16;
  c.context_length = 4;
  c.layers = 2;
  c.max_ep_len = 50;
  c.validate();
  return c;
}

Inspection inspect(const VariantConfig& config) {
  DecisionModel model(config);
  ModelInputs in;
  in.states = torch::randn({2, 4, 3});
  in.actions = torch::randn({2, 4, 2});
  in.returns_to_go = torch::randn({2, 4, 1});
  in.timesteps = torch::arange(4).repeat({2, 1});
  Inspection inspection;
  model->forward(in, &inspection);
  return inspection;
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// What the tests below add, left out where a test asks about what ships (one process may run all).
bool added_here(const std::string& name) {
  return name == "previous-token" || name == "silent-mixer";
}

TEST(MixerRegistry, EveryShippedDefinitionHasAModuleAndItsOwnDerivation) {
  std::vector<std::string> derivations;
  for (const auto& d : mixer_registry().all()) {
    if (!d->origin.builtin() || added_here(d->name)) continue;
    SCOPED_TRACE(d->name);
    EXPECT_FALSE(d->derivation.empty());
    derivations.push_back(d->derivation);
    auto config = make_variant("hier", "none", "attention");
    config.mixer = d->name;
    config = small(config);
    const auto inspection = inspect(config);
    // "none" is the block without its mixing half; every other name is a module whose layers are
    // named by the definition, so captions find their way back to it.
    for (const auto& layer : inspection.mixers) {
      EXPECT_EQ(layer.substr(0, layer.find(" (")), d->name);
      EXPECT_EQ(analysis::mixing_derivation(layer), d->derivation);
    }
    if (d->name != "none") {
      EXPECT_TRUE(make_token_mixer(config, d->name));
    }
  }
  std::sort(derivations.begin(), derivations.end());
  EXPECT_EQ(std::unique(derivations.begin(), derivations.end()), derivations.end())
      << "two mixers share a caption";
  // HiFormer's Table 1 crosses its mergers with these, and no others of the studio's own.
  for (const std::string name : {"none", "attention", "linear-attention", "conv", "pooling"})
    EXPECT_TRUE(contains(hier_mixers(), name)) << name;
  for (const std::string name : {"gaussian-attention", "direct-attention", "gated-conv"})
    EXPECT_FALSE(contains(hier_mixers(), name)) << name;
}

// Mixes each token with the one before: M[p][p-1] = 1.
class PreviousTokenMixer : public TokenMixer {
 public:
  torch::Tensor forward(const torch::Tensor& x, const MixerMasks&, torch::Tensor* matrix) override {
    const auto T = x.size(1);
    auto shifted = torch::zeros_like(x);
    shifted.narrow(1, 1, T - 1).copy_(x.narrow(1, 0, T - 1));
    if (matrix)
      *matrix = torch::eye(T).roll(1, 0).tril(-1).expand({x.size(0), 1, T, T}).contiguous();
    return shifted;
  }
  [[nodiscard]] std::string name() const override { return "previous-token"; }
  [[nodiscard]] bool honours_reach() const override { return true; }
};

TEST(MixerRegistry, AMixerAddedThroughThePluginCallsIsListedCaptionedAndUsed) {
  MixerDefinition d;
  d.name = "previous-token";
  d.description = "each token mixed with the one before it";
  d.derivation = "previous token: M[p][p-1] = 1, every other entry 0";
  d.flops = [](const VariantConfig&, double) { return 0.0; };
  plugins::builtin_registrar().add_token_mixer(
      d, [](const VariantConfig&) { return std::make_shared<PreviousTokenMixer>(); });

  const auto entry = mixer_registry().find("previous-token");
  ASSERT_TRUE(entry);
  EXPECT_TRUE(entry->origin.builtin());
  EXPECT_EQ(hier_mixers().back(), "previous-token");
  EXPECT_EQ(analysis::mixing_derivation("previous-token"), d.derivation);

  const auto config = small(make_variant("hier", "pooling", "previous-token"));
  const auto inspection = inspect(config);
  ASSERT_EQ(inspection.mixers.size(), 2u);
  EXPECT_EQ(inspection.mixers.front(), "previous-token");
  const auto m = inspection.mixing.front();
  EXPECT_EQ(m.index({0, 0, 2, 1}).item<float>(), 1.0f);
  EXPECT_EQ(m.index({0, 0, 2, 2}).item<float>(), 0.0f);
}

TEST(MixerRegistry, AMixerWithoutADerivationIsCaptionedAsSuch) {
  EXPECT_EQ(analysis::mixing_derivation("no-such-mixer"),
            "no-such-mixer: no token mixer of that name is registered");
  MixerDefinition d;
  d.name = "silent-mixer";
  d.in_hier_grid = false;
  plugins::builtin_registrar().add_token_mixer(
      d, [](const VariantConfig&) { return std::make_shared<PreviousTokenMixer>(); });
  EXPECT_EQ(analysis::mixing_derivation("silent-mixer"),
            "silent-mixer: the mixing matrix its module returns (its definition says no more)");
  EXPECT_FALSE(contains(hier_mixers(), "silent-mixer"));
}

}  // namespace
}  // namespace dstudio::models

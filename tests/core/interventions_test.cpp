// The intervention specs: every form of the grammar parses to what it says and prints back to
// itself; malformed specs and specs that do not fit a model are refused naming what is valid.

#include "dstudio/models/interventions.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dstudio/common/error.h"
#include "dstudio/models/variant_config.h"

namespace dstudio::models {
namespace {

// The message of the UsageError `f` throws ("" when it throws none).
template <typename F>
std::string refusal(F&& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return {};
}

TEST(Interventions, EachFormParsesToWhatItSays) {
  auto head = parse_intervention("head:2.1=zero");
  EXPECT_EQ(head.site, InterventionSite::Head);
  EXPECT_EQ(head.layer, 2);
  EXPECT_EQ(head.head, 1);
  EXPECT_EQ(head.replacement, Replacement::Zero);
  EXPECT_EQ(head.limit.kind, TokenLimit::Kind::All);

  auto mean = parse_intervention("mlp:3=mean@14");
  EXPECT_EQ(mean.site, InterventionSite::Mlp);
  EXPECT_EQ(mean.layer, 3);
  EXPECT_EQ(mean.replacement, Replacement::Mean);
  EXPECT_EQ(mean.limit, (TokenLimit{TokenLimit::Kind::Token, 14}));

  auto mixer = parse_intervention("mixer:1=resample@step:20");
  EXPECT_EQ(mixer.site, InterventionSite::Mixer);
  EXPECT_EQ(mixer.replacement, Replacement::Resample);
  EXPECT_EQ(mixer.limit, (TokenLimit{TokenLimit::Kind::Step, 20}));

  auto context = parse_intervention("context:3");
  EXPECT_EQ(context.site, InterventionSite::Context);
  EXPECT_EQ(context.context, 3);

  auto modality = parse_intervention("modality:R=zero");
  EXPECT_EQ(modality.site, InterventionSite::Modality);
  EXPECT_EQ(modality.modality, 'R');
  EXPECT_EQ(modality_zeroing('R'), ModalityZeroing::ReturnsToGo);
  EXPECT_EQ(modality_zeroing('s'), ModalityZeroing::PastStates);
  EXPECT_EQ(modality_zeroing('a'), ModalityZeroing::Actions);

  auto steer = parse_intervention("steer:2=-1.5*rtg-direction.json");
  EXPECT_EQ(steer.site, InterventionSite::Steer);
  EXPECT_EQ(steer.layer, 2);
  EXPECT_EQ(steer.alpha, -1.5);
  EXPECT_EQ(steer.direction, "rtg-direction.json");

  auto resid = parse_patch("resid:2.14");
  EXPECT_EQ(resid.site, InterventionSite::Resid);
  EXPECT_EQ(resid.replacement, Replacement::Patch);
  EXPECT_EQ(resid.layer, 2);
  EXPECT_EQ(resid.token, 14);
  auto patched_head = parse_patch("head:1.2@step:3");
  EXPECT_EQ(patched_head.site, InterventionSite::Head);
  EXPECT_EQ(patched_head.replacement, Replacement::Patch);
  EXPECT_EQ(patched_head.head, 2);
  EXPECT_EQ(patched_head.limit, (TokenLimit{TokenLimit::Kind::Step, 3}));
}

TEST(Interventions, SpecsPrintBackToThemselves) {
  for (const std::string spec :
       {"head:2.1=zero", "head:1.3=mean@7", "mixer:1=resample@step:20", "mlp:3=zero", "context:1",
        "modality:a=zero", "steer:1=0.25*rtg", "steer:3=-2*dir@step:4"})
    EXPECT_EQ(to_spec(parse_intervention(spec)), spec);
  for (const std::string spec : {"resid:2.14", "head:1.1@3", "mixer:2", "mlp:1@step:2"})
    EXPECT_EQ(to_spec(parse_patch(spec)), spec);
}

TEST(Interventions, MalformedSpecsAreRefusedSayingWhatIsExpected) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"head:2=zero", "expected head:L.H=zero|mean|resample"},
      {"head:0.1=zero", "the layer must be a whole number from 1"},
      {"head:2.x=zero", "the head must be a whole number from 1"},
      {"head:2.1", "expected head:L.H=zero|mean|resample"},
      {"head:2.1=half", "replace with zero, mean or resample"},
      {"mlp:-1=zero", "the layer must be a whole number from 1"},
      {"context:0", "the context must be a whole number from 1"},
      {"context:3=zero", "expected context:C"},
      {"modality:x=zero", "expected modality:R=zero"},
      {"modality:R=mean", "expected modality:R=zero"},
      {"steer:2=rtg", "expected steer:L=ALPHA*NAME"},
      {"steer:2=nan*rtg", "ALPHA must be a finite number"},
      {"steer:2=1.5*", "expected steer:L=ALPHA*NAME"},
      {"attn:1=zero", "no intervention \"attn\""},
      {"head", "expected one of head:L.H"},
      {"mlp:1=zero@0", "the token must be a whole number from 1"},
      {"mlp:1=zero@step:", "the step must be a whole number from 1"},
      {"mlp:1=zero@99999999999", "the token must be a whole number from 1"},
  };
  for (const auto& [spec, why] : bad) {
    const auto message = refusal([&] { parse_intervention(spec); });
    EXPECT_EQ(message.rfind(spec + ": ", 0), 0u) << spec << " -> " << message;
    EXPECT_NE(message.find(why), std::string::npos) << spec << " -> " << message;
  }
  EXPECT_NE(refusal([] { parse_patch("resid:2.14@3"); }).find("takes no @ limit"),
            std::string::npos);
  EXPECT_NE(refusal([] { parse_patch("head:1.1=zero"); }).find("from --patch-from"),
            std::string::npos);
  EXPECT_NE(refusal([] { parse_patch("context:3"); }).find("no patch \"context\""),
            std::string::npos);
}

TEST(Interventions, ASpecThatDoesNotFitTheModelNamesTheValidRange) {
  auto dt = make_variant("dt");  // 3 layers, 1 head, K = 20: 60 tokens
  EXPECT_EQ(refusal([&] { check_intervention(parse_intervention("head:4.1=zero"), dt); }),
            "head:4.1=zero: the model has 3 layers, 1 to 3");
  EXPECT_EQ(refusal([&] { check_intervention(parse_intervention("head:2.2=zero"), dt); }),
            "head:2.2=zero: layer 2 has 1 head, 1");
  EXPECT_EQ(refusal([&] { check_intervention(parse_intervention("context:21"), dt); }),
            "context:21: the model's window has 20 steps, 1 to 20");
  EXPECT_EQ(refusal([&] { check_intervention(parse_patch("resid:1.61"), dt); }),
            "resid:1.61: the model's window has 60 tokens, 1 to 60");
  EXPECT_EQ(refusal([&] { check_intervention(parse_intervention("mlp:1=zero@step:21"), dt); }),
            "mlp:1=zero@step:21: the model's window has 20 steps, 1 to 20");
  for (const std::string spec : {"head:3.1=zero", "mixer:1=mean", "mlp:3=resample@60", "context:20",
                                 "modality:s=zero", "steer:3=2*d@step:20"})
    EXPECT_EQ(refusal([&] { check_intervention(parse_intervention(spec), dt); }), "") << spec;
  EXPECT_EQ(refusal([&] { check_intervention(parse_patch("resid:3.60"), dt); }), "");

  auto heads = dt;
  heads.heads = 4;
  EXPECT_EQ(refusal([&] { check_intervention(parse_intervention("head:1.5=mean"), heads); }),
            "head:1.5=mean: layer 1 has 4 heads, 1 to 4");

  // A convolution has no heads: it is addressed whole. DC's hybrid attends in its last block.
  auto dc = make_variant("dc-hybrid");
  EXPECT_EQ(layer_heads(dc, 1), 0);
  EXPECT_EQ(layer_heads(dc, dc.layers), dc.heads);
  EXPECT_EQ(refusal([&] { check_intervention(parse_intervention("head:1.1=zero"), dc); }),
            "head:1.1=zero: layer 1's mixer (conv) has no heads; address it whole with mixer:1");
  EXPECT_EQ(refusal([&] {
              check_intervention(
                  parse_intervention("head:" + std::to_string(dc.layers) + ".1=zero"), dc);
            }),
            "");

  // DHi: one merged token a step, pooling without heads.
  auto dhi = make_variant("dhi");
  EXPECT_EQ(dhi.tokens(), dhi.context_length);
  EXPECT_EQ(refusal([&] { check_intervention(parse_patch("resid:1.21"), dhi); }),
            "resid:1.21: the model's window has 20 tokens, 1 to 20");
  EXPECT_NE(refusal([&] {
              check_intervention(parse_intervention("head:1.1=zero"), dhi);
            }).find("(pooling) has no heads"),
            std::string::npos);

  // Direct attention's one matrix is one head.
  auto direct = make_variant("direct-attention");
  EXPECT_EQ(layer_heads(direct, 1), 1);

  // The MLP policy has no blocks at all.
  auto bc = make_variant("mlp-bc");
  EXPECT_EQ(refusal([&] { check_intervention(parse_intervention("mlp:1=zero"), bc); }),
            "mlp:1=zero: the model (mlp-bc) has no blocks: its states go through an MLP");
  EXPECT_EQ(refusal([&] { check_intervention(parse_intervention("modality:R=zero"), bc); }), "");
}

}  // namespace
}  // namespace dstudio::models

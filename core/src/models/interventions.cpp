// The intervention specs: their grammar and their fit to a model. See interventions.h.

#include "dstudio/models/interventions.h"

#include <charconv>
#include <cmath>
#include <string>

#include "dstudio/common/error.h"
#include "dstudio/common/text.h"
#include "dstudio/models/variant_registry.h"

namespace dstudio::models {
namespace {

// What each kind of spec looks like, for messages.
constexpr const char* kInterventionGrammar =
    "head:L.H=zero|mean|resample, mixer:L=zero|mean|resample, mlp:L=zero|mean|resample, "
    "context:C, modality:R|s|a=zero or steer:L=ALPHA*NAME, optionally ending in @T or @step:K";
constexpr const char* kPatchGrammar =
    "resid:L.T, head:L.H, mixer:L or mlp:L, optionally ending in @T or @step:K";

[[noreturn]] void refuse(std::string_view spec, const std::string& why) {
  throw UsageError(std::string(spec) + ": " + why);
}

// A whole number of at least 1, all of `text`.
int positive(std::string_view spec, std::string_view text, const char* what) {
  int value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value < 1)
    refuse(spec,
           std::string(what) + " must be a whole number from 1, not \"" + std::string(text) + "\"");
  return value;
}

// "L.H" into its two numbers; `form` is the spec's shape for the message ("head:L.H").
std::pair<int, int> pair_of(std::string_view spec, std::string_view text, const char* form,
                            const char* first, const char* second) {
  const auto dot = text.find('.');
  if (dot == std::string_view::npos) refuse(spec, std::string("expected ") + form);
  return {positive(spec, text.substr(0, dot), first), positive(spec, text.substr(dot + 1), second)};
}

Replacement replacement_of(std::string_view spec, std::string_view text) {
  if (text == "zero") return Replacement::Zero;
  if (text == "mean") return Replacement::Mean;
  if (text == "resample") return Replacement::Resample;
  refuse(spec, "replace with zero, mean or resample, not \"" + std::string(text) + "\"");
}

// Splits off and parses "@T" or "@step:k"; returns the spec without it.
std::string_view take_limit(std::string_view spec, TokenLimit& limit) {
  const auto at = spec.rfind('@');
  if (at == std::string_view::npos) return spec;
  const auto text = spec.substr(at + 1);
  if (text.rfind("step:", 0) == 0) {
    limit = {TokenLimit::Kind::Step, positive(spec, text.substr(5), "the step")};
  } else {
    limit = {TokenLimit::Kind::Token, positive(spec, text, "the token")};
  }
  return spec.substr(0, at);
}

// "site:rest" with the site's name and the rest.
std::pair<std::string_view, std::string_view> site_of(std::string_view spec, std::string_view body,
                                                      const char* grammar) {
  const auto colon = body.find(':');
  if (colon == std::string_view::npos || colon == 0)
    refuse(spec, std::string("expected one of ") + grammar);
  return {body.substr(0, colon), body.substr(colon + 1)};
}

std::string limit_text(const TokenLimit& limit) {
  switch (limit.kind) {
    case TokenLimit::Kind::Token:
      return "@" + std::to_string(limit.index);
    case TokenLimit::Kind::Step:
      return "@step:" + std::to_string(limit.index);
    case TokenLimit::Kind::All:
      break;
  }
  return {};
}

const char* replacement_text(Replacement r) {
  switch (r) {
    case Replacement::Mean:
      return "mean";
    case Replacement::Resample:
      return "resample";
    case Replacement::Zero:
    case Replacement::Patch:
      break;
  }
  return "zero";
}

}  // namespace

Intervention parse_intervention(std::string_view spec) {
  Intervention out;
  const auto body = take_limit(spec, out.limit);
  const auto [site, rest] = site_of(spec, body, kInterventionGrammar);
  const auto eq = rest.find('=');
  const auto target = rest.substr(0, eq);
  const auto value = eq == std::string_view::npos ? std::string_view() : rest.substr(eq + 1);
  const bool has_value = eq != std::string_view::npos;
  if (site == "head" || site == "mixer" || site == "mlp") {
    if (!has_value)
      refuse(spec, std::string("expected ") + std::string(site) + (site == "head" ? ":L.H" : ":L") +
                       "=zero|mean|resample");
    if (site == "head") {
      out.site = InterventionSite::Head;
      std::tie(out.layer, out.head) =
          pair_of(spec, target, "head:L.H=zero|mean|resample", "the layer", "the head");
    } else {
      out.site = site == "mixer" ? InterventionSite::Mixer : InterventionSite::Mlp;
      out.layer = positive(spec, target, "the layer");
    }
    out.replacement = replacement_of(spec, value);
  } else if (site == "context") {
    if (has_value) refuse(spec, "expected context:C, the steps a mixer may see");
    out.site = InterventionSite::Context;
    out.context = positive(spec, target, "the context");
  } else if (site == "modality") {
    if (!has_value || value != "zero" || target.size() != 1 ||
        (target != "R" && target != "s" && target != "a"))
      refuse(spec, "expected modality:R=zero, modality:s=zero or modality:a=zero");
    out.site = InterventionSite::Modality;
    out.modality = target.front();
  } else if (site == "steer") {
    const auto star = value.find('*');
    if (!has_value || star == std::string_view::npos || star + 1 == value.size())
      refuse(spec, "expected steer:L=ALPHA*NAME, e.g. steer:2=1.5*rtg");
    out.site = InterventionSite::Steer;
    out.layer = positive(spec, target, "the layer");
    const std::string alpha(value.substr(0, star));
    const auto* end = alpha.data() + alpha.size();
    const auto [ptr, ec] = std::from_chars(alpha.data(), end, out.alpha);
    if (alpha.empty() || ec != std::errc() || ptr != end || !std::isfinite(out.alpha))
      refuse(spec, "ALPHA must be a finite number, not \"" + alpha + "\"");
    out.direction = std::string(value.substr(star + 1));
  } else {
    refuse(spec, "no intervention \"" + std::string(site) + "\"; expected one of " +
                     kInterventionGrammar);
  }
  return out;
}

Intervention parse_patch(std::string_view spec) {
  Intervention out;
  out.replacement = Replacement::Patch;
  const auto body = take_limit(spec, out.limit);
  const auto [site, target] = site_of(spec, body, kPatchGrammar);
  if (target.find('=') != std::string_view::npos)
    refuse(spec,
           std::string("a patch takes its values from --patch-from; expected ") + kPatchGrammar);
  if (site == "resid") {
    if (out.limit.kind != TokenLimit::Kind::All)
      refuse(spec, "resid:L.T names its token already; it takes no @ limit");
    out.site = InterventionSite::Resid;
    std::tie(out.layer, out.token) = pair_of(spec, target, "resid:L.T", "the layer", "the token");
  } else if (site == "head") {
    out.site = InterventionSite::Head;
    std::tie(out.layer, out.head) = pair_of(spec, target, "head:L.H", "the layer", "the head");
  } else if (site == "mixer" || site == "mlp") {
    out.site = site == "mixer" ? InterventionSite::Mixer : InterventionSite::Mlp;
    out.layer = positive(spec, target, "the layer");
  } else {
    refuse(spec, "no patch \"" + std::string(site) + "\"; expected one of " + kPatchGrammar);
  }
  return out;
}

std::string to_spec(const Intervention& iv) {
  const std::string L = std::to_string(iv.layer);
  const bool patch = iv.replacement == Replacement::Patch;
  const std::string how = patch ? "" : std::string("=") + replacement_text(iv.replacement);
  std::string s;
  switch (iv.site) {
    case InterventionSite::Head:
      s = "head:" + L + "." + std::to_string(iv.head) + how;
      break;
    case InterventionSite::Mixer:
      s = "mixer:" + L + how;
      break;
    case InterventionSite::Mlp:
      s = "mlp:" + L + how;
      break;
    case InterventionSite::Resid:
      s = "resid:" + L + "." + std::to_string(iv.token);
      break;
    case InterventionSite::Context:
      s = "context:" + std::to_string(iv.context);
      break;
    case InterventionSite::Modality:
      s = std::string("modality:") + iv.modality + "=zero";
      break;
    case InterventionSite::Steer:
      s = "steer:" + L + "=" + exact_number(iv.alpha) + "*" + iv.direction;
      break;
  }
  return s + limit_text(iv.limit);
}

std::string layer_mixer(const VariantConfig& c, int layer) {
  if (c.tokenizer == Tokenizer::State) return "none";
  return c.hybrid && layer == c.layers ? std::string("attention") : c.mixer;
}

int layer_heads(const VariantConfig& c, int layer) {
  const auto definition = mixer_registry().find(layer_mixer(c, layer));
  return definition && definition->heads ? definition->heads(c) : 0;
}

ModalityZeroing modality_zeroing(char modality) {
  switch (modality) {
    case 'R':
      return ModalityZeroing::ReturnsToGo;
    case 's':
      return ModalityZeroing::PastStates;
    case 'a':
      return ModalityZeroing::Actions;
    default:
      break;
  }
  throw UsageError(std::string("modality ") + modality + ": expected R, s or a");
}

void check_intervention(const Intervention& iv, const VariantConfig& c) {
  const std::string spec = to_spec(iv);
  const bool blocks = c.tokenizer != Tokenizer::State;
  const int layers = blocks ? c.layers : 0, K = c.context_length, T = c.tokens();
  const bool by_layer =
      iv.site != InterventionSite::Context && iv.site != InterventionSite::Modality;
  if (by_layer) {
    if (layers == 0)
      refuse(spec, "the model (" + c.variant + ") has no blocks: its states go through an MLP");
    if (iv.layer > layers)
      refuse(spec,
             "the model has " + std::to_string(layers) + " layers, 1 to " + std::to_string(layers));
  }
  const std::string mixer = by_layer ? layer_mixer(c, iv.layer) : std::string();
  switch (iv.site) {
    case InterventionSite::Head: {
      if (mixer == "none")
        refuse(spec, "layer " + std::to_string(iv.layer) + " has no token mixer");
      const int heads = layer_heads(c, iv.layer);
      if (heads == 0)
        refuse(spec, "layer " + std::to_string(iv.layer) + "'s mixer (" + mixer +
                         ") has no heads; address it whole with mixer:" + std::to_string(iv.layer));
      if (iv.head > heads)
        refuse(spec, "layer " + std::to_string(iv.layer) + " has " + std::to_string(heads) +
                         (heads == 1 ? " head, 1" : " heads, 1 to " + std::to_string(heads)));
      break;
    }
    case InterventionSite::Mixer:
      if (mixer == "none")
        refuse(spec, "layer " + std::to_string(iv.layer) + " has no token mixer");
      break;
    case InterventionSite::Resid:
      if (iv.token > T)
        refuse(spec, "the model's window has " + std::to_string(T) + " tokens, 1 to " +
                         std::to_string(T));
      break;
    case InterventionSite::Context:
      if (!blocks) refuse(spec, "the model (" + c.variant + ") sees one step only");
      if (iv.context > K)
        refuse(spec,
               "the model's window has " + std::to_string(K) + " steps, 1 to " + std::to_string(K));
      break;
    case InterventionSite::Modality:
    case InterventionSite::Mlp:
    case InterventionSite::Steer:
      break;
  }
  if (iv.limit.kind == TokenLimit::Kind::Token && iv.limit.index > T)
    refuse(spec,
           "the model's window has " + std::to_string(T) + " tokens, 1 to " + std::to_string(T));
  if (iv.limit.kind == TokenLimit::Kind::Step && iv.limit.index > K)
    refuse(spec,
           "the model's window has " + std::to_string(K) + " steps, 1 to " + std::to_string(K));
}

}  // namespace dstudio::models

// Interventions inside the forward pass: recording the sites, replacing values at them, the
// action lens. See intervene.h.

#include "dstudio/models/intervene.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <utility>

#include "dstudio/common/error.h"
#include "dstudio/common/read_file.h"

namespace dstudio::models {
namespace {

// The hook site an intervention acts at; Context and Modality act elsewhere.
bool site_of(const Intervention& iv, HookSite& site) {
  switch (iv.site) {
    case InterventionSite::Head:
      site = HookSite::Heads;
      return true;
    case InterventionSite::Mixer:
      site = HookSite::Mixer;
      return true;
    case InterventionSite::Mlp:
      site = HookSite::Mlp;
      return true;
    case InterventionSite::Resid:
    case InterventionSite::Steer:
      site = HookSite::Resid;
      return true;
    case InterventionSite::Context:
    case InterventionSite::Modality:
      break;
  }
  return false;
}

// Which of the token positions first..first+rows-1 (0-based) the intervention touches, (rows,)
// bool: its token (resid:L.T), its limit (@T, @step:k of the window), and for steering the state
// tokens (every token when a step is one token).
torch::Tensor touched(const Intervention& iv, const VariantConfig& c, int64_t first, int64_t rows) {
  const int64_t per_step = c.tokenizer == Tokenizer::Triplet ? 3 : 1;
  const auto t = torch::arange(first, first + rows, torch::kLong);
  auto keep = torch::ones({rows}, torch::kBool);
  if (iv.site == InterventionSite::Resid) keep = keep & (t == iv.token - 1);
  if (iv.limit.kind == TokenLimit::Kind::Token) keep = keep & (t == iv.limit.index - 1);
  if (iv.limit.kind == TokenLimit::Kind::Step)
    keep = keep & (t.div(per_step, "floor") == iv.limit.index - 1);
  if (iv.site == InterventionSite::Steer && per_step == 3) keep = keep & (t.remainder(3) == 1);
  return keep;
}

const char* source_name(Replacement r) {
  switch (r) {
    case Replacement::Mean:
      return "the mean over dataset windows";
    case Replacement::Resample:
      return "resampled windows";
    case Replacement::Patch:
      return "a second input (--patch-from)";
    case Replacement::Zero:
      break;
  }
  return "nothing";
}

const Activations& source_of(const InterventionSources& s, Replacement r) {
  return r == Replacement::Mean ? s.mean : r == Replacement::Resample ? s.resample : s.patch;
}

}  // namespace

std::vector<torch::Tensor>& Activations::of(HookSite site) {
  return site == HookSite::Heads   ? heads
         : site == HookSite::Mixer ? mixer
         : site == HookSite::Mlp   ? mlp
                                   : resid;
}

const std::vector<torch::Tensor>& Activations::of(HookSite site) const {
  return const_cast<Activations&>(*this).of(site);
}

const torch::Tensor& Activations::at(int layer, HookSite site) const {
  const auto& per_layer = of(site);
  if (layer < 1 || static_cast<std::size_t>(layer) > per_layer.size() ||
      !per_layer[static_cast<std::size_t>(layer - 1)].defined())
    throw UsageError("layer " + std::to_string(layer) + " has no recorded value there");
  return per_layer[static_cast<std::size_t>(layer - 1)];
}

torch::Tensor record_activations(DecisionModelImpl& model, const ModelInputs& inputs,
                                 Activations& out) {
  const auto layers = static_cast<std::size_t>(model.config().layers);
  out = Activations{};
  for (auto* v : {&out.heads, &out.mixer, &out.mlp, &out.resid}) v->assign(layers, {});
  ForwardHooks hooks;
  hooks.at = [&out](int layer, HookSite site, const torch::Tensor& value, int64_t) {
    out.of(site)[static_cast<std::size_t>(layer - 1)] = value;
    return torch::Tensor();
  };
  return model.forward(inputs, nullptr, ModalityZeroing::None, &hooks);
}

Activations mean_over_windows(const Activations& a) {
  Activations out;
  const auto mean = [](const std::vector<torch::Tensor>& v) {
    std::vector<torch::Tensor> m;
    for (const auto& t : v) m.push_back(t.defined() ? t.mean(0, true) : torch::Tensor());
    return m;
  };
  out.heads = mean(a.heads);
  out.mixer = mean(a.mixer);
  out.mlp = mean(a.mlp);
  out.resid = mean(a.resid);
  return out;
}

InterventionPlan::InterventionPlan(std::vector<Intervention> interventions,
                                   const VariantConfig& config, InterventionSources sources)
    : items_(std::move(interventions)), config_(config), sources_(std::move(sources)) {
  for (const auto& iv : items_) {
    check_intervention(iv, config_);
    const std::string spec = to_spec(iv);
    if (iv.site == InterventionSite::Context)
      context_ = context_ == 0 ? iv.context : std::min(context_, iv.context);
    if (iv.site == InterventionSite::Steer) {
      const auto it = sources_.directions.find(iv.direction);
      if (it == sources_.directions.end())
        throw UsageError(spec + ": no direction " + iv.direction + " was read");
      if (it->second.numel() != config_.hidden)
        throw UsageError(spec + ": the direction has " + std::to_string(it->second.numel()) +
                         " numbers, the model's stream " + std::to_string(config_.hidden));
    }
    if (iv.replacement != Replacement::Zero) {
      HookSite site;
      if (site_of(iv, site) && source_of(sources_, iv.replacement).resid.empty())
        throw UsageError(spec + ": needs " + source_name(iv.replacement) + ", which was not given");
    }
  }
}

ModelInputs InterventionPlan::prepare(const ModelInputs& inputs) const {
  ModelInputs out = inputs;
  for (const auto& iv : items_)
    if (iv.site == InterventionSite::Modality)
      out = apply_zeroing(out, modality_zeroing(iv.modality));
  return out;
}

ForwardHooks InterventionPlan::hooks() const {
  ForwardHooks h;
  h.context = context_;
  h.at = [this](int layer, HookSite site, const torch::Tensor& value, int64_t first) {
    return apply(layer, site, value, first);
  };
  return h;
}

torch::Tensor InterventionPlan::apply(int layer, HookSite site, const torch::Tensor& value,
                                      int64_t first) const {
  torch::Tensor out;  // undefined: unchanged
  for (const auto& iv : items_) {
    HookSite at;
    if (!site_of(iv, at) || at != site || iv.layer != layer) continue;
    const torch::Tensor& current = out.defined() ? out : value;
    // Token positions are dimension 2 of the heads' outputs (B, heads, T, hd), else 1.
    const int64_t dim = site == HookSite::Heads ? 2 : 1, rows = value.size(dim);
    const auto keep = touched(iv, config_, first, rows);
    if (iv.site == InterventionSite::Steer) {
      const auto& direction = sources_.directions.at(iv.direction);
      out = current + keep.to(value.scalar_type()).view({1, rows, 1}) *
                          (iv.alpha * direction.to(value.scalar_type()).view({1, 1, -1}));
      continue;
    }
    torch::Tensor replacement;
    if (iv.replacement == Replacement::Zero) {
      replacement = torch::zeros_like(current);
    } else {
      const auto& recorded = source_of(sources_, iv.replacement).at(layer, site);
      if (recorded.size(0) != 1 && recorded.size(0) != value.size(0))
        throw UsageError(to_spec(iv) + ": " + source_name(iv.replacement) + " has " +
                         std::to_string(recorded.size(0)) + " windows, the input " +
                         std::to_string(value.size(0)));
      replacement = recorded.narrow(dim, first, rows).to(value.scalar_type());
    }
    torch::Tensor where;
    if (site == HookSite::Heads) {
      auto head = torch::zeros({1, value.size(1), 1, 1}, torch::kBool);
      head[0][iv.head - 1] = true;
      where = head & keep.view({1, 1, rows, 1});
    } else {
      where = keep.view({1, rows, 1});
    }
    out = torch::where(where, replacement, current);
  }
  return out;
}

torch::Tensor InterventionPlan::forward(DecisionModelImpl& model, const ModelInputs& inputs,
                                        Inspection* inspection) const {
  const auto h = hooks();
  return model.forward(prepare(inputs), inspection, ModalityZeroing::None, &h);
}

torch::Tensor InterventionPlan::act(DecisionModelImpl& model, const ModelInputs& inputs) const {
  const auto h = hooks();
  return model.act(prepare(inputs), ModalityZeroing::None, &h);
}

torch::Tensor action_lens(DecisionModelImpl& model, const ModelInputs& inputs,
                          const InterventionPlan* plan) {
  const auto& c = model.config();
  if (c.tokenizer == Tokenizer::State)
    throw UsageError("the action lens reads the stream after each block; the model (" + c.variant +
                     ") has none");
  std::vector<torch::Tensor> streams(static_cast<std::size_t>(c.layers));
  ForwardHooks hooks = plan ? plan->hooks() : ForwardHooks{};
  const auto inner = hooks.at;
  hooks.at = [&streams, inner](int layer, HookSite site, const torch::Tensor& value,
                               int64_t first) {
    torch::Tensor changed = inner ? inner(layer, site, value, first) : torch::Tensor();
    if (site == HookSite::Resid)
      streams[static_cast<std::size_t>(layer - 1)] = changed.defined() ? changed : value;
    return changed;
  };
  model.forward(plan ? plan->prepare(inputs) : inputs, nullptr, ModalityZeroing::None, &hooks);
  std::vector<torch::Tensor> lens;
  for (const auto& stream : streams) lens.push_back(model.read_out(stream));
  return torch::stack(lens, 2);
}

torch::Tensor read_direction(const std::string& path, int hidden) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_regular_file(path, 64 << 20));
  } catch (const std::exception& e) {
    throw UsageError(path + ": not a steering direction (" + std::string(e.what()) + ")");
  }
  if (!j.is_object() || !j.contains("direction") || !j["direction"].is_array())
    throw UsageError(path + ": not a steering direction (no \"direction\" list)");
  std::vector<float> v;
  for (const auto& x : j["direction"]) {
    if (!x.is_number() || !std::isfinite(x.get<double>()))
      throw UsageError(path + ": \"direction\" holds something that is not a finite number");
    v.push_back(x.get<float>());
  }
  if (static_cast<int>(v.size()) != hidden)
    throw UsageError(path + ": the direction has " + std::to_string(v.size()) +
                     " numbers, the model's stream " + std::to_string(hidden));
  return torch::tensor(v);
}

}  // namespace dstudio::models

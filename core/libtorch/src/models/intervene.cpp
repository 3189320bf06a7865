// Interventions inside the forward pass: recording the sites, replacing values at them, the
// action lens. See intervene.h.

#include "dstudio/models/intervene.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <utility>

#include "dstudio/common/error.h"
#include "dstudio/common/figure_recipe.h"
#include "dstudio/common/read_file.h"
#include "dstudio/common/text.h"
#include "dstudio/models/steering_direction.h"

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
// tokens (every token when a step is one token). On `device`, the activation's.
torch::Tensor touched(const Intervention& iv, const VariantConfig& c, int64_t first, int64_t rows,
                      const torch::Device& device) {
  const int64_t per_step = c.tokenizer == Tokenizer::Triplet ? 3 : 1;
  const auto t = torch::arange(first, first + rows, torch::dtype(torch::kLong).device(device));
  auto keep = torch::ones({rows}, torch::dtype(torch::kBool).device(device));
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
      // What is added to the stream, in the stream's float32: finite numbers whose product
      // overflows would make every action inf or nan.
      const auto added = iv.alpha * it->second.to(torch::kDouble);
      const double largest = added.abs().max().item<double>();
      if (!std::isfinite(largest) || largest > std::numeric_limits<float>::max())
        throw UsageError(spec + ": ALPHA times the direction reaches " + general_number(largest) +
                         ", beyond float32 (" + general_number(std::numeric_limits<float>::max()) +
                         "); the stream would hold inf. Choose a smaller ALPHA");
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
    const auto keep = touched(iv, config_, first, rows, value.device());
    if (iv.site == InterventionSite::Steer) {
      const auto& direction = sources_.directions.at(iv.direction);
      out = current +
            keep.to(value.scalar_type()).view({1, rows, 1}) *
                (iv.alpha * direction.to(value.device(), value.scalar_type()).view({1, 1, -1}));
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
      replacement = recorded.narrow(dim, first, rows).to(value.device(), value.scalar_type());
    }
    torch::Tensor where;
    if (site == HookSite::Heads) {
      auto head =
          torch::zeros({1, value.size(1), 1, 1}, torch::dtype(torch::kBool).device(value.device()));
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

std::vector<BlockComponent> block_components(const VariantConfig& c) {
  std::vector<BlockComponent> out;
  for (int l = 1; l <= c.layers; ++l) {
    const std::string L = std::to_string(l);
    const int heads = layer_heads(c, l);
    for (int h = 1; h <= heads; ++h) {
      const std::string H = std::to_string(h);
      out.push_back({l, HookSite::Heads, h, "L" + L + " H" + H, "H" + H, "head:" + L + "." + H});
    }
    if (heads == 0 && layer_mixer(c, l) != "none")
      out.push_back({l, HookSite::Mixer, 0, "L" + L + " mixer", "mixer", "mixer:" + L});
    out.push_back({l, HookSite::Mlp, 0, "L" + L + " MLP", "MLP", "mlp:" + L});
  }
  return out;
}

namespace {

// `n` copies of every input, one after the other along the batch.
ModelInputs repeated(const ModelInputs& in, int64_t n) {
  const auto rep = [n](const torch::Tensor& t) {
    if (!t.defined()) return t;
    std::vector<int64_t> times(static_cast<std::size_t>(t.dim()), 1);
    times[0] = n;
    return t.repeat(times);
  };
  return {rep(in.states), rep(in.actions), rep(in.returns_to_go), rep(in.timesteps), rep(in.mask)};
}

}  // namespace

PatchingSweep patching_sweep(DecisionModelImpl& model, const ModelInputs& clean,
                             const ModelInputs& other, bool reuse, const Progress& progress,
                             int64_t max_rows) {
  const auto& c = model.config();
  if (c.tokenizer == Tokenizer::State)
    throw UsageError("the model (" + c.variant + ") has no blocks to patch");
  const int64_t B = clean.states.size(0), K = clean.states.size(1);
  if (other.states.sizes() != clean.states.sizes())
    throw UsageError("patching needs the other input to have the clean input's windows (" +
                     std::to_string(B) + " of " + std::to_string(K) + " steps)");
  torch::InferenceMode inference;
  PatchingSweep out;
  Activations clean_acts, other_acts;
  record_activations(model, clean, clean_acts);
  record_activations(model, other, other_acts);
  out.clean = model.act(clean);
  out.other = model.act(other);
  const auto components = block_components(c);
  const int64_t T = clean_acts.resid.front().size(1), A = c.act_dim;
  out.stream = torch::empty({c.layers, T, B, A});
  out.components = torch::empty({static_cast<int64_t>(components.size()), B, A});
  InterventionSources sources;
  sources.patch = other_acts;
  const double total = static_cast<double>(c.layers * T + components.size());
  double done = 0.0;
  const auto step = [&](double n) {
    done += n;
    progress.update(done / total, "patching");
  };
  if (!reuse) {
    for (int l = 1; l <= c.layers; ++l)
      for (int64_t t = 0; t < T; ++t) {
        const InterventionPlan plan(
            {parse_patch("resid:" + std::to_string(l) + "." + std::to_string(t + 1))}, c, sources);
        out.stream[l - 1][t].copy_(plan.forward(model, clean).select(1, K - 1));
        step(1);
      }
    for (std::size_t k = 0; k < components.size(); ++k) {
      const InterventionPlan plan({parse_patch(components[k].spec)}, c, sources);
      out.components[static_cast<int64_t>(k)].copy_(plan.forward(model, clean).select(1, K - 1));
      step(1);
    }
    return out;
  }
  // After block L only the blocks after it change: the clean stream there with one token taken
  // from the other input, every token's patch a copy of the windows in one batch.
  const int64_t per_batch = std::max<int64_t>(1, max_rows / std::max<int64_t>(B, 1));
  for (int l = 1; l <= c.layers; ++l) {
    const auto& clean_stream = clean_acts.resid[static_cast<std::size_t>(l - 1)];
    const auto& other_stream = other_acts.resid[static_cast<std::size_t>(l - 1)];
    for (int64_t t0 = 0; t0 < T; t0 += per_batch) {
      const int64_t n = std::min(per_batch, T - t0);
      // one_hot[k][t] is true where copy k takes token t0 + k from the other input.
      const auto on = torch::dtype(torch::kLong).device(clean_stream.device());
      const auto one_hot =
          (torch::arange(T, on).view({1, T}) == torch::arange(t0, t0 + n, on).view({n, 1}))
              .view({n, 1, T, 1});
      const auto stream =
          torch::where(one_hot, other_stream.unsqueeze(0), clean_stream.unsqueeze(0))
              .reshape({n * B, T, c.hidden});
      out.stream[l - 1].narrow(0, t0, n).copy_(
          model.act_from(repeated(clean, n), stream, l + 1).view({n, B, A}));
      step(static_cast<double>(n));
    }
  }
  // A component of block L: the clean stream entering block L, that block run with the patch.
  const auto entering = model.embed_tokens(clean);
  for (std::size_t k = 0; k < components.size(); ++k) {
    const int l = components[k].layer;
    const InterventionPlan plan({parse_patch(components[k].spec)}, c, sources);
    const auto hooks = plan.hooks();
    out.components[static_cast<int64_t>(k)].copy_(model.act_from(
        clean, l == 1 ? entering : clean_acts.resid[static_cast<std::size_t>(l - 2)], l, &hooks));
    step(1);
  }
  return out;
}

Attribution attribute_actions(DecisionModelImpl& model, const ModelInputs& inputs) {
  const auto& c = model.config();
  if (c.tokenizer == Tokenizer::State)
    throw UsageError("the model (" + c.variant + ") has no stream to attribute");
  torch::InferenceMode inference;
  const int64_t row = model.action_token(inputs.states.size(1) - 1);
  Activations acts;
  record_activations(model, inputs, acts);
  Attribution out;
  std::vector<torch::Tensor> streams;  // each part's addition to the stream at `row`, (B, H)
  out.parts.push_back("embeddings");
  streams.push_back(model.embed_tokens(inputs).select(1, row));
  for (int l = 1; l <= c.layers; ++l) {
    const std::string L = "L" + std::to_string(l);
    const int heads = layer_heads(c, l);
    const auto& mixer = acts.mixer[static_cast<std::size_t>(l - 1)];
    if (heads > 0) {
      // The mixer's output is affine in its heads: run it with one head kept (none for its
      // biases), the rest of the pass clean, and read what it adds.
      const auto with_head = [&](int keep) {
        torch::Tensor got;
        ForwardHooks hooks;
        hooks.at = [&](int layer, HookSite site, const torch::Tensor& v, int64_t) {
          if (layer != l) return torch::Tensor();
          if (site == HookSite::Heads) {
            auto kept = torch::zeros({1, v.size(1), 1, 1}, v.options());
            if (keep > 0) kept[0][keep - 1] = 1;
            return v * kept;
          }
          if (site == HookSite::Mixer) {
            got = v.select(1, row);
            return mixer;
          }
          return torch::Tensor();
        };
        model.forward(inputs, nullptr, ModalityZeroing::None, &hooks);
        return got;
      };
      const auto bias = with_head(0);
      for (int h = 1; h <= heads; ++h) {
        out.parts.push_back(L + " H" + std::to_string(h));
        streams.push_back(with_head(h) - bias);
      }
      out.parts.push_back(L + " mixer bias");
      streams.push_back(bias);
    } else if (mixer.defined()) {
      out.parts.push_back(L + " mixer");
      streams.push_back(mixer.select(1, row));
    }
    out.parts.push_back(L + " MLP");
    streams.push_back(acts.mlp[static_cast<std::size_t>(l - 1)].select(1, row));
  }
  // With the norm's scale s frozen, LN(x) = (x - mean x) s g + shift is linear in x: each part
  // p adds (p - mean p) s g to it, and the action head W LN + b passes that on linearly.
  const auto final_stream = acts.resid.back().narrow(1, row, 1);
  const auto r = model.read_out_parts(final_stream);
  const auto scale = r.scale.select(1, 0);  // (B, 1)
  std::vector<torch::Tensor> contributions;
  for (const auto& p : streams)
    contributions.push_back(torch::matmul((p - p.mean(-1, true)) * scale * r.gain, r.weight.t()));
  out.parts.push_back("biases");
  contributions.push_back(
      (torch::matmul(r.shift, r.weight.t()) + r.bias).expand({final_stream.size(0), c.act_dim}));
  out.contributions = torch::stack(contributions);
  out.pre_tanh = r.pre_tanh.select(1, 0);
  return out;
}

torch::Tensor read_direction(const std::string& path, const CheckpointInfo& info) {
  const int hidden = info.variant.hidden;
  std::string text;
  try {
    text = read_regular_file(path, 64 << 20);
  } catch (const std::exception& e) {
    throw UsageError(path + ": not a steering direction (" + std::string(e.what()) + ")");
  }
  const auto file = read_steering_direction(text, path);
  const std::vector<float> v(file.direction.begin(), file.direction.end());
  if (static_cast<int>(v.size()) != hidden)
    throw UsageError(path + ": the direction has " + std::to_string(v.size()) +
                     " numbers, the model's stream " + std::to_string(hidden));
  // A direction is a difference of one model's streams: another model's numbers mean nothing here
  // even when the widths agree.
  if (!file.checkpoint_hash.empty() && !info.path.empty()) {
    const std::string made_for =
        file.checkpoint.empty() ? std::string("another checkpoint") : file.checkpoint;
    const std::string here = file_content_hash(info.path);
    if (file.checkpoint_hash != here)
      throw UsageError(path + ": the direction was made for " + made_for + " (" +
                       file.checkpoint_hash + "), not for " + info.path + " (" + here +
                       "); make one for it with dstudio analyze steering --checkpoint " +
                       info.path);
  }
  return torch::tensor(v);
}

}  // namespace dstudio::models

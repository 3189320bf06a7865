// Windows and their inspection. See windows.h.

#include "dstudio/models/windows.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "dstudio/common/error.h"
#include "dstudio/behaviour/default_datasets.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/env/environment.h"
#include "dstudio/models/checkpoint_model.h"
#include "policy_window.h"

namespace dstudio::models {
namespace fs = std::filesystem;

Window window_from_dataset(const data::Dataset& ds, int episode, int last_step, int K) {
  const auto& e = ds.episodes.at(static_cast<std::size_t>(episode));
  if (last_step < 0 || last_step >= e.length) throw UsageError("step " + std::to_string(last_step) + " is outside episode " + std::to_string(episode));
  const int S = static_cast<int>(ds.data.obs_dim), A = static_cast<int>(ds.data.act_dim);
  Window w{K, S, A, episode, last_step, std::vector<float>(static_cast<std::size_t>(K) * S, 0.0f),
           std::vector<float>(static_cast<std::size_t>(K) * A, 0.0f), std::vector<float>(static_cast<std::size_t>(K), 0.0f),
           std::vector<std::int64_t>(static_cast<std::size_t>(K), 0), std::vector<float>(static_cast<std::size_t>(K), 0.0f)};
  // Returns-to-go from each step of the episode to its end.
  std::vector<double> rtg(static_cast<std::size_t>(e.length) + 1, 0.0);
  for (std::int64_t t = e.length - 1; t >= 0; --t)
    rtg[static_cast<std::size_t>(t)] = rtg[static_cast<std::size_t>(t) + 1] + ds.data.rewards[static_cast<std::size_t>(e.start + t)];
  const int len = std::min(K, last_step + 1), offset = K - len;
  for (int p = 0; p < len; ++p) {
    const int step = last_step - len + 1 + p;
    const auto row = static_cast<std::size_t>(e.start + step);
    const auto slot = static_cast<std::size_t>(offset + p);
    std::copy_n(&ds.data.observations[row * S], S, &w.states[slot * S]);
    std::copy_n(&ds.data.actions[row * A], A, &w.actions[slot * A]);
    w.returns_to_go[slot] = static_cast<float>(rtg[static_cast<std::size_t>(step)]);
    w.timesteps[slot] = step;
    w.mask[slot] = 1.0f;
  }
  return w;
}

std::vector<Window> sample_windows(const data::Dataset& ds, int count, int K) {
  std::vector<int> episodes;
  for (std::size_t e = 0; e < ds.episodes.size(); ++e)
    if (ds.episodes[e].complete() && ds.episodes[e].length >= K) episodes.push_back(static_cast<int>(e));
  if (episodes.empty()) throw Error(ds.path + " has no complete episode of at least " + std::to_string(K) + " steps");
  std::stable_sort(episodes.begin(), episodes.end(), [&](int a, int b) { return ds.episodes[static_cast<std::size_t>(a)].length > ds.episodes[static_cast<std::size_t>(b)].length; });
  std::vector<Window> out;
  const int per = std::max(1, (count + static_cast<int>(episodes.size()) - 1) / static_cast<int>(episodes.size()));
  const int used = std::min(static_cast<int>(episodes.size()), (count + per - 1) / per);
  for (int r = 0; r < used; ++r) {
    const int e = episodes[static_cast<std::size_t>(r)];
    const auto length = static_cast<int>(ds.episodes[static_cast<std::size_t>(e)].length);
    for (int k = 0; k < per && static_cast<int>(out.size()) < count; ++k) {
      // Evenly spaced ends in [K - 1, length - 1], interleaved across episodes, so that a few
      // windows from many episodes still cover every phase of an episode, not only its middle.
      const long long slot = static_cast<long long>(k) * used + r, slots = static_cast<long long>(per) * used;
      const int last = K - 1 + static_cast<int>(static_cast<long long>(length - K) * (2 * slot + 1) / (2 * slots));
      out.push_back(window_from_dataset(ds, e, last, K));
    }
  }
  return out;
}

Window window_from_trace(const EpisodeTrace& trace, int step, int K, int S, int A) {
  if (step < 0 || step >= trace.length || trace.states.size() < static_cast<std::size_t>(trace.length) * S)
    throw UsageError("the rollout has no trace of step " + std::to_string(step));
  Window w{K, S, A, -1, step, std::vector<float>(static_cast<std::size_t>(K) * S, 0.0f), std::vector<float>(static_cast<std::size_t>(K) * A, 0.0f),
           std::vector<float>(static_cast<std::size_t>(K), 0.0f), std::vector<std::int64_t>(static_cast<std::size_t>(K), 0),
           std::vector<float>(static_cast<std::size_t>(K), 0.0f)};
  const int len = std::min(K, step + 1), offset = K - len;
  for (int p = 0; p < len; ++p) {
    const auto s = static_cast<std::size_t>(step - len + 1 + p);
    const auto slot = static_cast<std::size_t>(offset + p);
    std::copy_n(&trace.states[s * S], S, &w.states[slot * S]);
    // The current step's action was not known when the policy acted: its slot stays 0.
    if (static_cast<int>(s) < step) std::copy_n(&trace.actions[s * A], A, &w.actions[slot * A]);
    w.returns_to_go[slot] = static_cast<float>(trace.returns_to_go[s]);
    w.timesteps[slot] = static_cast<std::int64_t>(s);
    w.mask[slot] = 1.0f;
  }
  return w;
}

WindowInspection inspection_row(const Inspection& inspection, int64_t b, const std::vector<float>& mask,
                                const std::vector<std::int64_t>& timesteps, int per_step, int hidden, bool keep_tokens) {
  const int T = static_cast<int>(mask.size()) * per_step;
  WindowInspection r;
  r.token_types = inspection.token_types;
  r.hidden = hidden;
  for (int k = 0; k < T; ++k) {
    const int p = k / per_step;
    const bool real = mask[static_cast<std::size_t>(p)] > 0.5f;
    r.valid.push_back(real);
    r.token_steps.push_back(real ? static_cast<int>(timesteps[static_cast<std::size_t>(p)]) : -1);
  }
  for (std::size_t l = 0; l < inspection.mixing.size(); ++l) {
    const auto m = inspection.mixing[l].select(0, b).contiguous();
    r.layers.push_back({static_cast<int>(m.size(0)), T, std::vector<float>(m.data_ptr<float>(), m.data_ptr<float>() + m.numel()),
                        inspection.mixers[l]});
  }
  if (!keep_tokens) return r;
  if (inspection.tokens_before_merge.defined()) {
    const auto t = inspection.tokens_before_merge.select(0, b).contiguous();
    r.tokens_before_merge.assign(t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
  }
  const auto t = inspection.tokens.select(0, b).contiguous();
  r.tokens.assign(t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
  return r;
}

std::vector<WindowInspection> inspect_windows(DecisionModelImpl& model, const CheckpointInfo& info, const std::vector<Window>& windows,
                                              ModalityZeroing zeroing) {
  const auto& c = model.config();
  std::vector<WindowInspection> out;
  if (windows.empty()) return out;
  const int K = windows.front().steps, S = c.state_dim, A = c.act_dim;
  for (const auto& w : windows)
    if (w.steps != K || w.state_dim != S || w.act_dim != A)
      throw Error("the windows do not fit the model (state " + std::to_string(S) + ", action " + std::to_string(A) + ")");
  const bool was_training = model.is_training();
  model.eval();
  torch::InferenceMode inference;
  const auto B = static_cast<int64_t>(windows.size());
  ModelInputs in = empty_windows(B, K, S, A);
  for (int64_t b = 0; b < B; ++b) {
    const auto& w = windows[static_cast<std::size_t>(b)];
    std::copy(w.states.begin(), w.states.end(), in.states.data_ptr<float>() + b * K * S);
    std::copy(w.actions.begin(), w.actions.end(), in.actions.data_ptr<float>() + b * K * A);
    for (int k = 0; k < K; ++k) in.returns_to_go.data_ptr<float>()[b * K + k] = static_cast<float>(w.returns_to_go[static_cast<std::size_t>(k)] / info.rtg_scale);
    std::copy(w.timesteps.begin(), w.timesteps.end(), in.timesteps.data_ptr<int64_t>() + b * K);
    std::copy(w.mask.begin(), w.mask.end(), in.mask.data_ptr<float>() + b * K);
  }
  in.timesteps.clamp_(0, c.max_ep_len - 1);
  auto mean = torch::tensor(info.state_mean), std = torch::tensor(info.state_std);
  in.states = (in.states - mean) / std * in.mask.unsqueeze(-1);  // padding stays 0
  Inspection inspection;
  model.forward(in, &inspection, zeroing);
  if (was_training) model.train();

  const int per_step = c.tokenizer == Tokenizer::Triplet ? 3 : 1;
  for (int64_t b = 0; b < B; ++b) {
    const auto& w = windows[static_cast<std::size_t>(b)];
    out.push_back(inspection_row(inspection, b, w.mask, w.timesteps, per_step, c.hidden));
  }
  return out;
}

std::vector<WindowInspection> inspect_windows(const fs::path& checkpoint, const std::vector<Window>& windows, ModalityZeroing zeroing,
                                              const Progress& progress) {
  progress.update(0.0, "reading the checkpoint");
  CheckpointInfo info;
  DecisionModel model = load_checkpoint_model(checkpoint, &info);
  progress.update(0.5, "running the model on the windows");
  auto out = inspect_windows(*model, info, windows, zeroing);
  progress.update(1.0, "inspected");
  return out;
}

fs::path checkpoint_dataset(const CheckpointInfo& info, const Progress& progress) {
  std::error_code ec;
  if (!info.dataset_path.empty() && fs::exists(info.dataset_path, ec)) return info.dataset_path;
  // A default dataset made on another machine: the same name is the same settings and policies.
  for (const auto& env : env::task_names())
    for (const auto kind : {behaviour::DatasetKind::Random, behaviour::DatasetKind::Medium, behaviour::DatasetKind::MediumReplay,
                            behaviour::DatasetKind::Expert, behaviour::DatasetKind::MediumExpert})
      for (const auto algorithm : {behaviour::PolicyAlgorithm::Sac, behaviour::PolicyAlgorithm::Ars}) {
        std::filesystem::path path;
        try {
          path = behaviour::default_dataset_path(env, kind, algorithm);
        } catch (const std::runtime_error&) {
          continue;  // no policies of that algorithm ship for this environment
        }
        if (!info.dataset_path.empty() && path.filename() == fs::path(info.dataset_path).filename()) {
          const auto made = behaviour::ensure_default_dataset(env, kind, progress, algorithm);
          const auto ds = data::load_dataset(made);
          if (ds.fingerprint == info.dataset_fingerprint) return made;
        }
      }
  throw CheckpointError(info.path + ": its dataset " + (info.dataset_path.empty() ? std::string("is not recorded") : info.dataset_path + " is not here") +
                        "; pass one with --dataset");
}

DatasetInspection inspect_on_dataset(const fs::path& checkpoint, int count, const fs::path& dataset, const Progress& progress) {
  DatasetInspection out;
  progress.update(0.0, "reading the checkpoint");
  out.info = read_checkpoint_info(checkpoint);
  // Finding the checkpoint's dataset may mean making it again; that is most of the work then.
  Progress finding;
  finding.cancel = progress.cancel;
  if (progress.report) finding.report = [&progress](double f, std::string_view stage) { progress.report(0.8 * f, stage); };
  out.dataset = dataset.empty() ? checkpoint_dataset(out.info, finding) : dataset;
  progress.update(0.8, "loading the dataset");
  const auto ds = data::load_dataset(out.dataset, {}, {{}, progress.cancel});
  out.best_return = std::numeric_limits<double>::quiet_NaN();
  for (const auto& e : ds.episodes)
    if (e.complete()) {
      out.episode_returns.push_back(e.ret);
      if (std::isnan(out.best_return) || e.ret > out.best_return) out.best_return = e.ret;
    }
  progress.update(0.9, "inspecting windows");
  out.windows = sample_windows(ds, count, out.info.variant.context_length);
  out.inspections = inspect_windows(checkpoint, out.windows);
  progress.update(1.0, "inspected");
  return out;
}

}  // namespace dstudio::models

// Windows and their inspection. See windows.h.

#include "dstudio/models/windows.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "dstudio/behaviour/default_datasets.h"
#include "dstudio/common/error.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/env/environment.h"
#include "dstudio/models/checkpoint_model.h"
#include "dstudio/models/dataset_fit.h"
#include "dstudio/models/targets.h"
#include "policy_window.h"

namespace dstudio::models {
namespace fs = std::filesystem;

namespace {

// K steps ending at `last_step` of an episode whose rows start at `states` and `actions`, with
// `rtg` the return-to-go of each of its steps; left-padded when the episode is younger than K.
// Actions of steps from `actions_known_until` on stay 0 (a policy acting there had not chosen it).
Window cut_window(const float* states, const float* actions, const double* rtg, int S, int A,
                  int episode, int last_step, int K,
                  int actions_known_until = std::numeric_limits<int>::max()) {
  Window w{K,
           S,
           A,
           episode,
           last_step,
           std::vector<float>(static_cast<std::size_t>(K) * S, 0.0f),
           std::vector<float>(static_cast<std::size_t>(K) * A, 0.0f),
           std::vector<float>(static_cast<std::size_t>(K), 0.0f),
           std::vector<std::int64_t>(static_cast<std::size_t>(K), 0),
           std::vector<float>(static_cast<std::size_t>(K), 0.0f)};
  const int len = std::min(K, last_step + 1), offset = K - len;
  for (int p = 0; p < len; ++p) {
    const auto step = static_cast<std::size_t>(last_step - len + 1 + p);
    const auto slot = static_cast<std::size_t>(offset + p);
    std::copy_n(states + step * static_cast<std::size_t>(S), S, &w.states[slot * S]);
    if (static_cast<int>(step) < actions_known_until)
      std::copy_n(actions + step * static_cast<std::size_t>(A), A, &w.actions[slot * A]);
    w.returns_to_go[slot] = static_cast<float>(rtg[step]);
    w.timesteps[slot] = static_cast<std::int64_t>(step);
    w.mask[slot] = 1.0f;
  }
  return w;
}

// Returns-to-go from each step of dataset episode `episode` to its end.
std::vector<double> episode_returns_to_go(const data::Dataset& ds, int episode, double shift) {
  const auto& e = ds.episodes.at(static_cast<std::size_t>(episode));
  std::vector<double> rtg(static_cast<std::size_t>(e.length) + 1, 0.0);
  for (std::int64_t t = e.length - 1; t >= 0; --t)
    rtg[static_cast<std::size_t>(t)] =
        rtg[static_cast<std::size_t>(t) + 1] +
        model_reward(ds.data.rewards[static_cast<std::size_t>(e.start + t)], shift);
  return rtg;
}

}  // namespace

Window window_from_dataset(const data::Dataset& ds, int episode, int last_step, int K,
                           double reward_shift) {
  const auto& e = ds.episodes.at(static_cast<std::size_t>(episode));
  if (last_step < 0 || last_step >= e.length)
    throw UsageError("step " + std::to_string(last_step) + " is outside episode " +
                     std::to_string(episode));
  const int S = static_cast<int>(ds.data.obs_dim), A = static_cast<int>(ds.data.act_dim);
  const auto rtg = episode_returns_to_go(ds, episode, reward_shift);
  const auto row = static_cast<std::size_t>(e.start);
  return cut_window(&ds.data.observations[row * S], &ds.data.actions[row * A], rtg.data(), S, A,
                    episode, last_step, K);
}

std::vector<Window> sample_windows(const data::Dataset& ds, int count, int K, double reward_shift) {
  std::vector<int> episodes;
  for (std::size_t e = 0; e < ds.episodes.size(); ++e)
    if (ds.episodes[e].complete() && ds.episodes[e].length >= K)
      episodes.push_back(static_cast<int>(e));
  if (episodes.empty())
    throw Error(ds.path + " has no complete episode of at least " + std::to_string(K) + " steps");
  std::stable_sort(episodes.begin(), episodes.end(), [&](int a, int b) {
    return ds.episodes[static_cast<std::size_t>(a)].length >
           ds.episodes[static_cast<std::size_t>(b)].length;
  });
  std::vector<Window> out;
  const int per = std::max(
      1, (count + static_cast<int>(episodes.size()) - 1) / static_cast<int>(episodes.size()));
  const int used = std::min(static_cast<int>(episodes.size()), (count + per - 1) / per);
  for (int r = 0; r < used; ++r) {
    const int e = episodes[static_cast<std::size_t>(r)];
    const auto length = static_cast<int>(ds.episodes[static_cast<std::size_t>(e)].length);
    for (int k = 0; k < per && static_cast<int>(out.size()) < count; ++k) {
      // Evenly spaced ends in [K - 1, length - 1], interleaved across episodes, so that a few
      // windows from many episodes still cover every phase of an episode, not only its middle.
      const long long slot = static_cast<long long>(k) * used + r,
                      slots = static_cast<long long>(per) * used;
      const int last =
          K - 1 +
          static_cast<int>(static_cast<long long>(length - K) * (2 * slot + 1) / (2 * slots));
      out.push_back(window_from_dataset(ds, e, last, K, reward_shift));
    }
  }
  return out;
}

Window window_from_trace(const EpisodeTrace& trace, int step, int K, int S, int A) {
  if (step < 0 || step >= trace.length ||
      trace.states.size() < static_cast<std::size_t>(trace.length) * S)
    throw UsageError("the rollout has no trace of step " + std::to_string(step));
  // The current step's action was not known when the policy acted: its slot stays 0.
  return cut_window(trace.states.data(), trace.actions.data(), trace.returns_to_go.data(), S, A, -1,
                    step, K, /*actions_known_until=*/step);
}

WindowInspection inspection_row(const Inspection& inspection, int64_t b,
                                const std::vector<float>& mask,
                                const std::vector<std::int64_t>& timesteps, int per_step,
                                int hidden, bool keep_tokens) {
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
    r.layers.push_back({static_cast<int>(m.size(0)), T,
                        std::vector<float>(m.data_ptr<float>(), m.data_ptr<float>() + m.numel()),
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

std::vector<WindowInspection> inspect_windows(DecisionModelImpl& model, const CheckpointInfo& info,
                                              const std::vector<Window>& windows,
                                              ModalityZeroing zeroing) {
  const auto& c = model.config();
  std::vector<WindowInspection> out;
  if (windows.empty()) return out;
  const int K = windows.front().steps, S = c.state_dim, A = c.act_dim;
  for (const auto& w : windows)
    if (w.steps != K || w.state_dim != S || w.act_dim != A)
      throw Error("the windows do not fit the model (state " + std::to_string(S) + ", action " +
                  std::to_string(A) + ")");
  const bool was_training = model.is_training();
  model.eval();
  torch::InferenceMode inference;
  const auto B = static_cast<int64_t>(windows.size());
  const ModelInputs in = window_inputs(windows, c, info);
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

ModelInputs window_inputs(const std::vector<Window>& windows, const VariantConfig& c,
                          const CheckpointInfo& info) {
  const int K = windows.empty() ? c.context_length : windows.front().steps, S = c.state_dim,
            A = c.act_dim;
  const auto B = static_cast<int64_t>(windows.size());
  // Every window must have the model's sizes before anything is copied into the tensors: a state
  // of another size would be written past them.
  const auto n = [](int a, int b) {
    return static_cast<std::size_t>(a) * static_cast<std::size_t>(b);
  };
  for (const auto& w : windows)
    if (w.steps != K || w.state_dim != S || w.act_dim != A || w.states.size() != n(K, S) ||
        w.actions.size() != n(K, A) || w.returns_to_go.size() != n(K, 1) ||
        w.timesteps.size() != n(K, 1) || w.mask.size() != n(K, 1))
      throw Error("the windows do not fit the model (" + std::to_string(K) + " steps of state " +
                  std::to_string(S) + " and action " + std::to_string(A) + "; a window has " +
                  std::to_string(w.steps) + " steps of state " + std::to_string(w.state_dim) +
                  " and action " + std::to_string(w.act_dim) + ")");
  ModelInputs in = empty_windows(B, K, S, A);
  for (int64_t b = 0; b < B; ++b) {
    const auto& w = windows[static_cast<std::size_t>(b)];
    std::copy(w.states.begin(), w.states.end(), in.states.data_ptr<float>() + b * K * S);
    std::copy(w.actions.begin(), w.actions.end(), in.actions.data_ptr<float>() + b * K * A);
    for (int k = 0; k < K; ++k)
      in.returns_to_go.data_ptr<float>()[b * K + k] =
          static_cast<float>(w.returns_to_go[static_cast<std::size_t>(k)] / info.rtg_scale);
    std::copy(w.timesteps.begin(), w.timesteps.end(), in.timesteps.data_ptr<int64_t>() + b * K);
    std::copy(w.mask.begin(), w.mask.end(), in.mask.data_ptr<float>() + b * K);
  }
  in.timesteps.clamp_(0, c.max_ep_len - 1);
  auto mean = torch::tensor(info.state_mean), std = torch::tensor(info.state_std);
  in.states = (in.states - mean) / std * in.mask.unsqueeze(-1);  // padding stays 0
  return in;
}

std::vector<WindowInspection> inspect_windows(const LoadedCheckpoint& checkpoint,
                                              const std::vector<Window>& windows,
                                              ModalityZeroing zeroing) {
  DecisionModel model = checkpoint.model;  // the same module, callable
  return inspect_windows(*model, checkpoint.info, windows, zeroing);
}

std::vector<WindowInspection> inspect_windows(const fs::path& checkpoint,
                                              const std::vector<Window>& windows,
                                              ModalityZeroing zeroing, const Progress& progress) {
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
    for (const auto kind : {behaviour::DatasetKind::Random, behaviour::DatasetKind::Medium,
                            behaviour::DatasetKind::MediumReplay, behaviour::DatasetKind::Expert,
                            behaviour::DatasetKind::MediumExpert})
      for (const auto algorithm :
           {behaviour::PolicyAlgorithm::Sac, behaviour::PolicyAlgorithm::Ars}) {
        std::filesystem::path path;
        try {
          path = behaviour::default_dataset_path(env, kind, algorithm);
        } catch (const std::runtime_error&) {
          continue;  // no policies of that algorithm ship for this environment
        }
        if (!info.dataset_path.empty() &&
            path.filename() == fs::path(info.dataset_path).filename()) {
          const auto made = behaviour::ensure_default_dataset(env, kind, progress, algorithm);
          const auto ds = data::load_dataset(made, {.isolate = true});
          if (ds.fingerprint == info.dataset_fingerprint) return made;
        }
      }
  throw CheckpointError(info.path + ": its dataset " +
                        (info.dataset_path.empty() ? std::string("is not recorded")
                                                   : info.dataset_path + " is not here") +
                        "; pass one with --dataset");
}

DatasetInspection inspect_on_dataset(const fs::path& checkpoint, int count, const fs::path& dataset,
                                     const Progress& progress) {
  progress.update(0.0, "reading the checkpoint");
  return inspect_on_dataset(*open_checkpoint(checkpoint), count, dataset, progress);
}

DatasetInspection inspect_on_dataset(const LoadedCheckpoint& checkpoint, int count,
                                     const fs::path& dataset, const Progress& progress) {
  DatasetInspection out;
  out.info = checkpoint.info;
  // Finding the checkpoint's dataset may mean making it again; that is most of the work then.
  out.dataset = dataset.empty() ? checkpoint_dataset(out.info, progress.part(0.0, 0.8)) : dataset;
  progress.update(0.8, "loading the dataset");
  const auto ds = data::load_dataset(out.dataset, {.isolate = true}, {{}, progress.cancel});
  out.dataset_warnings = ds.warnings;
  if (auto warning = check_dataset_fits(out.info, ds); !warning.empty())
    out.dataset_warnings.push_back(std::move(warning));
  out.best_return = std::numeric_limits<double>::quiet_NaN();
  const double shift = out.info.training.reward_shift;
  for (const auto& e : ds.episodes)
    if (e.complete()) {
      const double ret = model_return(e.ret, e.length, shift);
      out.episode_returns.push_back(ret);
      if (std::isnan(out.best_return) || ret > out.best_return) out.best_return = ret;
    }
  progress.update(0.9, "inspecting windows");
  out.windows = sample_windows(ds, count, out.info.variant.context_length, shift);
  DecisionModel model = checkpoint.model;  // the same module, callable
  out.inspections = inspect_windows(*model, out.info, out.windows);
  progress.update(1.0, "inspected");
  return out;
}

std::vector<std::pair<int, int>> episode_window_ends(int length, int K) {
  std::vector<std::pair<int, int>> out;
  if (length <= 0 || K <= 0) return out;
  // Consecutive windows share one step, so each new step has its predecessor in its window.
  const int stride = std::max(1, K - 1);
  int end = std::min(K - 1, length - 1);
  out.emplace_back(end, 0);
  while (end < length - 1) {
    const int next = std::min(end + stride, length - 1);
    out.emplace_back(next, end + 1);
    end = next;
  }
  return out;
}

namespace {

// Tokens per real step: R, s and a before merging (not for unified tokens), then one token or
// three in the block.
int tokens_per_step(const VariantConfig& c) {
  return (c.tokenizer == Tokenizer::Unified ? 0 : 3) + (c.tokenizer == Tokenizer::Triplet ? 3 : 1);
}

// A source that asks for no tokens is refused before anything is read.
void check_token_source(const TokenSource& source) {
  if (source.count < 1)
    throw UsageError("the tokens need at least one window or episode, not " +
                     std::to_string(source.count));
  if (source.max_tokens < 0)
    throw UsageError("the most tokens must be 0 (every one) or more, not " +
                     std::to_string(source.max_tokens));
}

// The windows whose tokens are gathered, in each the first step whose tokens are taken (those
// before it are the window before's), and the episodes they come from.
struct TokenWindows {
  int K, S, A;
  long long steps_left;  // the steps the most tokens leave room for; -1: no limit
  std::vector<Window> windows;
  std::vector<int> first_new;
  std::vector<int> episodes_used;

  // An episode's windows, each sharing its first step with the one before, as far as the most
  // tokens allow; `rtg` is the return-to-go of each of its steps.
  void add_episode(const float* states, const float* actions, const double* rtg, int episode,
                   int length) {
    if (steps_left >= 0) length = static_cast<int>(std::min<long long>(length, steps_left));
    if (length <= 0) return;
    for (const auto& [last, from] : episode_window_ends(length, K)) {
      windows.push_back(cut_window(states, actions, rtg, S, A, episode, last, K));
      first_new.push_back(from);
    }
    if (steps_left >= 0) steps_left -= length;
    episodes_used.push_back(episode);
  }
};

// Episodes played by the checkpoint's policy, with their returns, as windows.
void windows_of_rollouts(DecisionModelImpl& model, const TokenSource& source,
                         const Progress& progress, GatheredTokens& out, TokenWindows& run) {
  RolloutConfig rc;
  rc.episodes = source.count;
  rc.targets = {source.target != 0.0 ? source.target : default_target(out.info)};
  rc.seed = source.seed;
  rc.threads = source.threads;
  rc.traces = true;
  const auto played = rollout(model, out.info, rc, progress.part(0.0, 0.6));
  for (std::size_t e = 0; e < played.episodes.size(); ++e) {
    const auto& trace = played.episodes[e];
    out.episode_returns.push_back(trace.episode_return);
    if (trace.states.size() < static_cast<std::size_t>(trace.length) * run.S ||
        trace.actions.size() < static_cast<std::size_t>(trace.length) * run.A)
      throw Error("the rollout kept no trace of episode " + std::to_string(e));
    run.add_episode(trace.states.data(), trace.actions.data(), trace.returns_to_go.data(),
                    static_cast<int>(e), trace.length);
  }
}

// The dataset's windows as sample_windows draws them, or its longest complete episodes whole.
void windows_of_dataset(const TokenSource& source, const fs::path& dataset,
                        const Progress& progress, GatheredTokens& out, TokenWindows& run) {
  const int S = run.S, A = run.A;
  Progress finding = progress.part(0.0, 0.5);
  out.dataset = dataset.empty() ? checkpoint_dataset(out.info, finding) : dataset;
  progress.update(0.5, "loading the dataset");
  const auto ds = data::load_dataset(out.dataset, {.isolate = true}, {{}, progress.cancel});
  out.dataset_warnings = ds.warnings;
  if (auto warning = check_dataset_fits(out.info, ds); !warning.empty())
    out.dataset_warnings.push_back(std::move(warning));
  if (source.kind == TokenSource::Kind::Windows) {
    run.windows = sample_windows(ds, source.count, run.K, out.info.training.reward_shift);
    run.first_new.assign(run.windows.size(), 0);
    for (const auto& w : run.windows)
      if (std::find(run.episodes_used.begin(), run.episodes_used.end(), w.episode) ==
          run.episodes_used.end())
        run.episodes_used.push_back(w.episode);
    return;
  }
  // The longest complete episodes first, as sample_windows takes them.
  std::vector<int> order;
  for (std::size_t e = 0; e < ds.episodes.size(); ++e)
    if (ds.episodes[e].complete() && ds.episodes[e].length > 0)
      order.push_back(static_cast<int>(e));
  if (order.empty()) throw Error(out.dataset.string() + " has no complete episode");
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return ds.episodes[static_cast<std::size_t>(a)].length >
           ds.episodes[static_cast<std::size_t>(b)].length;
  });
  for (int k = 0;
       k < std::min<int>(source.count, static_cast<int>(order.size())) && run.steps_left != 0;
       ++k) {
    const int e = order[static_cast<std::size_t>(k)];
    const auto& ep = ds.episodes[static_cast<std::size_t>(e)];
    const auto rtg = episode_returns_to_go(ds, e, out.info.training.reward_shift);
    const auto row = static_cast<std::size_t>(ep.start);
    run.add_episode(&ds.data.observations[row * S], &ds.data.actions[row * A], rtg.data(), e,
                    static_cast<int>(ep.length));
  }
}

// The windows' new tokens into the cloud, in batches of windows: each batch's inspection
// (attention maps included) goes once its tokens are taken.
void embed_tokens(DecisionModelImpl& model, const TokenWindows& run, const Progress& progress,
                  GatheredTokens& out) {
  const auto& windows = run.windows;
  const auto& cfg = out.info.variant;
  constexpr std::size_t kBatch = 128;
  auto& cloud = out.cloud;
  cloud.dims = cfg.hidden;
  // Goal-reaching tasks colour their tokens by the step's distance to the goal too.
  std::function<double(std::span<const float>)> goal_distance;
  if (const auto task = env::find_task(out.info.env_id); task && task->obs_dim == cfg.state_dim)
    goal_distance = task->goal_distance;
  for (std::size_t from = 0; from < windows.size(); from += kBatch) {
    progress.update(0.6 + 0.4 * static_cast<double>(from) / static_cast<double>(windows.size()),
                    "embedding the tokens");
    const std::size_t to = std::min(windows.size(), from + kBatch);
    const std::vector<Window> batch(windows.begin() + static_cast<std::ptrdiff_t>(from),
                                    windows.begin() + static_cast<std::ptrdiff_t>(to));
    const auto part = token_cloud(batch, inspect_windows(model, out.info, batch), goal_distance);
    const auto H = static_cast<std::size_t>(part.dims);
    for (int i = 0; i < part.count(); ++i) {
      const auto at = static_cast<std::size_t>(i);
      const auto w = from + static_cast<std::size_t>(part.window[at]);
      if (part.timestep[at] < run.first_new[w]) continue;  // shown by the window before
      cloud.points.insert(cloud.points.end(),
                          part.points.begin() + static_cast<std::ptrdiff_t>(at * H),
                          part.points.begin() + static_cast<std::ptrdiff_t>((at + 1) * H));
      cloud.modality.push_back(part.modality[at]);
      cloud.window.push_back(static_cast<int>(w));
      cloud.episode.push_back(part.episode[at]);
      cloud.timestep.push_back(part.timestep[at]);
      cloud.return_to_go.push_back(part.return_to_go[at]);
      if (!part.goal_distance.empty()) cloud.goal_distance.push_back(part.goal_distance[at]);
    }
  }
}

}  // namespace

GatheredTokens gather_tokens(const fs::path& checkpoint, const TokenSource& source,
                             const fs::path& dataset, const Progress& progress) {
  check_token_source(source);
  progress.update(0.0, "reading the checkpoint");
  return gather_tokens(*open_checkpoint(checkpoint), source, dataset, progress);
}

GatheredTokens gather_tokens(const LoadedCheckpoint& checkpoint, const TokenSource& source,
                             const fs::path& dataset, const Progress& progress) {
  check_token_source(source);
  GatheredTokens out;
  out.info = checkpoint.info;
  DecisionModel model = checkpoint.model;  // a handle on the same weights
  const auto& cfg = out.info.variant;
  if (cfg.tokenizer == Tokenizer::State)
    throw UsageError(checkpoint.path.string() + ": " + cfg.variant +
                     " acts from the state alone and has no tokens to lay out");
  const int per_step = tokens_per_step(cfg);
  TokenWindows run{cfg.context_length, cfg.state_dim, cfg.act_dim,
                   source.max_tokens > 0 ? source.max_tokens / per_step : -1};
  if (run.steps_left == 0)
    throw UsageError("at most " + std::to_string(source.max_tokens) +
                     " tokens is less than one step of this model (" + std::to_string(per_step) +
                     " tokens)");

  if (source.kind == TokenSource::Kind::Rollouts)
    windows_of_rollouts(*model, source, progress, out, run);
  else
    windows_of_dataset(source, dataset, progress, out, run);
  out.windows = static_cast<int>(run.windows.size());
  out.episodes = static_cast<int>(run.episodes_used.size());

  embed_tokens(*model, run, progress, out);
  if (out.cloud.count() == 0) throw Error("no tokens: the windows hold no real step");
  progress.update(1.0, "tokens gathered");
  return out;
}

}  // namespace dstudio::models

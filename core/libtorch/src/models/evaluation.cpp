// Rollouts of a policy in its environment. See evaluation.h.

#include "dstudio/models/evaluation.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "dstudio/analysis/entropy.h"
#include "dstudio/analysis/metrics_row.h"
#include "dstudio/common/error.h"
#include "dstudio/common/system_info.h"
#include "dstudio/env/environment.h"
#include "dstudio/models/checkpoint_model.h"
#include "dstudio/models/intervene.h"
#include "dstudio/models/targets.h"
#include "dstudio/models/windows.h"
#include "parts.h"
#include "policy_window.h"

namespace dstudio::models {
namespace fs = std::filesystem;

namespace {

// The episodes' scores as one task of runs: their IQM with its bootstrap interval.
analysis::Interval episode_iqm(const std::vector<double>& scores) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const double s : scores)
    if (!std::isfinite(s)) return {nan, nan, nan};
  if (scores.empty()) return {nan, nan, nan};
  return analysis::bootstrap_interval({scores}, analysis::aggregate_iqm);
}

// Actions at the last position for rows [0, B) of `in`, split over `parts` threads; intervened by
// `plan` when there is one.
torch::Tensor act_in_parts(DecisionModelImpl& model, const ModelInputs& in, ModalityZeroing zeroing,
                           int parts, const InterventionPlan* plan) {
  const auto act = [&](const ModelInputs& rows) {
    return plan ? plan->act(model, apply_zeroing(rows, zeroing)) : model.act(rows, zeroing);
  };
  const int64_t B = in.states.size(0);
  parts = static_cast<int>(std::min<int64_t>(parts, B));
  if (parts <= 1) return act(in);
  std::vector<torch::Tensor> outs(static_cast<std::size_t>(parts));
  run_parts(parts, [&](int k) {
    torch::InferenceMode inference;
    const int64_t first = B * k / parts, rows = B * (k + 1) / parts - first;
    outs[static_cast<std::size_t>(k)] = act(rows_of(in, first, rows));
  });
  return torch::cat(outs, 0);
}

// A rollout builds its windows as it plays: resample and patch take their values from another
// batch of windows, which it does not have.
void refuse_borrowed_values(const InterventionPlan* plan) {
  if (plan)
    for (const auto& iv : plan->interventions())
      if (iv.replacement == Replacement::Resample || iv.replacement == Replacement::Patch)
        throw UsageError(to_spec(iv) +
                         ": a rollout builds its windows as it plays; resample and patch take "
                         "their values from another batch of windows");
}

// A rollout as it plays: N episodes side by side in their environments, and the histories their
// windows are cut from (normalised states, actions, scaled returns-to-go), max_steps + 1 each.
struct RolloutPlay {
  DecisionModelImpl& model;
  const CheckpointInfo& info;
  const RolloutConfig& cfg;
  const InterventionPlan* plan;
  env::BatchEnvironment& envs;
  RolloutResult& result;
  const int N, max_steps;
  const VariantConfig& c = model.config();
  const int K = c.context_length, S = c.state_dim, A = c.act_dim;
  const int per_step = c.tokenizer == Tokenizer::Triplet ? 3 : 1;
  const double scale = info.rtg_scale;
  const double shift = info.training.reward_shift;
  const std::size_t steps1 = static_cast<std::size_t>(max_steps + 1);
  std::vector<float> obs = std::vector<float>(static_cast<std::size_t>(N) * S),
                     step_actions = std::vector<float>(static_cast<std::size_t>(N) * A, 0.0f);
  std::vector<double> rewards = std::vector<double>(static_cast<std::size_t>(N));
  std::vector<float> hist_states = std::vector<float>(static_cast<std::size_t>(N) * steps1 * S),
                     hist_actions =
                         std::vector<float>(static_cast<std::size_t>(N) * steps1 * A, 0.0f),
                     hist_rtg = std::vector<float>(static_cast<std::size_t>(N) * steps1, 0.0f),
                     raw_states = std::vector<float>(static_cast<std::size_t>(N) * S);

  void store_state(int i, int t) {
    for (int k = 0; k < S; ++k) {
      const float v = obs[static_cast<std::size_t>(i) * S + k];
      raw_states[static_cast<std::size_t>(i) * S + k] = v;
      hist_states[(static_cast<std::size_t>(i) * steps1 + t) * S + k] =
          (v - info.state_mean[static_cast<std::size_t>(k)]) /
          info.state_std[static_cast<std::size_t>(k)];
    }
  }

  // Episode i plays towards targets[i / E] from seeds[i]; its first state is the reset's.
  void start(const std::vector<double>& targets, const std::vector<std::uint64_t>& seeds, int E) {
    result.episodes.resize(static_cast<std::size_t>(N));
    for (int i = 0; i < N; ++i) {
      auto& e = result.episodes[static_cast<std::size_t>(i)];
      e.target = targets[static_cast<std::size_t>(i / E)];
      e.seed = seeds[static_cast<std::size_t>(i)];
      hist_rtg[static_cast<std::size_t>(i) * steps1] = static_cast<float>(e.target / scale);
      store_state(i, 0);
    }
  }

  // Plays step t of every episode still running; false when none is.
  bool step(int t, const Progress& progress) {
    progress.update(static_cast<double>(t) / max_steps,
                    "step " + std::to_string(t + 1) + " of " + std::to_string(max_steps));
    std::vector<int> active;
    for (int i = 0; i < N; ++i)
      if (envs.running(i)) active.push_back(i);
    if (active.empty()) return false;
    const auto B = static_cast<int64_t>(active.size());
    // The window: the last K steps, left-padded.
    ModelInputs in = empty_windows(B, K, S, A);
    for (int64_t r = 0; r < B; ++r) {
      const auto i = static_cast<std::size_t>(active[static_cast<std::size_t>(r)]);
      fill_window_row(in, r, &hist_states[i * steps1 * S], &hist_actions[i * steps1 * A],
                      &hist_rtg[i * steps1], t, c.max_ep_len);
    }
    const bool inspect =
        std::find(cfg.inspect_steps.begin(), cfg.inspect_steps.end(), t) != cfg.inspect_steps.end();
    torch::Tensor actions;
    Inspection inspection;
    if (cfg.entropy || inspect) {
      actions = (plan ? plan->forward(model, apply_zeroing(in, cfg.zeroing), &inspection)
                      : model.forward(in, &inspection, cfg.zeroing))
                    .select(1, K - 1)
                    .contiguous();
    } else {
      actions = act_in_parts(model, in, cfg.zeroing, cfg.threads, plan).contiguous();
    }
    const float* out = actions.data_ptr<float>();
    std::fill(step_actions.begin(), step_actions.end(), 0.0f);
    for (int64_t r = 0; r < B; ++r)
      std::copy_n(out + r * A, A,
                  &step_actions[static_cast<std::size_t>(active[static_cast<std::size_t>(r)]) * A]);
    if (cfg.entropy || inspect) inspect_step(active, t, inspection, inspect);

    envs.step(step_actions, obs, rewards);
    result.env_steps += B;
    record_step(active, t);
    return true;
  }

  // The entropy and the inspection of step t's windows, for each active episode.
  void inspect_step(const std::vector<int>& active, int t, const Inspection& inspection,
                    bool inspect) {
    const auto B = static_cast<int64_t>(active.size());
    const int len = std::min(t + 1, K), offset = K - len;
    const int64_t T = static_cast<int64_t>(K) * per_step;
    std::vector<char> valid(static_cast<std::size_t>(T));
    for (int64_t k = 0; k < T; ++k) valid[static_cast<std::size_t>(k)] = (k / per_step) >= offset;
    const auto first = inspection.mixing.front().contiguous();
    const int64_t heads = first.size(1);
    for (int64_t r = 0; r < B; ++r) {
      auto& e = result.episodes[static_cast<std::size_t>(active[static_cast<std::size_t>(r)])];
      if (cfg.entropy) {
        const float* m = first.data_ptr<float>() + r * heads * T * T;
        e.entropy.push_back(
            analysis::mean_head_entropy({m, static_cast<std::size_t>(heads * T * T)},
                                        static_cast<int>(heads), static_cast<int>(T), valid));
      }
      if (inspect) {
        StepInspection s;
        s.step = t;
        s.tokens = static_cast<int>(T);
        s.token_types = inspection.token_types;
        for (int64_t k = 0; k < T; ++k) {
          const int64_t p = k / per_step;
          s.token_steps.push_back(p >= offset ? static_cast<int>(t - (K - 1) + p) : -1);
        }
        s.mixers = inspection.mixers;
        for (const auto& layer : inspection.mixing) {
          const auto m = layer.select(0, r).contiguous();
          s.heads.push_back(static_cast<int>(m.size(0)));
          s.mixing.emplace_back(m.data_ptr<float>(), m.data_ptr<float>() + m.numel());
        }
        e.inspections.push_back(std::move(s));
      }
    }
  }

  // What step t did to each active episode: its trace, the action and the next return-to-go in
  // its history, its return and length, and its next state or how it ended.
  void record_step(const std::vector<int>& active, int t) {
    const auto B = static_cast<int64_t>(active.size());
    for (int64_t r = 0; r < B; ++r) {
      const int i = active[static_cast<std::size_t>(r)];
      const auto si = static_cast<std::size_t>(i);
      auto& e = result.episodes[si];
      const double reward = rewards[si];
      if (cfg.traces) {
        e.states.insert(e.states.end(), &raw_states[si * S], &raw_states[si * S] + S);
        e.actions.insert(e.actions.end(), &step_actions[si * A], &step_actions[si * A] + A);
        e.rewards.push_back(reward);
        e.returns_to_go.push_back(
            static_cast<double>(hist_rtg[si * steps1 + static_cast<std::size_t>(t)]) * scale);
      }
      std::copy_n(&step_actions[si * A], A,
                  &hist_actions[(si * steps1 + static_cast<std::size_t>(t)) * A]);
      hist_rtg[si * steps1 + static_cast<std::size_t>(t) + 1] =
          hist_rtg[si * steps1 + static_cast<std::size_t>(t)] -
          static_cast<float>(model_reward(reward, shift) / scale);
      e.episode_return += reward;
      ++e.length;
      if (envs.running(i))
        store_state(i, t + 1);
      else {
        e.terminated = envs.last(i).terminated;
        e.success = envs.last(i).success;
      }
    }
  }
};

// Each target's E episodes scored, and summarised: returns, scores, their IQM and successes.
void summarise_targets(RolloutResult& result, const env::EnvironmentDefinition& spec,
                       const std::vector<double>& targets, int E) {
  for (std::size_t k = 0; k < targets.size(); ++k) {
    std::vector<double> returns, scores;
    for (int e = 0; e < E; ++e) {
      auto& ep = result.episodes[k * static_cast<std::size_t>(E) + static_cast<std::size_t>(e)];
      ep.score = env::normalized_score(spec, ep.episode_return);
      returns.push_back(ep.episode_return);
      scores.push_back(ep.score);
    }
    const auto r = analysis::mean_std(returns), s = analysis::mean_std(scores);
    result.summary.push_back({targets[k], E, r.mean, r.std, s.mean, s.std, episode_iqm(scores)});
    for (int e = 0; e < E; ++e)
      result.summary.back().successes +=
          result.episodes[k * static_cast<std::size_t>(E) + static_cast<std::size_t>(e)].success;
  }
}

}  // namespace

RolloutResult rollout(DecisionModelImpl& model, const CheckpointInfo& info,
                      const RolloutConfig& cfg, const Progress& progress,
                      const InterventionPlan* plan) {
  refuse_borrowed_values(plan);
  const auto t_start = std::chrono::steady_clock::now();
  RolloutResult result;
  result.env_id = cfg.env_id.empty() ? info.env_id : cfg.env_id;
  if (result.env_id.empty())
    throw CheckpointError(info.path +
                          ": names no environment; say which one to act in (e.g. --env hopper)");
  const auto& spec = env::task(result.env_id);
  result.reports_success = spec.goal_reaching || spec.reports_success;
  result.reward_shift = info.training.reward_shift;
  const auto& c = model.config();
  if (c.state_dim != spec.obs_dim || c.act_dim != spec.act_dim)
    throw env::EnvError(info.path + ": the model takes states of " + std::to_string(c.state_dim) +
                        " and actions of " + std::to_string(c.act_dim) + "; " + spec.name +
                        " has " + std::to_string(spec.obs_dim) + " and " +
                        std::to_string(spec.act_dim));
  if (cfg.episodes < 1) throw UsageError("a rollout needs at least one episode per target");
  const std::vector<double> targets =
      cfg.targets.empty() ? reference_targets(spec, info.training.reward_shift) : cfg.targets;
  const int E = cfg.episodes, N = static_cast<int>(targets.size()) * E;
  const int max_steps =
      cfg.max_steps > 0 ? std::min(cfg.max_steps, spec.max_episode_steps) : spec.max_episode_steps;

  env::BatchEnvironment envs(result.env_id, N);
  std::vector<std::uint64_t> seeds(static_cast<std::size_t>(N));
  for (int i = 0; i < N; ++i)
    seeds[static_cast<std::size_t>(i)] = cfg.seed + static_cast<std::uint64_t>(i % E);
  RolloutPlay play{model, info, cfg, plan, envs, result, N, max_steps};
  envs.reset(seeds, play.obs);
  play.start(targets, seeds, E);

  const bool was_training = model.is_training();
  model.eval();
  at::set_num_threads(1);
  set_blas_threads(1);
  torch::InferenceMode inference;
  try {
    for (int t = 0; t < max_steps; ++t)
      if (!play.step(t, progress)) break;
  } catch (...) {
    if (was_training) model.train();
    throw;
  }
  if (was_training) model.train();

  summarise_targets(result, spec, targets, E);
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  progress.update(1.0, "done");
  return result;
}

RolloutResult rollout(const fs::path& checkpoint, const RolloutConfig& config,
                      const Progress& progress) {
  CheckpointInfo info;
  DecisionModel model = load_checkpoint_model(checkpoint, &info);
  return rollout(*model, info, config, progress);
}

RolloutResult rollout(const LoadedCheckpoint& checkpoint, const RolloutConfig& config,
                      const Progress& progress) {
  DecisionModel model = checkpoint.model;  // a handle on the same weights
  return rollout(*model, checkpoint.info, config, progress);
}

namespace {

AblationResult zeroing_ablation(DecisionModel model, const CheckpointInfo& info,
                                const AblationConfig& config, const Progress& progress) {
  AblationResult result;
  result.target = config.target != 0.0 ? config.target : default_target(info);
  const int parts = static_cast<int>(kModalityZeroings.size()) * config.seeds;
  int part = 0;
  for (const auto zeroing : kModalityZeroings) {
    ZeroingResult z;
    z.zeroing = zeroing;
    std::vector<double> returns, scores, seed_means;
    for (int s = 0; s < config.seeds; ++s, ++part) {
      RolloutConfig rc;
      rc.targets = {result.target};
      rc.episodes = config.episodes;
      rc.seed = config.seed + static_cast<std::uint64_t>(s) * 1000;
      rc.zeroing = zeroing;
      rc.threads = config.threads;
      rc.max_steps = config.max_steps;
      rc.traces = false;
      // Each rollout an equal part of the whole.
      Progress part_progress;
      part_progress.cancel = progress.cancel;
      const std::string stage =
          std::string(to_string(zeroing)) + ", seed " + std::to_string(s) + ": ";
      if (progress.report)
        part_progress.report = [&progress, part, parts, &stage](double f, std::string_view what) {
          progress.report((part + f) / parts, stage + std::string(what));
        };
      auto r = rollout(*model, info, rc, part_progress);
      seed_means.push_back(r.summary.front().mean_score);
      for (auto& e : r.episodes) {
        returns.push_back(e.episode_return);
        scores.push_back(e.score);
        z.episodes.push_back(std::move(e));
      }
    }
    const auto r = analysis::mean_std(returns), sc = analysis::mean_std(scores);
    z.summary = {
        result.target,      static_cast<int>(scores.size()), r.mean, r.std, sc.mean, sc.std,
        episode_iqm(scores)};
    z.std_over_seeds = analysis::mean_std(seed_means).std;
    result.zeroings.push_back(std::move(z));
  }
  progress.update(1.0, "done");
  return result;
}

}  // namespace

AblationResult zeroing_ablation(const fs::path& checkpoint, const AblationConfig& config,
                                const Progress& progress) {
  if (config.episodes < 1 || config.seeds < 1)
    throw UsageError("an ablation needs at least one episode and one seed");
  CheckpointInfo info;
  DecisionModel model = load_checkpoint_model(checkpoint, &info);
  return zeroing_ablation(model, info, config, progress);
}

AblationResult zeroing_ablation(const LoadedCheckpoint& checkpoint, const AblationConfig& config,
                                const Progress& progress) {
  if (config.episodes < 1 || config.seeds < 1)
    throw UsageError("an ablation needs at least one episode and one seed");
  return zeroing_ablation(checkpoint.model, checkpoint.info, config, progress);
}

EvaluationHook evaluation_hook(const data::Dataset& dataset, const TrainingConfig& training,
                               int episodes, int windows) {
  CheckpointInfo info;
  info.path = dataset.path;
  info.env_id = dataset.env_id;
  info.state_mean = dataset.state_mean;
  info.state_std = dataset.state_std;
  info.rtg_scale = training.rtg_scale;
  info.training = training;
  info.dataset_path = dataset.path;
  return [&dataset, info, episodes, windows, sampled = std::vector<Window>{}](
             DecisionModelImpl& model, std::int64_t) mutable {
    EvaluationResult out;
    if (!info.env_id.empty()) {
      RolloutConfig rc;
      rc.targets = {default_target(info)};
      rc.episodes = episodes;
      rc.traces = false;
      const auto r = rollout(model, info, rc);
      out[analysis::metrics::kEvalScore] = r.summary.front().mean_score;
      out[analysis::metrics::kEvalScoreStd] = r.summary.front().std_score;
      out[analysis::metrics::kEvalReturn] = r.summary.front().mean_return;
      if (r.reports_success)
        out[analysis::metrics::kEvalSuccessRate] = r.summary.front().success_rate();
    }
    if (sampled.empty())
      sampled = sample_windows(dataset, windows, model.config().context_length,
                               info.training.reward_shift);
    const auto ins = inspect_windows(model, info, sampled);
    double entropy = 0.0;
    for (const auto& w : ins) {
      const auto& l = w.layers.front();
      entropy += analysis::mean_head_entropy(l.values, l.heads, l.tokens, w.valid) /
                 static_cast<double>(ins.size());
    }
    out[analysis::metrics::kEntropyLayer1] = entropy;
    return out;
  };
}

}  // namespace dstudio::models

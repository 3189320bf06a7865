// Adroit expert datasets as D4RL made them. See adroit_data.h.

#include "dstudio/behaviour/adroit_data.h"

#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "dstudio/common/error.h"
#include "dstudio/common/random.h"
#include "dstudio/common/system_info.h"
#include "dstudio/env/environment.h"
#include "for_each_episode.h"

namespace dstudio::behaviour {
namespace {

const env::EnvironmentDefinition& adroit_task(const std::string& name) {
  const auto& spec = env::task(name);
  if (spec.family != "adroit")
    throw UsageError("'" + name + "' is not an Adroit task (pen, door, hammer, relocate)");
  return spec;
}

void check_fits(const env::EnvironmentDefinition& spec, const MlpPolicy& expert) {
  expert.validate();
  if (expert.obs_dim != spec.obs_dim || expert.act_dim != spec.act_dim)
    throw Error("the expert takes " + std::to_string(expert.obs_dim) + " observations and gives " +
                std::to_string(expert.act_dim) + " actions; " + spec.name + " has " +
                std::to_string(spec.obs_dim) + " and " + std::to_string(spec.act_dim));
}

// One episode's rows, gathered on its own thread and concatenated in episode order afterwards.
struct EpisodeRows {
  std::vector<float> observations, actions, rewards, qpos, qvel, action_mean, action_log_std;
  std::vector<std::uint8_t> terminals, timeouts;
  std::map<std::string, std::vector<float>> state;  // recorded_state's keys
  std::map<std::string, std::int64_t> state_dims;
  std::int64_t steps = 0;
};

template <class T, class Values>
void append(std::vector<T>& to, const Values& values) {
  for (const auto v : values) to.push_back(static_cast<T>(v));
}

// The expert's action as D4RL's script takes it: sampled (or the mean), clipped to [-1, 1].
void expert_action(const MlpPolicy& expert, std::span<const float> obs, bool sampled,
                   Random& random, std::span<float> action) {
  if (sampled)
    expert.sample(obs, action, random);
  else
    expert.act(obs, action);
  for (auto& a : action) a = std::clamp(a, -1.0f, 1.0f);
}

}  // namespace

GeneratedDataset generate_adroit_expert_dataset(const AdroitExpertConfig& config,
                                                const MlpPolicy& expert, const Progress& progress) {
  const auto& spec = adroit_task(config.task);
  check_fits(spec, expert);
  if (config.episodes < 1) throw UsageError("a dataset needs at least one episode");
  const env::ModelPtr model = env::load_model(spec);
  const auto S = static_cast<std::size_t>(spec.obs_dim), A = static_cast<std::size_t>(spec.act_dim);

  std::vector<EpisodeRows> episodes(static_cast<std::size_t>(config.episodes));
  EpisodesFinished finished(config.episodes, progress);
  for_each_episode(config.episodes, config.threads, [&](std::int64_t k) {
    progress.check();
    env::Environment e(spec, model);
    Random random(Random::derive(config.seed, static_cast<std::uint64_t>(k)));
    std::vector<float> obs(S), next(S), action(A), mean(A), log_std(A);
    e.reset(random.next(), obs);
    auto& rows = episodes[static_cast<std::size_t>(k)];
    for (int t = 0; t < spec.max_episode_steps; ++t) {
      // Recorded before the step: the state that produced the observation.
      append(rows.observations, obs);
      append(rows.qpos, e.qpos());
      append(rows.qvel, e.qvel());
      for (const auto& [key, values] : e.recorded_state()) {
        append(rows.state[key], values);
        rows.state_dims[key] = static_cast<std::int64_t>(values.size());
      }
      expert.distribution(obs, mean, log_std);
      if (config.action_distribution) {
        append(rows.action_mean, mean);
        append(rows.action_log_std, log_std);
      }
      expert_action(expert, obs, config.sampled, random, action);
      append(rows.actions, action);
      const auto r = e.step(action, next);
      rows.rewards.push_back(static_cast<float>(r.reward));
      // The horizon's last step is a timeout and never a terminal, as the script writes it.
      const bool timeout = t == spec.max_episode_steps - 1;
      rows.terminals.push_back(!timeout && r.terminated);
      rows.timeouts.push_back(timeout);
      ++rows.steps;
      if (r.terminated || timeout) break;
      obs = next;
    }
    finished.count_one();
  });

  data::TransitionArrays d;
  d.obs_dim = spec.obs_dim, d.act_dim = spec.act_dim, d.qpos_dim = spec.nq, d.qvel_dim = spec.nv;
  std::int64_t n = 0;
  for (const auto& rows : episodes) n += rows.steps;
  const auto reserve = [n](std::vector<float>& v, std::size_t width) {
    v.reserve(static_cast<std::size_t>(n) * width);
  };
  reserve(d.observations, S);
  reserve(d.actions, A);
  reserve(d.qpos, static_cast<std::size_t>(spec.nq));
  reserve(d.qvel, static_cast<std::size_t>(spec.nv));
  for (auto& rows : episodes) {
    append(d.observations, rows.observations);
    append(d.actions, rows.actions);
    append(d.rewards, rows.rewards);
    append(d.terminals, rows.terminals);
    append(d.timeouts, rows.timeouts);
    append(d.qpos, rows.qpos);
    append(d.qvel, rows.qvel);
    for (const auto& [key, values] : rows.state) {
      auto& info = d.state_infos[key];
      info.dim = rows.state_dims[key];
      append(info.values, values);
    }
    if (config.action_distribution) {
      auto& m = d.state_infos["action_mean"];
      auto& l = d.state_infos["action_log_std"];
      m.dim = l.dim = spec.act_dim;
      append(m.values, rows.action_mean);
      append(l.values, rows.action_log_std);
    }
    rows = EpisodeRows{};  // the rows are copied: free them as we go
  }

  GeneratedDataset out;
  out.metadata = {
      {"generator", "dstudio dataset generate"},
      {"env_id", spec.name},
      {"kind", "expert"},
      {"seed", std::to_string(config.seed)},
      {"episodes", std::to_string(config.episodes)},
      {"transitions", std::to_string(n)},
      {"algorithm", "DAPG"},
      {"behaviour_policy",
       std::string("D4RL's DAPG expert policy (") + expert.source + "), actions " +
           (config.sampled ? "sampled (mean + exp(log_std) N(0, 1))" : "at the mean") +
           " and clipped to [-1, 1], as D4RL's hand_dapg_policies.py"},
      {"behaviour_algorithm", "dapg"},
      {"policy/nonlinearity", expert.nonlinearity},
      {"policy/output_distribution", "gaussian"},
      {"software", studio_version() + ", MuJoCo " + mj_versionString()},
  };
  out.arrays = std::move(d);
  return out;
}

ExpertScore score_adroit_expert(const std::string& task, const MlpPolicy& expert, int episodes,
                                bool sampled, std::uint64_t seed, int threads,
                                const Progress& progress) {
  const auto& spec = adroit_task(task);
  check_fits(spec, expert);
  if (episodes < 1) throw UsageError("a score needs at least one episode");
  const env::ModelPtr model = env::load_model(spec);
  std::vector<double> returns(static_cast<std::size_t>(episodes), 0.0);
  std::vector<char> succeeded(static_cast<std::size_t>(episodes), 0);
  EpisodesFinished finished(episodes, progress);
  for_each_episode(episodes, threads, [&](std::int64_t k) {
    progress.check();
    env::Environment e(spec, model);
    Random random(Random::derive(seed, static_cast<std::uint64_t>(k)));
    std::vector<float> obs(static_cast<std::size_t>(spec.obs_dim)),
        action(static_cast<std::size_t>(spec.act_dim));
    e.reset(random.next(), obs);
    for (;;) {
      expert_action(expert, obs, sampled, random, action);
      const auto r = e.step(action, obs);
      returns[static_cast<std::size_t>(k)] += r.reward;
      if (r.terminated || r.truncated) {
        succeeded[static_cast<std::size_t>(k)] = r.success;
        break;
      }
    }
    finished.count_one();
  });
  ExpertScore s;
  s.episodes = episodes;
  for (const double r : returns) s.mean_return += r / episodes;
  double squares = 0.0;
  for (const double r : returns) squares += (r - s.mean_return) * (r - s.mean_return);
  s.std_return = std::sqrt(squares / episodes);
  s.mean_score = env::normalized_score(spec, s.mean_return);
  const double score_std = 100.0 * (episodes > 1 ? std::sqrt(squares / (episodes - 1)) : 0.0) /
                           (spec.ref_max_score - spec.ref_min_score);
  s.score_ci95 = 1.96 * score_std / std::sqrt(static_cast<double>(episodes));
  for (const char ok : succeeded) s.successes += ok;
  return s;
}

}  // namespace dstudio::behaviour

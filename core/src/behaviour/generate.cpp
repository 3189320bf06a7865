#include "dstudio/behaviour/generate.h"

#include <mujoco/mujoco.h>

#include <exception>
#include <functional>
#include <stdexcept>
#include <thread>

#include "dstudio/common/error.h"
#include "dstudio/common/random.h"
#include "dstudio/common/system_info.h"
#include "dstudio/env/environment.h"

namespace dstudio::behaviour {
namespace {

constexpr std::uint64_t kNoiseSalt = 0x5EED0F0015EULL;

// One episode's transitions, appended to the dataset as a block.
struct EpisodeData {
  std::vector<float> obs, next_obs, actions, rewards, qpos, qvel;
  std::vector<std::uint8_t> terminals, timeouts;
  std::int64_t size() const { return static_cast<std::int64_t>(rewards.size()); }
};

// Chooses the action for the current observation; `random` is the episode's noise stream.
using Actor =
    std::function<void(std::span<const float> obs, std::span<float> action, Random& random)>;

EpisodeData run_episode(env::Environment& e, const Actor& actor, std::uint64_t seed) {
  const auto& spec = e.spec();
  const auto S = static_cast<std::size_t>(spec.obs_dim), A = static_cast<std::size_t>(spec.act_dim);
  std::vector<float> obs(S), next(S), act(A);
  Random noise(seed ^ kNoiseSalt);
  EpisodeData ep;
  e.reset(seed, obs);
  for (;;) {
    // infos/qpos and infos/qvel hold the state at which the observation was taken.
    ep.qpos.insert(ep.qpos.end(), e.qpos().begin(), e.qpos().end());
    ep.qvel.insert(ep.qvel.end(), e.qvel().begin(), e.qvel().end());
    actor(obs, act, noise);
    const auto r = e.step(act, next);
    ep.obs.insert(ep.obs.end(), obs.begin(), obs.end());
    ep.next_obs.insert(ep.next_obs.end(), next.begin(), next.end());
    ep.actions.insert(ep.actions.end(), act.begin(), act.end());
    ep.rewards.push_back(static_cast<float>(r.reward));
    ep.terminals.push_back(r.terminated);
    ep.timeouts.push_back(r.truncated);
    if (r.terminated || r.truncated) break;
    obs = next;
  }
  return ep;
}

class Collector {
 public:
  Collector(const GenerateConfig& config, const Progress& progress)
      : config_(config), progress_(progress), spec_(env::task(config.env)) {
    const env::ModelPtr model = env::load_model(spec_);
    for (int t = 0; t < std::max(1, config.threads); ++t) envs_.emplace_back(spec_, model);
    out_.obs_dim = spec_.obs_dim;
    out_.act_dim = spec_.act_dim;
    out_.qpos_dim = spec_.nq;
    out_.qvel_dim = spec_.nv;
  }

  // Appends whole episodes from `actor` until the dataset holds at least `until` transitions.
  // Episodes run T at a time in parallel; they are appended in index order and any beyond the
  // goal are dropped, so the result does not depend on T.
  void collect(const Actor& actor, std::int64_t until) {
    const int T = static_cast<int>(envs_.size());
    while (out_.size() < until) {
      std::vector<EpisodeData> batch(static_cast<std::size_t>(T));
      std::vector<std::thread> pool;
      // A failure in a worker (a diverging simulation) reaches the caller, never std::terminate.
      std::vector<std::exception_ptr> failures(static_cast<std::size_t>(T));
      for (int t = 0; t < T; ++t)
        pool.emplace_back([&, t] {
          try {
            batch[t] = run_episode(envs_[t], actor, Random::derive(config_.seed, episode_ + t));
          } catch (...) {
            failures[static_cast<std::size_t>(t)] = std::current_exception();
          }
        });
      for (auto& th : pool) th.join();
      for (const auto& failure : failures)
        if (failure) std::rethrow_exception(failure);
      for (auto& ep : batch) {
        if (out_.size() >= until) break;
        append(ep);
        ++episode_;
      }
      progress_.update(std::min(1.0, static_cast<double>(out_.size()) / config_.transitions),
                       std::to_string(out_.size()) + " transitions");
    }
  }

  // Cuts the dataset to exactly `n` transitions; a cut episode loses its end flag and becomes the
  // unterminated tail.
  data::TransitionArrays finish(std::int64_t n) {
    auto cut = [n](auto& v, std::int64_t width) {
      v.resize(static_cast<std::size_t>(
          std::min<std::int64_t>(n, static_cast<std::int64_t>(v.size()) / width) * width));
    };
    cut(out_.observations, out_.obs_dim);
    cut(out_.next_observations, out_.obs_dim);
    cut(out_.actions, out_.act_dim);
    cut(out_.rewards, 1);
    cut(out_.terminals, 1);
    cut(out_.timeouts, 1);
    cut(out_.qpos, out_.qpos_dim);
    cut(out_.qvel, out_.qvel_dim);
    return std::move(out_);
  }

  [[nodiscard]] std::int64_t size() const { return out_.size(); }
  [[nodiscard]] std::int64_t episodes() const { return episode_; }
  [[nodiscard]] const env::EnvironmentDefinition& spec() const { return spec_; }

 private:
  void append(const EpisodeData& ep) {
    auto add = [](auto& to, const auto& from) { to.insert(to.end(), from.begin(), from.end()); };
    add(out_.observations, ep.obs);
    add(out_.next_observations, ep.next_obs);
    add(out_.actions, ep.actions);
    add(out_.rewards, ep.rewards);
    add(out_.terminals, ep.terminals);
    add(out_.timeouts, ep.timeouts);
    out_.qpos.insert(out_.qpos.end(), ep.qpos.begin(), ep.qpos.end());
    out_.qvel.insert(out_.qvel.end(), ep.qvel.begin(), ep.qvel.end());
  }

  const GenerateConfig& config_;
  const Progress& progress_;
  const env::EnvironmentDefinition& spec_;
  std::vector<env::Environment> envs_;
  data::TransitionArrays out_;
  std::uint64_t episode_ = 0;
};

// The behaviour policy of snapshot `index` acting: sampled from its own distribution.
Actor behaviour_of(const PolicySet& set, int index) {
  return [&set, index](std::span<const float> obs, std::span<float> action, Random& random) {
    set.act(index, obs, action, random);
  };
}

void uniform_actions(std::span<const float>, std::span<float> action, Random& random) {
  for (auto& a : action) a = static_cast<float>(random.uniform(-1.0, 1.0));
}

}  // namespace

const char* to_string(DatasetKind kind) {
  switch (kind) {
    case DatasetKind::Random:
      return "random";
    case DatasetKind::Medium:
      return "medium";
    case DatasetKind::MediumReplay:
      return "medium-replay";
    case DatasetKind::Expert:
      return "expert";
    case DatasetKind::MediumExpert:
      return "medium-expert";
  }
  return "?";
}

DatasetKind parse_kind(const std::string& text) {
  for (auto k : {DatasetKind::Random, DatasetKind::Medium, DatasetKind::MediumReplay,
                 DatasetKind::Expert, DatasetKind::MediumExpert})
    if (text == to_string(k)) return k;
  throw UsageError("unknown dataset kind '" + text +
                   "'; known kinds: random, medium, medium-replay, expert, medium-expert");
}

std::int64_t d4rl_transitions(const std::string& env_name, DatasetKind kind,
                              const PolicySet* policies) {
  switch (kind) {
    case DatasetKind::MediumExpert:
      return 2'000'000;
    case DatasetKind::MediumReplay:
      // The learner's whole history up to the medium policy, as its replay buffer held it.
      if (policies && policies->algorithm == PolicyAlgorithm::Sac && policies->medium >= 0)
        return std::max<std::int64_t>(
            1, policies->snapshots[static_cast<std::size_t>(policies->medium)].env_steps);
      {
        const std::string name = env::task(env_name).name;
        return name == "hopper" ? 402'000 : name == "walker2d" ? 302'000 : 202'000;  // D4RL's sizes
      }
    default:
      return 1'000'000;
  }
}

GeneratedDataset generate_dataset(const GenerateConfig& config_in, const PolicySet& policies,
                                  const Progress& progress) {
  GenerateConfig config = config_in;
  if (config.transitions == 0)
    config.transitions = d4rl_transitions(config.env, config.kind, &policies);
  if (config.transitions < 1) throw UsageError("a dataset needs at least one transition");
  Collector collector(config, progress);
  const auto& spec = collector.spec();
  if (config.kind != DatasetKind::Random) {
    policies.validate();
    if (env::task(policies.env).name != spec.name)
      throw Error("the behaviour policies are for " + policies.env + ", not " + spec.name);
  }
  const bool sac = policies.algorithm == PolicyAlgorithm::Sac;
  const std::int64_t n = config.transitions;
  std::string policy_text;
  switch (config.kind) {
    case DatasetKind::Random:
      collector.collect(uniform_actions, n);
      policy_text = "uniform random actions in [-1, 1]";
      break;
    case DatasetKind::Medium:
      collector.collect(behaviour_of(policies, policies.medium), n);
      policy_text = policies.describe(policies.medium);
      break;
    case DatasetKind::Expert:
      collector.collect(behaviour_of(policies, policies.expert), n);
      policy_text = policies.describe(policies.expert);
      break;
    case DatasetKind::MediumReplay: {
      // The learner's history up to the medium level, in training order. SAC's starts with its
      // uniformly random warm-up, and each snapshot stands for the steps since the one before
      // it; ARS's snapshots each take an equal share.
      std::vector<std::pair<int, double>> segments;  // snapshot (-1: random actions), weight
      if (sac) {
        std::int64_t before = 0;
        if (policies.random_steps > 0) {
          segments.emplace_back(-1, static_cast<double>(policies.random_steps));
          before = policies.random_steps;
        }
        for (int i : policies.replay) {
          const auto at = policies.snapshots[static_cast<std::size_t>(i)].env_steps;
          segments.emplace_back(i, static_cast<double>(std::max<std::int64_t>(1, at - before)));
          before = std::max(before, at);
        }
      } else {
        for (int i : policies.replay) segments.emplace_back(i, 1.0);
      }
      double total = 0, done = 0;
      for (const auto& s : segments) total += s.second;
      for (std::size_t k = 0; k < segments.size(); ++k) {
        done += segments[k].second;
        // ARS keeps its exact integer shares, so its datasets stay as they were.
        const std::int64_t until =
            sac ? static_cast<std::int64_t>(std::llround(static_cast<double>(n) * done / total))
                : n * static_cast<std::int64_t>(k + 1) / static_cast<std::int64_t>(segments.size());
        if (segments[k].first < 0)
          collector.collect(uniform_actions, k + 1 == segments.size() ? n : until);
        else
          collector.collect(behaviour_of(policies, segments[k].first),
                            k + 1 == segments.size() ? n : until);
      }
      policy_text = std::string(sac ? "SAC" : "ARS") +
                    " learning history up to the medium policy: " +
                    (sac && policies.random_steps > 0 ? "uniform random warm-up, " : "") +
                    std::to_string(policies.replay.size()) + " snapshots in training order; " +
                    policies.describe(policies.medium) + " last";
      break;
    }
    case DatasetKind::MediumExpert:
      // Medium first, finished at an episode boundary, so the halves never merge into one episode.
      collector.collect(behaviour_of(policies, policies.medium), n / 2);
      collector.collect(behaviour_of(policies, policies.expert), n);
      policy_text =
          policies.describe(policies.medium) + ", then " + policies.describe(policies.expert);
      break;
  }
  GeneratedDataset out;
  out.metadata = {
      {"generator", "dstudio dataset generate"},
      {"env_id", spec.name},
      {"kind", to_string(config.kind)},
      {"seed", std::to_string(config.seed)},
      {"transitions", std::to_string(n)},
      {"behaviour_policy", policy_text},
      {"behaviour_algorithm",
       config.kind == DatasetKind::Random ? "none" : to_string(policies.algorithm)},
      {"action_noise_std",
       config.kind == DatasetKind::Random || sac ? "0" : std::to_string(policies.action_noise)},
      {"behaviour_training", policies.command},
      {"software", studio_version() + ", MuJoCo " + mj_versionString()},
  };
  out.arrays = collector.finish(n);
  return out;
}

}  // namespace dstudio::behaviour

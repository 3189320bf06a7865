#include "dstudio/behaviour/generate.h"

#include <mujoco/mujoco.h>

#include <functional>
#include <stdexcept>
#include <thread>

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
using Actor = std::function<void(std::span<const float> obs, std::span<float> action, Random& random)>;

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
      for (int t = 0; t < T; ++t)
        pool.emplace_back([&, t] { batch[t] = run_episode(envs_[t], actor, Random::derive(config_.seed, episode_ + t)); });
      for (auto& th : pool) th.join();
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
    auto cut = [n](auto& v, std::int64_t width) { v.resize(static_cast<std::size_t>(std::min<std::int64_t>(n, static_cast<std::int64_t>(v.size()) / width) * width)); };
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
  [[nodiscard]] const env::TaskSpec& spec() const { return spec_; }

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
  const env::TaskSpec& spec_;
  std::vector<env::Environment> envs_;
  data::TransitionArrays out_;
  std::uint64_t episode_ = 0;
};

Actor noisy(const LinearPolicy& policy, double noise_std) {
  return [&policy, noise_std](std::span<const float> obs, std::span<float> action, Random& random) {
    policy.act_noisy(obs, action, noise_std, random);
  };
}

std::string describe(const ArsRun& run, int index) {
  const auto& s = run.snapshots.at(static_cast<std::size_t>(index));
  return "ARS linear policy, snapshot " + std::to_string(index) + " (iteration " + std::to_string(s.iteration) +
         ", deterministic return " + std::to_string(s.eval_return) + ")";
}

}  // namespace

const char* to_string(DatasetKind kind) {
  switch (kind) {
    case DatasetKind::Random: return "random";
    case DatasetKind::Medium: return "medium";
    case DatasetKind::MediumReplay: return "medium-replay";
    case DatasetKind::Expert: return "expert";
    case DatasetKind::MediumExpert: return "medium-expert";
  }
  return "?";
}

DatasetKind parse_kind(const std::string& text) {
  for (auto k : {DatasetKind::Random, DatasetKind::Medium, DatasetKind::MediumReplay, DatasetKind::Expert,
                 DatasetKind::MediumExpert})
    if (text == to_string(k)) return k;
  throw std::invalid_argument("unknown dataset kind '" + text +
                              "'; known kinds: random, medium, medium-replay, expert, medium-expert");
}

GeneratedDataset generate_dataset(const GenerateConfig& config, const ArsRun& policies, const Progress& progress) {
  if (config.transitions < 1) throw std::invalid_argument("a dataset needs at least one transition");
  Collector collector(config, progress);
  const auto& spec = collector.spec();
  if (config.kind != DatasetKind::Random && env::task(policies.config.env).name != spec.name)
    throw std::invalid_argument("the behaviour policies are for " + policies.config.env + ", not " + spec.name);
  const std::int64_t n = config.transitions;
  std::string policy_text;
  switch (config.kind) {
    case DatasetKind::Random:
      collector.collect([](std::span<const float>, std::span<float> action, Random& random) {
        for (auto& a : action) a = static_cast<float>(random.uniform(-1.0, 1.0));
      }, n);
      policy_text = "uniform random actions in [-1, 1]";
      break;
    case DatasetKind::Medium:
      collector.collect(noisy(policies.snapshots[policies.medium].policy, config.action_noise), n);
      policy_text = describe(policies, policies.medium);
      break;
    case DatasetKind::Expert:
      collector.collect(noisy(policies.snapshots[policies.expert].policy, config.action_noise), n);
      policy_text = describe(policies, policies.expert);
      break;
    case DatasetKind::MediumReplay: {
      // The learner's history up to the medium level: each snapshot an equal share, in order.
      const int count = policies.medium + 1;
      for (int i = 0; i < count; ++i)
        collector.collect(noisy(policies.snapshots[i].policy, config.action_noise), n * (i + 1) / count);
      policy_text = "ARS snapshots 0.." + std::to_string(policies.medium) + " in training order; " +
                    describe(policies, policies.medium) + " last";
      break;
    }
    case DatasetKind::MediumExpert:
      // Medium first, finished at an episode boundary, so the halves never merge into one episode.
      collector.collect(noisy(policies.snapshots[policies.medium].policy, config.action_noise), n / 2);
      collector.collect(noisy(policies.snapshots[policies.expert].policy, config.action_noise), n);
      policy_text = describe(policies, policies.medium) + ", then " + describe(policies, policies.expert);
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
      {"action_noise_std", config.kind == DatasetKind::Random ? "0" : std::to_string(config.action_noise)},
      {"behaviour_training", policies.command},
      {"software", studio_version() + ", MuJoCo " + mj_versionString()},
  };
  out.arrays = collector.finish(n);
  return out;
}

}  // namespace dstudio::behaviour

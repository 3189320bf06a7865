#include "dstudio/behaviour/ars.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <nlohmann/json.hpp>
#include <numeric>
#include <stdexcept>
#include <thread>

#include "dstudio/common/error.h"
#include "dstudio/common/json_fields.h"
#include "dstudio/common/resources.h"
#include "dstudio/env/environment.h"

namespace dstudio::behaviour {
namespace {

// Running mean and variance (Chan et al.'s parallel form), merged in a fixed order.
struct Moments {
  double count = 0;
  std::vector<double> mean, m2;
  explicit Moments(int dim = 0)
      : mean(static_cast<std::size_t>(dim), 0.0), m2(static_cast<std::size_t>(dim), 0.0) {}
  void add(std::span<const float> x) {
    count += 1;
    for (std::size_t i = 0; i < mean.size(); ++i) {
      const double d = x[i] - mean[i];
      mean[i] += d / count;
      m2[i] += d * (x[i] - mean[i]);
    }
  }
  void merge(const Moments& o) {
    if (o.count == 0) return;
    const double n = count + o.count;
    for (std::size_t i = 0; i < mean.size(); ++i) {
      const double d = o.mean[i] - mean[i];
      mean[i] += d * o.count / n;
      m2[i] += o.m2[i] + d * d * count * o.count / n;
    }
    count = n;
  }
  std::vector<double> stddev() const {
    std::vector<double> s(mean.size(), 1.0);
    if (count < 2) return s;
    for (std::size_t i = 0; i < s.size(); ++i) {
      const double var = m2[i] / count;
      s[i] = var > 1e-12 ? std::sqrt(var) : 1.0;  // a constant dimension is left unscaled
    }
    return s;
  }
};

struct Rollout {
  double ret = 0.0;
  std::int64_t steps = 0;
  Moments states;
};

Rollout run_episode(env::Environment& e, const LinearPolicy& p, std::uint64_t seed, double shift,
                    bool collect) {
  const auto& spec = e.spec();
  std::vector<float> obs(static_cast<std::size_t>(spec.obs_dim)),
      act(static_cast<std::size_t>(spec.act_dim));
  Rollout r;
  r.states = Moments(collect ? spec.obs_dim : 0);
  e.reset(seed, obs);
  for (;;) {
    if (collect) r.states.add(obs);
    p.act(obs, act);
    const auto s = e.step(act, obs);
    r.ret += s.reward - shift;
    ++r.steps;
    if (s.terminated || s.truncated) break;
  }
  return r;
}

// Runs job(i, env) for i in [0, n) on `envs.size()` threads; job i always runs on thread i % T,
// and results depend only on i, so the outcome does not depend on the thread count.
template <class Job>
void parallel(std::vector<env::Environment>& envs, int n, const Job& job) {
  const int threads = static_cast<int>(envs.size());
  if (threads == 1) {
    for (int i = 0; i < n; ++i) job(i, envs[0]);
    return;
  }
  std::vector<std::thread> pool;
  std::exception_ptr failure;
  std::mutex failure_mutex;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      try {
        for (int i = t; i < n; i += threads) job(i, envs[static_cast<std::size_t>(t)]);
      } catch (...) {
        std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
    });
  }
  for (auto& th : pool) th.join();
  if (failure) std::rethrow_exception(failure);
}

constexpr std::uint64_t kEvalSalt = 0xE7A1E7A1ULL;

}  // namespace

ArsConfig ars_defaults(const std::string& env_name) {
  const std::string name = env::task(env_name).name;
  ArsConfig c;
  c.env = name;
  if (name == "hopper") {
    // The paper's alpha 0.01 and nu 0.025 stalled near a return of 2200 here (seeds 1 and 2); a
    // larger step and exploration reached 3300 within 320 iterations (seed 3).
    c.directions = 8, c.top_directions = 4, c.step_size = 0.02, c.exploration = 0.03;
    c.reward_shift = 1.0, c.target_return = 3300.0, c.max_iterations = 1500;
  } else if (name == "walker2d") {
    // The paper's N 40, b 30 was still near a return of 520 after 260 iterations here; the hopper
    // settings, judged on 10 evaluation episodes, reached 4008 in 775 iterations (seed 1).
    c.directions = 8, c.top_directions = 4, c.step_size = 0.02, c.exploration = 0.03;
    c.reward_shift = 1.0, c.target_return = 4000.0, c.max_iterations = 2000, c.eval_episodes = 10;
  } else if (name == "halfcheetah") {
    c.directions = 32, c.top_directions = 4, c.step_size = 0.02, c.exploration = 0.03;
    c.reward_shift = 0.0, c.target_return = 4400.0, c.max_iterations = 1500;
  }
  return c;
}

double evaluate_policy(const std::string& env_name, const LinearPolicy& policy, int episodes,
                       std::uint64_t seed, double noise_std) {
  env::Environment e(env_name);
  const auto& spec = e.spec();
  std::vector<float> obs(static_cast<std::size_t>(spec.obs_dim)),
      act(static_cast<std::size_t>(spec.act_dim));
  double total = 0.0;
  for (int k = 0; k < episodes; ++k) {
    Random noise(Random::derive(seed, 1000 + k));
    e.reset(Random::derive(seed, k), obs);
    for (;;) {
      if (noise_std > 0)
        policy.act_noisy(obs, act, noise_std, noise);
      else
        policy.act(obs, act);
      const auto s = e.step(act, obs);
      total += s.reward;
      if (s.terminated || s.truncated) break;
    }
  }
  return total / episodes;
}

ArsRun train_ars(const ArsConfig& config, const Progress& progress) {
  if (config.directions < 1 || config.top_directions < 1 ||
      config.top_directions > config.directions)
    throw UsageError("ARS needs 1 <= top directions <= directions");
  const env::EnvironmentDefinition& spec = env::task(config.env);
  const env::ModelPtr model = env::load_model(spec);
  std::vector<env::Environment> envs;
  for (int t = 0; t < std::max(1, config.threads); ++t) envs.emplace_back(spec, model);

  const int S = spec.obs_dim, A = spec.act_dim, P = S * A, N = config.directions;
  ArsRun run;
  run.config = config;
  run.config.env = spec.name;
  LinearPolicy policy = LinearPolicy::zeros(S, A);
  Moments observed(S);
  Random directions(config.seed);
  std::int64_t env_steps = 0;

  auto evaluate = [&](int iteration) {
    std::vector<double> returns(static_cast<std::size_t>(config.eval_episodes));
    parallel(envs, config.eval_episodes, [&](int k, env::Environment& e) {
      returns[k] =
          run_episode(e, policy, Random::derive(config.seed ^ kEvalSalt, k), 0.0, false).ret;
    });
    Snapshot s{iteration, env_steps,
               std::accumulate(returns.begin(), returns.end(), 0.0) / config.eval_episodes, policy};
    run.snapshots.push_back(s);
    return s.eval_return;
  };

  evaluate(0);
  for (int it = 1; it <= config.max_iterations; ++it) {
    // Perturbations for this iteration, drawn in a fixed order from one stream.
    std::vector<double> deltas(static_cast<std::size_t>(N) * P);
    for (auto& d : deltas) d = directions.normal();

    // 2N rollouts: policy + nu * delta_k and policy - nu * delta_k.
    std::vector<Rollout> results(static_cast<std::size_t>(2 * N));
    const std::uint64_t iteration_seed =
        Random::derive(config.seed, static_cast<std::uint64_t>(it));
    parallel(envs, 2 * N, [&](int j, env::Environment& e) {
      LinearPolicy perturbed = policy;
      const double sign = j % 2 == 0 ? 1.0 : -1.0;
      const double* delta = &deltas[static_cast<std::size_t>(j / 2) * P];
      for (int i = 0; i < P; ++i) perturbed.weights[i] += sign * config.exploration * delta[i];
      results[j] = run_episode(e, perturbed, Random::derive(iteration_seed, j / 2),
                               config.reward_shift, true);
    });

    // Update with the best b directions, scaled by the standard deviation of their rewards.
    std::vector<int> order(static_cast<std::size_t>(N));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return std::max(results[2 * a].ret, results[2 * a + 1].ret) >
             std::max(results[2 * b].ret, results[2 * b + 1].ret);
    });
    order.resize(static_cast<std::size_t>(config.top_directions));
    std::vector<double> used;
    for (int k : order) used.insert(used.end(), {results[2 * k].ret, results[2 * k + 1].ret});
    const double mean =
        std::accumulate(used.begin(), used.end(), 0.0) / static_cast<double>(used.size());
    double var = 0.0;
    for (double r : used) var += (r - mean) * (r - mean);
    const double sigma = std::sqrt(var / static_cast<double>(used.size()));
    if (sigma > 1e-8) {
      const double scale = config.step_size / (config.top_directions * sigma);
      for (int k : order) {
        const double diff = results[2 * k].ret - results[2 * k + 1].ret;
        const double* delta = &deltas[static_cast<std::size_t>(k) * P];
        for (int i = 0; i < P; ++i) policy.weights[i] += scale * diff * delta[i];
      }
    }
    // The observation statistics advance once per iteration, merged in rollout order.
    for (auto& r : results) {
      observed.merge(r.states);
      env_steps += r.steps;
    }
    policy.obs_mean = observed.mean;
    policy.obs_std = observed.stddev();

    if (it % config.eval_every == 0 || it == config.max_iterations) {
      const double ret = evaluate(it);
      progress.update(
          static_cast<double>(it) / config.max_iterations,
          "iteration " + std::to_string(it) + ", return " + std::to_string(static_cast<int>(ret)));
      if (config.target_return > 0 && ret >= config.target_return) break;
    } else {
      progress.check();
    }
  }
  choose_medium_and_expert(run);
  return run;
}

void choose_medium_and_expert(ArsRun& run) {
  if (run.snapshots.empty()) throw Error("a run without snapshots");
  int expert = 0;
  for (int i = 0; i < static_cast<int>(run.snapshots.size()); ++i)
    if (run.snapshots[i].eval_return > run.snapshots[expert].eval_return) expert = i;
  // D4RL's medium policy is the learner stopped at about a third of the expert's return.
  const double third = run.snapshots[expert].eval_return / 3.0;
  int medium = expert;
  for (int i = 0; i <= expert; ++i) {
    if (run.snapshots[i].eval_return >= third) {
      medium = i;
      break;
    }
  }
  run.expert = expert;
  run.medium = medium;
}

namespace {

// The file's types, each field written once (a run's file: its configuration, its snapshots).
const JsonFields<LinearPolicy>& policy_fields() {
  static const auto fields = [] {
    JsonFields<LinearPolicy> f;
    f.field("obs_dim", &LinearPolicy::obs_dim, {1.0})
        .field("act_dim", &LinearPolicy::act_dim, {1.0})
        .field("weights", &LinearPolicy::weights)
        .field("obs_mean", &LinearPolicy::obs_mean)
        .field("obs_std", &LinearPolicy::obs_std);
    return f;
  }();
  return fields;
}

// Every setting but the task, which the file names at its top.
const JsonFields<ArsConfig>& config_fields() {
  static const auto fields = [] {
    JsonFields<ArsConfig> f;
    f.field("directions", &ArsConfig::directions, {1.0})
        .field("top_directions", &ArsConfig::top_directions, {1.0})
        .field("step_size", &ArsConfig::step_size, {0.0, 1e9, true})
        .field("exploration", &ArsConfig::exploration, {0.0, 1e9, true})
        .field("reward_shift", &ArsConfig::reward_shift)
        .field("max_iterations", &ArsConfig::max_iterations, {0.0})
        .field("target_return", &ArsConfig::target_return)
        .field("eval_every", &ArsConfig::eval_every, {1.0})
        .field("eval_episodes", &ArsConfig::eval_episodes, {1.0})
        .field("threads", &ArsConfig::threads, {1.0})
        .field("seed", &ArsConfig::seed);
    return f;
  }();
  return fields;
}

const JsonFields<Snapshot>& snapshot_fields() {
  static const auto fields = [] {
    JsonFields<Snapshot> f;
    f.field("iteration", &Snapshot::iteration, {0.0})
        .field("env_steps", &Snapshot::env_steps, {0.0})
        .field("eval_return", &Snapshot::eval_return)
        .object("policy", &Snapshot::policy, policy_fields());
    return f;
  }();
  return fields;
}

const JsonFields<ArsRun>& run_fields() {
  static const auto fields = [] {
    JsonFields<ArsRun> f;
    f.constant("format", "dstudio-behaviour-policies-1")
        .computed(
            "env", [](const ArsRun& r) { return nlohmann::ordered_json(r.config.env); },
            [](ArsRun& r, const nlohmann::json& v, const std::string& where) {
              if (!v.is_string()) throw Error(where + " is not a text");
              r.config.env = v.get<std::string>();
            })
        .field("command", &ArsRun::command)
        .computed(
            "ars", [](const ArsRun& r) { return config_fields().write(r.config); },
            [](ArsRun& r, const nlohmann::json& v, const std::string& where) {
              r.config = config_fields().read(v, where, r.config);
            })
        .field("medium", &ArsRun::medium)
        .field("expert", &ArsRun::expert)
        .objects("snapshots", &ArsRun::snapshots, snapshot_fields());
    return f;
  }();
  return fields;
}

}  // namespace

std::string to_json(const ArsRun& run) {
  return run_fields().write(run).dump(1);
}

ArsRun ars_run_from_json(const std::string& text) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) throw Error("not a behaviour-policy file (not JSON)");
  ArsRun run = run_fields().read(j, "behaviour-policy file");
  for (const auto& s : run.snapshots) {
    const auto& p = s.policy;
    if (p.weights.size() != static_cast<std::size_t>(p.obs_dim * p.act_dim) ||
        p.obs_mean.size() != static_cast<std::size_t>(p.obs_dim) ||
        p.obs_std.size() != static_cast<std::size_t>(p.obs_dim))
      throw Error("a policy's arrays do not match its dimensions");
  }
  const int n = static_cast<int>(run.snapshots.size());
  if (run.medium < 0 || run.medium >= n || run.expert < 0 || run.expert >= n)
    throw Error("medium or expert index outside the snapshots");
  return run;
}

ArsRun shipped_policies(const std::string& env_name) {
  const std::string name = env::task(env_name).name;
  const auto text = embedded_resource("policies/" + name + ".json");
  if (!text) throw Error("no behaviour policies ship for " + name);
  return ars_run_from_json(std::string(*text));
}

}  // namespace dstudio::behaviour

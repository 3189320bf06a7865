#include "dstudio/behaviour/policy_set.h"

#include <cstdio>
#include <exception>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "dstudio/common/error.h"
#include "dstudio/common/json_fields.h"
#include "dstudio/common/resources.h"
#include "dstudio/env/antmaze.h"
#include "dstudio/env/environment.h"
#include "policy_json.h"

namespace dstudio::behaviour {

const char* to_string(PolicyAlgorithm algorithm) {
  return algorithm == PolicyAlgorithm::Sac ? "sac" : "ars";
}

PolicyAlgorithm parse_algorithm(const std::string& text) {
  if (text == "sac") return PolicyAlgorithm::Sac;
  if (text == "ars") return PolicyAlgorithm::Ars;
  throw UsageError("unknown behaviour-policy algorithm '" + text + "'; known: sac, ars");
}

void PolicySet::act(int index, std::span<const float> obs, std::span<float> action,
                    Random& random) const {
  const auto& p = snapshots.at(static_cast<std::size_t>(index)).policy;
  if (const auto* g = std::get_if<GaussianPolicy>(&p))
    g->sample(obs, action, random);
  else
    std::get<LinearPolicy>(p).act_noisy(obs, action, action_noise, random);
}

void PolicySet::act_deterministic(int index, std::span<const float> obs,
                                  std::span<float> action) const {
  const auto& p = snapshots.at(static_cast<std::size_t>(index)).policy;
  if (const auto* g = std::get_if<GaussianPolicy>(&p))
    g->act(obs, action);
  else
    std::get<LinearPolicy>(p).act(obs, action);
}

std::string PolicySet::describe(int index) const {
  const auto& s = snapshots.at(static_cast<std::size_t>(index));
  char text[256];
  if (algorithm == PolicyAlgorithm::Sac)
    std::snprintf(text, sizeof text,
                  "SAC tanh-Gaussian policy after %lld environment steps (sampled return %.0f, "
                  "mean-action return %.0f)",
                  static_cast<long long>(s.env_steps), s.behaviour_return, s.deterministic_return);
  else
    std::snprintf(
        text, sizeof text,
        "ARS linear policy, snapshot %d (%lld environment steps, deterministic return %.0f)", index,
        static_cast<long long>(s.env_steps), s.deterministic_return);
  return text;
}

void PolicySet::validate() const {
  const auto& spec = training_task(env);
  const int n = static_cast<int>(snapshots.size());
  if (n == 0) throw Error("a policy set without snapshots");
  if (medium < 0 || medium >= n || expert < 0 || expert >= n)
    throw Error("the medium or expert index is outside the " + std::to_string(n) + " snapshots");
  for (int r : replay)
    if (r < 0 || r >= n) throw Error("a replay index is outside the snapshots");
  for (int i = 0; i < n; ++i) {
    const auto& p = snapshots[static_cast<std::size_t>(i)].policy;
    int obs = 0, act = 0;
    if (const auto* g = std::get_if<GaussianPolicy>(&p)) {
      g->validate();
      obs = g->obs_dim, act = g->act_dim;
    } else {
      obs = std::get<LinearPolicy>(p).obs_dim, act = std::get<LinearPolicy>(p).act_dim;
    }
    if (obs != spec.obs_dim || act != spec.act_dim)
      throw Error("snapshot " + std::to_string(i) + " has " + std::to_string(obs) +
                  " observations and " + std::to_string(act) + " actions; " + spec.name + " has " +
                  std::to_string(spec.obs_dim) + " and " + std::to_string(spec.act_dim));
  }
}

PolicySet policy_set_from_ars(const ArsRun& run, double action_noise) {
  PolicySet set;
  set.env = run.config.env;
  set.algorithm = PolicyAlgorithm::Ars;
  set.action_noise = action_noise;
  for (const auto& s : run.snapshots)
    set.snapshots.push_back({s.env_steps, s.eval_return, s.eval_return, s.policy});
  set.medium = run.medium;
  set.expert = run.expert;
  // ARS's history up to the medium policy: every snapshot, each an equal share.
  for (int i = 0; i <= run.medium; ++i) set.replay.push_back(i);
  set.command = run.command;
  return set;
}

namespace {

constexpr const char* kSacPoliciesFormat = "dstudio-sac-policies-1";

const JsonFields<BehaviourSnapshot>& snapshot_fields() {
  static const auto fields = [] {
    using S = BehaviourSnapshot;
    JsonFields<S> t;
    t.field("env_steps", &S::env_steps, {0})
        .required()
        .field("deterministic_return", &S::deterministic_return)
        .required()
        .field("behaviour_return", &S::behaviour_return)
        .required()
        .computed(
            "policy", [](const S& s) { return policy_to_json(std::get<GaussianPolicy>(s.policy)); },
            [](S& s, const nlohmann::ordered_json& v, const std::string& where) {
              s.policy = policy_from_json(v, where);
            })
        .required();
    return t;
  }();
  return fields;
}

// A SAC run's policies: its curve of snapshots and the ones chosen from it.
const JsonFields<PolicySet>& sac_set_fields() {
  static const auto fields = [] {
    using P = PolicySet;
    JsonFields<P> t;
    t.constant("format", kSacPoliciesFormat)
        .computed(
            "env", [](const P& p) { return nlohmann::ordered_json(p.env); },
            [](P& p, const nlohmann::ordered_json& v, const std::string& where) {
              if (!v.is_string()) JsonFields<P>::refuse(where + " is not a text");
              try {
                p.env = training_task(v.get<std::string>()).name;
              } catch (const Error& e) {
                JsonFields<P>::refuse(where + ": " + e.what());
              }
            })
        .required()
        .field("command", &P::command)
        .field("random_steps", &P::random_steps, {0})
        .field("medium", &P::medium, {-1})
        .required()
        .field("expert", &P::expert, {-1})
        .required()
        .field("replay", &P::replay, {0})
        .required()
        .objects("snapshots", &P::snapshots, snapshot_fields())
        .required();
    return t;
  }();
  return fields;
}

}  // namespace

nlohmann::ordered_json policy_set_to_json(const PolicySet& set) {
  if (set.algorithm != PolicyAlgorithm::Sac)
    throw Error("ARS policies are written as ARS runs (behaviour::to_json(ArsRun))");
  return sac_set_fields().write(set);
}

PolicySet policy_set_from_json(const nlohmann::ordered_json& j, bool chosen) {
  if (!j.is_object() || !j.contains("format") || j["format"] != kSacPoliciesFormat)
    throw Error(std::string("not a SAC behaviour-policy set (format is not ") + kSacPoliciesFormat +
                ")");
  PolicySet set = sac_set_fields().read(j, "a behaviour-policy file with a missing or wrong field");
  set.algorithm = PolicyAlgorithm::Sac;
  if (chosen) set.validate();
  return set;
}

std::string to_json(const PolicySet& set) {
  return policy_set_to_json(set).dump(1);
}

PolicySet policy_set_from_text(const std::string& text, double ars_action_noise) {
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("not JSON: ") + e.what());
  }
  const std::string format = j.is_object() ? j.value("format", "") : "";
  if (format == "dstudio-behaviour-policies-1")
    return policy_set_from_ars(ars_run_from_json(text), ars_action_noise);
  if (format != "dstudio-sac-policies-1")
    throw Error(
        "not a behaviour-policy file (format is neither dstudio-sac-policies-1 nor "
        "dstudio-behaviour-policies-1)");
  return policy_set_from_json(j, true);
}

PolicySet read_policy_set(const std::string& path, double ars_action_noise) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  try {
    return policy_set_from_text(text.str(), ars_action_noise);
  } catch (const std::exception& e) {
    throw Error(path + ": " + e.what());
  }
}

PolicySet shipped_policy_set(const std::string& env_name, PolicyAlgorithm algorithm) {
  const std::string name = training_task(env_name).name;
  if (algorithm == PolicyAlgorithm::Ars) return policy_set_from_ars(shipped_policies(name), 0.05);
  const auto text = embedded_resource("policies/" + name + "-sac.json");
  if (!text) throw Error("no SAC behaviour policies ship for " + name);
  return policy_set_from_text(std::string(*text), 0.0);
}

const env::EnvironmentDefinition& training_task(std::string_view name) {
  static const env::EnvironmentDefinition goal_reaching = env::antmaze::goal_reaching_definition();
  static const env::EnvironmentDefinition goal_sequence = env::antmaze::goal_sequence_definition();
  if (name == goal_reaching.name) return goal_reaching;
  if (name == goal_sequence.name) return goal_sequence;
  return env::task(name);
}

std::vector<double> episode_returns(
    const std::string& env_name, int episodes, std::uint64_t seed, int threads,
    const std::function<void(std::span<const float>, std::span<float>, Random&)>& act) {
  const auto& spec = training_task(env_name);
  const env::ModelPtr model = env::load_model(spec);
  std::vector<double> returns(static_cast<std::size_t>(std::max(0, episodes)), 0.0);
  const int T = std::max(1, std::min(threads, episodes));
  std::exception_ptr failure;
  std::mutex failure_mutex;
  // Episode k always has the same reset and action streams, whichever thread runs it.
  auto worker = [&](int t) {
    try {
      env::Environment e(spec, model);
      std::vector<float> obs(static_cast<std::size_t>(spec.obs_dim)),
          action(static_cast<std::size_t>(spec.act_dim));
      for (int k = t; k < episodes; k += T) {
        Random noise(Random::derive(seed, 1000 + static_cast<std::uint64_t>(k)));
        e.reset(Random::derive(seed, static_cast<std::uint64_t>(k)), obs);
        double total = 0.0;
        for (;;) {
          act(obs, action, noise);
          const auto s = e.step(action, obs);
          total += s.reward;
          if (s.terminated || s.truncated) break;
        }
        returns[static_cast<std::size_t>(k)] = total;
      }
    } catch (...) {
      std::lock_guard lock(failure_mutex);
      if (!failure) failure = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < T; ++t) pool.emplace_back(worker, t);
  worker(0);
  for (auto& th : pool) th.join();
  if (failure) std::rethrow_exception(failure);
  return returns;
}

double evaluate_snapshot(const PolicySet& set, int index, int episodes, std::uint64_t seed,
                         bool sampled, int threads) {
  if (episodes < 1) throw UsageError("evaluation needs at least one episode");
  const auto returns =
      episode_returns(set.env, episodes, seed, threads,
                      [&](std::span<const float> obs, std::span<float> action, Random& random) {
                        if (sampled)
                          set.act(index, obs, action, random);
                        else
                          set.act_deterministic(index, obs, action);
                      });
  return std::accumulate(returns.begin(), returns.end(), 0.0) / episodes;
}

}  // namespace dstudio::behaviour

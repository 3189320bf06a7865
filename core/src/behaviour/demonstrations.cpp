// People's Adroit demonstrations and D4RL's human dataset made from them. See demonstrations.h.

#include "dstudio/behaviour/demonstrations.h"

#include <mujoco/mujoco.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "dstudio/common/base64.h"
#include "dstudio/common/error.h"
#include "dstudio/common/resources.h"
#include "dstudio/common/system_info.h"
#include "dstudio/env/environment.h"

namespace dstudio::behaviour {
namespace {

constexpr std::string_view kFormat = "dstudio-demonstrations-1";
// Longer than any demonstration; a bound on what a damaged file can make us allocate.
constexpr std::int64_t kMaxSteps = 100'000;
// A replayed return this close to the recorded one: the replay followed the recording.
constexpr double kAgreement = 0.01;
// Fields of an episode that are not the task's state keys.
const char* const kEpisodeFields[] = {"steps", "qpos", "qvel", "actions", "recorded_rewards"};

const nlohmann::json& field(const nlohmann::json& j, const std::string& key,
                            const std::string& within) {
  const auto it = j.find(key);
  if (it == j.end()) throw Error("no \"" + key + "\"" + within);
  return *it;
}

// `count` little-endian values of type T (float or double) from base64 text, every one finite.
template <class T, class Bits>
std::vector<T> decoded(const nlohmann::json& j, const std::string& key, std::size_t count,
                       const std::string& within) {
  const auto& v = field(j, key, within);
  if (!v.is_string()) throw Error("\"" + key + "\"" + within + " is not base64 text");
  std::vector<std::uint8_t> bytes;
  try {
    bytes = base64_decode(v.get<std::string>());
  } catch (const Error& e) {
    throw Error("\"" + key + "\"" + within + ": " + e.what());
  }
  if (bytes.size() != sizeof(T) * count)
    throw Error("\"" + key + "\"" + within + " holds " + std::to_string(bytes.size()) +
                " bytes, expected " + std::to_string(count) + " values of " +
                std::to_string(sizeof(T)) + " bytes");
  std::vector<T> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    Bits bits = 0;
    for (std::size_t b = 0; b < sizeof(T); ++b)
      bits |= static_cast<Bits>(bytes[sizeof(T) * i + b]) << (8 * b);
    out[i] = std::bit_cast<T>(bits);
    if (!std::isfinite(out[i]))
      throw Error("\"" + key + "\"" + within + " value " + std::to_string(i) + " is not finite");
  }
  return out;
}

int whole(const nlohmann::json& j, const std::string& key, std::int64_t most,
          const std::string& within = "") {
  const auto& v = field(j, key, within);
  if (!v.is_number_integer() || v.get<std::int64_t>() < 1 || v.get<std::int64_t>() > most)
    throw Error("\"" + key + "\"" + within + " is not a whole number from 1 to " +
                std::to_string(most));
  return v.get<int>();
}

Demonstrations from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw Error("not a JSON object");
  const auto format = j.find("format");
  if (format == j.end() || !format->is_string() || format->get<std::string>() != kFormat)
    throw Error(std::string("not a ") + std::string(kFormat) + " document");
  Demonstrations d;
  for (const char* key : {"task", "source"}) {
    const auto& v = field(j, key, "");
    if (!v.is_string()) throw Error(std::string("\"") + key + "\" is not a string");
    (key == std::string("task") ? d.task : d.source) = v.get<std::string>();
  }
  const auto& spec = env::task(d.task);
  d.task = spec.name;
  d.obs_dim = whole(j, "obs_dim", 4096);
  d.act_dim = whole(j, "act_dim", 4096);
  if (d.obs_dim != spec.obs_dim || d.act_dim != spec.act_dim)
    throw Error("demonstrations of " + std::to_string(d.obs_dim) + " observations and " +
                std::to_string(d.act_dim) + " actions; " + spec.name + " has " +
                std::to_string(spec.obs_dim) + " and " + std::to_string(spec.act_dim));
  const auto& episodes = field(j, "episodes", "");
  if (!episodes.is_array() || episodes.empty())
    throw Error("\"episodes\" is not a list of demonstrations");
  for (std::size_t k = 0; k < episodes.size(); ++k) {
    const auto& e = episodes[k];
    const std::string within = " in demonstration " + std::to_string(k);
    if (!e.is_object()) throw Error("demonstration " + std::to_string(k) + " is not an object");
    Demonstration demo;
    demo.steps = whole(e, "steps", kMaxSteps, within);
    const auto steps = static_cast<std::size_t>(demo.steps);
    demo.qpos =
        decoded<double, std::uint64_t>(e, "qpos", static_cast<std::size_t>(spec.nq), within);
    demo.qvel =
        decoded<double, std::uint64_t>(e, "qvel", static_cast<std::size_t>(spec.nv), within);
    demo.actions = decoded<float, std::uint32_t>(
        e, "actions", steps * static_cast<std::size_t>(d.act_dim), within);
    demo.recorded_rewards = decoded<float, std::uint32_t>(e, "recorded_rewards", steps, within);
    for (const auto& item : e.items()) {
      const std::string& key = item.key();
      const auto& value = item.value();
      if (std::find(std::begin(kEpisodeFields), std::end(kEpisodeFields), key) !=
          std::end(kEpisodeFields))
        continue;
      // A state key's width is what its bytes say; the replay checks it against the task.
      if (!value.is_string()) throw Error("\"" + key + "\"" + within + " is not base64 text");
      const std::size_t bytes = base64_decode(value.get<std::string>()).size();
      if (bytes == 0 || bytes % sizeof(double) != 0)
        throw Error("\"" + key + "\"" + within + " is not a list of float64 values");
      demo.state[key] = decoded<double, std::uint64_t>(e, key, bytes / sizeof(double), within);
    }
    d.episodes.push_back(std::move(demo));
  }
  return d;
}

template <class T, class Values>
void append(std::vector<T>& to, const Values& values) {
  for (const auto v : values) to.push_back(static_cast<T>(v));
}

// Puts `demo`'s initial state into `e`: its state keys, in the task's recorded order, fill the
// start of the task state (the rest, the goal-achieved steps, starts at 0), then qpos and qvel.
// What the task then records must be the demonstration's own values exactly.
void start_from(env::Environment& e, const Demonstration& demo, std::size_t k) {
  const auto recorded = e.recorded_state();
  std::vector<double> task_state(e.task_state().size(), 0.0);
  std::size_t at = 0;
  for (const auto& [key, values] : recorded) {
    const auto found = demo.state.find(key);
    if (found == demo.state.end() || found->second.size() != values.size())
      throw Error("demonstration " + std::to_string(k) + " has no " + key + " of " +
                  std::to_string(values.size()) + " values, which " + e.spec().name + " records");
    if (at + values.size() > task_state.size())
      throw Error(e.spec().name + "'s recorded state is larger than its task state");
    std::copy(found->second.begin(), found->second.end(), task_state.begin() + at);
    at += values.size();
  }
  if (demo.state.size() != recorded.size())
    throw Error("demonstration " + std::to_string(k) + " has state keys " + e.spec().name +
                " does not record");
  e.set_task_state(task_state);
  e.set_state(demo.qpos, demo.qvel);
  for (const auto& [key, values] : e.recorded_state())
    if (values != demo.state.at(key))
      throw Error(e.spec().name + " cannot start from demonstration " + std::to_string(k) + "'s " +
                  key);
}

}  // namespace

std::int64_t Demonstrations::steps() const {
  std::int64_t n = 0;
  for (const auto& e : episodes) n += e.steps;
  return n;
}

Demonstrations demonstrations_from_json_text(std::string_view text, const std::string& where) {
  try {
    return from_json(nlohmann::json::parse(text));
  } catch (const nlohmann::json::exception& e) {
    throw Error(where + ": not JSON: " + e.what());
  } catch (const env::EnvError& e) {
    throw Error(where + ": " + e.what());
  } catch (const Error& e) {
    throw Error(where + ": " + e.what());
  }
}

Demonstrations shipped_demonstrations(std::string_view task) {
  const auto& spec = env::task(task);
  const std::string path = "demonstrations/" + spec.name + "-human.json";
  const auto text = embedded_resource(path);
  if (!text)
    throw Error("no human demonstrations of " + spec.name +
                " ship (the studio ships the door's alone); open D4RL's " + spec.name +
                "-human-v1.hdf5 instead");
  auto demos = demonstrations_from_json_text(*text, "resources/" + path);
  if (demos.task != spec.name)
    throw Error("resources/" + path + " holds demonstrations of " + demos.task);
  return demos;
}

GeneratedDataset replay_demonstrations(const Demonstrations& demonstrations,
                                       const Progress& progress, ReplayAgreement* agreement) {
  const auto& spec = env::task(demonstrations.task);
  if (demonstrations.obs_dim != spec.obs_dim || demonstrations.act_dim != spec.act_dim)
    throw Error("the demonstrations do not fit " + spec.name);
  const auto S = static_cast<std::size_t>(spec.obs_dim), A = static_cast<std::size_t>(spec.act_dim);
  env::Environment e(spec, env::load_model(spec));
  data::TransitionArrays d;
  d.obs_dim = spec.obs_dim, d.act_dim = spec.act_dim, d.qpos_dim = spec.nq, d.qvel_dim = spec.nv;
  ReplayAgreement agree;
  std::vector<float> obs(S), action(A);
  const auto& episodes = demonstrations.episodes;
  for (std::size_t k = 0; k < episodes.size(); ++k) {
    progress.check();
    const auto& demo = episodes[k];
    if (demo.actions.size() != static_cast<std::size_t>(demo.steps) * A)
      throw Error("demonstration " + std::to_string(k) + " has " +
                  std::to_string(demo.actions.size()) + " action values for " +
                  std::to_string(demo.steps) + " steps");
    // D4RL resets once and then sets each demonstration's state; a reset per demonstration gives
    // the same start (set_env_state overwrites all a reset draws) without the previous one's ctrl.
    e.reset(k, obs);
    start_from(e, demo, k);
    e.observe(obs);
    double replayed = 0.0, recorded = 0.0;
    for (int t = 0; t < demo.steps; ++t) {
      append(d.observations, obs);
      append(d.qpos, e.qpos());
      append(d.qvel, e.qvel());
      for (const auto& [key, values] : e.recorded_state()) {
        auto& info = d.state_infos[key];
        info.dim = static_cast<std::int64_t>(values.size());
        append(info.values, values);
      }
      for (std::size_t i = 0; i < A; ++i)
        action[i] = std::clamp(demo.actions[static_cast<std::size_t>(t) * A + i], -1.0f, 1.0f);
      append(d.actions, action);
      // The horizon does not cut a demonstration, and nothing ends it but its last step.
      const auto r = e.step(action, obs);
      d.rewards.push_back(static_cast<float>(r.reward));
      d.terminals.push_back(0);
      d.timeouts.push_back(t == demo.steps - 1 ? 1 : 0);
      replayed += r.reward;
      recorded += demo.recorded_rewards[static_cast<std::size_t>(t)];
    }
    agree.replayed_return += replayed;
    agree.recorded_return += recorded;
    if (std::abs(replayed - recorded) <= kAgreement * std::abs(recorded)) ++agree.within;
    progress.update(
        static_cast<double>(k + 1) / static_cast<double>(episodes.size()),
        std::to_string(k + 1) + " of " + std::to_string(episodes.size()) + " demonstrations");
  }
  if (agreement) *agreement = agree;

  char numbers[200];
  std::snprintf(numbers, sizeof numbers,
                "%d of %zu demonstrations replay to within 1%% of their recorded return; in all "
                "%.1f replayed, %.1f recorded",
                agree.within, episodes.size(), agree.replayed_return, agree.recorded_return);
  GeneratedDataset out;
  out.metadata = {
      {"generator", "dstudio dataset generate"},
      {"env_id", spec.name},
      {"kind", "human"},
      {"episodes", std::to_string(episodes.size())},
      {"transitions", std::to_string(demonstrations.steps())},
      {"behaviour_policy",
       "people's demonstrations (" + demonstrations.source +
           "), replayed from their recorded states with their actions clipped to [-1, 1], as "
           "D4RL's hand_dapg_demos.py"},
      {"replay_agreement", numbers},
      {"software", studio_version() + ", MuJoCo " + mj_versionString()},
  };
  out.arrays = std::move(d);
  return out;
}

}  // namespace dstudio::behaviour

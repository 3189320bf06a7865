// Reading D4RL and Minari files into a Dataset. See dataset_io.h for the contract.

// Index of this file:
//   [SECTION] Budgets, progress and metadata
//   [SECTION] Names
//   [SECTION] Episodes of AntMaze, Adroit and the kitchen
//   [SECTION] The D4RL layout
//   [SECTION] The Minari layout
//   [SECTION] Opening an HDF5 file
//   [SECTION] The two formats
//   [SECTION] What every dataset gets
//   [SECTION] The format registry
//   [SECTION] Loading

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <optional>

#include "dstudio/common/system_info.h"
#include "dstudio/common/text.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/data/format_registry.h"
#include "h5.h"
#include "isolation.h"

namespace dstudio::data {

// Keys and problems may quote names read from a damaged file: made valid UTF-8 here, once.
DatasetError::DatasetError(std::string file, std::string key, const std::string& problem)
    : Error(file + (key.empty() ? "" : ": '" + printable_name(key) + "'") + ": " +
            valid_utf8(problem)),
      file_(std::move(file)),
      key_(printable_name(key)),
      problem_(valid_utf8(problem)) {}

namespace {

using h5::Array;
using h5::Context;

// Dimensions beyond this are not an observation or action space; they are a corrupt header.
constexpr std::int64_t kMaxDim = 1 << 20;

// ---------------------------------------------------------------------------------------------
// [SECTION] Budgets, progress and metadata

std::string gib(std::int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1 << 30));
  return text;
}

// Adds up what the arrays to be loaded will need and refuses absurd totals before allocating.
struct MemoryBudget {
  const Context& ctx;
  std::int64_t limit;
  std::int64_t total = 0;

  void add(const std::string& key, std::int64_t rows, std::int64_t cols, std::int64_t bytes_per) {
    if (rows < 0 || cols < 0 || cols > kMaxDim)
      ctx.fail(key, "declares an impossible shape (" + std::to_string(rows) + ", " +
                        std::to_string(cols) + ")");
    // Compare by division first so that absurd declared sizes cannot overflow.
    if (cols > 0 && rows > (limit - total) / (cols * bytes_per))
      ctx.fail(key, "declares " + std::to_string(rows) + " x " + std::to_string(cols) +
                        " values, more than the " + gib(limit) +
                        " this machine allows for a dataset; refusing to allocate it");
    total += rows * cols * bytes_per;
  }
};

// Reports fractions of the values read so far.
struct ReadProgress {
  const Progress& progress;
  std::int64_t total = 1;
  std::int64_t done = 0;
  std::function<void(std::int64_t)> counter(std::int64_t cols, std::string stage) {
    return [this, cols, stage = std::move(stage)](std::int64_t rows) {
      done += rows * cols;
      progress.update(0.02 + 0.88 * static_cast<double>(done) / static_cast<double>(total), stage);
    };
  }
};

void check_rows(const Context& ctx, const Array& a, std::int64_t n, const std::string& reference) {
  if (a.rows() != n)
    ctx.fail(a.key, "has " + std::to_string(a.rows()) + " rows but '" + reference + "' has " +
                        std::to_string(n) + "; there must be one row per transition");
}

// What a refusal says without the file's name, for a warning about that file.
std::string without_file(const DatasetError& e) {
  return (e.key().empty() ? "" : "'" + e.key() + "' ") + e.problem();
}

// Layers of a behaviour policy are small; anything larger under metadata/policy is not one.
constexpr std::int64_t kMaxPolicyValues = 1 << 22;

// A float array of metadata/policy (a layer's weight or bias), kept for behaviour/d4rl_policy.h.
void read_policy_array(const Context& ctx, const Array& a, const std::string& key, Dataset& ds) {
  if (a.shape.size() > 2) ctx.fail(a.key, "has " + std::to_string(a.shape.size()) + " dimensions");
  std::int64_t count = 1;
  for (const auto d : a.shape) {
    if (d < 0 || d > kMaxPolicyValues || count * std::max<std::int64_t>(d, 1) > kMaxPolicyValues)
      ctx.fail(a.key, "holds more than " + std::to_string(kMaxPolicyValues) +
                          " values, more than a policy's layer");
    count *= d;
  }
  h5::StorageMap storage;
  h5::require_standard_type(ctx, a);
  h5::require_stored(ctx, a, storage);
  MetadataArray out;
  out.shape = a.shape;
  out.values.resize(static_cast<std::size_t>(count));
  if (count > 0)
    h5::read_floats(ctx, a, a.shape.size() == 2 ? a.shape[1] : 1, out.values.data(),
                    [](std::int64_t) {});
  ds.metadata_arrays[key] = std::move(out);
}

// Scalars anywhere below `group` go to `metadata` as text; every array is listed in `arrays`.
// Metadata is optional: what cannot be read costs a warning, not the dataset.
void read_metadata(const Context& ctx, hid_t loc, const std::string& prefix, Dataset& ds) {
  std::vector<std::string> names;
  try {
    names = h5::link_names(ctx, loc, prefix);
  } catch (const DatasetError& e) {
    ds.warnings.push_back("metadata left out: " + without_file(e));
    return;
  }
  for (const auto& name : names) {
    const std::string path = prefix + "/" + name;
    try {
      if (h5::is_group(ctx, loc, name, path)) {
        h5::Handle group(H5Gopen2(loc, name.c_str(), H5P_DEFAULT), H5Gclose);
        if (!group.valid()) ctx.fail_h5(path, "cannot be opened as a group");
        read_metadata(ctx, group, path, ds);
        continue;
      }
      Array a = h5::open_array(ctx, loc, name, path);
      ds.arrays.push_back(a.info());
      const std::string key = path.substr(std::string("metadata/").size());
      if (const std::string text = h5::read_scalar_text(ctx, a); !text.empty())
        ds.metadata[key] = text;
      else if (key.starts_with("policy/") && a.kind == h5::Kind::Float && !a.shape.empty())
        read_policy_array(ctx, a, key, ds);
    } catch (const DatasetError& e) {
      ds.warnings.push_back("metadata left out: " + without_file(e));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Names

// Top-level names a D4RL file may have; any other is reported, since a damaged name (a flipped
// bit in "timeouts") would otherwise read as an absent array.
bool known_d4rl_key(const std::string& name) {
  for (const char* key : {"observations", "actions", "rewards", "terminals", "timeouts",
                          "next_observations", "infos", "metadata"})
    if (name == key) return true;
  return false;
}

// The layout name `name` is a damaged copy of, if any: the same length with at most two bytes
// changed, or the layout name with bytes added or cut at its end (a damaged length). HDF5 stores a
// link's name and its length separately, and either can be hit.
std::optional<std::string> resembled_name(const std::string& name,
                                          std::initializer_list<const char*> layout) {
  for (const char* candidate : layout) {
    const std::string known = candidate;
    if (name == known) return std::nullopt;
    if (name.size() == known.size()) {
      std::size_t differ = 0;
      for (std::size_t i = 0; i < name.size(); ++i) differ += name[i] != known[i];
      if (differ <= 2) return known;
    } else {
      const std::string& shorter = name.size() < known.size() ? name : known;
      const std::string& longer = name.size() < known.size() ? known : name;
      if (shorter.size() >= 4 && longer.compare(0, shorter.size(), shorter) == 0) return known;
    }
  }
  return std::nullopt;
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// A missing array whose name survives only damaged is not absent: reading on without it would
// change the data (no 'timeouts' means episodes cut every 1,000 steps), so the file is refused.
void refuse_damaged_names(const Context& ctx, const std::vector<std::string>& keys) {
  for (const auto& key : keys) {
    if (known_d4rl_key(key)) continue;
    const auto known = resembled_name(
        key, {"observations", "actions", "rewards", "terminals", "timeouts", "next_observations"});
    if (known && !contains(keys, *known))
      ctx.fail(*known, "is missing and the file has a key '" + printable_name(key) +
                           "' instead, which looks like its name damaged: the file is refused "
                           "rather than read without it");
  }
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Episodes of AntMaze, Adroit and the kitchen

// D4RL's AntMaze files name no environment; their file names do. Their terminals mark every step
// near the goal without ending the episode (antmaze_data.h says how the data was made).
void read_antmaze_episodes(Dataset& ds) {
  if (ds.env_id.empty()) {
    ds.env_id = d4rl_antmaze_task_of_file(ds.path);
    if (!ds.env_id.empty())
      ds.notes.push_back("the environment is " + ds.env_id + ", from D4RL's file name");
  }
  if (ds.env_id.rfind("antmaze-", 0) != 0 || ds.data.obs_dim < 2) return;
  ds.episodes = segment_goal_episodes(ds.data);
  // D4RL's script stored infos/qpos and infos/qvel after each step, one row late; an AntMaze
  // observation is the whole state (qpos[0:15], qvel[0:14]), so the states are taken from it.
  auto& d = ds.data;
  const std::int64_t n = d.size();
  if (d.obs_dim == 29 && d.qpos_dim == 15 && d.qvel_dim == 14 && n > 0) {
    bool late = false;
    for (std::int64_t i = 0; i < std::min<std::int64_t>(n, 16) && !late; ++i)
      for (int k = 0; k < 15; ++k)
        if (d.qpos[static_cast<std::size_t>(i * 15 + k)] !=
            d.observations[static_cast<std::size_t>(i * 29 + k)])
          late = true;
    if (late) {
      for (std::int64_t i = 0; i < n; ++i) {
        const auto row = static_cast<std::size_t>(i);
        std::copy_n(&d.observations[row * 29], 15, &d.qpos[row * 15]);
        std::copy_n(&d.observations[row * 29 + 15], 14, &d.qvel[row * 14]);
      }
      ds.notes.push_back(
          "AntMaze: infos/qpos and infos/qvel hold the state after each step (D4RL's script "
          "stored them one row late); the states replayed are the observations', which hold the "
          "whole state");
    }
  }
  std::int64_t goal_steps = 0;
  for (const auto t : ds.data.terminals) goal_steps += t;
  ds.notes.push_back("AntMaze: terminals (and rewards) are 1 on the " + std::to_string(goal_steps) +
                     " steps within 0.5 of the evaluation goal and the ant goes on, so episodes "
                     "end at timeouts (and where x, y jump, as D4RL's v0 files reset without "
                     "one), not at terminals; an episode's return counts its steps at the goal");
}

// D4RL's Adroit files name no environment either; their file names do. Relocate's get_env_state
// hands out live views of the simulation's arrays, so its obj_pos, target_pos and palm_pos hold
// one value for the whole file (D4RL#196): said, since a replay cannot put the ball back from them.
void read_adroit_states(Dataset& ds) {
  if (ds.env_id.empty()) {
    ds.env_id = d4rl_adroit_task_of_file(ds.path);
    if (!ds.env_id.empty())
      ds.notes.push_back("the environment is " + ds.env_id + ", from D4RL's file name");
  }
  const auto& d = ds.data;
  if (ds.env_id.rfind("relocate", 0) != 0) return;
  std::vector<std::string> constant;
  for (const auto& [key, info] : d.state_infos) {
    const auto row = static_cast<std::size_t>(info.dim);
    if (d.size() < 2 || row == 0) continue;
    bool same = true;
    for (std::size_t i = row; i < info.values.size() && same; ++i)
      same = info.values[i] == info.values[i % row];
    if (same) constant.push_back("infos/" + key);
  }
  if (constant.empty()) return;
  std::string list;
  for (std::size_t i = 0; i < constant.size(); ++i)
    list += (i ? (i + 1 == constant.size() ? " and " : ", ") : "") + constant[i];
  ds.notes.push_back(list + (constant.size() > 1 ? " hold" : " holds") +
                     " one value in every row (D4RL's relocate recorded views of the simulation's "
                     "arrays, not copies, so every row holds the last state); a replay takes the "
                     "ball and the target from the observations instead");
}

// D4RL's kitchen files: human demonstrations replayed and relabelled by D4RL's script, with a
// terminal on each demonstration's last step and no timeouts; rewards count the task's elements
// within 0.3 of their goals at every step (completed elements kept, a Markovian reward).
void read_kitchen_episodes(Dataset& ds, bool has_timeouts) {
  std::int64_t shortest = 0, longest = 0, complete = 0;
  for (const auto& ep : ds.episodes) {
    if (!ep.complete()) continue;
    shortest = complete == 0 ? ep.length : std::min(shortest, ep.length);
    longest = std::max(longest, ep.length);
    ++complete;
  }
  if (!has_timeouts)
    ds.notes.push_back(
        "Kitchen: the file has no 'timeouts' (D4RL's kitchen files have none) and a terminal on "
        "the last step of each demonstration, so each of the " +
        std::to_string(complete) + " episodes is one demonstration (" + std::to_string(shortest) +
        " to " + std::to_string(longest) +
        " steps), not cut at 1,000 steps; a terminal marks a demonstration's end, not the task "
        "done");
  float most = 0.0f;
  for (const float r : ds.data.rewards) most = std::max(most, r);
  ds.notes.push_back(
      "Kitchen: a reward counts the task's elements within 0.3 of their goals at that step (up to "
      "4; the largest here is " +
      std::to_string(static_cast<int>(most)) +
      "), as D4RL relabelled the demonstrations with completed elements kept, so a "
      "demonstration's return sums those counts over its steps, while an evaluation episode "
      "counts each element once (0 to 4)");
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The D4RL layout

// The arrays of a D4RL file, opened (their shapes known) and not yet read.
struct D4rlArrays {
  Array obs, act, rew, term;
  std::optional<Array> tout, next_obs, qpos, qvel, goal;
  // A task's state beyond qpos and qvel (D4RL's Adroit keys), read only when the file has them.
  std::vector<std::pair<std::string, Array>> state_infos;
  std::int64_t n = 0, obs_dim = 0, act_dim = 0;
  // D4RL's kitchen files hold 'infos' as one array (each step's demonstration index), not a
  // group: nothing below it can be looked up.
  bool infos_group = false;
  // The widths of the infos arrays, known once every length agrees.
  std::int64_t nq = 0, nv = 0, ng = 0;
  std::vector<std::int64_t> state_info_dims;
  std::int64_t state_info_cols = 0;
};

D4rlArrays open_d4rl_arrays(const Context& ctx, hid_t file, const LoadOptions& options) {
  D4rlArrays f;
  f.obs = h5::open_array(ctx, file, "observations", "observations");
  f.obs_dim = h5::matrix_cols(ctx, f.obs, false);
  f.n = f.obs.rows();
  if (f.n == 0) ctx.fail("observations", "holds zero transitions");
  f.act = h5::open_array(ctx, file, "actions", "actions");
  f.act_dim = h5::matrix_cols(ctx, f.act, false);
  f.rew = h5::open_array(ctx, file, "rewards", "rewards");
  h5::require_vector(ctx, f.rew);
  f.term = h5::open_array(ctx, file, "terminals", "terminals");
  h5::require_vector(ctx, f.term);
  if (h5::has_path(ctx, file, "timeouts", "timeouts")) {
    f.tout = h5::open_array(ctx, file, "timeouts", "timeouts");
    h5::require_vector(ctx, *f.tout);
  }
  if (h5::has_path(ctx, file, "next_observations", "next_observations")) {
    f.next_obs = h5::open_array(ctx, file, "next_observations", "next_observations");
    if (h5::matrix_cols(ctx, *f.next_obs, false) != f.obs_dim)
      ctx.fail("next_observations", "has " + std::to_string(f.next_obs->shape[1]) +
                                        " columns but 'observations' has " +
                                        std::to_string(f.obs_dim));
  }
  f.infos_group = h5::is_group(ctx, file, "infos", "infos");
  const bool read_infos = options.infos && f.infos_group;
  if (read_infos && h5::has_path(ctx, file, "infos/qpos", "infos/qpos"))
    f.qpos = h5::open_array(ctx, file, "infos/qpos", "infos/qpos");
  if (read_infos && h5::has_path(ctx, file, "infos/qvel", "infos/qvel"))
    f.qvel = h5::open_array(ctx, file, "infos/qvel", "infos/qvel");
  if (read_infos && h5::has_path(ctx, file, "infos/goal", "infos/goal"))
    f.goal = h5::open_array(ctx, file, "infos/goal", "infos/goal");
  for (const char* key : kStateInfoKeys) {
    const std::string path = std::string("infos/") + key;
    if (read_infos && h5::has_path(ctx, file, path, path))
      f.state_infos.emplace_back(key, h5::open_array(ctx, file, path, path));
  }
  return f;
}

// Every length must agree, the arrays fit the memory budget and every value be in the file before
// anything is allocated or read.
void check_d4rl_arrays(const Context& ctx, D4rlArrays& f, const LoadOptions& options) {
  const std::int64_t n = f.n;
  for (const Array* a : {&f.act, &f.rew, &f.term}) check_rows(ctx, *a, n, "observations");
  for (const auto* a : {&f.tout, &f.next_obs, &f.qpos, &f.qvel, &f.goal})
    if (*a) check_rows(ctx, **a, n, "observations");
  for (const auto& [key, a] : f.state_infos) check_rows(ctx, a, n, "observations");
  f.nq = f.qpos ? h5::matrix_cols(ctx, *f.qpos, false) : 0;
  f.nv = f.qvel ? h5::matrix_cols(ctx, *f.qvel, false) : 0;
  f.ng = f.goal ? h5::matrix_cols(ctx, *f.goal, false) : 0;
  for (const auto& [key, a] : f.state_infos) {
    f.state_info_dims.push_back(h5::matrix_cols(ctx, a, true));
    f.state_info_cols += f.state_info_dims.back();
  }

  MemoryBudget budget{ctx, options.max_bytes > 0 ? options.max_bytes : physical_memory_bytes() / 2};
  budget.add("observations", n, f.obs_dim, 4);
  budget.add("actions", n, f.act_dim, 4);
  budget.add("rewards", n, 1, 4);
  budget.add("terminals", n, 1, 9);  // flags pass through an 8-byte buffer
  if (f.tout) budget.add("timeouts", n, 1, 9);
  if (f.next_obs && options.next_observations) budget.add("next_observations", n, f.obs_dim, 4);
  if (f.qpos) budget.add("infos/qpos", n, f.nq, 4);
  if (f.qvel) budget.add("infos/qvel", n, f.nv, 4);
  if (f.goal) budget.add("infos/goal", n, f.ng, 4);
  for (std::size_t i = 0; i < f.state_infos.size(); ++i)
    budget.add("infos/" + f.state_infos[i].first, n, f.state_info_dims[i], 4);

  h5::StorageMap storage;
  for (const Array* a : {&f.obs, &f.act, &f.rew, &f.term}) h5::require_stored(ctx, *a, storage);
  if (f.tout) h5::require_stored(ctx, *f.tout, storage);
  if (f.next_obs && options.next_observations) h5::require_stored(ctx, *f.next_obs, storage);
  if (f.qpos) h5::require_stored(ctx, *f.qpos, storage);
  if (f.qvel) h5::require_stored(ctx, *f.qvel, storage);
  if (f.goal) h5::require_stored(ctx, *f.goal, storage);
  for (const auto& [key, a] : f.state_infos) h5::require_stored(ctx, a, storage);
}

// The arrays the dataset lists: the transitions' and every array under infos, read or not.
void list_d4rl_arrays(const Context& ctx, hid_t file, const D4rlArrays& f, Dataset& ds) {
  for (const Array* a : {&f.obs, &f.act, &f.rew, &f.term}) ds.arrays.push_back(a->info());
  for (const auto* a : {&f.tout, &f.next_obs})
    if (*a) ds.arrays.push_back((*a)->info());
  if (!f.infos_group && h5::has_link(ctx, file, "infos", "infos")) {
    ds.arrays.push_back(h5::open_array(ctx, file, "infos", "infos").info());
    ds.notes.push_back(
        "'infos' is one array, not a group of states (D4RL's kitchen files: the index of each "
        "step's demonstration within its folder): no state is replayed from it");
  }
  if (f.infos_group) {
    h5::Handle infos(H5Gopen2(file, "infos", H5P_DEFAULT), H5Gclose);
    if (!infos.valid()) ctx.fail_h5("infos", "cannot be opened as a group");
    const std::vector<std::string> members = h5::link_names(ctx, infos, "infos");
    for (const auto& name : members) {
      // Without qpos/qvel the studio cannot replay states; the data themselves are whole.
      if (const auto known = resembled_name(name, {"qpos", "qvel"});
          known && !contains(members, *known))
        ds.warnings.push_back(
            "'infos/" + *known + "' is missing and the file has 'infos/" + printable_name(name) +
            "' instead (a damaged name?): states cannot be replayed from this file");
      if (h5::is_group(ctx, infos, name, "infos/" + name)) continue;
      ds.arrays.push_back(h5::open_array(ctx, infos, name, "infos/" + name).info());
    }
  }
}

void read_d4rl_arrays(const Context& ctx, const D4rlArrays& f, const LoadOptions& options,
                      const Progress& progress, Dataset& ds) {
  const std::int64_t n = f.n, obs_dim = f.obs_dim, act_dim = f.act_dim, nq = f.nq, nv = f.nv,
                     ng = f.ng;
  const auto& next_obs = f.next_obs;
  auto& d = ds.data;
  d.obs_dim = obs_dim;
  d.act_dim = act_dim;
  d.qpos_dim = nq;
  d.qvel_dim = nv;
  d.goal_dim = ng;
  ReadProgress read{progress};
  read.total = n * (obs_dim + act_dim + 1 + nq + nv + ng + f.state_info_cols +
                    (next_obs && options.next_observations ? obs_dim : 0));
  d.observations.resize(n * obs_dim);
  h5::read_floats(ctx, f.obs, obs_dim, d.observations.data(),
                  read.counter(obs_dim, "reading observations"));
  d.actions.resize(n * act_dim);
  h5::read_floats(ctx, f.act, act_dim, d.actions.data(), read.counter(act_dim, "reading actions"));
  d.rewards.resize(n);
  h5::read_floats(ctx, f.rew, 1, d.rewards.data(), read.counter(1, "reading rewards"));
  d.terminals.resize(n);
  h5::read_flags(ctx, f.term, d.terminals.data());
  if (f.tout) {
    d.timeouts.resize(n);
    h5::read_flags(ctx, *f.tout, d.timeouts.data());
  }
  if (next_obs && options.next_observations) {
    d.next_observations.resize(n * obs_dim);
    h5::read_floats(ctx, *next_obs, obs_dim, d.next_observations.data(),
                    read.counter(obs_dim, "reading next_observations"));
  }
  if (f.qpos) {
    d.qpos.resize(n * nq);
    h5::read_floats(ctx, *f.qpos, nq, d.qpos.data(), read.counter(nq, "reading infos/qpos"));
  }
  if (f.qvel) {
    d.qvel.resize(n * nv);
    h5::read_floats(ctx, *f.qvel, nv, d.qvel.data(), read.counter(nv, "reading infos/qvel"));
  }
  if (f.goal) {
    d.goals.resize(n * ng);
    h5::read_floats(ctx, *f.goal, ng, d.goals.data(), read.counter(ng, "reading infos/goal"));
  }
  for (std::size_t i = 0; i < f.state_infos.size(); ++i) {
    const auto& [key, a] = f.state_infos[i];
    auto& info = d.state_infos[key];
    info.dim = f.state_info_dims[i];
    info.values.resize(static_cast<std::size_t>(n * info.dim));
    h5::read_floats(ctx, a, info.dim, info.values.data(),
                    read.counter(info.dim, "reading infos/" + key));
  }
}

// The file's metadata group, whose failures cost a warning, not the dataset; then the top-level
// keys the layout does not know, each reported.
void read_d4rl_metadata(const Context& ctx, hid_t file, const std::vector<std::string>& keys,
                        const LoadOptions& options, Dataset& ds) {
  if (options.metadata) {
    try {
      if (h5::is_group(ctx, file, "metadata", "metadata")) {
        h5::Handle meta(H5Gopen2(file, "metadata", H5P_DEFAULT), H5Gclose);
        if (!meta.valid()) ctx.fail_h5("metadata", "cannot be opened as a group");
        read_metadata(ctx, meta, "metadata", ds);
      }
    } catch (const DatasetError& e) {
      ds.warnings.push_back("metadata left out: " + without_file(e));
    }
  }
  for (const auto& key : keys) {
    if (known_d4rl_key(key)) continue;
    if (const auto known = resembled_name(key, {"infos", "metadata"});
        known && !contains(keys, *known))
      ds.warnings.push_back("'" + *known + "' is missing and the file has a key '" +
                            printable_name(key) + "' instead (a damaged name?): it was left out");
    else
      ds.warnings.push_back("the top-level key '" + printable_name(key) +
                            "' is not part of the D4RL layout and was ignored (a damaged name?)");
  }
  for (const char* key : {"env_id", "env", "environment"}) {
    if (auto it = ds.metadata.find(key); it != ds.metadata.end() && ds.env_id.empty())
      ds.env_id = it->second;
  }
}

// The episodes: at the file's timeouts, or cut every max_episode_steps without them; then what
// AntMaze, Adroit and the kitchen add.
void read_d4rl_episodes(bool has_timeouts, const LoadOptions& options, Dataset& ds) {
  // D4RL's kitchen files name no environment either; their file names do. They have no
  // 'timeouts' by design: a terminal closes each demonstration, so nothing is cut.
  if (ds.env_id.empty()) {
    ds.env_id = d4rl_kitchen_task_of_file(ds.path);
    if (!ds.env_id.empty())
      ds.notes.push_back("the environment is " + ds.env_id + ", from D4RL's file name");
  }
  const auto& d = ds.data;
  const bool kitchen = ds.env_id.rfind("kitchen-", 0) == 0;
  ds.timeouts_synthesized = !has_timeouts && !kitchen;
  ds.episodes = segment_episodes(d.rewards, d.terminals, d.timeouts,
                                 has_timeouts || kitchen ? 0 : options.max_episode_steps);
  if (!has_timeouts && !kitchen)
    ds.warnings.push_back("the file has no 'timeouts': episodes were cut every " +
                          std::to_string(options.max_episode_steps) + " steps, as D4RL does");
  if (kitchen) read_kitchen_episodes(ds, has_timeouts);
  read_antmaze_episodes(ds);
  read_adroit_states(ds);
}

void read_d4rl(const Context& ctx, hid_t file, const std::vector<std::string>& keys,
               const LoadOptions& options, const Progress& progress, Dataset& ds) {
  refuse_damaged_names(ctx, keys);
  D4rlArrays f = open_d4rl_arrays(ctx, file, options);
  check_d4rl_arrays(ctx, f, options);
  list_d4rl_arrays(ctx, file, f, ds);
  read_d4rl_arrays(ctx, f, options, progress, ds);
  read_d4rl_metadata(ctx, file, keys, options, ds);
  read_d4rl_episodes(f.tout.has_value(), options, ds);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The Minari layout

// The arrays of a dict observation, depth first in name order: Minari writes a Dict space as a
// group and a Dict inside it (FrankaKitchen's achieved_goal and desired_goal, one array per task
// element) as a group within.
void dict_members(const Context& ctx, hid_t file, const std::string& path,
                  std::vector<std::string>& out) {
  h5::Handle g(H5Gopen2(file, path.c_str(), H5P_DEFAULT), H5Gclose);
  if (!g.valid()) ctx.fail_h5(path, "cannot be opened as a group");
  for (const auto& member : h5::link_names(ctx, g, path)) {
    const std::string child = path + "/" + member;
    if (h5::is_group(ctx, file, child, child))
      dict_members(ctx, file, child, out);
    else
      out.push_back(child);
  }
}

// Minari: one group per episode; observations carry the reset observation (steps + 1 rows).
struct MinariEpisode {
  std::string name;
  std::vector<Array> observations;  // one array, or the members of a dict observation
  Array actions, rewards, terminations, truncations;
  std::int64_t steps = 0;
};

std::optional<std::int64_t> episode_id(const std::string& name) {
  constexpr std::string_view prefix = "episode_";
  if (name.rfind(prefix, 0) != 0) return std::nullopt;
  std::int64_t id = 0;
  const char* begin = name.data() + prefix.size();
  const char* end = name.data() + name.size();
  auto [ptr, ec] = std::from_chars(begin, end, id);
  if (ec != std::errc() || ptr != end || begin == end) return std::nullopt;
  return id;
}

// An integer attribute as Minari writes it, when it is one.
std::optional<std::int64_t> declared_count(const Dataset& ds, const std::string& key) {
  const auto it = ds.metadata.find(key);
  if (it == ds.metadata.end()) return std::nullopt;
  std::int64_t value = 0;
  const char* end = it->second.data() + it->second.size();
  auto [ptr, ec] = std::from_chars(it->second.data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

// Whether `env_id` is one of D4RL's Adroit tasks ("door-human-v2").
bool find_adroit(const std::string& env_id) {
  for (const char* adroit : {"pen-", "door-", "hammer-", "relocate-"})
    if (env_id.rfind(adroit, 0) == 0) return true;
  return false;
}

// A state array every episode of a Minari file holds (qpos, qvel, a D4RL state key), under the
// episode's infos/ (recorded infos) or state/ (a step callback's env.get_env_state()).
struct MinariState {
  std::string where, key;
  std::int64_t dim = 0;
  std::vector<Array> arrays;  // one per episode
};

std::vector<MinariState> minari_states(const Context& ctx, hid_t file,
                                       const std::vector<MinariEpisode>& episodes, Dataset& ds) {
  std::vector<std::string> keys = {"qpos", "qvel"};
  keys.insert(keys.end(), std::begin(kStateInfoKeys), std::end(kStateInfoKeys));
  std::vector<MinariState> out;
  for (const auto& key : keys)
    for (const char* where : {"infos", "state"}) {
      std::size_t held = 0;
      for (const auto& e : episodes)
        held += h5::has_path(ctx, file, e.name + "/" + where + "/" + key,
                             e.name + "/" + where + "/" + key);
      if (held == 0) continue;
      if (held != episodes.size()) {
        ds.warnings.push_back(std::to_string(episodes.size() - held) + " of " +
                              std::to_string(episodes.size()) + " episodes have no '" + where +
                              "/" + key + "': it was left out, and no episode replays from it");
        continue;
      }
      MinariState st{where, key, -1, {}};
      for (const auto& e : episodes) {
        const std::string path = e.name + "/" + where + "/" + key;
        Array a = h5::open_array(ctx, file, path, path);
        const std::int64_t cols = h5::matrix_cols(ctx, a, true);
        // With the reset's record (Minari's record_infos) a state has steps + 1 rows.
        if (a.rows() != e.steps && a.rows() != e.steps + 1)
          ctx.fail(path, "has " + std::to_string(a.rows()) + " rows; an episode of " +
                             std::to_string(e.steps) + " steps needs " + std::to_string(e.steps) +
                             " or " + std::to_string(e.steps + 1));
        if (st.dim >= 0 && cols != st.dim)
          ctx.fail(path, "has " + std::to_string(cols) + " columns but earlier episodes have " +
                             std::to_string(st.dim));
        st.dim = cols;
        st.arrays.push_back(std::move(a));
      }
      out.push_back(std::move(st));
      break;
    }
  return out;
}

// The file's attributes as the dataset's metadata; one that cannot be read costs a warning.
void read_minari_metadata(const Context& ctx, hid_t file, const LoadOptions& options, Dataset& ds) {
  if (!options.metadata) return;
  try {
    for (const auto& attr : h5::attribute_names(ctx, file, "")) {
      try {
        if (auto text = h5::read_attribute_text(ctx, file, attr); !text.empty())
          ds.metadata[attr] = text;
      } catch (const DatasetError& e) {
        ds.warnings.push_back("metadata left out: the attribute " + without_file(e));
      }
    }
  } catch (const DatasetError& e) {
    ds.warnings.push_back("metadata left out: " + without_file(e));
  }
}

// The environment from the file's env_spec, and what Minari's remakes of D4RL's datasets are:
// other tasks (AntMaze, the kitchen), or D4RL's Adroit tasks with other rewards.
void read_minari_task(Dataset& ds) {
  if (auto it = ds.metadata.find("env_spec"); it != ds.metadata.end()) {
    const auto spec = nlohmann::json::parse(it->second, nullptr, false);
    if (spec.is_object() && spec.contains("id") && spec["id"].is_string()) ds.env_id = spec["id"];
  }
  // Minari's D4RL/antmaze re-made the data in Gymnasium-Robotics' AntMaze: a different task.
  const auto dataset_id = ds.metadata.count("dataset_id") ? ds.metadata.at("dataset_id") : "";
  if (ds.env_id.rfind("AntMaze_", 0) == 0 || dataset_id.rfind("D4RL/antmaze", 0) == 0)
    ds.task_caveat =
        "Minari's " + (dataset_id.empty() ? std::string("antmaze") : dataset_id) + " is " +
        (ds.env_id.empty() ? std::string("Gymnasium-Robotics' AntMaze") : ds.env_id) +
        ", not D4RL's antmaze: Gymnasium's ant (gear 150, timestep 0.01, 0.05 s a step), a goal "
        "threshold of 0.45, rewards against each episode's own goal, dict observations. Its "
        "scores are not comparable with D4RL antmaze scores.";
  // Minari's D4RL/kitchen replayed the demonstrations in Gymnasium-Robotics' FrankaKitchen: a
  // different task too.
  if (ds.env_id.rfind("FrankaKitchen", 0) == 0 || dataset_id.rfind("D4RL/kitchen", 0) == 0)
    ds.task_caveat =
        "Minari's " + (dataset_id.empty() ? std::string("kitchen") : dataset_id) + " is " +
        (ds.env_id.empty() ? std::string("Gymnasium-Robotics' FrankaKitchen") : ds.env_id) +
        ", not D4RL's kitchen: a dict observation (observation of 59 = the robot's 9 qpos and 9 "
        "qvel, the objects' 21 qpos and 20 qvel; achieved_goal and desired_goal per task "
        "element), observation noise 10x smaller, no 30-D goal block. A checkpoint trained on "
        "D4RL's kitchen (60-D observations) does not read its states, and its scores are not "
        "comparable with D4RL kitchen scores.";
  // Minari's D4RL Adroit files re-ran D4RL's actions in Gymnasium-Robotics' AdroitHand*-v1 from
  // D4RL's first states: D4RL's observations and actions, which the studio's task reads, with
  // that environment's rewards.
  for (const char* adroit : {"pen", "door", "hammer", "relocate"}) {
    const std::string prefix = std::string("D4RL/") + adroit + "/";
    if (dataset_id.rfind(prefix, 0) != 0) continue;
    const std::string gr = ds.env_id;
    ds.env_id = std::string(adroit) + "-" + dataset_id.substr(prefix.size());
    ds.notes.push_back(
        "Minari's " + dataset_id + " re-ran D4RL's " + adroit + " actions in " +
        (gr.empty() ? std::string("Gymnasium-Robotics' Adroit") : gr) +
        " from D4RL's first states: the observations and actions are D4RL's " + adroit +
        " task's, simulated here as " + ds.env_id +
        "; the rewards are that environment's (Gymnasium-Robotics' v1 door, hammer and relocate "
        "rewards had a sign error in their dense term, and its pen never ends early), so "
        "returns differ from D4RL's");
  }
}

// The episode groups of a Minari file, opened and checked against each other, not yet read.
struct MinariEpisodes {
  std::vector<MinariEpisode> episodes;
  std::int64_t obs_dim = -1, act_dim = -1, total = 0;
  bool dict_observations = false;
};

// Opens the episode group `name` and checks its arrays against each other and against the
// episodes opened before it.
void open_minari_episode(const Context& ctx, hid_t file, const std::string& name,
                         MinariEpisodes& all) {
  const auto& episodes = all.episodes;
  MinariEpisode e;
  e.name = name;
  e.actions = h5::open_array(ctx, file, name + "/actions", name + "/actions");
  e.steps = e.actions.rows();
  const std::int64_t a_dim = h5::matrix_cols(ctx, e.actions, true);
  e.rewards = h5::open_array(ctx, file, name + "/rewards", name + "/rewards");
  e.terminations = h5::open_array(ctx, file, name + "/terminations", name + "/terminations");
  e.truncations = h5::open_array(ctx, file, name + "/truncations", name + "/truncations");
  for (Array* a : {&e.rewards, &e.terminations, &e.truncations}) {
    h5::require_vector(ctx, *a);
    check_rows(ctx, *a, e.steps, name + "/actions");
  }
  // A dict observation space (goal-conditioned tasks) is a group: concatenate its members.
  std::vector<std::string> obs_paths;
  if (h5::is_group(ctx, file, name + "/observations", name + "/observations")) {
    all.dict_observations = true;
    dict_members(ctx, file, name + "/observations", obs_paths);
    if (obs_paths.empty()) ctx.fail(name + "/observations", "is an empty group");
  } else {
    obs_paths.push_back(name + "/observations");
  }
  if (!episodes.empty() && episodes.front().observations.size() == obs_paths.size())
    for (std::size_t k = 0; k < obs_paths.size(); ++k)
      if (obs_paths[k].substr(name.size()) !=
          episodes.front().observations[k].key.substr(episodes.front().name.size()))
        ctx.fail(obs_paths[k], "is not the observation member '" +
                                   episodes.front().observations[k].key + "' has in " +
                                   episodes.front().name);
  std::int64_t o_dim = 0;
  for (const auto& path : obs_paths) {
    Array a = h5::open_array(ctx, file, path, path);
    o_dim += h5::matrix_cols(ctx, a, true);
    if (a.rows() != e.steps + 1)
      ctx.fail(path, "has " + std::to_string(a.rows()) + " rows; a Minari episode of " +
                         std::to_string(e.steps) + " steps needs steps + 1 = " +
                         std::to_string(e.steps + 1) + " (the reset observation first)");
    e.observations.push_back(std::move(a));
  }
  if (all.obs_dim >= 0 && (o_dim != all.obs_dim || a_dim != all.act_dim))
    ctx.fail(name, "has observation/action dims " + std::to_string(o_dim) + "/" +
                       std::to_string(a_dim) + " but earlier episodes have " +
                       std::to_string(all.obs_dim) + "/" + std::to_string(all.act_dim));
  all.obs_dim = o_dim;
  all.act_dim = a_dim;
  all.total += e.steps;
  all.episodes.push_back(std::move(e));
}

// Where the episodes' states come from, or that there are none to replay from.
void note_minari_states(const std::vector<MinariState>& states, const LoadOptions& options,
                        Dataset& ds) {
  if (!states.empty()) {
    std::string list;
    for (const auto& st : states) list += (list.empty() ? "" : ", ") + st.where + "/" + st.key;
    ds.notes.push_back("each episode's states were read from " + list +
                       " (the state at each step's observation): its episodes replay from them");
  } else if (options.infos && find_adroit(ds.env_id)) {
    ds.notes.push_back(
        "the file holds no states (no qpos or qvel under an episode's infos/ or "
        "state/): its episodes cannot be replayed from saved states");
  }
}

// The file's own totals: an episode group whose name was damaged is otherwise skipped unseen.
void check_minari_totals(const Context& ctx, std::int64_t held, std::int64_t total,
                         const LoadOptions& options, Dataset& ds) {
  const auto declared_episodes = declared_count(ds, "total_episodes");
  const auto declared_steps = declared_count(ds, "total_steps");
  if (declared_episodes && *declared_episodes != held)
    ctx.fail("", "declares " + std::to_string(*declared_episodes) +
                     " episodes (total_episodes) but holds " + std::to_string(held) +
                     " readable episode groups: the file is damaged or incomplete");
  if (declared_steps && *declared_steps != total)
    ctx.fail("", "declares " + std::to_string(*declared_steps) +
                     " steps (total_steps) but its episode groups hold " + std::to_string(total) +
                     ": the file is damaged or incomplete");
  if (!options.metadata)
    ds.warnings.push_back(
        "the file's declared totals (total_episodes, total_steps) could not be read: "
        "whether every episode group was found is unchecked");
}

// The arrays must fit the memory budget and every value be in the file before anything is
// allocated or read.
void check_minari_storage(const Context& ctx, const MinariEpisodes& all,
                          const std::vector<MinariState>& states, const LoadOptions& options) {
  const std::int64_t total = all.total;
  MemoryBudget budget{ctx, options.max_bytes > 0 ? options.max_bytes : physical_memory_bytes() / 2};
  budget.add("observations", total, all.obs_dim, 4);
  budget.add("actions", total, all.act_dim, 4);
  budget.add("rewards", total, 1, 4);
  budget.add("terminations", total, 2, 9);
  for (const auto& st : states) budget.add(st.where + "/" + st.key, total, st.dim, 4);

  h5::StorageMap storage;
  for (const auto& e : all.episodes) {
    for (const auto& a : e.observations) h5::require_stored(ctx, a, storage);
    for (const Array* a : {&e.actions, &e.rewards, &e.terminations, &e.truncations})
      h5::require_stored(ctx, *a, storage);
  }
  for (const auto& st : states)
    for (const auto& a : st.arrays) h5::require_stored(ctx, a, storage);
}

// The dataset's arrays, sized for every episode's steps.
void allocate_minari_data(const MinariEpisodes& all, const std::vector<MinariState>& states,
                          Dataset& ds) {
  const std::int64_t total = all.total;
  auto& d = ds.data;
  d.obs_dim = all.obs_dim;
  d.act_dim = all.act_dim;
  d.observations.resize(total * all.obs_dim);
  d.actions.resize(total * all.act_dim);
  d.rewards.resize(total);
  d.terminals.resize(total);
  d.timeouts.resize(total);
  for (const auto& st : states) {
    const auto size = static_cast<std::size_t>(total * st.dim);
    if (st.key == "qpos")
      d.qpos_dim = st.dim, d.qpos.resize(size);
    else if (st.key == "qvel")
      d.qvel_dim = st.dim, d.qvel.resize(size);
    else
      d.state_infos[st.key] = {st.dim, std::vector<float>(size)};
  }
}

// Reads every episode into the allocated arrays, one after the other, and lists the episodes.
// Returns how many steps before an episode's last carry a termination or truncation flag.
std::int64_t read_minari_episodes(const Context& ctx, const MinariEpisodes& all,
                                  const std::vector<MinariState>& states, const Progress& progress,
                                  Dataset& ds) {
  const auto& episodes = all.episodes;
  const std::int64_t obs_dim = all.obs_dim, act_dim = all.act_dim;
  auto& d = ds.data;
  ReadProgress read{progress};
  read.total = all.total * (obs_dim + act_dim + 1);
  std::int64_t row = 0, early_flags = 0;
  std::vector<float> block;
  for (const auto& e : episodes) {
    // Observations: copy the first `steps` rows of each member into its columns.
    std::int64_t col0 = 0;
    for (const auto& a : e.observations) {
      const std::int64_t cols = a.shape.size() == 2 ? a.shape[1] : 1;
      block.resize((e.steps + 1) * cols);
      h5::read_floats(ctx, a, cols, block.data(), nullptr, 0);
      for (std::int64_t t = 0; t < e.steps; ++t)
        std::copy_n(&block[t * cols], cols, &d.observations[(row + t) * obs_dim + col0]);
      col0 += cols;
    }
    read.counter(obs_dim, "reading observations")(e.steps);
    h5::read_floats(ctx, e.actions, act_dim, &d.actions[row * act_dim],
                    read.counter(act_dim, "reading actions"), 0);
    h5::read_floats(ctx, e.rewards, 1, &d.rewards[row], read.counter(1, "reading rewards"), 0);
    h5::read_flags(ctx, e.terminations, &d.terminals[row]);
    h5::read_flags(ctx, e.truncations, &d.timeouts[row]);
    // States: the first `steps` rows, the state at each step's observation.
    for (const auto& st : states) {
      const Array& a = st.arrays[static_cast<std::size_t>(&e - episodes.data())];
      block.resize(a.rows() * st.dim);
      h5::read_floats(ctx, a, st.dim, block.data(), nullptr, 0);
      std::vector<float>& out = st.key == "qpos"   ? d.qpos
                                : st.key == "qvel" ? d.qvel
                                                   : d.state_infos[st.key].values;
      std::copy_n(block.begin(), e.steps * st.dim, out.begin() + row * st.dim);
    }
    Episode ep{.start = row, .length = e.steps};
    for (std::int64_t t = row; t < row + e.steps; ++t) {
      ep.ret += d.rewards[t];
      if (t + 1 < row + e.steps && (d.terminals[t] || d.timeouts[t])) ++early_flags;
    }
    if (e.steps > 0) {
      const std::int64_t last = row + e.steps - 1;
      ep.end = d.terminals[last]  ? EndReason::Terminal
               : d.timeouts[last] ? EndReason::Timeout
                                  : EndReason::Unterminated;
      ds.episodes.push_back(ep);
    }
    row += e.steps;
  }
  return early_flags;
}

// The arrays the dataset lists, as if one episode followed the other, and a dict observation's
// columns.
void list_minari_arrays(const MinariEpisodes& all, Dataset& ds) {
  const auto& episodes = all.episodes;
  const std::int64_t total = all.total, obs_dim = all.obs_dim, act_dim = all.act_dim;
  ds.arrays.push_back({"observations",
                       episodes.front().observations.front().dtype,
                       {total + static_cast<std::int64_t>(episodes.size()), obs_dim}});
  ds.arrays.push_back({"actions", episodes.front().actions.dtype, {total, act_dim}});
  ds.arrays.push_back({"rewards", episodes.front().rewards.dtype, {total}});
  ds.arrays.push_back({"terminations", episodes.front().terminations.dtype, {total}});
  ds.arrays.push_back({"truncations", episodes.front().truncations.dtype, {total}});
  if (all.dict_observations) {
    std::string columns;
    std::int64_t col = 0;
    for (const auto& a : episodes.front().observations) {
      const std::int64_t cols = a.shape.size() == 2 ? a.shape[1] : 1;
      columns += (columns.empty() ? "" : ", ") +
                 a.key.substr(episodes.front().name.size() + std::string("/observations/").size()) +
                 " " + std::to_string(col) + "-" + std::to_string(col + cols - 1);
      col += cols;
    }
    ds.warnings.push_back(
        "observations are a dict: their members were concatenated in name order (columns " +
        columns + ")");
  }
}

void read_minari(const Context& ctx, hid_t file,
                 const std::vector<std::pair<std::int64_t, std::string>>& names,
                 const std::vector<std::string>& keys, const LoadOptions& options,
                 const Progress& progress, Dataset& ds) {
  read_minari_metadata(ctx, file, options, ds);
  read_minari_task(ds);
  for (const auto& key : keys)
    if (!episode_id(key))
      ds.warnings.push_back("the top-level key '" + printable_name(key) +
                            "' is not an episode group and was ignored (a damaged name?)");

  MinariEpisodes all;
  all.episodes.reserve(names.size());
  for (const auto& [id, name] : names) open_minari_episode(ctx, file, name, all);
  if (all.total == 0)
    ctx.fail(names.front().second, "holds zero transitions (every episode is empty)");
  const auto states =
      options.infos ? minari_states(ctx, file, all.episodes, ds) : std::vector<MinariState>{};
  note_minari_states(states, options, ds);
  check_minari_totals(ctx, static_cast<std::int64_t>(names.size()), all.total, options, ds);
  check_minari_storage(ctx, all, states, options);

  allocate_minari_data(all, states, ds);
  const std::int64_t early_flags = read_minari_episodes(ctx, all, states, progress, ds);
  list_minari_arrays(all, ds);
  if (early_flags > 0)
    ds.warnings.push_back(
        std::to_string(early_flags) +
        " steps before an episode's last step carry a termination or truncation flag; "
        "episodes follow the groups, not these flags");
}

}  // namespace

namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] Opening an HDF5 file

// The HDF5 file to read: `path` itself, or a Minari dataset folder's main_data.hdf5.
std::filesystem::path hdf5_file(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return path;
  if (fs::exists(path / "data" / "main_data.hdf5", ec)) return path / "data" / "main_data.hdf5";
  if (fs::exists(path / "main_data.hdf5", ec)) return path / "main_data.hdf5";
  throw DatasetError(path.string(), "",
                     "is a folder without data/main_data.hdf5 (not a Minari dataset)");
}

// The keys at the top of an HDF5 file and, among them, Minari's episode groups in id order.
struct TopLevel {
  std::vector<std::string> keys;
  std::vector<std::pair<std::int64_t, std::string>> minari_episodes;
};

// Opens `path` (a file, or a Minari folder's main_data.hdf5) with the checks every HDF5 layout
// needs, hands `read` the open file and its top level, and closes it. Breadcrumbs name each step
// for the reader process, which reports where libhdf5 crashed or hung on a damaged file.
template <class Read>
Dataset with_hdf5_file(const std::filesystem::path& path, const Progress& progress, Read&& read) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path file = hdf5_file(path);
  Context ctx{file.string()};
  if (!fs::exists(file, ec)) ctx.fail("", "no such file");
  const auto bytes = fs::file_size(file, ec);
  if (ec) ctx.fail("", "cannot be read: " + ec.message());
  if (bytes == 0) ctx.fail("", "is empty (0 bytes)");
  ctx.file_bytes = static_cast<std::int64_t>(bytes);
  progress.update(0.0, "opening");

  Dataset ds;
  ds.path = file.string();
  std::lock_guard lock(h5::library_mutex());
  h5::silence_library();
  if (H5Fis_hdf5(file.c_str()) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    ctx.fail("", "is not an HDF5 file");
  }
  h5::breadcrumb("opening the file");
  h5::Handle fid(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!fid.valid()) ctx.fail_h5("", "cannot be opened: the file is truncated or corrupt");
  TopLevel top;
  top.keys = h5::link_names(ctx, fid, "");
  for (const auto& name : top.keys)
    if (auto id = episode_id(name)) top.minari_episodes.emplace_back(*id, name);
  std::sort(top.minari_episodes.begin(), top.minari_episodes.end());
  read(ctx, fid, top, ds);
  h5::breadcrumb("closing the file");
  if (!fid.close()) ctx.fail_h5("", "could not be closed: the file is corrupt");
  return ds;
}

// Steps of episodes that end with neither a terminal nor a timeout: a file's unterminated tail.
std::pair<std::int64_t, std::int64_t> unterminated(const Dataset& ds) {
  std::int64_t episodes = 0, steps = 0;
  for (const auto& ep : ds.episodes)
    if (!ep.complete()) ++episodes, steps += ep.length;
  return {episodes, steps};
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The two formats

// D4RL's layout: one array per field over all transitions.
Dataset load_d4rl_file(const std::filesystem::path& path, const LoadOptions& options,
                       const Progress& progress) {
  Dataset ds = with_hdf5_file(
      path, progress,
      [&](const Context& ctx, const h5::Handle& fid, const TopLevel& top, Dataset& out) {
        if (!h5::has_link(ctx, fid, "observations", "observations"))
          ctx.fail("", "is not a D4RL file: it has no 'observations'");
        read_d4rl(ctx, fid, top.keys, options, progress, out);
      });
  if (const auto [episodes, steps] = unterminated(ds); steps > 0)
    ds.notes.push_back((steps == 1 ? std::string("the last step ends")
                                   : "the last " + std::to_string(steps) + " steps end") +
                       " without a terminal or timeout: an unterminated tail, left out of "
                       "the statistics and of training windows, as in D4RL");
  return ds;
}

// Minari's layout: one group per episode.
Dataset load_minari_file(const std::filesystem::path& path, const LoadOptions& options,
                         const Progress& progress) {
  Dataset ds = with_hdf5_file(
      path, progress,
      [&](const Context& ctx, const h5::Handle& fid, const TopLevel& top, Dataset& out) {
        if (top.minari_episodes.empty())
          ctx.fail("", "is not a Minari file: it has no 'episode_*' groups");
        read_minari(ctx, fid, top.minari_episodes, top.keys, options, progress, out);
      });
  if (const auto [episodes, steps] = unterminated(ds); episodes > 0)
    ds.warnings.push_back(std::to_string(episodes) + " episodes (" + std::to_string(steps) +
                          " steps) end with neither termination nor truncation: left out of the "
                          "statistics and of training windows");
  return ds;
}

// A file no format claims: why, in the words of the HDF5 layouts (not HDF5, damaged, or which
// keys it has instead).
[[noreturn]] void refuse_unclaimed(const std::filesystem::path& path) {
  with_hdf5_file(
      path, Progress{},
      [](const Context& ctx, const h5::Handle& fid, const TopLevel& top, Dataset&) {
        // As the D4RL layout's detect asks it, but letting a damaged link say what it is.
        if (h5::has_link(ctx, fid, "observations", "observations"))
          ctx.fail("observations", "is there, yet the D4RL layout could not read the file");
        std::string found;
        for (std::size_t i = 0; i < top.keys.size() && i < 8; ++i)
          found += (i ? ", " : "") + top.keys[i];
        ctx.fail("",
                 "is neither a D4RL file (no 'observations') nor a Minari file (no 'episode_*' "
                 "groups); its top-level keys are: " +
                     (found.empty() ? "none" : found));
      });
  throw DatasetError(path.string(), "", "no dataset format reads it");
}

// ---------------------------------------------------------------------------------------------
// [SECTION] What every dataset gets

// Names and texts read from the file, made valid UTF-8 before anything shows or stores them (a
// damaged name holds any bytes; JSON writers and Qt labels need UTF-8).
void make_texts_valid(Dataset& ds) {
  std::map<std::string, std::string> metadata;
  for (const auto& [key, value] : ds.metadata) metadata[printable_name(key)] = valid_utf8(value);
  ds.metadata = std::move(metadata);
  for (auto& a : ds.arrays) a.key = printable_name(a.key);
  for (auto& w : ds.warnings) w = valid_utf8(w);
  for (auto& n : ds.notes) n = valid_utf8(n);
  ds.env_id = printable_name(ds.env_id);
  ds.task_caveat = valid_utf8(ds.task_caveat);
}

// What every dataset gets, whichever format it came from.
void finish(Dataset& ds, const Progress& progress) {
  progress.update(0.92, "statistics");
  bool complete = false;
  for (const auto& ep : ds.episodes) complete = complete || ep.complete();
  if (!complete) ds.warnings.push_back("no complete episode: nothing can be sampled for training");
  state_statistics(ds.data, ds.episodes, ds.state_mean, ds.state_std);
  progress.update(0.96, "fingerprint");
  ds.fingerprint = content_fingerprint(ds.data);
  progress.update(1.0, "done");
}

// A format's result, checked before anything relies on it.
void check_format_dataset(const Dataset& ds, const std::string& format) {
  const Context ctx{ds.path};
  const auto& d = ds.data;
  const std::int64_t n = d.size();
  auto rows = [&](std::size_t size, std::int64_t width, const char* key) {
    if (static_cast<std::int64_t>(size) != n * width)
      ctx.fail(key, "the " + format + " format gave " + std::to_string(size) + " values for " +
                        std::to_string(n) + " transitions");
  };
  if (d.obs_dim < 1 || d.act_dim < 1)
    ctx.fail("", "the " + format + " format gave no observations or actions");
  rows(d.actions.size(), d.act_dim, "actions");
  rows(d.rewards.size(), 1, "rewards");
  rows(d.terminals.size(), 1, "terminals");
  // No timeouts at all is a file's right (D4RL's kitchen and its oldest files have none).
  if (!d.timeouts.empty()) rows(d.timeouts.size(), 1, "timeouts");
  std::int64_t next = 0;
  for (const auto& e : ds.episodes) {
    if (e.start != next || e.length < 1)
      ctx.fail("", "the " + format + " format gave episodes that do not tile the transitions");
    next = e.start + e.length;
  }
  if (next != n)
    ctx.fail("", "the " + format + " format gave episodes covering " + std::to_string(next) +
                     " of " + std::to_string(n) + " transitions");
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The format registry

bool hdf5_with(const std::filesystem::path& file, bool minari) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) return false;
  std::lock_guard lock(h5::library_mutex());
  h5::silence_library();
  if (H5Fis_hdf5(file.c_str()) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return false;
  }
  h5::breadcrumb("opening the file");
  h5::Handle fid(H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!fid.valid()) return false;
  const Context ctx{file.string()};
  try {
    // The steps the loaders take, in their order: the reader's breadcrumbs then name the same
    // step whether a damaged file crashes libhdf5 here or in the loader.
    const auto keys = h5::link_names(ctx, fid, "");
    if (!minari) return h5::has_link(ctx, fid, "observations", "observations");
    for (const auto& name : keys)
      if (episode_id(name)) return true;
  } catch (const DatasetError&) {
    H5Eclear2(H5E_DEFAULT);  // a file whose links cannot be read is no format's to claim
  }
  return false;
}

}  // namespace

Registry<DatasetFormatDefinition>& dataset_format_registry() {
  static auto* registry = [] {  // never destroyed: plugins' code
    auto* r = new Registry<DatasetFormatDefinition>("dataset format");
    r->add({"d4rl",
            "D4RL HDF5: observations, actions, rewards, terminals, timeouts (infos/, metadata/)",
            [](const std::filesystem::path& p) { return hdf5_with(p, false); },
            load_d4rl_file,
            true,
            {}});
    r->add({"minari",
            "Minari: a dataset folder or its main_data.hdf5, one group per episode",
            [](const std::filesystem::path& p) {
              std::error_code ec;
              if (std::filesystem::is_directory(p, ec))
                return std::filesystem::exists(p / "data" / "main_data.hdf5", ec) ||
                       std::filesystem::exists(p / "main_data.hdf5", ec);
              return hdf5_with(p, true);
            },
            load_minari_file,
            true,
            {}});
    return r;
  }();
  return *registry;
}

namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] Loading

// Whether `format` claims `path`; a format that cannot tell does not.
bool claims(const DatasetFormatDefinition& format, const std::filesystem::path& path) {
  if (!format.detect || !format.load) return false;
  try {
    return format.detect(path);
  } catch (...) {
    return false;
  }
}

// Reads `path` with `format` in this process, then adds what every dataset has.
Dataset load_with(const DatasetFormatDefinition& format, const std::filesystem::path& path,
                  const LoadOptions& options, const Progress& progress) {
  Dataset ds;
  try {
    ds = format.load(path, options, progress);
  } catch (const Error&) {
    throw;
  } catch (const Cancelled&) {
    throw;
  } catch (const std::exception& e) {
    throw DatasetError(
        path.string(), "",
        "the " + format.name + " format (" + format.origin.label() + ") failed: " + e.what());
  }
  // Every format's result is checked alike, the studio's own as a plugin's.
  ds.format = format.name;
  if (ds.path.empty()) ds.path = path.string();
  check_format_dataset(ds, format.name);
  finish(ds, progress);
  make_texts_valid(ds);
  return ds;
}

}  // namespace

Dataset load_dataset(const std::filesystem::path& path, const LoadOptions& options,
                     const Progress& progress) {
  // Plugins' formats first: one may claim files the studio's own layouts would refuse.
  std::vector<std::shared_ptr<const DatasetFormatDefinition>> formats;
  for (const auto& format : dataset_format_registry().all())
    if (!format->origin.builtin()) formats.push_back(format);
  for (const auto& format : dataset_format_registry().all())
    if (format->origin.builtin()) formats.push_back(format);

  // Isolated, a format whose detect opens the file with libhdf5 is asked in the reader process
  // (libhdf5 crashes and loops on some damaged files), where load_dataset asks it again; any
  // other format is asked here, and its reading happens in the reader, so a format that crashes
  // on a file takes only that process with it.
  const DatasetFormatDefinition* ask_in_reader = nullptr;
  for (const auto& format : formats) {
    if (options.isolate && format->detect_reads_hdf5) {
      if (!ask_in_reader) ask_in_reader = format.get();
      continue;
    }
    if (!claims(*format, path)) continue;
    if (!options.isolate) return load_with(*format, path, options, progress);
    // A plugin's format is read by the reader that loads its plugin; the studio's own by the
    // plain reader, which asks them again.
    Dataset ds = load_in_reader_process(path, options, progress,
                                        format->origin.builtin() ? nullptr : format.get());
    make_texts_valid(ds);
    return ds;
  }
  if (ask_in_reader) {
    std::error_code ec;
    const auto file = hdf5_file(path);
    if (!std::filesystem::exists(file, ec)) refuse_unclaimed(path);  // says "no such file"
    Dataset ds = load_in_reader_process(file, options, progress,
                                        ask_in_reader->origin.builtin() ? nullptr : ask_in_reader);
    make_texts_valid(ds);  // the reader's own warnings quote the step it was at
    return ds;
  }
  refuse_unclaimed(path);
}

}  // namespace dstudio::data

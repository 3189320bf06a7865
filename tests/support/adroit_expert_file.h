#pragma once
/// \file
/// Files in D4RL's Adroit expert layout, made by the tests: expert episodes of the shipped DAPG
/// policy with the task's state keys, and `metadata/policy/` holding the policy's layers as D4RL's
/// scripts/generation/hand_dapg_policies.py (extract_params) wrote them.

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "dstudio/behaviour/adroit_data.h"
#include "dstudio/behaviour/mlp_policy.h"
#include "h5_fixture.h"

namespace dstudio::test {

inline std::vector<double> doubles(const std::vector<float>& v) {
  return {v.begin(), v.end()};
}

// The named layers of a policy file: key below metadata/policy/ -> (shape, values).
struct PolicyArrays {
  std::map<std::string, std::pair<std::vector<hsize_t>, std::vector<float>>> arrays;
  void layer(const std::string& name, const behaviour::MlpLayer& l) {
    arrays[name + "/weight"] = {{static_cast<hsize_t>(l.out), static_cast<hsize_t>(l.in)},
                                l.weight};
    arrays[name + "/bias"] = {{static_cast<hsize_t>(l.out)}, l.bias};
  }
};

// D4RL's extract_params in float32, as numpy computes it: fc0's weight times diag(1 / in_scale),
// its bias minus that weight times in_shift; last_fc's weight times diag(out_scale) on the left,
// its bias times out_scale plus out_shift; last_fc_log_std a copy of last_fc.
inline PolicyArrays d4rl_fold(const behaviour::MlpPolicy& p) {
  EXPECT_EQ(p.layers.size(), 3u) << "D4RL's fold assumes two hidden layers";
  behaviour::MlpLayer fc0 = p.layers[0], fc1 = p.layers[1], last = p.layers[2];
  for (int o = 0; o < fc0.out; ++o) {
    double shifted = 0.0;
    for (int i = 0; i < fc0.in; ++i) {
      float& w = fc0.weight[static_cast<std::size_t>(o * fc0.in + i)];
      w = w * (1.0f / p.in_scale[static_cast<std::size_t>(i)]);
      shifted += static_cast<double>(w) * p.in_shift[static_cast<std::size_t>(i)];
    }
    fc0.bias[static_cast<std::size_t>(o)] -= static_cast<float>(shifted);
  }
  for (int o = 0; o < last.out; ++o) {
    const float scale = p.out_scale[static_cast<std::size_t>(o)];
    for (int i = 0; i < last.in; ++i)
      last.weight[static_cast<std::size_t>(o * last.in + i)] *= scale;
    float& b = last.bias[static_cast<std::size_t>(o)];
    b = b * scale;
    b = b + p.out_shift[static_cast<std::size_t>(o)];
  }
  PolicyArrays out;
  out.layer("fc0", fc0);
  out.layer("fc1", fc1);
  out.layer("last_fc", last);
  out.layer("last_fc_log_std", last);
  return out;
}

// A file in D4RL's Adroit expert layout: the transitions of `episodes` expert episodes, the task's
// state keys, metadata/algorithm and metadata/policy/{nonlinearity, output_distribution, layers}.
inline void write_expert_file(const std::filesystem::path& path, const std::string& task,
                              const PolicyArrays& policy, int episodes = 1) {
  behaviour::AdroitExpertConfig c;
  c.task = task;
  c.episodes = episodes;
  c.seed = 3;
  c.threads = 1;
  const auto made =
      behaviour::generate_adroit_expert_dataset(c, behaviour::shipped_dapg_policy(task));
  const auto& d = made.arrays;
  const auto n = static_cast<hsize_t>(d.size());
  H5Writer w(path);
  w.numbers("observations", doubles(d.observations), {n, static_cast<hsize_t>(d.obs_dim)},
            H5T_IEEE_F32LE);
  w.numbers("actions", doubles(d.actions), {n, static_cast<hsize_t>(d.act_dim)}, H5T_IEEE_F32LE);
  w.numbers("rewards", doubles(d.rewards), {n}, H5T_IEEE_F32LE);
  w.bools("terminals", {d.terminals.begin(), d.terminals.end()}, {n});
  w.bools("timeouts", {d.timeouts.begin(), d.timeouts.end()}, {n});
  w.numbers("infos/qpos", doubles(d.qpos), {n, static_cast<hsize_t>(d.qpos_dim)}, H5T_IEEE_F32LE);
  w.numbers("infos/qvel", doubles(d.qvel), {n, static_cast<hsize_t>(d.qvel_dim)}, H5T_IEEE_F32LE);
  for (const auto& [key, info] : d.state_infos)
    w.numbers("infos/" + key, doubles(info.values), {n, static_cast<hsize_t>(info.dim)},
              H5T_IEEE_F32LE);
  w.text("metadata/algorithm", "DAPG");
  w.text("metadata/policy/nonlinearity", "tanh");
  w.text("metadata/policy/output_distribution", "gaussian");
  for (const auto& [key, a] : policy.arrays)
    w.numbers("metadata/policy/" + key, doubles(a.second), a.first, H5T_IEEE_F32LE);
}

}  // namespace dstudio::test

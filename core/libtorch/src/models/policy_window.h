#pragma once
// The window a policy sees while acting, cut from one episode's history. Shared by batched
// rollouts and the step-by-step player so that both feed the model the same numbers.

#include <algorithm>
#include <cstdint>

#include "dstudio/models/decision_model.h"
#include "dstudio/models/windows.h"

namespace dstudio::models {

/// Inputs for `B` windows of K steps, zero-filled (padding has mask 0).
inline ModelInputs empty_windows(int64_t B, int K, int S, int A) {
  ModelInputs in;
  in.states = torch::zeros({B, K, S});
  in.actions = torch::zeros({B, K, A});
  in.returns_to_go = torch::zeros({B, K, 1});
  in.timesteps = torch::zeros({B, K}, torch::kLong);
  in.mask = torch::zeros({B, K});
  return in;
}

/// Writes row `r` of `in` with the last K steps up to step `t` of a history: `states` holds
/// normalised states (one row of S per step), `actions` the actions taken (the current step's
/// row is 0), `rtg` returns-to-go already divided by the scale. Shorter histories are
/// left-padded.
inline void fill_window_row(ModelInputs& in, int64_t r, const float* states, const float* actions,
                            const float* rtg, int t, int max_ep_len) {
  const int K = static_cast<int>(in.states.size(1)), S = static_cast<int>(in.states.size(2)),
            A = static_cast<int>(in.actions.size(2));
  const int len = std::min(t + 1, K), offset = K - len;
  float* ps = in.states.data_ptr<float>();
  float* pa = in.actions.data_ptr<float>();
  float* pr = in.returns_to_go.data_ptr<float>();
  int64_t* pt = in.timesteps.data_ptr<int64_t>();
  float* pm = in.mask.data_ptr<float>();
  for (int p = 0; p < len; ++p) {
    const auto step = static_cast<std::size_t>(t - len + 1 + p);
    const auto slot = static_cast<std::size_t>(r * K + offset + p);
    std::copy_n(states + step * S, S, ps + slot * S);
    std::copy_n(actions + step * A, A, pa + slot * A);
    pr[slot] = rtg[step];
    pt[slot] = std::min<int64_t>(static_cast<int64_t>(step), max_ep_len - 1);
    pm[slot] = 1.0f;
  }
}

/// Windows (raw values) as the inputs of a model of `config`, normalised with the statistics of
/// `info` (its state mean and std, its rtg scale) as in training; padding stays 0. The windows
/// must fit the model.
ModelInputs window_inputs(const std::vector<Window>& windows, const VariantConfig& config,
                          const CheckpointInfo& info);

/// Row `b` of an inspection as a WindowInspection: `mask` and `timesteps` (K each) are the
/// window's; the tokens are copied only when `keep_tokens` (they are large).
WindowInspection inspection_row(const Inspection& inspection, int64_t b,
                                const std::vector<float>& mask,
                                const std::vector<std::int64_t>& timesteps, int per_step,
                                int hidden, bool keep_tokens = true);

}  // namespace dstudio::models

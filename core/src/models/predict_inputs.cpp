// Checks of predict's windows. See predict_inputs.h.

#include "dstudio/models/predict_inputs.h"

#include <cmath>
#include <cstdio>
#include <vector>

#include "dstudio/common/text.h"
#include "dstudio/data/dataset_io.h"

namespace dstudio::models {
namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + ")";
}

}  // namespace

PredictWindows check_predict_arrays(const std::map<std::string, data::NdArray>& arrays,
                                    const VariantConfig& c, const std::string& file) {
  auto fail = [&](const std::string& key, const std::string& why) {
    return data::DatasetError(file, key, why);
  };
  for (const char* key : {"states", "actions", "returns_to_go", "timesteps"})
    if (!arrays.count(key)) throw fail(key, "is missing");
  const auto& states = arrays.at("states");
  if (states.shape.size() != 3)
    throw fail("states", "has shape " + shape_text(states.shape) + "; expected (B, K, S)");
  const std::int64_t B = states.shape[0], K = states.shape[1];
  if (B < 1 || K < 1)
    throw fail("states", "holds no windows (shape " + shape_text(states.shape) + ")");
  auto expect = [&](const std::string& key, const std::vector<std::vector<std::int64_t>>& allowed,
                    const std::string& what) {
    const auto& a = arrays.at(key);
    for (const auto& shape : allowed)
      if (a.shape == shape) return;
    throw fail(key, "has shape " + shape_text(a.shape) + "; expected " + what +
                        " to match states " + shape_text(states.shape) + " and the checkpoint");
  };
  expect("states", {{B, K, c.state_dim}}, shape_text({B, K, c.state_dim}));
  expect("actions", {{B, K, c.act_dim}}, shape_text({B, K, c.act_dim}));
  expect("returns_to_go", {{B, K}, {B, K, 1}}, shape_text({B, K}) + " or " + shape_text({B, K, 1}));
  expect("timesteps", {{B, K}}, shape_text({B, K}));
  const bool has_mask = arrays.count("mask") > 0;
  if (has_mask) expect("mask", {{B, K}}, shape_text({B, K}));
  // Every variant was trained on windows of K steps: its positional structure (attention's
  // causal mask, a convolution's reach) means nothing beyond them.
  if (K > c.context_length)
    throw fail("states", "has windows of " + std::to_string(K) +
                             " steps; this model was built for at most " +
                             std::to_string(c.context_length) + " (its context K)");
  for (const auto& entry : arrays) {
    const auto& a = entry.second;
    if (static_cast<std::int64_t>(a.values.size()) != a.numel())
      throw fail(entry.first, "holds a number of values that does not match its shape");
    for (std::size_t i = 0; i < a.values.size(); ++i)
      if (!std::isfinite(a.values[i]))
        throw fail(entry.first,
                   "holds " + general_number(a.values[i]) + " at index " + std::to_string(i));
  }
  const auto& steps = arrays.at("timesteps").values;
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (steps[i] < 0 || steps[i] >= c.max_ep_len || steps[i] != std::floor(steps[i]))
      throw fail("timesteps", "holds " + general_number(steps[i]) + " at window " +
                                  std::to_string(static_cast<std::int64_t>(i) / K) + ", step " +
                                  std::to_string(static_cast<std::int64_t>(i) % K) +
                                  "; the model's timestep embedding takes whole numbers 0.." +
                                  std::to_string(c.max_ep_len - 1));
  if (has_mask)
    for (double v : arrays.at("mask").values)
      if (v != 0.0 && v != 1.0)
        throw fail("mask",
                   "holds " + general_number(v) + "; a mask is 1 for real steps and 0 for padding");
  return {B, K, has_mask};
}

}  // namespace dstudio::models

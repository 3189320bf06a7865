// dstudio predict: windows from HDF5 through a checkpoint's model. See predict.h.

#include "dstudio/models/predict.h"

#include <sstream>

#include "dstudio/common/system_info.h"
#include "dstudio/data/arrays_h5.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/models/checkpoint_model.h"

namespace dstudio::models {
namespace fs = std::filesystem;

namespace {

std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::ostringstream s;
  s << '(';
  for (std::size_t i = 0; i < shape.size(); ++i) s << (i ? ", " : "") << shape[i];
  s << ')';
  return s.str();
}

torch::Tensor as_tensor(const data::NdArray& a, torch::ScalarType type) {
  auto t = torch::from_blob(const_cast<double*>(a.values.data()), a.shape, torch::kDouble);
  return t.to(type);  // a copy: the array may go away
}

}  // namespace

PredictSummary predict_file(const fs::path& checkpoint, const fs::path& input, const fs::path& output,
                            const PredictOptions& options) {
  CheckpointInfo info;
  DecisionModel model = load_checkpoint_model(checkpoint, &info);
  const auto& c = info.variant;
  auto arrays = data::read_nd_arrays(input, {"states", "actions", "returns_to_go", "timesteps"}, {"mask"});
  const std::string file = input.string();
  auto fail = [&](const std::string& key, const std::string& why) { return data::DatasetError(file, key, why); };

  const auto& states = arrays["states"];
  if (states.shape.size() != 3) throw fail("states", "has shape " + shape_text(states.shape) + "; expected (B, K, S)");
  const std::int64_t B = states.shape[0], K = states.shape[1];
  if (B < 1 || K < 1) throw fail("states", "holds no windows (shape " + shape_text(states.shape) + ")");
  auto expect = [&](const std::string& key, const std::vector<std::vector<std::int64_t>>& allowed, const std::string& what) {
    const auto& a = arrays.at(key);
    for (const auto& shape : allowed)
      if (a.shape == shape) return;
    throw fail(key, "has shape " + shape_text(a.shape) + "; expected " + what + " to match states " + shape_text(states.shape) +
                        " and the checkpoint");
  };
  expect("states", {{B, K, c.state_dim}}, shape_text({B, K, c.state_dim}));
  expect("actions", {{B, K, c.act_dim}}, shape_text({B, K, c.act_dim}));
  expect("returns_to_go", {{B, K}, {B, K, 1}}, shape_text({B, K}) + " or " + shape_text({B, K, 1}));
  expect("timesteps", {{B, K}}, shape_text({B, K}));
  if (arrays.count("mask")) expect("mask", {{B, K}}, shape_text({B, K}));
  if (c.mixer == Mixer::DirectAttention && K > c.context_length)
    throw fail("states", "has windows of " + std::to_string(K) + " steps; this direct-attention model was built for at most " +
                             std::to_string(c.context_length));
  const auto& steps = arrays["timesteps"].values;
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (steps[i] < 0 || steps[i] >= c.max_ep_len || steps[i] != std::floor(steps[i]))
      throw fail("timesteps", "holds " + number(steps[i]) + " at window " + std::to_string(static_cast<std::int64_t>(i) / K) +
                                  ", step " + std::to_string(static_cast<std::int64_t>(i) % K) +
                                  "; the model's timestep embedding takes whole numbers 0.." + std::to_string(c.max_ep_len - 1));
  if (arrays.count("mask"))
    for (double v : arrays["mask"].values)
      if (v != 0.0 && v != 1.0) throw fail("mask", "holds " + number(v) + "; a mask is 1 for real steps and 0 for padding");

  at::set_num_threads(options.threads);
  set_blas_threads(options.threads);
  torch::InferenceMode inference;
  ModelInputs in;
  in.states = as_tensor(states, torch::kFloat);
  in.actions = as_tensor(arrays["actions"], torch::kFloat);
  in.returns_to_go = as_tensor(arrays["returns_to_go"], torch::kFloat).reshape({B, K, 1});
  in.timesteps = as_tensor(arrays["timesteps"], torch::kLong);
  if (arrays.count("mask")) in.mask = as_tensor(arrays["mask"], torch::kFloat);
  if (options.normalize) {
    auto mean = torch::tensor(info.state_mean), std = torch::tensor(info.state_std);
    in.states = (in.states - mean) / std;
    in.returns_to_go = in.returns_to_go / info.rtg_scale;
  }
  torch::Tensor predicted;
  try {
    predicted = model->forward(in).contiguous();
  } catch (const std::exception& e) {
    std::string why = e.what();
    throw CheckpointError(checkpoint.string() + ": the model could not run on " + file + " (" + why.substr(0, why.find('\n')) + ")");
  }
  data::NdArray out;
  out.shape = {B, K, c.act_dim};
  out.dtype = "float32";
  const float* p = predicted.data_ptr<float>();
  out.values.assign(p, p + predicted.numel());
  data::write_nd_arrays(output, {{"actions", out}});
  return {B, K, c.act_dim};
}

}  // namespace dstudio::models

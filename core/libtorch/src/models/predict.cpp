// dstudio predict: windows from HDF5 through a checkpoint's model. See predict.h.

#include "dstudio/models/predict.h"

#include "dstudio/common/system_info.h"
#include "dstudio/data/arrays_h5.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/models/checkpoint_model.h"
#include "dstudio/models/predict_inputs.h"

namespace dstudio::models {
namespace fs = std::filesystem;

namespace {

torch::Tensor as_tensor(const data::NdArray& a, torch::ScalarType type) {
  auto t = torch::from_blob(const_cast<double*>(a.values.data()), a.shape, torch::kDouble);
  return t.to(type);  // a copy: the array may go away
}

}  // namespace

PredictSummary predict_file(const fs::path& checkpoint, const fs::path& input,
                            const fs::path& output, const PredictOptions& options) {
  CheckpointInfo info;
  DecisionModel model = load_checkpoint_model(checkpoint, &info);
  const auto& c = info.variant;
  auto arrays =
      data::read_nd_arrays(input, {"states", "actions", "returns_to_go", "timesteps"}, {"mask"});
  const auto windows = check_predict_arrays(arrays, c, input.string());
  const std::int64_t B = windows.batch, K = windows.steps;
  const auto& states = arrays["states"];
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
    throw CheckpointError(checkpoint.string() + ": the model could not run on " + input.string() +
                          " (" + why.substr(0, why.find('\n')) + ")");
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

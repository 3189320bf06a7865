// dstudio predict: windows from HDF5 through a checkpoint's model, with interventions. See
// predict.h.

#include "dstudio/models/predict.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <random>

#include "dstudio/common/error.h"
#include "dstudio/common/system_info.h"
#include "dstudio/data/arrays_h5.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/models/checkpoint_model.h"
#include "dstudio/models/dataset_fit.h"
#include "dstudio/models/intervene.h"
#include "dstudio/models/predict_inputs.h"
#include "dstudio/models/windows.h"
#include "policy_window.h"

namespace dstudio::models {
namespace fs = std::filesystem;

namespace {

torch::Tensor as_tensor(const data::NdArray& a, torch::ScalarType type) {
  auto t = torch::from_blob(const_cast<double*>(a.values.data()), a.shape, torch::kDouble);
  return t.to(type);  // a copy: the array may go away
}

// The windows of an input file as the model's inputs, checked against the model.
ModelInputs read_inputs(const fs::path& file, const CheckpointInfo& info, bool normalize) {
  const auto& c = info.variant;
  auto arrays =
      data::read_nd_arrays(file, {"states", "actions", "returns_to_go", "timesteps"}, {"mask"});
  const auto windows = check_predict_arrays(arrays, c, file.string());
  const std::int64_t B = windows.batch, K = windows.steps;
  ModelInputs in;
  in.states = as_tensor(arrays["states"], torch::kFloat);
  in.actions = as_tensor(arrays["actions"], torch::kFloat);
  in.returns_to_go = as_tensor(arrays["returns_to_go"], torch::kFloat).reshape({B, K, 1});
  in.timesteps = as_tensor(arrays["timesteps"], torch::kLong);
  if (arrays.count("mask")) in.mask = as_tensor(arrays["mask"], torch::kFloat);
  if (normalize) {
    auto mean = torch::tensor(info.state_mean), std = torch::tensor(info.state_std);
    in.states = (in.states - mean) / std;
    in.returns_to_go = in.returns_to_go / info.rtg_scale;
  }
  return in;
}

data::NdArray as_array(const torch::Tensor& t) {
  const auto c = t.contiguous().to(torch::kFloat);
  data::NdArray out;
  out.shape.assign(c.sizes().begin(), c.sizes().end());
  out.dtype = "float32";
  const float* p = c.data_ptr<float>();
  out.values.assign(p, p + c.numel());
  return out;
}

// What the specs replace with, for windows taken a part at a time: the mean and the steering
// directions serve every window; a resampled window and the second input are one for each input
// window, recorded with the part they serve (recorded for every window at once, they would hold
// the whole stream of every window).
struct PredictSources {
  InterventionSources shared;
  std::optional<ModelInputs> resample, patch;

  // The sources of windows `start` to `start + count`.
  InterventionSources part(DecisionModelImpl& model, int64_t start, int64_t count) const {
    InterventionSources s;
    s.mean = shared.mean;
    s.directions = shared.directions;
    if (resample) record_activations(model, rows_of(*resample, start, count), s.resample);
    if (patch) record_activations(model, rows_of(*patch, start, count), s.patch);
    return s;
  }
};

// The sources the specs need: means over dataset windows, resampled windows, the second input,
// steering directions.
PredictSources sources_for(const std::vector<Intervention>& items, DecisionModelImpl& model,
                           const CheckpointInfo& info, const ModelInputs& in,
                           const PredictOptions& options, std::vector<std::string>& warnings) {
  PredictSources out;
  auto& s = out.shared;
  bool mean = false, resample = false, patch = false;
  for (const auto& iv : items) {
    mean |= iv.replacement == Replacement::Mean;
    resample |= iv.replacement == Replacement::Resample;
    patch |= iv.replacement == Replacement::Patch;
    if (iv.site == InterventionSite::Steer && !s.directions.count(iv.direction))
      s.directions[iv.direction] = read_direction(iv.direction, info);
  }
  const int K = static_cast<int>(in.states.size(1));
  const auto B = in.states.size(0);
  if (mean || resample) {
    const auto path = options.dataset.empty() ? checkpoint_dataset(info) : options.dataset;
    const auto ds = data::load_dataset(path, {.isolate = true});
    // The means and resampled rows come from the dataset's windows: it must fit the model.
    if (auto warning = check_dataset_fits(info, ds); !warning.empty())
      warnings.push_back(std::move(warning));
    if (mean) {
      Activations all;
      record_activations(
          model,
          window_inputs(sample_windows(ds, options.mean_windows, K, info.training.reward_shift),
                        info.variant, info),
          all);
      s.mean = mean_over_windows(all);
    }
    if (resample) {
      // One window a row, drawn without replacement among evenly spread ones.
      auto pool =
          sample_windows(ds, std::max<int>(64, static_cast<int>(B)), K, info.training.reward_shift);
      std::vector<std::size_t> order(pool.size());
      std::iota(order.begin(), order.end(), std::size_t{0});
      std::mt19937_64 rng(options.seed);
      std::shuffle(order.begin(), order.end(), rng);
      std::vector<Window> drawn;
      for (int64_t b = 0; b < B; ++b)
        drawn.push_back(pool[order[static_cast<std::size_t>(b) % order.size()]]);
      out.resample = window_inputs(drawn, info.variant, info);
    }
  }
  if (patch) {
    if (options.patch_from.empty())
      throw UsageError("--patch needs --patch-from: the input the patched values come from");
    const auto other = read_inputs(options.patch_from, info, options.normalize);
    if (other.states.sizes() != in.states.sizes())
      throw UsageError("--patch-from " + options.patch_from.string() + ": its windows are " +
                       std::to_string(other.states.size(0)) + " x " +
                       std::to_string(other.states.size(1)) + " steps, the input's " +
                       std::to_string(B) + " x " + std::to_string(K));
    out.patch = other;
  }
  return out;
}

// A file of nan is no answer: the first window whose `what` is not finite is named.
void refuse_non_finite(const torch::Tensor& values, const std::string& what) {
  const auto bad = torch::isfinite(values).logical_not().flatten(1).any(1);
  if (!bad.any().item<bool>()) return;
  const auto first = bad.nonzero().min().item<int64_t>();
  throw Error("window " + std::to_string(first) + " (counting from 0) of " +
              std::to_string(values.size(0)) + ": the model's " + what +
              " is not a finite number (" + std::to_string(bad.sum().item<int64_t>()) +
              " windows are not); nothing was written. Check the window's inputs and any "
              "steering or patching asked for");
}

}  // namespace

PredictSummary predict_file(const fs::path& checkpoint, const fs::path& input,
                            const fs::path& output, const PredictOptions& options,
                            const Progress& progress) {
  // The specs' grammar first: a typo is refused before anything is read.
  std::vector<Intervention> items;
  for (const auto& spec : options.interventions) items.push_back(parse_intervention(spec));
  for (const auto& spec : options.patches) items.push_back(parse_patch(spec));
  if (!options.patch_from.empty() && options.patches.empty())
    throw UsageError("--patch-from " + options.patch_from.string() +
                     ": name what to patch with --patch (resid:L.T, head:L.H, mixer:L or mlp:L)");
  CheckpointInfo info;
  DecisionModel model = load_checkpoint_model(checkpoint, &info);
  const auto& c = info.variant;
  for (const auto& iv : items) check_intervention(iv, c);
  at::set_num_threads(options.threads);
  set_blas_threads(options.threads);
  torch::InferenceMode inference;
  const ModelInputs in = read_inputs(input, info, options.normalize);
  const std::int64_t B = in.states.size(0), K = in.states.size(1);
  PredictSummary summary{B, K, c.act_dim, 0};
  std::map<std::string, data::NdArray> written;
  try {
    progress.update(0.0, "reading what the interventions need");
    const auto sources = sources_for(items, *model, info, in, options, summary.warnings);
    // A part of the windows at a time: progress is shown and a cancel heard between parts, and a
    // patch or resample records one part's streams, not every window's (gigabytes for 20,000).
    // Parts much smaller than kPredictPart cost more per window (each operation's overhead).
    std::vector<torch::Tensor> actions, lenses;
    for (std::int64_t start = 0; start < B; start += kPredictPart) {
      const std::int64_t count = std::min(kPredictPart, B - start);
      progress.update(static_cast<double>(start) / static_cast<double>(B),
                      "window " + std::to_string(start) + " of " + std::to_string(B));
      const auto part = rows_of(in, start, count);
      const InterventionPlan plan(items, c, sources.part(*model, start, count));
      if (options.action_lens) {
        // The stream after the last block read out is the action, bit for bit: one pass gives
        // both.
        lenses.push_back(action_lens(*model, part, &plan));
        actions.push_back(lenses.back().select(2, c.layers - 1));
      } else {
        actions.push_back(plan.empty() ? model->forward(part) : plan.forward(*model, part));
      }
    }
    const auto all = torch::cat(actions);
    refuse_non_finite(all, "action");
    written["actions"] = as_array(all);
    if (options.action_lens) {
      const auto lens = torch::cat(lenses);
      refuse_non_finite(lens, "action lens");
      summary.layers = static_cast<int>(lens.size(2));
      written["lens"] = as_array(lens);
    }
  } catch (const Error&) {
    throw;
  } catch (const Cancelled&) {
    throw;
  } catch (const std::exception& e) {
    std::string why = e.what();
    throw CheckpointError(checkpoint.string() + ": the model could not run on " + input.string() +
                          " (" + why.substr(0, why.find('\n')) + ")");
  }
  progress.update(1.0, "writing");
  data::write_nd_arrays(output, written);
  return summary;
}

}  // namespace dstudio::models

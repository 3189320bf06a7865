// Fuzz target: `dstudio predict`'s input reader: data::read_nd_arrays with predict's keys (states,
// actions, returns_to_go, timesteps; mask optional) on small HDF5 files, as h5py writes them, then
// predict's checks of what it read (models::check_predict_arrays) against a DT whose state and
// action sizes are those of the file's arrays, so that the checks past the shapes are reached. An
// accepted file's arrays must hold their shapes' numbers of values, all finite.
//
// As for the dataset target, libhdf5's own crashes are told apart by packaging/fuzz.sh.

#include <hdf5.h>

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "dstudio/data/arrays_h5.h"
#include "dstudio/models/predict_inputs.h"
#include "fuzz_support.h"

extern "C" const char* __asan_default_options() {
  return "detect_leaks=0:allocator_may_return_null=1";
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  H5dont_atexit();
  H5set_free_list_limits(0, 0, 0, 0, 0, 0);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dstudio;
  const auto path = fuzz::input_file(data, size, "input.h5");
  fuzz::run([&] {
    const auto arrays =
        data::read_nd_arrays(path, {"states", "actions", "returns_to_go", "timesteps"}, {"mask"});
    fuzz::require(arrays.size() >= 4, "the required arrays are there");
    for (const auto& [key, a] : arrays) {
      fuzz::require(static_cast<std::int64_t>(a.values.size()) == a.numel(),
                    "an array holds its shape's number of values");
      for (double v : a.values) fuzz::require(std::isfinite(v), "values are finite");
    }
    models::VariantConfig dt = models::make_variant("dt");
    const auto& states = arrays.at("states").shape;
    const auto& actions = arrays.at("actions").shape;
    dt.state_dim =
        states.size() == 3 && states[2] > 0 && states[2] < 4096 ? static_cast<int>(states[2]) : 2;
    dt.act_dim = actions.size() == 3 && actions[2] > 0 && actions[2] < 4096
                     ? static_cast<int>(actions[2])
                     : 1;
    const models::PredictWindows windows = models::check_predict_arrays(arrays, dt, "input.h5");
    fuzz::require(windows.batch >= 1 && windows.steps >= 1 && windows.steps <= dt.context_length,
                  "windows the model can take");
    fuzz::require(windows.has_mask == (arrays.count("mask") > 0),
                  "the mask is reported when present");
  });
  return 0;
}

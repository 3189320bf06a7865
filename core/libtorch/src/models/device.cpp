// Devices for training and evaluation. See device.h.

#include "dstudio/models/device.h"

#include <ATen/Parallel.h>
#include <torch/cuda.h>
#include <torch/version.h>

#include "dstudio/common/error.h"
#include "dstudio/common/system_info.h"

namespace dstudio::models {

bool cuda_usable() {
  return torch::cuda::is_available();
}

void compute_on_one_thread() {
  at::set_num_threads(1);
  set_blas_threads(1);
}

void require_device(const std::string& name) {
  if (name == "cpu") return;
  if (name != "cuda") throw UsageError("--device '" + name + "': expected cpu or cuda");
  if (!torch::cuda::is_available()) {
    // A CUDA build without a visible GPU reports a device count of 0 as well.
    throw Error(std::string("--device cuda: this build's LibTorch ") + TORCH_VERSION +
                " has no CUDA, or no GPU is visible to this process (CUDA_VISIBLE_DEVICES, the "
                "job's --gres); "
                "build against a CUDA LibTorch with -DTorch_DIR=... (docs/sweeps.md) and run on a "
                "GPU node, or use --device cpu");
  }
  throw Error(
      "--device cuda: a GPU is visible, but this version trains and evaluates on the CPU only "
      "(its per-worker dropout streams and resumable random state are CPU generators); use "
      "--device cpu");
}

}  // namespace dstudio::models

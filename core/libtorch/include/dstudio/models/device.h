#pragma once
/// \file
/// The device a command trains or evaluates on (`--device cpu|cuda`). Checked before any work
/// starts, so a job sent to the wrong node, or built against the wrong LibTorch, fails at once
/// with the reason rather than hours later or silently on the CPU.

#include <string>

namespace dstudio::models {

/// Throws UsageError for a name other than "cpu" and "cuda", and Error for "cuda" where it
/// cannot be used: a LibTorch built without CUDA (this build's, named with its version), no GPU
/// visible to the process, or a trainer that runs on the CPU only (this version's).
void require_device(const std::string& name);

/// True when this process's LibTorch was built with CUDA and sees at least one GPU.
bool cuda_usable();

}  // namespace dstudio::models

#pragma once
/// \file
/// The device a command trains or evaluates on (`--device cpu|cuda`). Checked before any work
/// starts, so a job sent to the wrong node, or built against the wrong LibTorch, fails at once
/// with the reason rather than hours later or silently on the CPU. And the threads the studio
/// computes its numbers with on the CPU.

#include <string>

namespace dstudio::models {

/// Throws UsageError for a name other than "cpu" and "cuda", and Error for "cuda" where it
/// cannot be used: a LibTorch built without CUDA (this build's, named with its version), no GPU
/// visible to the process, or a trainer that runs on the CPU only (this version's).
void require_device(const std::string& name);

/// True when this process's LibTorch was built with CUDA and sees at least one GPU.
bool cuda_usable();

/// Computes on the calling thread with one LibTorch thread and one BLAS thread, as episodes are
/// played, rolled out and trained: the analyses and the views' numbers too, in the window and on
/// the command line alike, so that a figure drawn again from its recipe, on any machine, computes
/// the numbers first computed. A matrix product shared among another number of threads rounds
/// its last digits otherwise (a BLAS gives the rows at the edge of each thread's share to other
/// kernels), and a ratio of small differences, such as activation patching's fraction recovered,
/// shows it in the sixth digit.
void compute_on_one_thread();

}  // namespace dstudio::models

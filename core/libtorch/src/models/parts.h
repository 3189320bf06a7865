#pragma once
// Work split into parts on threads, for the training step and batched rollouts.

#include <ATen/Parallel.h>

#include <exception>
#include <thread>
#include <vector>

namespace dstudio::models {

/// Runs f(k) for k in [0, parts): part 0 on the calling thread, the others on threads of their own
/// with one LibTorch thread each. Rethrows the first part's exception after all have finished.
template <typename F>
void run_parts(int parts, F&& f) {
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(parts));
  auto guarded = [&](int k) {
    try {
      f(k);
    } catch (...) {
      errors[static_cast<std::size_t>(k)] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  for (int k = 1; k < parts; ++k)
    threads.emplace_back([&, k] {
      at::set_num_threads(1);
      guarded(k);
    });
  guarded(0);
  for (auto& t : threads) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace dstudio::models

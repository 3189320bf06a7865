#pragma once
// What the t-SNE sources share: running work on a few threads with cancellation, and the FFT
// repulsion (tsne_fft.cpp) that keeps its grid and FFTW plans from one iteration to the next.

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <string_view>
#include <thread>
#include <vector>

#include "dstudio/common/progress.h"

namespace dstudio::analysis::tsne_detail {

inline std::size_t at(int i) {
  return static_cast<std::size_t>(i);
}

// Runs part(t) for t in [0, threads), part 0 on this thread; what a part throws (memory running
// out, Cancelled) is rethrown here after every thread has joined, never left to end the process.
inline void run_parts(int threads, const std::function<void(int)>& part) {
  std::vector<std::thread> pool;
  std::vector<std::exception_ptr> failures(static_cast<std::size_t>(threads));
  const auto guarded = [&](int t) {
    try {
      part(t);
    } catch (...) {
      failures[static_cast<std::size_t>(t)] = std::current_exception();
    }
  };
  for (int t = 1; t < threads; ++t) pool.emplace_back(guarded, t);
  guarded(0);
  for (auto& th : pool) th.join();
  for (const auto& failure : failures)
    if (failure) std::rethrow_exception(failure);
}

// Runs f(begin, end, part) over [0, n) split into `threads` contiguous ranges.
template <typename F>
void parallel_for(int n, int threads, F&& f) {
  threads = std::max(1, std::min(threads, n));
  run_parts(threads, [&](int t) { f(n * t / threads, n * (t + 1) / threads, t); });
}

// Progress from inside a parallel loop: part 0 (the calling thread) reports at most every tenth
// of a second, the other parts only poll the cancel token; either throws Cancelled.
class Pacer {
 public:
  explicit Pacer(const Progress& progress)
      : progress_(progress), last_(std::chrono::steady_clock::now()) {}
  void poll(int part, double fraction, std::string_view stage) {
    if (part != 0) {
      progress_.check();
      return;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(100)) {
      progress_.check();
      return;
    }
    last_ = now;
    progress_.update(fraction, stage);
  }

 private:
  const Progress& progress_;
  std::chrono::steady_clock::time_point last_;
};

// FIt-SNE's repulsion: the kernels 1 / (1 + d^2) and its square interpolated by Lagrange
// polynomials on an equispaced grid over the layout, convolved with the charges by FFT.
class FftRepulsion {
 public:
  FftRepulsion(int interpolation_points, double boxes_per_unit, int threads);
  ~FftRepulsion();
  FftRepulsion(const FftRepulsion&) = delete;
  FftRepulsion& operator=(const FftRepulsion&) = delete;

  // force (N x 2) = sum over j of q_ij^2 (y_i - y_j); returns Z = sum over i != j of q_ij.
  double compute(const std::vector<double>& y, std::vector<double>& force);
  // Boxes a side of the last grid.
  [[nodiscard]] int boxes() const;

 private:
  struct Grid;
  std::unique_ptr<Grid> grid_;
  int p_;
  double boxes_per_unit_;
  int threads_;
};

}  // namespace dstudio::analysis::tsne_detail

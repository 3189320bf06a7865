#pragma once
// Episodes rolled out on several threads, each from its own seed, so that the result does not
// depend on the thread count, and their progress (antmaze_data.cpp, adroit_data.cpp).

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dstudio/common/progress.h"

namespace dstudio::behaviour {

/// Runs `work(k)` for k in [0, count) on up to `threads` threads, k = t, t + T, ...; the first
/// failure (a Cancelled included) is rethrown once every thread has stopped.
inline void for_each_episode(std::int64_t count, int threads,
                             const std::function<void(std::int64_t)>& work) {
  const int T = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(threads, count)));
  std::exception_ptr failure;
  std::mutex failure_mutex;
  std::atomic<bool> stop{false};
  auto worker = [&](int t) {
    try {
      for (std::int64_t k = t; k < count && !stop; k += T) work(k);
    } catch (...) {
      std::lock_guard lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      stop = true;
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < T; ++t) pool.emplace_back(worker, t);
  worker(0);
  for (auto& th : pool) th.join();
  if (failure) std::rethrow_exception(failure);
}

/// Reports episodes as they finish, on whichever thread: "k of N episodes".
class EpisodesFinished {
 public:
  EpisodesFinished(std::int64_t total, const Progress& progress)
      : total_(total), progress_(progress) {}
  void count_one() {
    const std::int64_t now = ++finished_;
    std::lock_guard lock(report_mutex_);
    progress_.update(static_cast<double>(now) / static_cast<double>(total_),
                     std::to_string(now) + " of " + std::to_string(total_) + " episodes");
  }

 private:
  std::int64_t total_;
  const Progress& progress_;
  std::atomic<std::int64_t> finished_{0};
  std::mutex report_mutex_;
};

}  // namespace dstudio::behaviour

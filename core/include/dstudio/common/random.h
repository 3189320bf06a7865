#pragma once
/// \file
/// The project's random stream: SplitMix64, with exact bounded integers and Gaussian samples.
/// Its output is fixed by the seed on every platform and standard library (unlike the standard
/// distributions), which is what "same seed, same bytes" needs.

#include <cmath>
#include <cstdint>

namespace dstudio {

class Random {
 public:
  explicit Random(std::uint64_t seed = 0) : state_(seed) {}

  /// The next 64 random bits.
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

  /// Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Uniform in [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }

  /// Uniform integer in [0, n), exactly (Lemire's method with rejection). n must be positive.
  std::uint64_t below(std::uint64_t n) {
    __uint128_t m = static_cast<__uint128_t>(next()) * n;
    auto low = static_cast<std::uint64_t>(m);
    if (low < n) {
      const std::uint64_t threshold = -n % n;
      while (low < threshold) {
        m = static_cast<__uint128_t>(next()) * n;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }

  /// Standard normal sample (Box-Muller; one of the pair is kept for the next call).
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u = 1.0 - uniform(), v = uniform();
    const double r = std::sqrt(-2.0 * std::log(u));
    spare_ = r * std::sin(6.283185307179586 * v);
    has_spare_ = true;
    return r * std::cos(6.283185307179586 * v);
  }

  /// The complete state, to continue the stream exactly after a restart.
  struct State {
    std::uint64_t counter = 0;
    double spare = 0.0;
    bool has_spare = false;
  };
  [[nodiscard]] State state() const { return {state_, spare_, has_spare_}; }
  void restore(const State& s) {
    state_ = s.counter;
    spare_ = s.spare;
    has_spare_ = s.has_spare;
  }

  /// A seed for an independent stream derived from this seed and `index` (e.g. episode seeds).
  static std::uint64_t derive(std::uint64_t seed, std::uint64_t index) {
    Random r(seed ^ (0xD1B54A32D192ED03ULL * (index + 1)));
    return r.next();
  }

 private:
  std::uint64_t state_;
  double spare_ = 0.0;
  bool has_spare_ = false;
};

}  // namespace dstudio

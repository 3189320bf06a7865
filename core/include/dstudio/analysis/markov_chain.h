#pragma once
/// \file
/// Markov chains whose structure is known exactly, for the Markov lab (decision-hiformer.txt,
/// appendix A): the data on which a one-layer mixer can be seen to reach the best possible
/// next-token loss, the chain's entropy rate.
///
/// The family: S symbols, memory of order m. Given the last m symbols, the next one is drawn
/// from a kernel that depends on how often each symbol occurs among them (their fraction f_s):
///   binary (S = 2), switching probabilities p = P(0 -> 1), q = P(1 -> 0):
///     P(next = 1) = p + (1 - p - q) f_1,
///   S > 2, switching probability p (the appendix's symmetric multi-state kernel):
///     P(next = s) = (1 - p) f_s + p (1 - f_s) / (S - 1).
/// For m = 1 these are exactly the appendix's kernels P(p, q) and P(p). For m > 1 the next symbol
/// depends on the whole last m symbols but only through their counts, which an average-pooling
/// mixer of window k = m sees exactly and one of window k < m cannot: the lab's demonstration.

#include <cstdint>
#include <vector>

namespace dstudio::analysis {

/// A chain of the family above. Build it with `make`, which checks the ranges.
struct MarkovChain {
  int states = 2;  ///< S, symbols 0 .. S-1
  int order = 1;   ///< m, how many past symbols the next one depends on
  double p = 0.2;  ///< switching probability (binary: 0 -> 1)
  double q = 0.3;  ///< binary only: 1 -> 0

  /// The chain, or UsageError naming the parameter out of range: S in [2, 8], m in [1, 4],
  /// p and q in (0, 1).
  static MarkovChain make(double p, double q, int order = 1, int states = 2);

  /// Contexts (the last m symbols) are numbered x_{n-m+1} + S x_{n-m+2} + ... + S^{m-1} x_n.
  [[nodiscard]] int contexts() const;
  /// P(next = s | context), row-major (contexts x S).
  [[nodiscard]] std::vector<double> kernel() const;
  /// The stationary distribution over contexts.
  [[nodiscard]] std::vector<double> stationary() const;
  /// The entropy rate H(x_{n+1} | x_1..x_n) in nats: the floor of the next-token loss (Lemma 1).
  [[nodiscard]] double entropy_rate() const;
  /// Sequences of `length` symbols each, started from the stationary distribution so that every
  /// position is distributed alike; row-major (count x length).
  [[nodiscard]] std::vector<std::uint8_t> sample(int count, int length, std::uint64_t seed) const;
  /// P(next | the `order` symbols ending at position `n` of `sequence`), n >= order - 1.
  [[nodiscard]] std::vector<double> next_distribution(const std::uint8_t* sequence, int n) const;
};

/// The binary entropy h(x) in nats.
double binary_entropy(double x);
/// The appendix's closed form for the first-order binary chain: (q h(p) + p h(q)) / (p + q).
double binary_entropy_rate(double p, double q);

}  // namespace dstudio::analysis

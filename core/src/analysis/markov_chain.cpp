#include "dstudio/analysis/markov_chain.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "dstudio/common/error.h"
#include "dstudio/common/random.h"

namespace dstudio::analysis {

namespace {

int power(int base, int exponent) {
  int r = 1;
  for (int i = 0; i < exponent; ++i) r *= base;
  return r;
}

void check_probability(const char* name, double value) {
  // Below 0.001 the chain barely mixes: its stationary law takes long to find and a lab run of a
  // few thousand symbols would not show it.
  if (!(value >= 0.001 && value <= 0.999))
    throw UsageError(std::string(name) + " must be in [0.001, 0.999], got " +
                     std::to_string(value));
}

}  // namespace

MarkovChain MarkovChain::make(double p, double q, int order, int states) {
  check_probability("p", p);
  if (states == 2) check_probability("q", q);
  if (order < 1 || order > 3)
    throw UsageError("order must be in [1, 3], got " + std::to_string(order));
  if (states < 2 || states > 8)
    throw UsageError("states must be in [2, 8], got " + std::to_string(states));
  MarkovChain chain;
  chain.p = p;
  chain.q = states == 2 ? q : p;
  chain.order = order;
  chain.states = states;
  return chain;
}

int MarkovChain::contexts() const {
  return power(states, order);
}

namespace {

// P(next = s) for a context whose symbols occur `count[s]` times.
void kernel_row(const MarkovChain& chain, const std::vector<int>& count, double* row) {
  if (chain.states == 2) {
    const double f1 = static_cast<double>(count[1]) / chain.order;
    row[1] = chain.p + (1.0 - chain.p - chain.q) * f1;
    row[0] = 1.0 - row[1];
    return;
  }
  for (int s = 0; s < chain.states; ++s) {
    const double f = static_cast<double>(count[s]) / chain.order;
    row[s] = (1.0 - chain.p) * f + chain.p * (1.0 - f) / (chain.states - 1);
  }
}

}  // namespace

std::vector<double> MarkovChain::kernel() const {
  const int n_contexts = contexts();
  std::vector<double> k(static_cast<size_t>(n_contexts) * states);
  std::vector<int> count(states);
  for (int c = 0; c < n_contexts; ++c) {
    std::fill(count.begin(), count.end(), 0);
    for (int j = 0, rest = c; j < order; ++j, rest /= states) ++count[rest % states];
    kernel_row(*this, count, k.data() + static_cast<size_t>(c) * states);
  }
  return k;
}

std::vector<double> MarkovChain::stationary() const {
  const int n_contexts = contexts();
  const int newest = power(states, order - 1);
  const std::vector<double> k = kernel();
  std::vector<double> pi(n_contexts, 1.0 / n_contexts), next(n_contexts);
  // Every transition has positive probability (p, q inside (0, 1)), so the context chain is
  // ergodic and the iteration converges; its rate is the chain's second eigenvalue.
  for (int it = 0; it < 1'000'000; ++it) {
    std::fill(next.begin(), next.end(), 0.0);
    for (int c = 0; c < n_contexts; ++c)
      for (int s = 0; s < states; ++s)
        next[c / states + s * newest] += pi[c] * k[static_cast<size_t>(c) * states + s];
    double change = 0.0;
    for (int c = 0; c < n_contexts; ++c) change += std::abs(next[c] - pi[c]);
    pi.swap(next);
    if (change < 1e-15) break;
  }
  return pi;
}

double MarkovChain::entropy_rate() const {
  const std::vector<double> pi = stationary(), k = kernel();
  double h = 0.0;
  for (int c = 0; c < contexts(); ++c)
    for (int s = 0; s < states; ++s) {
      const double t = k[static_cast<size_t>(c) * states + s];
      if (t > 0.0) h -= pi[c] * t * std::log(t);
    }
  return h;
}

std::vector<std::uint8_t> MarkovChain::sample(int count, int length, std::uint64_t seed) const {
  if (count < 0 || length < order)
    throw UsageError("a sample needs at least " + std::to_string(order) + " symbols per sequence");
  const std::vector<double> pi = stationary(), k = kernel();
  const int newest = power(states, order - 1);
  Random random(seed);
  auto draw = [&random](const double* weights, int n) {
    const double u = random.uniform();
    double acc = 0.0;
    for (int i = 0; i < n - 1; ++i)
      if (u < (acc += weights[i])) return i;
    return n - 1;
  };
  std::vector<std::uint8_t> out(static_cast<size_t>(count) * length);
  for (int b = 0; b < count; ++b) {
    std::uint8_t* x = out.data() + static_cast<size_t>(b) * length;
    int context = draw(pi.data(), contexts());
    for (int j = 0, rest = context; j < order; ++j, rest /= states)
      x[j] = static_cast<std::uint8_t>(rest % states);
    for (int n = order; n < length; ++n) {
      const int s = draw(k.data() + static_cast<size_t>(context) * states, states);
      x[n] = static_cast<std::uint8_t>(s);
      context = context / states + s * newest;
    }
  }
  return out;
}

std::vector<double> MarkovChain::next_distribution(const std::uint8_t* sequence, int n) const {
  std::vector<int> count(states, 0);
  for (int j = 0; j < order; ++j) ++count[sequence[n - j]];
  std::vector<double> row(states);
  kernel_row(*this, count, row.data());
  return row;
}

double binary_entropy(double x) {
  if (x <= 0.0 || x >= 1.0) return 0.0;
  return -x * std::log(x) - (1.0 - x) * std::log(1.0 - x);
}

double binary_entropy_rate(double p, double q) {
  return (q * binary_entropy(p) + p * binary_entropy(q)) / (p + q);
}

}  // namespace dstudio::analysis

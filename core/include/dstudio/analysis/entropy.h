#pragma once
/// \file
/// Attention entropy (Decision HiFormer sec. 3.2, eq. 3) and the statistics that relate it to
/// reward. Plain arrays in, numbers out: no LibTorch, so the GUI, the command line and the tests
/// share these definitions.
///
/// A mixing matrix of one head is T x T, row-major, rows are queries; `valid[j]` marks real
/// (unpadded) tokens. Only real queries are averaged and only real keys count. Natural logs.
/// A row whose weights over real keys do not sum to 1 (a convolution's equivalent matrix) is
/// normalised first: the entropy is that of where the row puts its weight.

#include <span>
#include <vector>

namespace dstudio::analysis {

/// -sum p log p over the entries of `p` (zeros contribute nothing).
double entropy(std::span<const double> p);

/// S_h = -(1/N) sum_i sum_j a_ij log a_ij over the N real queries of one head.
double attention_entropy(std::span<const float> matrix, int T, std::span<const char> valid);

/// S = the mean of attention_entropy over `heads` matrices stored one after the other (heads x T x
/// T, as inspection returns a layer).
double mean_head_entropy(std::span<const float> matrices, int heads, int T,
                         std::span<const char> valid);

/// Intra-step entropy of one head for tokens grouped `group` to a step (3 for R, s, a): for every
/// real query and every step holding a real key it may attend to, the entropy of its attention
/// restricted to that step's tokens and renormalised; the mean over those (query, step) pairs.
double intra_step_entropy(std::span<const float> matrix, int T, std::span<const char> valid,
                          int group = 3);

/// Inter-step entropy of one head: the keys' weights summed per step, then the entropy over steps,
/// averaged over real queries. Never above attention_entropy (grouping cannot raise entropy,
/// HiFormer's Theorem 3.1).
double inter_step_entropy(std::span<const float> matrix, int T, std::span<const char> valid,
                          int group = 3);

/// Pearson's correlation of x and y (NaN when either is constant or they have fewer than 2 values).
double pearson(std::span<const double> x, std::span<const double> y);
/// Spearman's rank correlation (ties get their average rank).
double spearman(std::span<const double> x, std::span<const double> y);

/// Mean and population standard deviation.
struct MeanStd {
  double mean = 0.0, std = 0.0;
  int n = 0;
};
MeanStd mean_std(std::span<const double> values);

/// A mean and its 95% confidence interval: mean -/+ t(0.975, n - 1) s / sqrt(n), with s the sample
/// standard deviation and t Student's quantile (the interval shrinks to the mean for one value;
/// all NaN for none).
struct MeanInterval {
  double mean = 0.0, low = 0.0, high = 0.0;
  int n = 0;
};
MeanInterval mean_interval_95(std::span<const double> values);
/// Student's t quantile t(0.975, dof) for dof >= 1: exact to three decimals up to 30 degrees of
/// freedom (the table), then its Cornish-Fisher expansion.
double student_t_975(int dof);

}  // namespace dstudio::analysis

// Barnes-Hut t-SNE. See tsne.h. The steps and constants follow scikit-learn's implementation so
// that layouts and KL divergences are comparable with it.

#include "dstudio/common/error.h"
#include "dstudio/analysis/tsne.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <exception>
#include <functional>
#include <thread>

namespace dstudio::analysis {
namespace {

// Runs part(t) for t in [0, threads), part 0 on this thread; what a part throws (memory running
// out) is rethrown here after every thread has joined, never left to end the process.
[[gnu::noinline]] void run_parts(int threads, const std::function<void(int)>& part) {
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

// Squared distances to every point, exact, and the k nearest of each.
void nearest_neighbours(const std::vector<float>& x, int n, int d, int k, int threads, std::vector<int>& index,
                        std::vector<double>& dist2) {
  std::vector<double> norms(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    double s = 0.0;
    for (int q = 0; q < d; ++q) s += static_cast<double>(x[static_cast<std::size_t>(i) * d + q]) * x[static_cast<std::size_t>(i) * d + q];
    norms[static_cast<std::size_t>(i)] = s;
  }
  index.assign(static_cast<std::size_t>(n) * k, 0);
  dist2.assign(static_cast<std::size_t>(n) * k, 0.0);
  parallel_for(n, threads, [&](int begin, int end, int) {
    std::vector<double> all(static_cast<std::size_t>(n));
    std::vector<int> order(static_cast<std::size_t>(n));
    for (int i = begin; i < end; ++i) {
      const float* a = &x[static_cast<std::size_t>(i) * d];
      for (int j = 0; j < n; ++j) {
        const float* b = &x[static_cast<std::size_t>(j) * d];
        // Eight independent partial sums let the compiler vectorise the dot product.
        float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        int q = 0;
        for (; q + 8 <= d; q += 8)
          for (int l = 0; l < 8; ++l) acc[l] += a[q + l] * b[q + l];
        double dot = 0.0;
        for (float v : acc) dot += v;
        for (; q < d; ++q) dot += static_cast<double>(a[q]) * b[q];
        all[static_cast<std::size_t>(j)] = std::max(0.0, norms[static_cast<std::size_t>(i)] + norms[static_cast<std::size_t>(j)] - 2.0 * dot);
      }
      all[static_cast<std::size_t>(i)] = std::numeric_limits<double>::infinity();
      std::iota(order.begin(), order.end(), 0);
      std::nth_element(order.begin(), order.begin() + k, order.end(),
                       [&](int p, int r) { return all[static_cast<std::size_t>(p)] < all[static_cast<std::size_t>(r)]; });
      std::sort(order.begin(), order.begin() + k, [&](int p, int r) { return all[static_cast<std::size_t>(p)] < all[static_cast<std::size_t>(r)]; });
      for (int m = 0; m < k; ++m) {
        index[static_cast<std::size_t>(i) * k + m] = order[static_cast<std::size_t>(m)];
        dist2[static_cast<std::size_t>(i) * k + m] = all[static_cast<std::size_t>(order[static_cast<std::size_t>(m)])];
      }
    }
  });
}

// p_{j|i} over the k neighbours, with the bandwidth that gives the perplexity (binary search on
// the precision beta, as scikit-learn's _binary_search_perplexity).
void conditional_probabilities(const std::vector<double>& dist2, int n, int k, double perplexity, int threads, std::vector<double>& p) {
  p.assign(dist2.size(), 0.0);
  const double target = std::log(perplexity);
  parallel_for(n, threads, [&](int begin, int end, int) {
    for (int i = begin; i < end; ++i) {
      const double* di = &dist2[static_cast<std::size_t>(i) * k];
      double* pi = &p[static_cast<std::size_t>(i) * k];
      double beta = 1.0, lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
      for (int it = 0; it < 100; ++it) {
        double sum = 0.0, weighted = 0.0;
        for (int m = 0; m < k; ++m) {
          pi[m] = std::exp(-(di[m] - di[0]) * beta);
          sum += pi[m];
          weighted += (di[m] - di[0]) * pi[m];
        }
        sum = std::max(sum, 1e-300);
        const double h = std::log(sum) + beta * weighted / sum;
        for (int m = 0; m < k; ++m) pi[m] /= sum;
        if (std::abs(h - target) < 1e-5) break;
        if (h > target) {
          lo = beta;
          beta = std::isinf(hi) ? beta * 2.0 : (beta + hi) / 2.0;
        } else {
          hi = beta;
          beta = std::isinf(lo) ? beta / 2.0 : (beta + lo) / 2.0;
        }
      }
    }
  });
}

// The joint P = (P_cond + P_cond^T) / sum, in compressed rows.
struct Joint {
  std::vector<int> start, col;
  std::vector<double> val;
};

Joint symmetrise(const std::vector<int>& index, const std::vector<double>& p, int n, int k) {
  struct Entry {
    int row, col;
    double v;
  };
  std::vector<Entry> entries;
  entries.reserve(index.size() * 2);
  for (int i = 0; i < n; ++i)
    for (int m = 0; m < k; ++m) {
      const auto at = static_cast<std::size_t>(i) * k + m;
      entries.push_back({i, index[at], p[at]});
      entries.push_back({index[at], i, p[at]});
    }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.row != b.row ? a.row < b.row : a.col < b.col; });
  Joint j;
  j.start.assign(static_cast<std::size_t>(n) + 1, 0);
  double total = 0.0;
  for (std::size_t e = 0; e < entries.size();) {
    std::size_t f = e;
    double v = 0.0;
    while (f < entries.size() && entries[f].row == entries[e].row && entries[f].col == entries[e].col) v += entries[f++].v;
    j.col.push_back(entries[e].col);
    j.val.push_back(v);
    ++j.start[static_cast<std::size_t>(entries[e].row) + 1];
    total += v;
    e = f;
  }
  for (int i = 0; i < n; ++i) j.start[static_cast<std::size_t>(i) + 1] += j.start[static_cast<std::size_t>(i)];
  for (auto& v : j.val) v /= std::max(total, 1e-300);
  return j;
}

// The first two principal components, scaled as scikit-learn does (std of the first 1e-4).
std::vector<double> pca_init(const std::vector<float>& x, int n, int d) {
  std::vector<double> mean(static_cast<std::size_t>(d), 0.0), cov(static_cast<std::size_t>(d) * d, 0.0);
  for (int i = 0; i < n; ++i)
    for (int q = 0; q < d; ++q) mean[static_cast<std::size_t>(q)] += x[static_cast<std::size_t>(i) * d + q] / static_cast<double>(n);
  std::vector<double> row(static_cast<std::size_t>(d));
  for (int i = 0; i < n; ++i) {
    for (int q = 0; q < d; ++q) row[static_cast<std::size_t>(q)] = x[static_cast<std::size_t>(i) * d + q] - mean[static_cast<std::size_t>(q)];
    for (int a = 0; a < d; ++a)
      for (int b = a; b < d; ++b) cov[static_cast<std::size_t>(a) * d + b] += row[static_cast<std::size_t>(a)] * row[static_cast<std::size_t>(b)];
  }
  for (int a = 0; a < d; ++a)
    for (int b = 0; b < a; ++b) cov[static_cast<std::size_t>(a) * d + b] = cov[static_cast<std::size_t>(b) * d + a];
  // Power iteration with deflation; a fixed start keeps the result deterministic.
  std::vector<std::vector<double>> comps;
  for (int c = 0; c < 2; ++c) {
    std::vector<double> v(static_cast<std::size_t>(d));
    for (int q = 0; q < d; ++q) v[static_cast<std::size_t>(q)] = 1.0 + 0.01 * q * (c + 1);
    for (int it = 0; it < 300; ++it) {
      std::vector<double> w(static_cast<std::size_t>(d), 0.0);
      for (int a = 0; a < d; ++a)
        for (int b = 0; b < d; ++b) w[static_cast<std::size_t>(a)] += cov[static_cast<std::size_t>(a) * d + b] * v[static_cast<std::size_t>(b)];
      for (const auto& u : comps) {
        const double dot = std::inner_product(w.begin(), w.end(), u.begin(), 0.0);
        for (int q = 0; q < d; ++q) w[static_cast<std::size_t>(q)] -= dot * u[static_cast<std::size_t>(q)];
      }
      const double norm = std::sqrt(std::inner_product(w.begin(), w.end(), w.begin(), 0.0));
      if (norm <= 0) break;
      for (auto& e : w) e /= norm;
      v = w;
    }
    comps.push_back(v);
  }
  std::vector<double> y(static_cast<std::size_t>(n) * 2, 0.0);
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < 2; ++c) {
      double s = 0.0;
      for (int q = 0; q < d; ++q) s += (x[static_cast<std::size_t>(i) * d + q] - mean[static_cast<std::size_t>(q)]) * comps[static_cast<std::size_t>(c)][static_cast<std::size_t>(q)];
      y[static_cast<std::size_t>(i) * 2 + c] = s;
    }
  double m0 = 0.0, s0 = 0.0;
  for (int i = 0; i < n; ++i) m0 += y[static_cast<std::size_t>(i) * 2] / n;
  for (int i = 0; i < n; ++i) s0 += (y[static_cast<std::size_t>(i) * 2] - m0) * (y[static_cast<std::size_t>(i) * 2] - m0) / n;
  const double scale = s0 > 0 ? 1e-4 / std::sqrt(s0) : 1e-4;
  for (auto& v : y) v *= scale;
  return y;
}

// A quadtree over the layout for the repulsive forces.
class QuadTree {
 public:
  explicit QuadTree(const std::vector<double>& y) : y_(y) {
    const int n = static_cast<int>(y.size() / 2);
    double minx = y[0], maxx = y[0], miny = y[1], maxy = y[1];
    for (int i = 1; i < n; ++i) {
      minx = std::min(minx, y[static_cast<std::size_t>(i) * 2]);
      maxx = std::max(maxx, y[static_cast<std::size_t>(i) * 2]);
      miny = std::min(miny, y[static_cast<std::size_t>(i) * 2 + 1]);
      maxy = std::max(maxy, y[static_cast<std::size_t>(i) * 2 + 1]);
    }
    const double hw = 0.5 * std::max(maxx - minx, maxy - miny) * (1.0 + 1e-6) + 1e-12;
    nodes_.reserve(static_cast<std::size_t>(n) * 2);
    nodes_.push_back(Node{0.5 * (minx + maxx), 0.5 * (miny + maxy), hw});
    for (int i = 0; i < n; ++i) insert(0, i, 0);
  }

  // Sum over the other points of q = 1 / (1 + d^2) and of q^2 (y_i - y_j), approximated by
  // cells that look smaller than theta from y_i.
  void repulse(int i, double theta2, double& sum_q, double& fx, double& fy) const {
    const double xi = y_[static_cast<std::size_t>(i) * 2], yi = y_[static_cast<std::size_t>(i) * 2 + 1];
    int stack[256];
    int top = 0;
    stack[top++] = 0;
    while (top > 0) {
      const Node& nd = nodes_[static_cast<std::size_t>(stack[--top])];
      if (nd.count == 0) continue;
      const double cx = nd.mx / nd.count, cy = nd.my / nd.count;
      const double dx = xi - cx, dy = yi - cy, d2 = dx * dx + dy * dy;
      const bool leaf = nd.child[0] < 0;
      if (leaf || 4.0 * nd.hw * nd.hw < theta2 * d2) {
        const double count = nd.count - (leaf && nd.point == i ? 1 : 0);
        if (count <= 0) continue;
        const double q = 1.0 / (1.0 + d2);
        sum_q += count * q;
        fx += count * q * q * dx;
        fy += count * q * q * dy;
      } else {
        for (int c : nd.child)
          if (top < 255) stack[top++] = c;
      }
    }
  }

 private:
  struct Node {
    double cx, cy, hw;
    double mx = 0.0, my = 0.0;
    int count = 0;
    int point = -1;
    int child[4] = {-1, -1, -1, -1};
  };

  void insert(int at, int i, int depth) {
    const double px = y_[static_cast<std::size_t>(i) * 2], py = y_[static_cast<std::size_t>(i) * 2 + 1];
    while (true) {
      Node& nd = nodes_[static_cast<std::size_t>(at)];
      nd.mx += px;
      nd.my += py;
      ++nd.count;
      if (nd.child[0] < 0) {
        if (nd.count == 1) {
          nd.point = i;
          return;
        }
        const int other = nd.point;
        const int moved = nd.count - 1;  // the resident leaf may hold duplicates
        const bool same = other >= 0 && y_[static_cast<std::size_t>(other) * 2] == px && y_[static_cast<std::size_t>(other) * 2 + 1] == py;
        if (same || depth > 48) return;  // duplicates stay together in one leaf
        subdivide(at);  // grows nodes_: references into it are stale from here on
        // Move the resident point one level down (its mass is already counted here).
        const int c = quadrant(at, y_[static_cast<std::size_t>(other) * 2], y_[static_cast<std::size_t>(other) * 2 + 1]);
        Node& child = nodes_[static_cast<std::size_t>(c)];
        child.mx = y_[static_cast<std::size_t>(other) * 2] * moved;
        child.my = y_[static_cast<std::size_t>(other) * 2 + 1] * moved;
        child.count = moved;
        child.point = other;
        nodes_[static_cast<std::size_t>(at)].point = -1;
      }
      at = quadrant(at, px, py);
      ++depth;
    }
  }

  void subdivide(int at) {
    const Node parent = nodes_[static_cast<std::size_t>(at)];
    const double h = parent.hw / 2;
    for (int c = 0; c < 4; ++c) {
      const int index = static_cast<int>(nodes_.size());
      nodes_.push_back(Node{parent.cx + ((c & 1) ? h : -h), parent.cy + ((c & 2) ? h : -h), h});
      nodes_[static_cast<std::size_t>(at)].child[c] = index;
    }
  }

  [[nodiscard]] int quadrant(int at, double px, double py) const {
    const Node& nd = nodes_[static_cast<std::size_t>(at)];
    return nd.child[(px >= nd.cx ? 1 : 0) + (py >= nd.cy ? 2 : 0)];
  }

  const std::vector<double>& y_;
  std::vector<Node> nodes_;
};

double exact_kl(const Joint& p, const std::vector<double>& y, int n, int threads) {
  const int parts = std::max(1, std::min(threads, n));
  std::vector<double> sums(static_cast<std::size_t>(parts), 0.0);
  std::vector<std::thread> pool;
  auto work = [&](int t) {
    double s = 0.0;
    for (int i = n * t / parts; i < n * (t + 1) / parts; ++i)
      for (int j = 0; j < n; ++j) {
        if (j == i) continue;
        const double dx = y[static_cast<std::size_t>(i) * 2] - y[static_cast<std::size_t>(j) * 2];
        const double dy = y[static_cast<std::size_t>(i) * 2 + 1] - y[static_cast<std::size_t>(j) * 2 + 1];
        s += 1.0 / (1.0 + dx * dx + dy * dy);
      }
    sums[static_cast<std::size_t>(t)] = s;
  };
  for (int t = 1; t < parts; ++t) pool.emplace_back(work, t);
  work(0);
  for (auto& th : pool) th.join();
  const double z = std::accumulate(sums.begin(), sums.end(), 0.0);
  double kl = 0.0;
  for (int i = 0; i < n; ++i)
    for (int e = p.start[static_cast<std::size_t>(i)]; e < p.start[static_cast<std::size_t>(i) + 1]; ++e) {
      const int j = p.col[static_cast<std::size_t>(e)];
      const double dx = y[static_cast<std::size_t>(i) * 2] - y[static_cast<std::size_t>(j) * 2];
      const double dy = y[static_cast<std::size_t>(i) * 2 + 1] - y[static_cast<std::size_t>(j) * 2 + 1];
      const double q = 1.0 / (1.0 + dx * dx + dy * dy) / z;
      const double pij = p.val[static_cast<std::size_t>(e)];
      if (pij > 0) kl += pij * std::log(std::max(pij, 1e-12) / std::max(q, 1e-12));
    }
  return kl;
}

}  // namespace

TsneResult tsne(const std::vector<float>& points, int n, int dims, const TsneConfig& c, const Progress& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  if (n < 3 || dims < 1 || points.size() != static_cast<std::size_t>(n) * dims)
    throw UsageError("t-SNE needs at least 3 points with the given number of values each");
  const int k = std::min(n - 1, static_cast<int>(3.0 * c.perplexity + 1.0));
  if (c.perplexity <= 0 || 3.0 * c.perplexity >= n)
    throw UsageError("perplexity " + std::to_string(c.perplexity) + " needs more than 3 x perplexity points; there are " + std::to_string(n));
  progress.update(0.0, "neighbours");
  std::vector<int> index;
  std::vector<double> dist2, cond;
  nearest_neighbours(points, n, dims, k, c.threads, index, dist2);
  progress.update(0.05, "perplexity");
  conditional_probabilities(dist2, n, k, c.perplexity, c.threads, cond);
  const Joint p = symmetrise(index, cond, n, k);

  TsneResult result;
  std::vector<double> y = pca_init(points, n, dims), update(y.size(), 0.0), gains(y.size(), 1.0), grad(y.size());
  const double lr = c.learning_rate > 0 ? c.learning_rate : std::max(n / c.early_exaggeration / 4.0, 50.0);
  const double theta2 = c.theta * c.theta;
  const int parts = std::max(1, std::min(c.threads, n));
  std::vector<double> sum_q(static_cast<std::size_t>(parts));
  std::vector<double> neg(y.size());
  for (int it = 0; it < c.iterations; ++it) {
    if (it % 10 == 0) progress.update(0.05 + 0.95 * it / c.iterations, "iteration " + std::to_string(it));
    const bool early = it < c.exaggeration_iterations;
    const double exaggeration = early ? c.early_exaggeration : 1.0, momentum = early ? 0.5 : 0.8;
    const QuadTree tree(y);
    parallel_for(n, parts, [&](int begin, int end, int part) {
      double s = 0.0;
      for (int i = begin; i < end; ++i) {
        // Attraction along P's edges.
        double ax = 0.0, ay = 0.0;
        for (int e = p.start[static_cast<std::size_t>(i)]; e < p.start[static_cast<std::size_t>(i) + 1]; ++e) {
          const int j = p.col[static_cast<std::size_t>(e)];
          const double dx = y[static_cast<std::size_t>(i) * 2] - y[static_cast<std::size_t>(j) * 2];
          const double dy = y[static_cast<std::size_t>(i) * 2 + 1] - y[static_cast<std::size_t>(j) * 2 + 1];
          const double w = exaggeration * p.val[static_cast<std::size_t>(e)] / (1.0 + dx * dx + dy * dy);
          ax += w * dx;
          ay += w * dy;
        }
        grad[static_cast<std::size_t>(i) * 2] = ax;
        grad[static_cast<std::size_t>(i) * 2 + 1] = ay;
        double fx = 0.0, fy = 0.0;
        if (c.theta > 0) {
          tree.repulse(i, theta2, s, fx, fy);
        } else {
          for (int j = 0; j < n; ++j) {
            if (j == i) continue;
            const double dx = y[static_cast<std::size_t>(i) * 2] - y[static_cast<std::size_t>(j) * 2];
            const double dy = y[static_cast<std::size_t>(i) * 2 + 1] - y[static_cast<std::size_t>(j) * 2 + 1];
            const double q = 1.0 / (1.0 + dx * dx + dy * dy);
            s += q;
            fx += q * q * dx;
            fy += q * q * dy;
          }
        }
        neg[static_cast<std::size_t>(i) * 2] = fx;
        neg[static_cast<std::size_t>(i) * 2 + 1] = fy;
      }
      sum_q[static_cast<std::size_t>(part)] = s;
    });
    const double z = std::max(std::accumulate(sum_q.begin(), sum_q.end(), 0.0), 1e-300);
    for (std::size_t q = 0; q < y.size(); ++q) {
      const double g = 4.0 * (grad[q] - neg[q] / z);
      // scikit-learn's gains: grow where the step keeps its direction, shrink where it flips.
      gains[q] = (update[q] * g < 0.0) ? gains[q] + 0.2 : gains[q] * 0.8;
      gains[q] = std::max(gains[q], 0.01);
      update[q] = momentum * update[q] - lr * gains[q] * g;
      y[q] += update[q];
    }
    if (c.snapshot_every > 0 && (it + 1) % c.snapshot_every == 0) {
      result.snapshot_iterations.push_back(it + 1);
      result.snapshots.push_back(y);
      if (c.on_snapshot) c.on_snapshot(it + 1, result.snapshots.back());
    }
  }
  progress.update(0.99, "KL divergence");
  result.kl = exact_kl(p, y, n, c.threads);
  result.embedding = std::move(y);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  progress.update(1.0, "done");
  return result;
}

}  // namespace dstudio::analysis

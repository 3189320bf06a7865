// t-SNE. See tsne.h. The steps and constants follow scikit-learn's implementation so that layouts
// and KL divergences are comparable with it; the neighbour search is in tsne_neighbours.cpp and
// the FFT repulsion in tsne_fft.cpp.

// Index of this file:
//   [SECTION] Affinities
//   [SECTION] The initial layout
//   [SECTION] The quadtree
//   [SECTION] Forces and divergence
//   [SECTION] Methods and their names
//   [SECTION] Repulsion by a chosen method
//   [SECTION] The optimisation

#include "dstudio/analysis/tsne.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>

#include "dstudio/common/error.h"
#include "tsne_internal.h"

namespace dstudio::analysis {
namespace {

using tsne_detail::at;
using tsne_detail::parallel_for;
using tsne_detail::run_parts;

// ---------------------------------------------------------------------------------------------
// [SECTION] Affinities

// p_{j|i} over the k neighbours, with the bandwidth that gives the perplexity (binary search on
// the precision beta, as scikit-learn's _binary_search_perplexity).
void conditional_probabilities(const std::vector<double>& dist2, int n, int k, double perplexity,
                               int threads, std::vector<double>& p, const Progress& progress) {
  p.assign(dist2.size(), 0.0);
  const double target = std::log(perplexity);
  tsne_detail::Pacer pacer(progress);
  parallel_for(n, threads, [&](int begin, int end, int part) {
    for (int i = begin; i < end; ++i) {
      if ((i - begin) % 256 == 0) pacer.poll(part, 0.1, "perplexity");
      const double* di = &dist2[static_cast<std::size_t>(i) * k];
      double* pi = &p[static_cast<std::size_t>(i) * k];
      double beta = 1.0, lo = -std::numeric_limits<double>::infinity(),
             hi = std::numeric_limits<double>::infinity();
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
  std::vector<float> val_single;  // the same, for the attraction's single-precision blocks
};

Joint symmetrise(const std::vector<int>& index, const std::vector<double>& p, int n, int k,
                 const Progress& progress) {
  tsne_detail::Pacer pacer(progress);
  // Row i holds its own k entries and those of the points that chose i; rows are filled by
  // counting, then each is sorted by column and its duplicates (i and j chose each other) merged.
  Joint j;
  std::vector<int> fill(static_cast<std::size_t>(n) + 1, 0);
  for (int i = 0; i < n; ++i) {
    if (i % 4096 == 0) pacer.poll(0, 0.1, "perplexity");
    fill[at(i) + 1] += k;
    for (int m = 0; m < k; ++m) ++fill[at(index[at(i) * at(k) + at(m)]) + 1];
  }
  for (int i = 0; i < n; ++i) fill[at(i) + 1] += fill[at(i)];
  std::vector<std::pair<int, double>> raw(static_cast<std::size_t>(fill[at(n)]));
  std::vector<int> cursor(fill.begin(), fill.end() - 1);
  for (int i = 0; i < n; ++i) {
    if (i % 4096 == 0) pacer.poll(0, 0.1, "perplexity");
    for (int m = 0; m < k; ++m) {
      const auto e = at(i) * at(k) + at(m);
      const int other = index[e];
      raw[at(cursor[at(i)]++)] = {other, p[e]};
      raw[at(cursor[at(other)]++)] = {i, p[e]};
    }
  }
  j.start.assign(static_cast<std::size_t>(n) + 1, 0);
  j.col.reserve(raw.size());
  j.val.reserve(raw.size());
  double total = 0.0;
  for (int i = 0; i < n; ++i) {
    if (i % 1024 == 0) pacer.poll(0, 0.1, "perplexity");
    const auto first = raw.begin() + fill[at(i)], last = raw.begin() + fill[at(i) + 1];
    std::sort(first, last, [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto e = first; e != last;) {
      auto f = e;
      double v = 0.0;
      while (f != last && f->first == e->first) v += (f++)->second;
      j.col.push_back(e->first);
      j.val.push_back(v);
      total += v;
      e = f;
    }
    j.start[at(i) + 1] = static_cast<int>(j.col.size());
  }
  for (auto& v : j.val) v /= std::max(total, 1e-300);
  j.val_single.assign(j.val.begin(), j.val.end());
  return j;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The initial layout

// The first two principal components, scaled as scikit-learn does (std of the first 1e-4).
std::vector<double> pca_init(const std::vector<float>& x, int n, int d, const Progress& progress) {
  tsne_detail::Pacer pacer(progress);
  std::vector<double> mean(static_cast<std::size_t>(d), 0.0),
      cov(static_cast<std::size_t>(d) * d, 0.0);
  for (int i = 0; i < n; ++i)
    for (int q = 0; q < d; ++q)
      mean[static_cast<std::size_t>(q)] +=
          x[static_cast<std::size_t>(i) * d + q] / static_cast<double>(n);
  std::vector<double> row(static_cast<std::size_t>(d));
  for (int i = 0; i < n; ++i) {
    if (i % 512 == 0) pacer.poll(0, 0.1, "initial layout");
    for (int q = 0; q < d; ++q)
      row[static_cast<std::size_t>(q)] =
          x[static_cast<std::size_t>(i) * d + q] - mean[static_cast<std::size_t>(q)];
    for (int a = 0; a < d; ++a)
      for (int b = a; b < d; ++b)
        cov[static_cast<std::size_t>(a) * d + b] +=
            row[static_cast<std::size_t>(a)] * row[static_cast<std::size_t>(b)];
  }
  for (int a = 0; a < d; ++a)
    for (int b = 0; b < a; ++b)
      cov[static_cast<std::size_t>(a) * d + b] = cov[static_cast<std::size_t>(b) * d + a];
  // Power iteration with deflation; a fixed start keeps the result deterministic.
  std::vector<std::vector<double>> comps;
  for (int c = 0; c < 2; ++c) {
    std::vector<double> v(static_cast<std::size_t>(d));
    for (int q = 0; q < d; ++q) v[static_cast<std::size_t>(q)] = 1.0 + 0.01 * q * (c + 1);
    for (int it = 0; it < 300; ++it) {
      std::vector<double> w(static_cast<std::size_t>(d), 0.0);
      for (int a = 0; a < d; ++a)
        for (int b = 0; b < d; ++b)
          w[static_cast<std::size_t>(a)] +=
              cov[static_cast<std::size_t>(a) * d + b] * v[static_cast<std::size_t>(b)];
      for (const auto& u : comps) {
        const double dot = std::inner_product(w.begin(), w.end(), u.begin(), 0.0);
        for (int q = 0; q < d; ++q)
          w[static_cast<std::size_t>(q)] -= dot * u[static_cast<std::size_t>(q)];
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
      for (int q = 0; q < d; ++q)
        s += (x[static_cast<std::size_t>(i) * d + q] - mean[static_cast<std::size_t>(q)]) *
             comps[static_cast<std::size_t>(c)][static_cast<std::size_t>(q)];
      y[static_cast<std::size_t>(i) * 2 + c] = s;
    }
  double m0 = 0.0, s0 = 0.0;
  for (int i = 0; i < n; ++i) m0 += y[static_cast<std::size_t>(i) * 2] / n;
  for (int i = 0; i < n; ++i)
    s0 += (y[static_cast<std::size_t>(i) * 2] - m0) * (y[static_cast<std::size_t>(i) * 2] - m0) / n;
  const double scale = s0 > 0 ? 1e-4 / std::sqrt(s0) : 1e-4;
  for (auto& v : y) v *= scale;
  return y;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The quadtree

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
    const double xi = y_[static_cast<std::size_t>(i) * 2],
                 yi = y_[static_cast<std::size_t>(i) * 2 + 1];
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
    const double px = y_[static_cast<std::size_t>(i) * 2],
                 py = y_[static_cast<std::size_t>(i) * 2 + 1];
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
        const bool same = other >= 0 && y_[static_cast<std::size_t>(other) * 2] == px &&
                          y_[static_cast<std::size_t>(other) * 2 + 1] == py;
        if (same || depth > 48) return;  // duplicates stay together in one leaf
        subdivide(at);                   // grows nodes_: references into it are stale from here on
        // Move the resident point one level down (its mass is already counted here).
        const int c = quadrant(at, y_[static_cast<std::size_t>(other) * 2],
                               y_[static_cast<std::size_t>(other) * 2 + 1]);
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

// ---------------------------------------------------------------------------------------------
// [SECTION] Forces and divergence

// Z = sum over i != j of 1 / (1 + |y_i - y_j|^2), every pair once.
double exact_z(const std::vector<double>& y, int n, int threads) {
  const int parts = std::max(1, std::min(threads, n));
  std::vector<double> sums(static_cast<std::size_t>(parts), 0.0);
  // Rows interleaved over the parts so that the triangle's work is shared evenly.
  run_parts(parts, [&](int t) {
    double s = 0.0;
    for (int i = t; i < n; i += parts) {
      const double xi = y[at(i) * 2], yi = y[at(i) * 2 + 1];
      for (int j = i + 1; j < n; ++j) {
        const double dx = xi - y[at(j) * 2], dy = yi - y[at(j) * 2 + 1];
        s += 1.0 / (1.0 + dx * dx + dy * dy);
      }
    }
    sums[at(t)] = 2.0 * s;
  });
  return std::accumulate(sums.begin(), sums.end(), 0.0);
}

double kl_divergence(const Joint& p, const std::vector<double>& y, int n, double z, int threads) {
  const int parts = std::max(1, std::min(threads, n));
  std::vector<double> sums(static_cast<std::size_t>(parts), 0.0);
  parallel_for(n, parts, [&](int begin, int end, int part) {
    double kl = 0.0;
    for (int i = begin; i < end; ++i)
      for (int e = p.start[at(i)]; e < p.start[at(i) + 1]; ++e) {
        const int j = p.col[at(e)];
        const double dx = y[at(i) * 2] - y[at(j) * 2];
        const double dy = y[at(i) * 2 + 1] - y[at(j) * 2 + 1];
        const double q = 1.0 / (1.0 + dx * dx + dy * dy) / z;
        const double pij = p.val[at(e)];
        if (pij > 0) kl += pij * std::log(std::max(pij, 1e-12) / std::max(q, 1e-12));
      }
    sums[at(part)] = kl;
  });
  return std::accumulate(sums.begin(), sums.end(), 0.0);
}

// The repulsion of every pair, exactly (O(N^2)).
double exact_repulsion(const std::vector<double>& y, int n, int threads,
                       std::vector<double>& force) {
  const int parts = std::max(1, std::min(threads, n));
  std::vector<double> sum_q(static_cast<std::size_t>(parts), 0.0);
  force.assign(y.size(), 0.0);
  parallel_for(n, parts, [&](int begin, int end, int part) {
    double s = 0.0;
    for (int i = begin; i < end; ++i) {
      double fx = 0.0, fy = 0.0;
      for (int j = 0; j < n; ++j) {
        if (j == i) continue;
        const double dx = y[at(i) * 2] - y[at(j) * 2], dy = y[at(i) * 2 + 1] - y[at(j) * 2 + 1];
        const double q = 1.0 / (1.0 + dx * dx + dy * dy);
        s += q;
        fx += q * q * dx;
        fy += q * q * dy;
      }
      force[at(i) * 2] = fx;
      force[at(i) * 2 + 1] = fy;
    }
    sum_q[at(part)] = s;
  });
  return std::accumulate(sum_q.begin(), sum_q.end(), 0.0);
}

// The repulsion by Barnes-Hut with opening angle theta.
double barnes_hut_repulsion(const std::vector<double>& y, int n, double theta, int threads,
                            std::vector<double>& force) {
  const int parts = std::max(1, std::min(threads, n));
  std::vector<double> sum_q(static_cast<std::size_t>(parts), 0.0);
  force.assign(y.size(), 0.0);
  const QuadTree tree(y);
  parallel_for(n, parts, [&](int begin, int end, int part) {
    double s = 0.0;
    for (int i = begin; i < end; ++i)
      tree.repulse(i, theta * theta, s, force[at(i) * 2], force[at(i) * 2 + 1]);
    sum_q[at(part)] = s;
  });
  return std::accumulate(sum_q.begin(), sum_q.end(), 0.0);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Methods and their names

// The method Auto stands for, for n points.
TsneMethod resolve(TsneMethod method, const TsneConfig& c, int n) {
  if (method != TsneMethod::Auto) return method;
  if (c.theta <= 0) return TsneMethod::Exact;
  return n >= c.fft_from_points ? TsneMethod::Fft : TsneMethod::BarnesHut;
}

TsneNeighbours resolve(TsneNeighbours search, const TsneConfig& c, int n) {
  if (search != TsneNeighbours::Auto) return search;
  return n >= c.approximate_from_points ? TsneNeighbours::Approximate : TsneNeighbours::Exact;
}

}  // namespace

const char* to_string(TsneMethod method) {
  switch (method) {
    case TsneMethod::Auto:
      return "auto";
    case TsneMethod::Exact:
      return "exact";
    case TsneMethod::BarnesHut:
      return "barnes-hut";
    case TsneMethod::Fft:
      return "fft";
  }
  return "?";
}

const char* to_string(TsneNeighbours neighbours) {
  switch (neighbours) {
    case TsneNeighbours::Auto:
      return "auto";
    case TsneNeighbours::Exact:
      return "exact";
    case TsneNeighbours::Approximate:
      return "approximate";
  }
  return "?";
}

TsneMethod tsne_method_named(const std::string& name) {
  for (const auto m : {TsneMethod::Exact, TsneMethod::BarnesHut, TsneMethod::Fft})
    if (name == to_string(m)) return m;
  return TsneMethod::Auto;
}

TsneNeighbours tsne_neighbours_named(const std::string& name) {
  for (const auto m : {TsneNeighbours::Exact, TsneNeighbours::Approximate})
    if (name == to_string(m)) return m;
  return TsneNeighbours::Auto;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Repulsion by a chosen method

Repulsion tsne_repulsion(const std::vector<double>& y, TsneMethod method, const TsneConfig& c) {
  const int n = static_cast<int>(y.size() / 2);
  Repulsion r;
  if (n < 2) {
    r.force.assign(y.size(), 0.0);
    return r;
  }
  switch (method == TsneMethod::Auto ? TsneMethod::Fft : method) {
    case TsneMethod::Exact:
      r.z = exact_repulsion(y, n, c.threads, r.force);
      break;
    case TsneMethod::BarnesHut:
      r.z = barnes_hut_repulsion(y, n, c.theta, c.threads, r.force);
      break;
    default: {
      tsne_detail::FftRepulsion fft(c.interpolation_points, c.boxes_per_unit, c.threads);
      r.z = fft.compute(y, r.force);
    }
  }
  return r;
}

double kl_grid_boxes_per_unit(double span) {
  // Half-unit boxes while they fit in 1,024 nodes a side (5 a box), then wider, but never wider
  // than one unit, where Z's error stays near 1e-4: a layout 260 units wide would otherwise need
  // 2,600 nodes a side and 2 GB of FFT buffers for one number.
  return std::clamp(1024.0 / (5.0 * std::max(span, 1e-9)), 1.0, 2.0);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The optimisation

namespace {

// The attraction along P's edges into `grad`, exaggerated, in double precision.
void attraction(const Joint& p, const std::vector<double>& y, int n, double exaggeration,
                int threads, std::vector<double>& grad) {
  parallel_for(n, threads, [&](int begin, int end, int) {
    for (int i = begin; i < end; ++i) {
      double ax = 0.0, ay = 0.0;
      for (int e = p.start[at(i)]; e < p.start[at(i) + 1]; ++e) {
        const int j = p.col[at(e)];
        const double dx = y[at(i) * 2] - y[at(j) * 2], dy = y[at(i) * 2 + 1] - y[at(j) * 2 + 1];
        const double w = exaggeration * p.val[at(e)] / (1.0 + dx * dx + dy * dy);
        ax += w * dx;
        ay += w * dy;
      }
      grad[at(i) * 2] = ax;
      grad[at(i) * 2 + 1] = ay;
    }
  });
}

// The same in blocks: the neighbours' offsets gathered, then the weights p_ij / (1 + d_ij^2) in
// single precision, several at a time.
void attraction_in_blocks(const Joint& p, const std::vector<double>& y, int n, double exaggeration,
                          int threads, std::vector<double>& grad) {
  parallel_for(n, threads, [&](int begin, int end, int) {
    constexpr int kBlock = 64;
    float dxs[kBlock], dys[kBlock], ws[kBlock];
    for (int i = begin; i < end; ++i) {
      double ax = 0.0, ay = 0.0;
      const double xi = y[at(i) * 2], yi = y[at(i) * 2 + 1];
      for (int e0 = p.start[at(i)]; e0 < p.start[at(i) + 1]; e0 += kBlock) {
        const int len = std::min(kBlock, p.start[at(i) + 1] - e0);
        for (int b = 0; b < len; ++b) {
          const int j = p.col[at(e0 + b)];
          dxs[b] = static_cast<float>(xi - y[at(j) * 2]);
          dys[b] = static_cast<float>(yi - y[at(j) * 2 + 1]);
        }
        const float* pv = &p.val_single[at(e0)];
        for (int b = 0; b < len; ++b) ws[b] = pv[b] / (1.0f + dxs[b] * dxs[b] + dys[b] * dys[b]);
        float sx[4] = {0, 0, 0, 0}, sy[4] = {0, 0, 0, 0};
        int b = 0;
        for (; b + 4 <= len; b += 4)
          for (int l = 0; l < 4; ++l) {
            sx[l] += ws[b + l] * dxs[b + l];
            sy[l] += ws[b + l] * dys[b + l];
          }
        for (; b < len; ++b) {
          ax += static_cast<double>(ws[b]) * dxs[b];
          ay += static_cast<double>(ws[b]) * dys[b];
        }
        ax += static_cast<double>(sx[0]) + sx[1] + sx[2] + sx[3];
        ay += static_cast<double>(sy[0]) + sy[1] + sy[2] + sy[3];
      }
      grad[at(i) * 2] = exaggeration * ax;
      grad[at(i) * 2 + 1] = exaggeration * ay;
    }
  });
}

// The repulsion into `neg` by the layout's method; returns Z, kept from 0.
double repulsion(TsneMethod method, const std::vector<double>& y, int n, const TsneConfig& c,
                 int threads, std::optional<tsne_detail::FftRepulsion>& fft,
                 std::vector<double>& neg) {
  double z = 0.0;
  switch (method) {
    case TsneMethod::Exact:
      z = exact_repulsion(y, n, threads, neg);
      break;
    case TsneMethod::Fft:
      z = fft->compute(y, neg);
      break;
    default:
      z = barnes_hut_repulsion(y, n, c.theta, threads, neg);
  }
  return std::max(z, 1e-300);
}

// One step of the descent: the gradient 4 (attraction - repulsion / Z) into `update` with momentum
// and gains, clipped to `max_step` a point when that is above 0, and added to the layout.
void descend(std::vector<double>& y, const std::vector<double>& grad,
             const std::vector<double>& neg, double z, int n, double momentum, double lr,
             double max_step, std::vector<double>& gains, std::vector<double>& update) {
  for (std::size_t q = 0; q < y.size(); ++q) {
    const double g = 4.0 * (grad[q] - neg[q] / z);
    // scikit-learn's gains: grow where the step keeps its direction, shrink where it flips.
    gains[q] = (update[q] * g < 0.0) ? gains[q] + 0.2 : gains[q] * 0.8;
    gains[q] = std::max(gains[q], 0.01);
    update[q] = momentum * update[q] - lr * gains[q] * g;
  }
  // FIt-SNE's step clipping: no point moves more than max_step_norm in one iteration, so that
  // the few that would fly off when the exaggeration ends do not stretch the FFT grid.
  if (max_step > 0)
    for (int i = 0; i < n; ++i) {
      const double step = std::hypot(update[at(i) * 2], update[at(i) * 2 + 1]);
      if (step > max_step) {
        update[at(i) * 2] *= max_step / step;
        update[at(i) * 2 + 1] *= max_step / step;
      }
    }
  for (std::size_t q = 0; q < y.size(); ++q) y[q] += update[q];
}

// Z of the final layout for KL(P || Q): over every pair up to 20,000 points, else from a fine FFT
// grid (and the result says it is not exact).
double final_z(const std::vector<double>& y, int n, int threads, TsneResult& result) {
  if (n <= 20000) return exact_z(y, n, threads);
  const auto [lo, hi] = std::minmax_element(y.begin(), y.end());
  tsne_detail::FftRepulsion fine(5, kl_grid_boxes_per_unit(*hi - *lo), threads);
  std::vector<double> unused;
  const double z = fine.compute(y, unused);
  result.kl_exact = false;
  return z;
}

}  // namespace

TsneResult tsne(const std::vector<float>& points, int n, int dims, const TsneConfig& c,
                const Progress& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  if (n < 3 || dims < 1 || points.size() != static_cast<std::size_t>(n) * dims)
    throw UsageError("t-SNE needs at least 3 points with the given number of values each");
  const int k = std::min(n - 1, static_cast<int>(3.0 * c.perplexity + 1.0));
  if (c.perplexity <= 0 || 3.0 * c.perplexity >= n)
    throw UsageError("perplexity " + std::to_string(c.perplexity) +
                     " needs more than 3 x perplexity points; there are " + std::to_string(n));
  const int threads = std::max(1, c.threads);
  TsneResult result;
  result.method = resolve(c.method, c, n);
  result.neighbours = resolve(c.neighbours, c, n);

  // The input similarities: neighbours (the first 10% of the progress), bandwidths, the joint P.
  progress.update(0.0, "neighbours");
  const auto graph =
      nearest_neighbours(points, n, dims, k, result.neighbours, threads, progress.part(0.0, 0.1));
  result.neighbour_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  progress.update(0.1, "perplexity");
  std::vector<double> cond;
  conditional_probabilities(graph.dist2, n, k, c.perplexity, threads, cond, progress);
  const Joint p = symmetrise(graph.index, cond, n, k, progress);

  // Gradient descent with momentum and gains; the gradient is 4 (attraction - repulsion / Z).
  std::vector<double> y = pca_init(points, n, dims, progress), update(y.size(), 0.0),
                      gains(y.size(), 1.0), grad(y.size());
  const double lr =
      c.learning_rate > 0 ? c.learning_rate : std::max(n / c.early_exaggeration / 4.0, 50.0);
  const double max_step = result.method == TsneMethod::Fft ? c.max_step_norm : 0.0;
  std::optional<tsne_detail::FftRepulsion> fft;
  if (result.method == TsneMethod::Fft)
    fft.emplace(c.interpolation_points, c.boxes_per_unit, threads);
  std::vector<double> neg(y.size());
  auto last_report = std::chrono::steady_clock::now();
  for (int it = 0; it < c.iterations; ++it) {
    // Every 10 iterations, and more often when iterations are slow (large N).
    const auto now = std::chrono::steady_clock::now();
    if (it % 10 == 0 || now - last_report > std::chrono::milliseconds(250)) {
      progress.update(0.1 + 0.89 * it / c.iterations, "iteration " + std::to_string(it));
      last_report = now;
    }
    const bool early = it < c.exaggeration_iterations;
    const double exaggeration = early ? c.early_exaggeration : 1.0, momentum = early ? 0.5 : 0.8;
    // With the FFT (large N), the attraction in blocks in single precision; otherwise in double
    // precision, as before, so that small layouts do not change.
    if (result.method != TsneMethod::Fft)
      attraction(p, y, n, exaggeration, threads, grad);
    else
      attraction_in_blocks(p, y, n, exaggeration, threads, grad);
    const double z = repulsion(result.method, y, n, c, threads, fft, neg);
    descend(y, grad, neg, z, n, momentum, lr, max_step, gains, update);
    if (c.snapshot_every > 0 && (it + 1) % c.snapshot_every == 0) {
      if (c.keep_snapshots) {
        result.snapshot_iterations.push_back(it + 1);
        result.snapshots.push_back(y);
      }
      if (c.on_snapshot) c.on_snapshot(it + 1, y);
    }
  }
  progress.update(0.99, "KL divergence");
  const double z = final_z(y, n, threads, result);
  progress.update(0.995, "KL divergence");
  result.kl = kl_divergence(p, y, n, std::max(z, 1e-300), threads);
  result.embedding = std::move(y);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  progress.update(1.0, "done");
  return result;
}

}  // namespace dstudio::analysis

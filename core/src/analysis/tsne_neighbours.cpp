// Nearest neighbours for t-SNE's input similarities. See tsne.h.
//
// Exact: every pair, dot products in blocks that the compiler vectorises, O(N^2 d).
// Approximate: a forest of random-projection trees (as Annoy): each tree splits its points by the
// hyperplane halfway between two of them, recursively, down to small leaves; a point's candidates
// are the leaves the forest search visits first, best-first over all trees by the distance of the
// point from the splitting planes, until it holds a fixed number of candidates; the nearest k of
// them, at their exact distances, are the point's neighbours.

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>

#include "dstudio/analysis/tsne.h"
#include "tsne_internal.h"

namespace dstudio::analysis {
namespace {

using tsne_detail::at;
using tsne_detail::Pacer;
using tsne_detail::parallel_for;
using tsne_detail::run_parts;

// a . b over d floats with eight independent partial sums (vectorised).
inline double dot(const float* a, const float* b, int d) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int q = 0;
  for (; q + 8 <= d; q += 8)
    for (int l = 0; l < 8; ++l) acc[l] += a[q + l] * b[q + l];
  double s = 0.0;
  for (float v : acc) s += v;
  for (; q < d; ++q) s += static_cast<double>(a[q]) * b[q];
  return s;
}

std::vector<double> squared_norms(const std::vector<float>& x, int n, int d) {
  std::vector<double> norms(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    double s = 0.0;
    for (int q = 0; q < d; ++q)
      s += static_cast<double>(x[at(i) * at(d) + at(q)]) * x[at(i) * at(d) + at(q)];
    norms[at(i)] = s;
  }
  return norms;
}

// Keeps the k nearest of `candidates` (distances in `d2`) as row i of the graph, nearest first.
void keep_nearest(std::vector<int>& candidates, std::vector<double>& d2, int k, int i,
                  NeighbourGraph& g) {
  std::vector<int> order(candidates.size());
  std::iota(order.begin(), order.end(), 0);
  const auto closer = [&](int a, int b) {
    return d2[at(a)] < d2[at(b)] ||
           (d2[at(a)] == d2[at(b)] && candidates[at(a)] < candidates[at(b)]);
  };
  std::nth_element(order.begin(), order.begin() + k, order.end(), closer);
  std::sort(order.begin(), order.begin() + k, closer);
  for (int m = 0; m < k; ++m) {
    g.index[at(i) * at(k) + at(m)] = candidates[at(order[at(m)])];
    g.dist2[at(i) * at(k) + at(m)] = d2[at(order[at(m)])];
  }
}

NeighbourGraph exact_neighbours(const std::vector<float>& x, int n, int d, int k, int threads,
                                const Progress& progress) {
  const auto norms = squared_norms(x, n, d);
  NeighbourGraph g;
  g.k = k;
  g.index.assign(at(n) * at(k), 0);
  g.dist2.assign(at(n) * at(k), 0.0);
  Pacer pacer(progress);
  parallel_for(n, threads, [&](int begin, int end, int part) {
    std::vector<int> all(static_cast<std::size_t>(n) - 1);
    std::vector<double> d2(static_cast<std::size_t>(n) - 1);
    for (int i = begin; i < end; ++i) {
      if ((i - begin) % 16 == 0)
        pacer.poll(part, static_cast<double>(i - begin) / std::max(1, end - begin),
                   "neighbours (exact)");
      const float* a = &x[at(i) * at(d)];
      std::size_t c = 0;
      for (int j = 0; j < n; ++j) {
        if (j == i) continue;
        all[c] = j;
        d2[c++] = std::max(0.0, norms[at(i)] + norms[at(j)] - 2.0 * dot(a, &x[at(j) * at(d)], d));
      }
      keep_nearest(all, d2, k, i, g);
    }
  });
  return g;
}

// One random-projection tree: internal nodes split by a unit normal and an offset; leaves are
// contiguous ranges of `order`.
struct ProjectionTree {
  struct Node {
    int left = -1, right = -1;  // children; -1 for a leaf
    int begin = 0, end = 0;     // the leaf's points in `order`
    double offset = 0.0;
  };
  std::vector<Node> nodes;
  std::vector<float> normals;  // d per node (internal nodes only use theirs)
  std::vector<int> order;
};

ProjectionTree build_tree(const std::vector<float>& x, int n, int d, int leaf_size,
                          std::uint64_t seed) {
  ProjectionTree tree;
  tree.order.resize(static_cast<std::size_t>(n));
  std::iota(tree.order.begin(), tree.order.end(), 0);
  std::mt19937_64 rng(seed);
  std::vector<double> side;
  std::vector<int> work;
  std::vector<float> normal(static_cast<std::size_t>(d));
  tree.nodes.push_back({-1, -1, 0, n, 0.0});
  tree.normals.assign(at(d), 0.0f);
  for (std::size_t at_node = 0; at_node < tree.nodes.size(); ++at_node) {
    const int begin = tree.nodes[at_node].begin, end = tree.nodes[at_node].end, size = end - begin;
    if (size <= leaf_size) continue;
    // The plane halfway between two random points of the node, its normal of unit length.
    std::uniform_int_distribution<int> pick(begin, end - 1);
    const int a = tree.order[at(pick(rng))];
    int b = a;
    for (int tries = 0; tries < 8 && b == a; ++tries) b = tree.order[at(pick(rng))];
    double norm2 = 0.0, offset = 0.0;
    for (int q = 0; q < d; ++q) {
      const float va = x[at(a) * at(d) + at(q)], vb = x[at(b) * at(d) + at(q)];
      normal[at(q)] = va - vb;
      norm2 += static_cast<double>(va - vb) * (va - vb);
    }
    const double inv = norm2 > 0 ? 1.0 / std::sqrt(norm2) : 0.0;
    for (int q = 0; q < d; ++q) {
      normal[at(q)] = static_cast<float>(normal[at(q)] * inv);
      offset += normal[at(q)] * 0.5 *
                (static_cast<double>(x[at(a) * at(d) + at(q)]) + x[at(b) * at(d) + at(q)]);
    }
    // Partition the node's points by side; a plane that leaves one side empty, as duplicates
    // do, is replaced by an arbitrary halving so that the depth stays logarithmic.
    int left_count = 0;
    side.resize(static_cast<std::size_t>(size));
    for (int e = 0; e < size; ++e) {
      side[at(e)] = dot(normal.data(), &x[at(tree.order[at(begin + e)]) * at(d)], d) - offset;
      left_count += side[at(e)] < 0;
    }
    const bool degenerate = left_count < 1 || left_count > size - 1 || inv == 0.0;
    work.assign(tree.order.begin() + begin, tree.order.begin() + end);
    int l = begin, r = end;
    for (int e = 0; e < size; ++e) {
      const bool left = degenerate ? (e < size / 2) : side[at(e)] < 0;
      if (left)
        tree.order[at(l++)] = work[at(e)];
      else
        tree.order[at(--r)] = work[at(e)];
    }
    if (degenerate) {
      // The search then goes down both sides alike (normal 0, margin 0).
      std::fill(normal.begin(), normal.end(), 0.0f);
      offset = 0.0;
    }
    const int mid = l;
    const int left_node = static_cast<int>(tree.nodes.size());
    tree.nodes[at_node].left = left_node;
    tree.nodes[at_node].right = left_node + 1;
    tree.nodes[at_node].offset = offset;
    std::copy(normal.begin(), normal.end(),
              tree.normals.begin() + static_cast<std::ptrdiff_t>(at_node * at(d)));
    tree.nodes.push_back({-1, -1, begin, mid, 0.0});
    tree.nodes.push_back({-1, -1, mid, end, 0.0});
    tree.normals.resize(tree.nodes.size() * at(d), 0.0f);
  }
  return tree;
}

NeighbourGraph approximate_neighbours(const std::vector<float>& x, int n, int d, int k, int threads,
                                      const Progress& progress) {
  // Forest size and search effort: enough for a recall of about 0.9 on clustered data at the
  // perplexities t-SNE uses, growing slowly with N.
  const int trees =
      std::clamp(static_cast<int>(6 + std::sqrt(static_cast<double>(n)) / 25.0), 6, 24);
  const int leaf_size = std::max(32, k / 2);
  const int search = std::max(4 * k, std::min(n - 1, 12 * k + 4 * trees * leaf_size / 2));
  const auto norms = squared_norms(x, n, d);

  // The trees, one thread each at a time; 20% of the progress.
  std::vector<ProjectionTree> forest(static_cast<std::size_t>(trees));
  Pacer pacer(progress);
  const int parts = std::max(1, std::min(threads, trees));
  run_parts(parts, [&](int part) {
    for (int t = part; t < trees; t += parts) {
      pacer.poll(part, 0.2 * t / trees, "neighbours (building trees)");
      forest[at(t)] =
          build_tree(x, n, d, leaf_size, 0x9E3779B97F4A7C15ULL * static_cast<std::uint64_t>(t + 1));
    }
  });

  NeighbourGraph g;
  g.k = k;
  g.index.assign(at(n) * at(k), 0);
  g.dist2.assign(at(n) * at(k), 0.0);
  // The threads take chunks of queries in turn, so that they finish together and the calling
  // thread reports progress to the end.
  constexpr int kChunk = 256;
  std::atomic<int> next_chunk{0};
  run_parts(std::max(1, std::min(threads, n)), [&](int part) {
    struct Entry {
      double priority;
      int tree, node;
      bool operator<(const Entry& o) const { return priority < o.priority; }
    };
    std::vector<int> seen(static_cast<std::size_t>(n), -1), candidates;
    std::vector<double> d2;
    std::vector<Entry> heap;
    // Queries in the order of the first tree's leaves: consecutive points share most of their
    // candidates, which then come from cache rather than memory.
    for (int begin = next_chunk.fetch_add(kChunk); begin < n;
         begin = next_chunk.fetch_add(kChunk)) {
      const int end = std::min(n, begin + kChunk);
      for (int o = begin; o < end; ++o) {
        if ((o - begin) % 64 == 0)
          pacer.poll(part, 0.2 + 0.8 * o / n, "neighbours (searching trees)");
        const int i = forest[0].order[at(o)];
        const float* xi = &x[at(i) * at(d)];
        // Best-first over the forest: a subtree's priority is the smallest margin on the way to it.
        heap.clear();
        candidates.clear();
        for (int t = 0; t < trees; ++t)
          heap.push_back({std::numeric_limits<double>::infinity(), t, 0});
        std::make_heap(heap.begin(), heap.end());
        seen[at(i)] = i;
        int visited = 0;
        while (!heap.empty() && visited < search) {
          std::pop_heap(heap.begin(), heap.end());
          const Entry e = heap.back();
          heap.pop_back();
          const auto& tree = forest[at(e.tree)];
          const auto& nd = tree.nodes[at(e.node)];
          if (nd.left < 0) {
            for (int slot = nd.begin; slot < nd.end; ++slot) {
              const int j = tree.order[at(slot)];
              ++visited;
              if (seen[at(j)] == i) continue;
              seen[at(j)] = i;
              candidates.push_back(j);
            }
            continue;
          }
          const double margin = dot(&tree.normals[at(e.node) * at(d)], xi, d) - nd.offset;
          heap.push_back({std::min(e.priority, -margin), e.tree, nd.left});
          std::push_heap(heap.begin(), heap.end());
          heap.push_back({std::min(e.priority, margin), e.tree, nd.right});
          std::push_heap(heap.begin(), heap.end());
        }
        // Too few distinct candidates (tiny inputs): every point is one.
        if (static_cast<int>(candidates.size()) < k) {
          candidates.clear();
          for (int j = 0; j < n; ++j)
            if (j != i) candidates.push_back(j);
        }
        d2.resize(candidates.size());
        for (std::size_t c = 0; c < candidates.size(); ++c) {
          if (c + 4 < candidates.size()) {
            const char* ahead = reinterpret_cast<const char*>(&x[at(candidates[c + 4]) * at(d)]);
            for (std::size_t line = 0; line < at(d) * sizeof(float); line += 64)
              __builtin_prefetch(ahead + line);
          }
          const int j = candidates[c];
          d2[c] = std::max(0.0, norms[at(i)] + norms[at(j)] - 2.0 * dot(xi, &x[at(j) * at(d)], d));
        }
        keep_nearest(candidates, d2, k, i, g);
      }
    }
  });
  return g;
}

}  // namespace

NeighbourGraph nearest_neighbours(const std::vector<float>& points, int n, int dims, int k,
                                  TsneNeighbours search, int threads, const Progress& progress) {
  if (n < 2 || dims < 1 || k < 1 || k > n - 1 || points.size() != at(n) * at(dims))
    throw std::invalid_argument(
        "nearest_neighbours: k must be in [1, n - 1] and the points n x dims");
  progress.update(0.0, "neighbours");
  auto g = search == TsneNeighbours::Approximate
               ? approximate_neighbours(points, n, dims, k, std::max(1, threads), progress)
               : exact_neighbours(points, n, dims, k, std::max(1, threads), progress);
  progress.update(1.0, "neighbours");
  return g;
}

}  // namespace dstudio::analysis

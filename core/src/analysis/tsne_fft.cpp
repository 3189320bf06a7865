// FIt-SNE's repulsive forces (Linderman, Rachh, Hoskins, Steinerberger and Kluger, 2019). See
// tsne_internal.h. With K(d) = 1 / (1 + d^2), the repulsion on y_i is
//   sum_j K^2(y_i, y_j) (y_i - y_j) = y_i phi_1(i) - (phi_x(i), phi_y(i)),
// where phi_c(i) = sum_j K^2(y_i, y_j) c_j are sums of the charges c = 1, x, y against K^2, and
// Z = sum_i (sum_j K(y_i, y_j)) - N is one more sum, of the charge 1 against K. Each sum is
// approximated by interpolating the kernel on a square grid of boxes laid over the layout, with
// p equispaced nodes a box and dimension:
//   1. spread each point's charges onto the p x p nodes of its box (Lagrange weights);
//   2. convolve the node charges with the kernel at the node offsets: a Toeplitz product, done by
//      zero-padded FFT (FFTW, real-to-complex);
//   3. interpolate the node potentials back to the points with the same weights.
// The cost is O(N p^2) for the points and O(M^2 log M) for a grid of M = p x boxes nodes a side.

#include <fftw3.h>

#include <cmath>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>

#include "dstudio/common/error.h"
#include "tsne_internal.h"

namespace dstudio::analysis::tsne_detail {
namespace {

// FFTW's planner is not thread-safe; executing a plan on new arrays is.
std::mutex& planner_mutex() {
  static std::mutex m;
  return m;
}

// The smallest n' >= n whose prime factors are 2, 3, 5 and 7 (sizes FFTW transforms fastest).
int smooth_size(int n) {
  for (;; ++n) {
    int r = n;
    for (int f : {2, 3, 5, 7})
      while (r % f == 0) r /= f;
    if (r == 1) return n;
  }
}

// The transforms run in single precision (twice as fast; the potentials' relative error stays
// near 1e-6, far below the interpolation's); spreading and interpolation are in double.
struct FftwFree {
  void operator()(void* p) const { fftwf_free(p); }
};
using RealBuffer = std::unique_ptr<float[], FftwFree>;
using ComplexBuffer = std::unique_ptr<fftwf_complex[], FftwFree>;

RealBuffer real_buffer(std::size_t count) {
  auto* p = static_cast<float*>(fftwf_malloc(sizeof(float) * count));
  if (!p) throw std::bad_alloc();
  return RealBuffer(p);
}

ComplexBuffer complex_buffer(std::size_t count) {
  auto* p = static_cast<fftwf_complex*>(fftwf_malloc(sizeof(fftwf_complex) * count));
  if (!p) throw std::bad_alloc();
  return ComplexBuffer(p);
}

}  // namespace

// Buffers and plans for one FFT size, kept while the grid keeps that size.
struct FftRepulsion::Grid {
  int boxes = 0;   // boxes a side
  int nodes = 0;   // interpolation nodes a side (p x boxes)
  int padded = 0;  // FFT length a side (2 x nodes)
  // Real inputs and outputs (padded x padded): the two kernels, the three charges and the four
  // potentials (K^2 against 1, x, y; K against 1).
  static constexpr int kKernels = 2, kCharges = 3, kPotentials = 4;
  std::vector<RealBuffer> real;        // kernels, then charges, then potentials
  std::vector<ComplexBuffer> hat;      // transforms of the kernels and the charges
  std::vector<ComplexBuffer> product;  // one per potential (c2r overwrites its input)
  fftwf_plan forward = nullptr, backward = nullptr;
  double kernel_spacing = -1.0;  // the node spacing the kernels' transforms in `hat` were made for

  Grid(int boxes_, int nodes_, int padded_) : boxes(boxes_), nodes(nodes_), padded(padded_) {
    const auto reals = static_cast<std::size_t>(padded) * padded;
    const auto complexes = static_cast<std::size_t>(padded) * (padded / 2 + 1);
    for (int b = 0; b < kKernels + kCharges + kPotentials; ++b) real.push_back(real_buffer(reals));
    for (int b = 0; b < kKernels + kCharges; ++b) hat.push_back(complex_buffer(complexes));
    for (int b = 0; b < kPotentials; ++b) product.push_back(complex_buffer(complexes));
    const std::lock_guard lock(planner_mutex());
    forward = fftwf_plan_dft_r2c_2d(padded, padded, real[0].get(), hat[0].get(), FFTW_ESTIMATE);
    backward = fftwf_plan_dft_c2r_2d(padded, padded, product[0].get(),
                                     real[kKernels + kCharges].get(), FFTW_ESTIMATE);
    if (!forward || !backward)
      throw Error("FFTW could not plan a " + std::to_string(padded) + "^2 transform");
  }
  ~Grid() {
    const std::lock_guard lock(planner_mutex());
    if (forward) fftwf_destroy_plan(forward);
    if (backward) fftwf_destroy_plan(backward);
  }
  Grid(const Grid&) = delete;
  Grid& operator=(const Grid&) = delete;
};

FftRepulsion::FftRepulsion(int interpolation_points, double boxes_per_unit, int threads)
    : p_(std::max(2, interpolation_points)),
      boxes_per_unit_(boxes_per_unit > 0 ? boxes_per_unit : 1.0),
      threads_(std::max(1, threads)) {}

FftRepulsion::~FftRepulsion() = default;

int FftRepulsion::boxes() const {
  return grid_ ? grid_->boxes : 0;
}

// Long on purpose: FIt-SNE's interpolation read in its order (the grid, spreading the points'
// charges onto it, the kernels' convolution by FFT, interpolating the potentials back, the forces),
// each step commented; apart, every step would take the grid, the weights and the charges.
double FftRepulsion::compute(const std::vector<double>& y, std::vector<double>& force) {
  const int n = static_cast<int>(y.size() / 2);
  const int p = p_;
  force.assign(y.size(), 0.0);
  if (n < 2) return 0.0;

  // The square the grid covers: the layout's bounding box, made square, a hair larger.
  double lo = y[0], hi = y[0];
  for (double v : y) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  double span = std::max(hi - lo, 1e-9) * (1.0 + 1e-9);
  const double centre = 0.5 * (lo + hi);
  // At least 50 boxes a side, no wider than 1 / boxes_per_unit, an FFT-friendly count. Once the
  // layout spans more than 50 boxes, boxes are exactly 1 / boxes_per_unit wide and the grid a
  // little larger than the layout: the kernels' transforms stay valid while the count does.
  int boxes = 50;
  if (span * boxes_per_unit_ > 50) {
    boxes = static_cast<int>(std::ceil(span * boxes_per_unit_));
    while (smooth_size(2 * p * boxes) != 2 * p * boxes) ++boxes;
    span = boxes / boxes_per_unit_;
  }
  lo = centre - 0.5 * span;
  if (!grid_ || grid_->boxes != boxes) {
    grid_.reset();  // frees the old buffers before the new ones are allocated
    grid_ = std::make_unique<Grid>(boxes, p * boxes, 2 * p * boxes);
  }
  Grid& g = *grid_;
  const int m = g.nodes, nf = g.padded;
  const auto reals = static_cast<std::size_t>(nf) * nf;
  const auto complexes = static_cast<std::size_t>(nf) * (nf / 2 + 1);
  const double box = span / boxes, h = box / p;

  // Lagrange basis on the nodes (j + 1/2) / p of a box, denominators once.
  std::vector<double> node(static_cast<std::size_t>(p)),
      denominator(static_cast<std::size_t>(p), 1.0);
  for (int j = 0; j < p; ++j) node[at(j)] = (j + 0.5) / p;
  for (int j = 0; j < p; ++j)
    for (int l = 0; l < p; ++l)
      if (l != j) denominator[at(j)] *= node[at(j)] - node[at(l)];

  // Each point's box (row, column) and its p weights in x and in y.
  std::vector<int> cell(static_cast<std::size_t>(n) * 2);
  std::vector<double> weight(static_cast<std::size_t>(n) * 2 * p);
  parallel_for(n, threads_, [&](int begin, int end, int) {
    for (int i = begin; i < end; ++i)
      for (int a = 0; a < 2; ++a) {
        const double u = (y[at(i) * 2 + at(a)] - lo) / box;
        const int b = std::clamp(static_cast<int>(u), 0, boxes - 1);
        const double t = u - b;
        cell[at(i) * 2 + at(a)] = b;
        double* w = &weight[(at(i) * 2 + at(a)) * at(p)];
        for (int j = 0; j < p; ++j) {
          double v = 1.0;
          for (int l = 0; l < p; ++l)
            if (l != j) v *= t - node[at(l)];
          w[j] = v / denominator[at(j)];
        }
      }
  });

  // 1. Spread the charges 1, x, y (about the centre, to keep the products small) onto the nodes;
  // each thread into a grid of its own, summed into the padded inputs.
  const int parts = std::max(1, std::min(threads_, n));
  std::vector<std::vector<double>> spread(static_cast<std::size_t>(parts));
  run_parts(parts, [&](int t) {
    auto& s = spread[at(t)];
    s.assign(static_cast<std::size_t>(m) * m * 3, 0.0);
    for (int i = n * t / parts; i < n * (t + 1) / parts; ++i) {
      const double c[3] = {1.0, y[at(i) * 2] - centre, y[at(i) * 2 + 1] - centre};
      const double* wx = &weight[(at(i) * 2) * at(p)];
      const double* wy = &weight[(at(i) * 2 + 1) * at(p)];
      const int x0 = cell[at(i) * 2] * p, y0 = cell[at(i) * 2 + 1] * p;
      for (int b = 0; b < p; ++b)
        for (int a = 0; a < p; ++a) {
          const double w = wx[a] * wy[b];
          double* dst = &s[(static_cast<std::size_t>(y0 + b) * m + at(x0 + a)) * 3];
          dst[0] += w * c[0];
          dst[1] += w * c[1];
          dst[2] += w * c[2];
        }
    }
  });

  // 2. The kernels at the node offsets, embedded in circulant form, and the padded charges; the
  // five forward transforms and the four products and inverse transforms, shared by the threads.
  const bool new_kernels = g.kernel_spacing != h;
  g.kernel_spacing = h;
  const int first = new_kernels ? 0 : Grid::kKernels,
            transforms = Grid::kKernels + Grid::kCharges - first;
  run_parts(std::min(parts, transforms), [&](int t) {
    const int share = std::min(parts, transforms);
    for (int b = first + t; b < Grid::kKernels + Grid::kCharges; b += share) {
      float* r = g.real[at(b)].get();
      std::fill(r, r + reals, 0.0f);
      if (b < Grid::kKernels) {
        for (int i = 0; i < m; ++i)
          for (int j = 0; j < m; ++j) {
            const double d2 = h * h * (static_cast<double>(i) * i + static_cast<double>(j) * j);
            const double k1 = 1.0 / (1.0 + d2);
            const double v = b == 0 ? k1 * k1 : k1;
            const int ri[2] = {i, (nf - i) % nf}, rj[2] = {j, (nf - j) % nf};
            for (int si : ri)
              for (int sj : rj) r[at(si) * at(nf) + at(sj)] = static_cast<float>(v);
          }
      } else {
        const int c = b - Grid::kKernels;
        for (int row = 0; row < m; ++row)
          for (int col = 0; col < m; ++col) {
            double sum = 0.0;
            for (const auto& s : spread)
              sum += s[(static_cast<std::size_t>(row) * m + at(col)) * 3 + at(c)];
            r[at(row) * at(nf) + at(col)] = static_cast<float>(sum);
          }
      }
      fftwf_execute_dft_r2c(g.forward, r, g.hat[at(b)].get());
    }
  });
  const float scale = 1.0f / static_cast<float>(reals);  // FFTW's inverse is unnormalised
  run_parts(std::min(parts, Grid::kPotentials), [&](int t) {
    const int share = std::min(parts, Grid::kPotentials);
    for (int q = t; q < Grid::kPotentials; q += share) {
      // Potentials: K^2 * 1, K^2 * x, K^2 * y, K * 1.
      const fftwf_complex* kernel = g.hat[q < 3 ? 0 : 1].get();
      const fftwf_complex* charge = g.hat[at(Grid::kKernels + (q < 3 ? q : 0))].get();
      fftwf_complex* out = g.product[at(q)].get();
      for (std::size_t e = 0; e < complexes; ++e) {
        out[e][0] = (kernel[e][0] * charge[e][0] - kernel[e][1] * charge[e][1]) * scale;
        out[e][1] = (kernel[e][0] * charge[e][1] + kernel[e][1] * charge[e][0]) * scale;
      }
      fftwf_execute_dft_c2r(g.backward, out, g.real[at(Grid::kKernels + Grid::kCharges + q)].get());
    }
  });

  // 3. Interpolate the potentials back to the points; the forces and Z.
  std::vector<double> z_part(static_cast<std::size_t>(parts), 0.0);
  const float* pot[4];
  for (int q = 0; q < 4; ++q) pot[q] = g.real[at(Grid::kKernels + Grid::kCharges + q)].get();
  run_parts(parts, [&](int t) {
    double z = 0.0;
    for (int i = n * t / parts; i < n * (t + 1) / parts; ++i) {
      const double* wx = &weight[(at(i) * 2) * at(p)];
      const double* wy = &weight[(at(i) * 2 + 1) * at(p)];
      const int x0 = cell[at(i) * 2] * p, y0 = cell[at(i) * 2 + 1] * p;
      double phi[4] = {0, 0, 0, 0};
      for (int b = 0; b < p; ++b)
        for (int a = 0; a < p; ++a) {
          const double w = wx[a] * wy[b];
          const std::size_t e = at(y0 + b) * at(nf) + at(x0 + a);
          for (int q = 0; q < 4; ++q) phi[q] += w * pot[q][e];
        }
      const double xi = y[at(i) * 2] - centre, yi = y[at(i) * 2 + 1] - centre;
      force[at(i) * 2] = xi * phi[0] - phi[1];
      force[at(i) * 2 + 1] = yi * phi[0] - phi[2];
      z += phi[3] - 1.0;  // less the point's own K(0) = 1
    }
    z_part[at(t)] = z;
  });
  double z = 0.0;
  for (double v : z_part) z += v;
  return z;
}

}  // namespace dstudio::analysis::tsne_detail

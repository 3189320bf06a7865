#include "dstudio/render/lean_drawing.h"

#include <meshoptimizer.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace dstudio::render {

namespace {

constexpr int kSimplifyAbove = 2000;     // triangles; the hand's and the arm's links, not a box
constexpr double kTriangleShare = 0.04;  // at least this share of the triangles kept
constexpr float kSurfaceError = 0.01f;   // of the mesh's extent

// The vertices' normals from the faces kept, as MuJoCo makes them when it compiles a mesh: the
// faces' normals weighted by their areas. The normals of the full mesh would shade the larger
// faces in patches of light and dark.
void recompute_normals(mjModel_* model, int mesh) {
  float* normal = model->mesh_normal + 3 * static_cast<std::size_t>(model->mesh_vertadr[mesh]);
  const float* vertex = model->mesh_vert + 3 * static_cast<std::size_t>(model->mesh_vertadr[mesh]);
  const int* face = model->mesh_face + 3 * static_cast<std::size_t>(model->mesh_faceadr[mesh]);
  std::vector<float> sum(3 * static_cast<std::size_t>(model->mesh_vertnum[mesh]), 0.0f);
  for (int f = 0; f < model->mesh_facenum[mesh]; ++f) {
    const int* v = face + 3 * f;
    const float* a = vertex + 3 * v[0];
    const float* b = vertex + 3 * v[1];
    const float* c = vertex + 3 * v[2];
    const float e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    const float e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    const float n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                        e1[0] * e2[1] - e1[1] * e2[0]};
    for (int k = 0; k < 3; ++k)
      for (int d = 0; d < 3; ++d) sum[3 * static_cast<std::size_t>(v[k]) + d] += n[d];
  }
  for (std::size_t i = 0; i < sum.size(); i += 3) {
    const float length =
        std::sqrt(sum[i] * sum[i] + sum[i + 1] * sum[i + 1] + sum[i + 2] * sum[i + 2]);
    if (length > 0.0f)  // a vertex no face uses any more keeps its normal
      for (int d = 0; d < 3; ++d) normal[i + d] = sum[i + d] / length;
  }
}

}  // namespace

LeanDrawing make_lean(mjModel_* model) {
  LeanDrawing done;
  for (int mesh = 0; mesh < model->nmesh; ++mesh) {
    const int faces = model->mesh_facenum[mesh];
    done.triangles_before += faces;
    if (faces <= kSimplifyAbove) {
      done.triangles_after += faces;
      continue;
    }
    const int first_vertex = model->mesh_vertadr[mesh], vertices = model->mesh_vertnum[mesh];
    int* face = model->mesh_face + 3 * static_cast<std::size_t>(model->mesh_faceadr[mesh]);
    const std::vector<unsigned> indices(face, face + 3 * static_cast<std::size_t>(faces));
    std::vector<unsigned> kept(indices.size());
    const float* positions = model->mesh_vert + 3 * static_cast<std::size_t>(first_vertex);
    const auto target = static_cast<std::size_t>(3 * static_cast<long>(faces * kTriangleShare));
    const std::size_t count = meshopt_simplify(
        kept.data(), indices.data(), indices.size(), positions, static_cast<std::size_t>(vertices),
        3 * sizeof(float), target, kSurfaceError, 0, nullptr);
    // The kept faces first, the count shortened: the model's arrays keep their sizes, and the
    // vertices their normals and texture coordinates.
    std::copy(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(count), face);
    model->mesh_facenum[mesh] = static_cast<int>(count / 3);
    recompute_normals(model, mesh);
    done.triangles_after += model->mesh_facenum[mesh];
    ++done.meshes_simplified;
  }
  model->vis.quality.numslices = std::min(model->vis.quality.numslices, 12);
  model->vis.quality.numstacks = std::min(model->vis.quality.numstacks, 6);
  model->vis.quality.numquads = 1;
  return done;
}

mjModel_* lean_copy(const mjModel_* model, int width, int height, LeanDrawing& done) {
  mjModel* copy = mj_copyModel(nullptr, model);
  done = make_lean(copy);
  copy->vis.global.offwidth = width;
  copy->vis.global.offheight = height;
  copy->vis.quality.offsamples = 0;
  return copy;
}

void RenderScale::add_frame(double frame_ms) {
  recent_.push_back(frame_ms);
  if (recent_.size() < kWindow) return;
  std::vector<double> sorted(recent_.begin(), recent_.end());
  std::nth_element(sorted.begin(), sorted.begin() + kWindow / 2, sorted.end());
  const double median = sorted[kWindow / 2];
  recent_.clear();
  if (median > budget_ms_ && step_ + 1 < kSteps.size())
    ++step_;
  else if (median < 0.7 * budget_ms_ && step_ > 0)
    --step_;
}

void RenderScale::reset() {
  step_ = 0;
  recent_.clear();
}

}  // namespace dstudio::render

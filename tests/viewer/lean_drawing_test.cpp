// Drawing while playing (lean_drawing.h): the kitchen's and the hand's meshes simplified in a copy
// that only draws, measured against the full meshes (triangles, surface area, extent, normals);
// the render scale's steps against frame times; and a lean picture against the full one.

#include "dstudio/render/lean_drawing.h"

#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <vector>

#include "dstudio/env/environment.h"
#include "dstudio/render/scene_renderer.h"

namespace dstudio::render {
namespace {

struct ModelDeleter {
  void operator()(mjModel* m) const { mj_deleteModel(m); }
};
using ModelPtr = std::unique_ptr<mjModel, ModelDeleter>;

ModelPtr copy_of(const env::Environment& e) {
  return ModelPtr(mj_copyModel(nullptr, e.model()));
}

// A mesh's area and the extent of the vertices its faces use, from the faces it draws.
struct Surface {
  double area = 0.0;
  std::array<double, 3> lo{1e9, 1e9, 1e9}, hi{-1e9, -1e9, -1e9};
};
Surface surface_of(const mjModel* m, int mesh) {
  Surface s;
  const float* vertex = m->mesh_vert + 3 * static_cast<std::size_t>(m->mesh_vertadr[mesh]);
  const int* face = m->mesh_face + 3 * static_cast<std::size_t>(m->mesh_faceadr[mesh]);
  for (int f = 0; f < m->mesh_facenum[mesh]; ++f) {
    std::array<const float*, 3> v{};
    for (int k = 0; k < 3; ++k) {
      v[k] = vertex + 3 * face[3 * f + k];
      for (int d = 0; d < 3; ++d)
        s.lo[d] = std::min<double>(s.lo[d], v[k][d]), s.hi[d] = std::max<double>(s.hi[d], v[k][d]);
    }
    const double a[3] = {v[1][0] - v[0][0], v[1][1] - v[0][1], v[1][2] - v[0][2]};
    const double b[3] = {v[2][0] - v[0][0], v[2][1] - v[0][1], v[2][2] - v[0][2]};
    const double c[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                         a[0] * b[1] - a[1] * b[0]};
    s.area += 0.5 * std::sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
  }
  return s;
}

TEST(LeanDrawing, TheArmsMeshesKeepTheirShapeWithAFractionOfTheirTriangles) {
  env::Environment kitchen("kitchen-complete-v0");
  const auto full = copy_of(kitchen);
  auto lean = copy_of(kitchen);
  const auto done = make_lean(lean.get());
  long before = 0, after = 0;
  for (int mesh = 0; mesh < full->nmesh; ++mesh) {
    before += full->mesh_facenum[mesh];
    after += lean->mesh_facenum[mesh];
    if (full->mesh_facenum[mesh] <= 2000) {  // small meshes are left as they are
      EXPECT_EQ(lean->mesh_facenum[mesh], full->mesh_facenum[mesh]) << "mesh " << mesh;
      continue;
    }
    EXPECT_LE(lean->mesh_facenum[mesh], full->mesh_facenum[mesh] / 3) << "mesh " << mesh;
    const auto a = surface_of(full.get(), mesh), b = surface_of(lean.get(), mesh);
    double size = 0.0;
    for (int d = 0; d < 3; ++d) size = std::max(size, a.hi[d] - a.lo[d]);
    // Edges collapse onto the mesh's own vertices: the extent stays within the original's, and
    // shrinks by at most the simplifier's error on any side.
    for (int d = 0; d < 3; ++d) {
      EXPECT_GE(b.lo[d], a.lo[d] - 1e-6) << "mesh " << mesh;
      EXPECT_LE(b.hi[d], a.hi[d] + 1e-6) << "mesh " << mesh;
      EXPECT_NEAR(b.hi[d] - b.lo[d], a.hi[d] - a.lo[d], 0.03 * size) << "mesh " << mesh;
    }
    EXPECT_NEAR(b.area, a.area, 0.05 * a.area) << "mesh " << mesh;
    // Every face's corners exist, and the normals are unit vectors.
    const int* face = lean->mesh_face + 3 * static_cast<std::size_t>(lean->mesh_faceadr[mesh]);
    for (int i = 0; i < 3 * lean->mesh_facenum[mesh]; ++i) {
      ASSERT_GE(face[i], 0);
      ASSERT_LT(face[i], lean->mesh_vertnum[mesh]);
      const float* n =
          lean->mesh_normal + 3 * static_cast<std::size_t>(lean->mesh_vertadr[mesh] + face[i]);
      ASSERT_NEAR(std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]), 1.0, 1e-4);
    }
  }
  EXPECT_EQ(done.triangles_before, before);
  EXPECT_EQ(done.triangles_after, after);
  EXPECT_GE(done.meshes_simplified, 7);  // the arm's links
  EXPECT_LT(after * 5, before);
  EXPECT_LE(lean->vis.quality.numslices, 12);
  EXPECT_EQ(lean->vis.quality.numquads, 1);
  // The simulated model is not the drawn copy.
  for (int mesh = 0; mesh < full->nmesh; ++mesh)
    EXPECT_EQ(kitchen.model()->mesh_facenum[mesh], full->mesh_facenum[mesh]);
}

TEST(LeanDrawing, AModelWithoutLargeMeshesKeepsEveryTriangle) {
  env::Environment hopper("hopper");
  auto lean = copy_of(hopper);
  const auto done = make_lean(lean.get());
  EXPECT_EQ(done.meshes_simplified, 0);
  EXPECT_EQ(done.triangles_after, done.triangles_before);
}

TEST(RenderScale, StepsDownWhileFramesExceedTheBudgetAndUpWhenWellWithinIt) {
  RenderScale scale(16.0);
  const auto frames = [&](double ms, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) scale.add_frame(ms);
  };
  EXPECT_EQ(scale.scale(), 1.0);
  frames(20.0, RenderScale::kWindow - 1);
  EXPECT_EQ(scale.scale(), 1.0);  // a decision looks at a whole window of frames
  frames(20.0, 1);
  EXPECT_EQ(scale.scale(), 0.85);
  frames(20.0, 10 * RenderScale::kWindow);
  EXPECT_EQ(scale.scale(), 0.5);  // and no further
  // Within the budget but not well within: it stays.
  frames(15.0, 3 * RenderScale::kWindow);
  EXPECT_EQ(scale.scale(), 0.5);
  frames(10.0, RenderScale::kWindow);
  EXPECT_EQ(scale.scale(), 0.6);
  // The median decides: a few slow frames among fast ones do not step down.
  for (int i = 0; i < 5; ++i) scale.add_frame(40.0);
  frames(10.0, RenderScale::kWindow - 5);
  EXPECT_EQ(scale.scale(), 0.7);
  scale.reset();
  EXPECT_EQ(scale.scale(), 1.0);
  frames(20.0, RenderScale::kWindow - 1);
  EXPECT_EQ(scale.scale(), 1.0);  // the frames before the reset are forgotten
}

// The share of pixels whose colour differs by more than `tolerance` in any channel.
double share_differing(const Image& a, const Image& b, int tolerance) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < a.rgb.size(); i += 3)
    for (int c = 0; c < 3; ++c)
      if (std::abs(int(a.rgb[i + c]) - int(b.rgb[i + c])) > tolerance) {
        ++n;
        break;
      }
  return static_cast<double>(n) / static_cast<double>(a.rgb.size() / 3);
}

TEST(LeanDrawing, APlayingPictureOfTheKitchenLooksLikeTheFullOneAtItsScale) {
  if (!std::getenv("DISPLAY")) GTEST_SKIP() << "no display";
  OffscreenContext context;
  env::Environment kitchen("kitchen-complete-v0");
  std::vector<float> obs(static_cast<std::size_t>(env::task("kitchen-complete-v0").obs_dim));
  kitchen.reset(0, obs);
  SceneRenderer renderer(kitchen.model(), 480, 320,
                         task_camera(env::task("kitchen-complete-v0").camera),
                         RenderQuality::fast());
  const auto full = renderer.render(kitchen.qpos(), kitchen.qvel());
  EXPECT_EQ(renderer.lean_drawing().meshes_simplified, 0);  // made on the first lean frame
  const auto lean = renderer.render_playing(kitchen.qpos(), kitchen.qvel(), {}, 1.0);
  ASSERT_EQ(lean.width, full.width);
  ASSERT_EQ(lean.height, full.height);
  EXPECT_GE(renderer.lean_drawing().meshes_simplified, 7);
  // The same picture but for the arm's facets and the rounder geoms' edges.
  const double differ = share_differing(full, lean, 24);
  EXPECT_GT(differ, 0.0);  // it is the lean copy that drew
  EXPECT_LT(differ, 0.05);
  const auto half = renderer.render_playing(kitchen.qpos(), kitchen.qvel(), {}, 0.5);
  EXPECT_EQ(half.width, 240);
  EXPECT_EQ(half.height, 160);
  // A paused frame after playing is the full picture again, pixel for pixel.
  const auto again = renderer.render(kitchen.qpos(), kitchen.qvel());
  EXPECT_EQ(again.rgb, full.rgb);
}

}  // namespace
}  // namespace dstudio::render

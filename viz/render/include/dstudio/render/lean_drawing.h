#pragma once
/// \file
/// Drawing while playing under software OpenGL. Mesa's llvmpipe transforms every vertex on one
/// thread and fills every pixel on the CPU: the Franka arm's 134,000 triangles alone take longer
/// than a 60 Hz frame. While an episode plays, the viewers therefore draw from a lean copy of the
/// model (its large meshes simplified, its spheres and cylinders with fewer facets) at a scale of
/// the window that a `RenderScale` keeps within the frame budget; a paused picture, a screenshot
/// and a recording are drawn in full. Nothing here touches the simulated model: the copy only
/// draws.

#include <array>
#include <cstddef>
#include <deque>

struct mjModel_;

namespace dstudio::render {

/// What `make_lean` did to a model copy.
struct LeanDrawing {
  int meshes_simplified = 0;
  long triangles_before = 0;  ///< of every mesh
  long triangles_after = 0;
};

/// Makes `model` (a copy that only draws) lean: each mesh of more than 2,000 triangles is
/// simplified (meshoptimizer, edges collapsed while the surface moves by at most 1% of the
/// mesh's size, to no fewer than 4% of its triangles), its faces rewritten in place and its
/// normals made again from them; spheres, capsules and cylinders get 12 slices and 6 stacks,
/// boxes one quad a face. Call before mjr_makeContext, which uploads the meshes.
LeanDrawing make_lean(mjModel_* model);

/// A lean copy of `model` (make_lean) with an offscreen buffer of `width` x `height` and one
/// sample a pixel, ready for mjr_makeContext; `done` says what was simplified. The caller deletes
/// it (mj_deleteModel).
mjModel_* lean_copy(const mjModel_* model, int width, int height, LeanDrawing& done);

/// The scale of the window a playing scene is drawn at: lowered one step when the median of the
/// last frames exceeds the frame budget, raised one when it is under 70% of it. The steps go
/// from 1 down to 0.5 of the window's width and height.
class RenderScale {
 public:
  static constexpr std::array<double, 5> kSteps = {1.0, 0.85, 0.7, 0.6, 0.5};
  /// How many frames each decision looks at.
  static constexpr std::size_t kWindow = 12;

  explicit RenderScale(double budget_ms = 1000.0 / 60.0) : budget_ms_(budget_ms) {}
  [[nodiscard]] double scale() const { return kSteps[step_]; }
  /// The time the last frame took, from the start of one frame to the start of the next.
  void add_frame(double frame_ms);
  /// Back to full size, the frames forgotten (when playing starts again).
  void reset();

 private:
  double budget_ms_;
  std::size_t step_ = 0;
  std::deque<double> recent_;
};

}  // namespace dstudio::render

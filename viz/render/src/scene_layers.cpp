// Ghost bodies, coloured limbs, markers and paths in a MuJoCo scene. See scene_layers.h.

#include "dstudio/render/scene_layers.h"

#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>

namespace dstudio::render {

std::vector<int> actuated_bodies(const mjModel_* m) {
  std::vector<int> out(static_cast<std::size_t>(m->nu), -1);
  for (int i = 0; i < m->nu; ++i)
    if (m->actuator_trntype[i] == mjTRN_JOINT) {
      const int joint = m->actuator_trnid[2 * i];
      if (joint >= 0 && joint < m->njnt) out[static_cast<std::size_t>(i)] = m->jnt_bodyid[joint];
    }
  return out;
}

std::vector<GroundPoint> subsample_path(std::span<const GroundPoint> points, int max_segments) {
  if (points.size() < 2 || max_segments < 1) return {};
  const auto segments = static_cast<long>(points.size()) - 1;
  if (segments <= max_segments) return {points.begin(), points.end()};
  // Evenly spaced indices from the first to the last point, which are always kept.
  std::vector<GroundPoint> out;
  out.reserve(static_cast<std::size_t>(max_segments) + 1);
  for (long i = 0; i <= max_segments; ++i)
    out.push_back(points[static_cast<std::size_t>(i * segments / max_segments)]);
  return out;
}

double limb_colour_scale(const mjModel_* m) {
  double half = 0.0;
  for (int i = 0; i < m->nu; ++i)
    if (m->actuator_ctrllimited[i])
      half =
          std::max(half, 0.5 * (m->actuator_ctrlrange[2 * i + 1] - m->actuator_ctrlrange[2 * i]));
  return half > 0.0 ? half : 1.0;
}

struct SceneLayerPainter::State {
  const mjModel* model = nullptr;
  mjData* data = nullptr;
  std::vector<int> bodies;
};

SceneLayerPainter::SceneLayerPainter(const mjModel_* model) : s_(new State) {
  s_->model = model;
  s_->data = mj_makeData(model);
  s_->bodies = actuated_bodies(model);
}

SceneLayerPainter::~SceneLayerPainter() {
  mj_deleteData(s_->data);
}

namespace {

void set_colour(mjvGeom& g, palette::Rgb c, float alpha) {
  g.rgba[0] = c.r / 255.0f;
  g.rgba[1] = c.g / 255.0f;
  g.rgba[2] = c.b / 255.0f;
  g.rgba[3] = alpha;
}

// Half the thickness of a marker's disc, and how high a path runs over the floor: enough to stay
// clear of the floor's depth, low enough to read as drawn on it.
constexpr double kDiscHalfHeight = 0.01;
constexpr double kPathHeight = 0.02;
// A path is a line of a width in pixels, not a solid: it reads the same over the whole maze and
// close up, and software OpenGL draws 300 lines in a tenth of a millisecond where 300 capsules,
// translucent, took 5 ms a frame.
constexpr double kPathWidth = 3.0;

// The next free geom of the scene, initialised as `type` (null when the scene is full), marked as
// the layers': no object of the model, not selectable, not reflective.
mjvGeom* add_decor(mjvScene* scene, int type, const mjtNum size[3], const mjtNum pos[3],
                   const mjtNum mat[9], const float rgba[4], float emission) {
  if (scene->ngeom >= scene->maxgeom) return nullptr;
  mjvGeom* g = scene->geoms + scene->ngeom++;
  mjv_initGeom(g, type, size, pos, mat, rgba);
  g->objtype = mjOBJ_UNKNOWN;
  g->objid = -1;
  g->category = mjCAT_DECOR;
  g->segid = -1;
  g->reflectance = 0.0f;
  g->emission = emission;  // reads as its colour lit or in shade
  return g;
}

void add_marker(mjvScene* scene, const env::Marker& marker) {
  // A flat cylinder, sized as a model's: radius and half-height.
  const mjtNum size[3] = {marker.radius, kDiscHalfHeight, 0.0};
  const mjtNum pos[3] = {marker.x, marker.y, marker.z};
  const mjtNum mat[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  add_decor(scene, mjGEOM_CYLINDER, size, pos, mat, marker.rgba, 0.3f);
}

// Adds the segments of `points` (already thinned) as lines just over the floor.
void add_path(mjvScene* scene, const std::vector<GroundPoint>& points, palette::Rgb colour,
              float alpha) {
  const float rgba[4] = {colour.r / 255.0f, colour.g / 255.0f, colour.b / 255.0f, alpha};
  for (std::size_t i = 1; i < points.size(); ++i) {
    const auto& a = points[i - 1];
    const auto& b = points[i];
    if (a[0] == b[0] && a[1] == b[1]) continue;  // a connector needs a direction
    mjvGeom* g = add_decor(scene, mjGEOM_LINE, nullptr, nullptr, nullptr, rgba, 0.5f);
    if (!g) return;
    mjv_makeConnector(g, mjGEOM_LINE, kPathWidth, a[0], a[1], kPathHeight, b[0], b[1], kPathHeight);
  }
}

}  // namespace

void SceneLayerPainter::paint(mjvScene_* scene, const mjvOption_* option,
                              const SceneLayers& layers) {
  auto& s = *s_;
  const mjModel* m = s.model;
  if (!layers.limbs.values.empty()) {
    const double scale = layers.limbs.scale > 0.0 ? layers.limbs.scale : 1.0;
    const auto n = std::min(layers.limbs.values.size(), s.bodies.size());
    for (int i = 0; i < scene->ngeom; ++i) {
      auto& g = scene->geoms[i];
      if (g.objtype != mjOBJ_GEOM || g.objid < 0 || g.objid >= m->ngeom) continue;
      const int body = m->geom_bodyid[g.objid];
      if (body == 0) continue;  // the world: floor and walls keep their colours
      // The rest of the body in the colour of no change, so that only the effect is coloured.
      double value = 0.0;
      for (std::size_t a = 0; a < n; ++a)
        if (s.bodies[a] == body) value = std::max(value, std::fabs(layers.limbs.values[a]));
      set_colour(g, palette::effect_colour(value / scale), g.rgba[3]);
    }
  }
  // The markers first: a handful of geoms that must be there.
  for (const auto& marker : layers.markers) add_marker(scene, marker);
  for (const auto& ghost : layers.ghosts) {
    if (ghost.qpos.size() != static_cast<std::size_t>(m->nq)) continue;
    std::copy(ghost.qpos.begin(), ghost.qpos.end(), s.data->qpos);
    mj_kinematics(m, s.data);
    const int before = scene->ngeom;
    mjv_addGeoms(m, s.data, option, nullptr, mjCAT_DYNAMIC, scene);
    for (int i = before; i < scene->ngeom; ++i) {
      auto& g = scene->geoms[i];
      set_colour(g, ghost.colour, ghost.alpha);
      g.segid = -1;  // not selectable: the body on screen is the main run's
      g.reflectance = 0.0f;
    }
  }
  // The paths share kMaxPathSegments and take no more than the room left in the scene.
  int drawn_paths = 0;
  for (const auto& path : layers.paths) drawn_paths += path.points.size() >= 2 ? 1 : 0;
  if (drawn_paths == 0) return;
  const int room = std::min(kMaxPathSegments, scene->maxgeom - scene->ngeom);
  const int each = room / drawn_paths;
  for (const auto& path : layers.paths)
    if (path.points.size() >= 2)
      add_path(scene, subsample_path(path.points, each), path.colour, path.alpha);
}

}  // namespace dstudio::render

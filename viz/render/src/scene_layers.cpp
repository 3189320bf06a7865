// Ghost bodies and coloured limbs in a MuJoCo scene. See scene_layers.h.

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
}

}  // namespace dstudio::render

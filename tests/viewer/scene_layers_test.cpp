// Ghost bodies and coloured limbs drawn into a MuJoCo scene (scene_layers.h), checked on pixels:
// an offscreen render of the hopper under a known intervention, each limb segmented by colouring
// it alone, and its colour in the picture compared with the action change on its joint. Then the
// task's markers and the paths: the geoms they add to the scene, its budget, the cameras of the
// tasks, and the goal's disc on a rendered maze.

#include "dstudio/render/scene_layers.h"

#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <optional>

#include "dstudio/env/antmaze.h"
#include "dstudio/env/environment.h"
#include "dstudio/models/episode_player.h"
#include "dstudio/render/scene_renderer.h"

namespace dstudio::render {
namespace {

namespace fs = std::filesystem;

const fs::path kCheckpoint =
    fs::path(DSTUDIO_RESOURCES_DIR) / "checkpoints" / "hopper-medium-expert-dt.pt";

// The pixels where two renders differ.
std::vector<std::size_t> differing(const Image& a, const Image& b) {
  std::vector<std::size_t> out;
  for (std::size_t p = 0; p * 3 < a.rgb.size(); ++p)
    if (a.rgb[3 * p] != b.rgb[3 * p] || a.rgb[3 * p + 1] != b.rgb[3 * p + 1] ||
        a.rgb[3 * p + 2] != b.rgb[3 * p + 2])
      out.push_back(p);
  return out;
}

std::array<double, 3> mean_colour(const Image& image, const std::vector<std::size_t>& pixels) {
  std::array<double, 3> m{0, 0, 0};
  for (const auto p : pixels)
    for (int c = 0; c < 3; ++c) m[c] += image.rgb[3 * p + c];
  for (auto& v : m) v /= std::max<std::size_t>(1, pixels.size());
  return m;
}

struct Scene {
  OffscreenContext context;
  models::EpisodePlayer player{kCheckpoint};
  std::unique_ptr<SceneRenderer> renderer;
  Scene() {
    renderer = std::make_unique<SceneRenderer>(player.physics_model().get(), 480, 360,
                                               CameraView{.distance = 2.5, .lookat_z = 0.8},
                                               RenderQuality::fast());
  }
};

// Zeroing the last block's MLP from step 0: at step 30 each joint's action moves by a different
// amount; each limb takes the colour of its own change, the rest of the body the colour of none.
TEST(SceneLayers, EachLimbTakesTheColourOfItsJointsActionChange) {
  Scene s;
  s.player.reset(3, 3600.0);
  s.player.branch(0, 3600.0, models::ModalityZeroing::None, {"mlp:3=zero"});
  for (int i = 0; i < 31; ++i) ASSERT_TRUE(s.player.step());
  const auto& f = *s.player.frames()[30];
  ASSERT_EQ(f.action_without.size(), 3u);
  std::vector<double> change(3);
  for (std::size_t j = 0; j < 3; ++j) change[j] = f.action[j] - f.action_without[j];
  const double scale = 1.0;  // the action's range: |change| of 1 is half of it
  const auto& qpos = f.physics.qpos;
  const auto& qvel = f.physics.qvel;
  const auto with = [&](std::vector<double> values) {
    return s.renderer->render(qpos, qvel, SceneLayers{{}, {std::move(values), scale}});
  };

  // The hopper's three motors turn the thigh, leg and foot joints, which move those bodies.
  const auto* model = s.player.physics_model().get();
  const auto bodies = actuated_bodies(model);
  ASSERT_EQ(bodies.size(), 3u);
  EXPECT_STREQ(mj_id2name(model, mjOBJ_BODY, bodies[0]), "thigh");
  EXPECT_STREQ(mj_id2name(model, mjOBJ_BODY, bodies[1]), "leg");
  EXPECT_STREQ(mj_id2name(model, mjOBJ_BODY, bodies[2]), "foot");

  const auto plain = s.renderer->render(qpos, qvel);
  const auto uncoloured = with({0.0, 0.0, 0.0});
  const auto effect = with(change);
  // Each limb, found by colouring it alone at the full scale.
  std::vector<std::vector<std::size_t>> limb(3);
  std::vector<bool> any(plain.rgb.size() / 3, false);
  for (std::size_t j = 0; j < 3; ++j) {
    std::vector<double> one(3, 0.0);
    one[j] = scale;
    limb[j] = differing(uncoloured, with(one));
    ASSERT_GT(limb[j].size(), 100u) << "limb " << j << " is on screen";
    for (const auto p : limb[j]) any[p] = true;
    // Its pixels in the picture are those of the limb coloured alone by its own change.
    std::vector<double> own(3, 0.0);
    own[j] = change[j];
    const auto alone = with(own);
    for (const auto p : limb[j])
      ASSERT_TRUE(std::equal(effect.rgb.begin() + 3 * p, effect.rgb.begin() + 3 * p + 3,
                             alone.rgb.begin() + 3 * p))
          << "limb " << j << ", pixel " << p;
  }
  // The rest of the body takes the colour of no change; the floor and the sky stay as they were.
  const auto body = differing(plain, uncoloured);
  for (const auto p : body) any[p] = true;
  EXPECT_LT(body.size(), plain.rgb.size() / 3 / 8) << "the body alone, not the world";
  for (const auto p : differing(plain, effect)) ASSERT_TRUE(any[p]) << "pixel " << p;

  if (const char* dir = std::getenv("DSTUDIO_SCREENSHOT_DIR")) {
    fs::create_directories(dir);
    write_png(fs::path(dir) / "limb-colours.png", effect);
  }
  // The larger the change, the further from grey towards red: green falls against red.
  std::vector<std::size_t> order(3);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](auto a, auto b) { return std::fabs(change[a]) < std::fabs(change[b]); });
  ASSERT_GT(std::fabs(change[order[2]]) - std::fabs(change[order[0]]), 0.1)
      << "the intervention moves the joints by different amounts";
  const auto green_over_red = [&](std::size_t j) {
    const auto m = mean_colour(effect, limb[j]);
    return m[1] / std::max(1.0, m[0]);
  };
  EXPECT_GT(green_over_red(order[0]), green_over_red(order[2]))
      << "changes " << change[0] << " " << change[1] << " " << change[2];
  // A limb at the full scale is red: its red at least twice its green.
  const auto full = mean_colour(with({scale, scale, scale}), limb[order[2]]);
  EXPECT_GT(full[0], 2.0 * full[1]);
}

TEST(SceneLayers, AGhostIsDrawnInItsColourWhereItsBodyIsAndNowhereElse) {
  Scene s;
  s.player.reset(5, 3600.0);
  const auto& f = *s.player.frames()[0];
  auto moved = f.physics.qpos;
  moved[0] += 0.9;  // a metre ahead, along x
  const auto plain = s.renderer->render(f.physics.qpos, f.physics.qvel);
  const auto ghosted = s.renderer->render(f.physics.qpos, f.physics.qvel,
                                          SceneLayers{{Ghost{moved, palette::kVermillion}}, {}});
  const auto changed = differing(plain, ghosted);
  ASSERT_GT(changed.size(), 300u);
  const auto m = mean_colour(ghosted, changed), before = mean_colour(plain, changed);
  EXPECT_GT(m[0] - m[2], before[0] - before[2] + 20.0) << "tinted towards vermillion";
  // The ghost is to the right of the body (the camera looks along y at the hopper's side).
  double x = 0.0;
  for (const auto p : changed) x += static_cast<double>(p % 480);
  EXPECT_GT(x / static_cast<double>(changed.size()), 240.0);
  // One whose state does not fit the model is left out.
  const auto unfit = s.renderer->render(f.physics.qpos, f.physics.qvel,
                                        SceneLayers{{Ghost{{0.0, 1.0}, palette::kSkyBlue}}, {}});
  EXPECT_TRUE(differing(plain, unfit).empty());
}

// CIE 1976 colour difference of two sRGB colours (D65): about 2.3 is a just noticeable difference.
double delta_e(palette::Rgb a, palette::Rgb b) {
  const auto lab = [](palette::Rgb c) {
    const auto linear = [](std::uint8_t v) {
      const double u = v / 255.0;
      return u <= 0.04045 ? u / 12.92 : std::pow((u + 0.055) / 1.055, 2.4);
    };
    const double r = linear(c.r), g = linear(c.g), bl = linear(c.b);
    const double x = (0.4124 * r + 0.3576 * g + 0.1805 * bl) / 0.95047,
                 y = 0.2126 * r + 0.7152 * g + 0.0722 * bl,
                 z = (0.0193 * r + 0.1192 * g + 0.9505 * bl) / 1.08883;
    const auto f = [](double t) { return t > 0.008856 ? std::cbrt(t) : 7.787 * t + 16.0 / 116.0; };
    return std::array<double, 3>{116.0 * f(y) - 16.0, 500.0 * (f(x) - f(y)), 200.0 * (f(y) - f(z))};
  };
  const auto p = lab(a), q = lab(b);
  return std::hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]);
}

// A ghost is told apart from what it is seen with: every body's own colours in the three tasks,
// the limb colours of an intervention's effect, the timeline's return-to-go, return so far and
// main run, and the other ghosts. The vermilion of the first fork was 7 from the effect scale's
// orange-red and 33 from the return so far's orange.
TEST(SceneLayers, GhostsAreColouredApartFromTheBodiesTheLimbColoursAndTheTraces) {
  constexpr double kApart = 25.0;
  std::vector<std::pair<std::string, palette::Rgb>> seen;
  for (const char* task : {"hopper", "walker2d", "halfcheetah"}) {
    const auto model = env::load_model(env::task(task));
    for (int g = 0; g < model->ngeom; ++g) {
      if (model->geom_bodyid[g] == 0) continue;  // the floor
      const int mat = model->geom_matid[g];
      const float* rgba = mat >= 0 ? model->mat_rgba + 4 * mat : model->geom_rgba + 4 * g;
      const auto byte = [](float v) { return static_cast<std::uint8_t>(std::lround(255.0f * v)); };
      seen.emplace_back(std::string(task) + " geom " + std::to_string(g),
                        palette::Rgb{byte(rgba[0]), byte(rgba[1]), byte(rgba[2])});
    }
  }
  for (int i = 0; i <= 50; ++i)
    seen.emplace_back("limb colour at " + std::to_string(i * 2) + "%",
                      palette::effect_colour(i / 50.0));
  for (const auto& t : palette::kEpisodeTraces)
    if (t.name != palette::kEntropy.name)  // not drawn beside the forks
      seen.emplace_back(std::string(t.name), t.colour);
  seen.emplace_back("main run", palette::kMainRun);
  for (std::size_t b = 0; b < palette::kBranches.size(); ++b) {
    const auto& ghost = palette::kBranches[b];
    for (const auto& [what, colour] : seen)
      EXPECT_GE(delta_e(ghost.colour, colour), kApart)
          << "the " << ghost.colour_word << " ghost and " << what;
    seen.emplace_back(std::string(ghost.colour_word) + " ghost", ghost.colour);
  }
}

// ---------------------------------------------------------------------------------------------
// Markers and paths: AntMaze's goal and waypoint as discs, the way the ant went as a line.

// A scene of the umaze's model (walls, floor, ant at its start), filled as the viewers fill it.
struct MazeScene {
  env::ModelPtr model = env::load_model(env::task("antmaze-umaze-v2"));
  mjData* data = mj_makeData(model.get());
  mjvScene scene{};
  mjvOption option{};
  mjvCamera camera{};
  explicit MazeScene(int maxgeom = 2000) {
    mjv_defaultScene(&scene);
    mjv_defaultOption(&option);
    mjv_defaultCamera(&camera);
    mjv_makeScene(model.get(), &scene, maxgeom);
    mj_forward(model.get(), data);
    mjv_updateScene(model.get(), data, &option, nullptr, &camera, mjCAT_ALL, &scene);
  }
  ~MazeScene() {
    mjv_freeScene(&scene);
    mj_deleteData(data);
  }
  MazeScene(const MazeScene&) = delete;
  MazeScene& operator=(const MazeScene&) = delete;
};

std::vector<GroundPoint> spiral(int points) {
  std::vector<GroundPoint> out;
  for (int i = 0; i < points; ++i) {
    const double t = 0.01 * i;
    out.push_back({t * std::cos(3.0 * t), t * std::sin(3.0 * t)});
  }
  return out;
}

TEST(SceneLayers, MarkersAreDiscsAndAPathIsSegmentsOnTheFloor) {
  MazeScene m;
  SceneLayerPainter painter(m.model.get());
  const int before = m.scene.ngeom;
  ASSERT_GT(before, 10) << "the walls, the floor and the ant";
  // What the umaze's task marks with its goal at the top left of the U, the ant at its start.
  const auto& task = env::task("antmaze-umaze-v2");
  const std::vector<double> qpos(m.data->qpos, m.data->qpos + m.model->nq), goal{0.6, 8.3};
  const auto markers = task.markers(qpos, goal);
  ASSERT_EQ(markers.size(), 2u);
  EXPECT_EQ(markers[0].label, "goal");
  EXPECT_EQ(markers[1].label, "waypoint");
  SceneLayers layers;
  layers.markers = markers;
  layers.paths.push_back({{{0.0, 0.0}, {1.0, 0.0}, {1.0, 2.0}, {3.0, 2.0}}, {10, 20, 30}, 0.5f});
  painter.paint(&m.scene, &m.option, layers);
  ASSERT_EQ(m.scene.ngeom, before + 2 + 3);
  for (std::size_t i = 0; i < markers.size(); ++i) {
    const auto& g = m.scene.geoms[before + static_cast<int>(i)];
    EXPECT_EQ(g.type, mjGEOM_CYLINDER);
    // A scene's geoms are in single precision.
    EXPECT_NEAR(g.pos[0], markers[i].x, 1e-6);
    EXPECT_NEAR(g.pos[1], markers[i].y, 1e-6);
    EXPECT_NEAR(g.size[0], markers[i].radius, 1e-6);
    EXPECT_NEAR(g.size[1], markers[i].radius, 1e-6);
    EXPECT_LT(g.size[2], 0.05) << "flat";
    for (int c = 0; c < 4; ++c) EXPECT_EQ(g.rgba[c], markers[i].rgba[c]);
    EXPECT_EQ(g.segid, -1) << "not selectable";
  }
  EXPECT_NEAR(m.scene.geoms[before].size[0], env::antmaze::kGoalRadius, 1e-6);
  // Each segment runs from one point to the next (a line starts at its position and runs its
  // length along its frame's z axis), just over the floor, in the path's colour.
  const double ends[4][2] = {{0, 0}, {1, 0}, {1, 2}, {3, 2}};
  for (int i = 0; i < 3; ++i) {
    const auto& g = m.scene.geoms[before + 2 + i];
    EXPECT_EQ(g.type, mjGEOM_LINE);
    EXPECT_NEAR(g.pos[0], ends[i][0], 1e-6);
    EXPECT_NEAR(g.pos[1], ends[i][1], 1e-6);
    EXPECT_GT(g.pos[2], 0.0);
    EXPECT_LT(g.pos[2], 0.1);
    EXPECT_NEAR(g.pos[0] + g.size[2] * g.mat[2], ends[i + 1][0], 1e-5);
    EXPECT_NEAR(g.pos[1] + g.size[2] * g.mat[5], ends[i + 1][1], 1e-5);
    EXPECT_NEAR(g.pos[2] + g.size[2] * g.mat[8], g.pos[2], 1e-5) << "level with the floor";
    EXPECT_NEAR(g.rgba[0], 10 / 255.0, 1e-6);
    EXPECT_NEAR(g.rgba[3], 0.5, 1e-6);
  }
}

TEST(SceneLayers, PathsShareTheSegmentBudgetAndNeverOverflowTheScene) {
  // A thousand-step path is thinned to the budget, its first and last points kept.
  const auto long_path = spiral(1001);
  const auto thin = subsample_path(long_path, kMaxPathSegments);
  ASSERT_EQ(thin.size(), static_cast<std::size_t>(kMaxPathSegments) + 1);
  EXPECT_EQ(thin.front(), long_path.front());
  EXPECT_EQ(thin.back(), long_path.back());
  EXPECT_EQ(subsample_path(spiral(50), kMaxPathSegments).size(), 50u) << "short paths stay whole";
  EXPECT_TRUE(subsample_path(spiral(1), kMaxPathSegments).empty());

  {
    MazeScene m;
    SceneLayerPainter painter(m.model.get());
    const int before = m.scene.ngeom;
    SceneLayers one;
    one.paths.push_back({long_path});
    painter.paint(&m.scene, &m.option, one);
    EXPECT_EQ(m.scene.ngeom, before + kMaxPathSegments);
    // The first segment starts where the body started, the last ends where it is now.
    const auto& first = m.scene.geoms[before];
    EXPECT_NEAR(first.pos[0], long_path.front()[0], 1e-6);
    EXPECT_NEAR(first.pos[1], long_path.front()[1], 1e-6);
    const auto& last = m.scene.geoms[m.scene.ngeom - 1];
    EXPECT_NEAR(last.pos[0] + last.size[2] * last.mat[2], long_path.back()[0], 1e-5);
    EXPECT_NEAR(last.pos[1] + last.size[2] * last.mat[5], long_path.back()[1], 1e-5);
  }
  {
    // The main run and two forks: the same budget, shared.
    MazeScene m;
    SceneLayerPainter painter(m.model.get());
    const int before = m.scene.ngeom;
    SceneLayers three;
    for (int i = 0; i < 3; ++i) three.paths.push_back({long_path});
    painter.paint(&m.scene, &m.option, three);
    EXPECT_EQ(m.scene.ngeom, before + kMaxPathSegments / 3 * 3);
  }
  {
    // A scene with room for a few geoms only: markers and ghosts first, the path what is left,
    // and nothing written past maxgeom.
    MazeScene probe;
    MazeScene m(probe.scene.ngeom + 30);
    SceneLayerPainter painter(m.model.get());
    SceneLayers full;
    full.markers.resize(2);
    std::vector<double> qpos(m.data->qpos, m.data->qpos + m.model->nq);
    full.ghosts.push_back({qpos, palette::kBluishGreen});
    full.paths.push_back({long_path});
    painter.paint(&m.scene, &m.option, full);
    EXPECT_EQ(m.scene.ngeom, m.scene.maxgeom);
    EXPECT_EQ(m.scene.geoms[probe.scene.ngeom].type, mjGEOM_CYLINDER) << "the markers first";
  }
}

// Where a point of the world lands in a picture taken with `view` (MuJoCo's free camera: looking
// along azimuth and elevation at the point looked at from `distance`, vertical field of view
// `fovy` degrees), in pixels from the top left; nothing when it is behind the camera.
std::optional<std::array<double, 2>> project(const CameraView& view, double fovy, int width,
                                             int height, std::array<double, 3> p) {
  const double az = view.azimuth * M_PI / 180.0, el = view.elevation * M_PI / 180.0;
  const std::array<double, 3> forward{std::cos(el) * std::cos(az), std::cos(el) * std::sin(az),
                                      std::sin(el)};
  const std::array<double, 3> look{view.lookat_x, view.lookat_y, view.lookat_z};
  std::array<double, 3> eye{}, d{};
  for (int k = 0; k < 3; ++k) eye[k] = look[k] - view.distance * forward[k];
  for (int k = 0; k < 3; ++k) d[k] = p[k] - eye[k];
  const double n = std::hypot(forward[0], forward[1]);
  const std::array<double, 3> right{forward[1] / n, -forward[0] / n, 0.0};
  const std::array<double, 3> up{right[1] * forward[2] - right[2] * forward[1],
                                 right[2] * forward[0] - right[0] * forward[2],
                                 right[0] * forward[1] - right[1] * forward[0]};
  const auto dot = [](const auto& a, const auto& b) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
  };
  const double depth = dot(d, forward);
  if (depth <= 0.0) return std::nullopt;
  const double t = std::tan(0.5 * fovy * M_PI / 180.0);
  const double aspect = static_cast<double>(width) / height;
  const double x = dot(d, right) / depth / (t * aspect), y = dot(d, up) / depth / t;
  return std::array<double, 2>{0.5 * (x + 1.0) * width, 0.5 * (1.0 - y) * height};
}

// Every antmaze task starts on a free camera over its maze that shows all of it (the outer
// walls' top corners inside decision-viewer's scene at 1280 x 800 and a 4:3 one); the
// locomotion tasks keep the camera that follows the torso, as before.
TEST(SceneLayers, EachMazeIsSeenWholeFromItsCameraAndTheRunnersAreFollowedAsBefore) {
  for (const char* name : {"hopper", "walker2d", "halfcheetah"}) {
    EXPECT_EQ(task_camera(env::task(name).camera), viewer_camera()) << name;
    // Tracking switches as it always did: on follows the torso from where the camera is, off
    // leaves the camera there.
    auto moved = viewer_camera();
    moved.distance = 7.0;
    const auto off = tracking_camera(env::task(name).camera, moved, false);
    EXPECT_EQ(off.track_body, -1);
    EXPECT_EQ(off.distance, 7.0);
    EXPECT_EQ(tracking_camera(env::task(name).camera, off, true).track_body, 1);
  }
  for (const auto& name : env::task_names()) {
    const auto& task = env::task(name);
    if (task.family != "antmaze") continue;
    const auto view = task_camera(task.camera);
    EXPECT_EQ(view.track_body, -1) << name;
    const auto model = env::load_model(task);
    double lo_x = 1e9, hi_x = -1e9, lo_y = 1e9, hi_y = -1e9, top = 0.0;
    for (int g = 0; g < model->ngeom; ++g) {
      if (model->geom_type[g] != mjGEOM_BOX) continue;
      lo_x = std::min(lo_x, model->geom_pos[3 * g] - model->geom_size[3 * g]);
      hi_x = std::max(hi_x, model->geom_pos[3 * g] + model->geom_size[3 * g]);
      lo_y = std::min(lo_y, model->geom_pos[3 * g + 1] - model->geom_size[3 * g + 1]);
      hi_y = std::max(hi_y, model->geom_pos[3 * g + 1] + model->geom_size[3 * g + 1]);
      top = std::max(top, model->geom_pos[3 * g + 2] + model->geom_size[3 * g + 2]);
    }
    ASSERT_LT(lo_x, hi_x) << name << " has walls";
    for (const auto& [w, h] : {std::pair{870, 624}, std::pair{640, 480}})
      for (const double x : {lo_x, hi_x})
        for (const double y : {lo_y, hi_y})
          for (const double z : {0.0, top}) {
            const auto at = project(view, model->vis.global.fovy, w, h, {x, y, z});
            ASSERT_TRUE(at.has_value()) << name;
            EXPECT_GE((*at)[0], 0.0) << name << " corner " << x << ", " << y << ", " << z;
            EXPECT_LE((*at)[0], w) << name << " corner " << x << ", " << y << ", " << z;
            EXPECT_GE((*at)[1], 0.0) << name << " corner " << x << ", " << y << ", " << z;
            EXPECT_LE((*at)[1], h) << name << " corner " << x << ", " << y << ", " << z;
          }
    // Tracking comes down to the ant, and off goes back over the maze.
    const auto follow = tracking_camera(task.camera, view, true);
    EXPECT_EQ(follow.track_body, 1);
    EXPECT_LT(follow.distance, view.distance / 2);
    EXPECT_EQ(tracking_camera(task.camera, follow, false), view);
  }
}

// The hand and the kitchen are fixed workspaces seen from their task's camera: tracking asked
// for keeps the view where it is, untracked (a maze's ant is still followed, above).
TEST(SceneLayers, TheHandAndTheKitchenKeepTheirViewWhenTrackingIsAskedFor) {
  for (const char* name : {"pen", "door", "hammer", "relocate", "kitchen-complete-v0",
                           "kitchen-partial-v0", "kitchen-mixed-v0"}) {
    const auto& camera = env::task(name).camera;
    EXPECT_FALSE(camera.track) << name;
    EXPECT_FALSE(camera.followable) << name;
    const auto view = task_camera(camera);
    EXPECT_EQ(view.track_body, -1) << name;
    EXPECT_EQ(tracking_camera(camera, view, true), view) << name;
    // Orbited by the mouse first: the view the user made stays too.
    auto orbited = view;
    orbited.azimuth += 30.0;
    orbited.distance *= 0.8;
    EXPECT_EQ(tracking_camera(camera, orbited, true), orbited) << name;
    EXPECT_EQ(tracking_camera(camera, orbited, false), orbited) << name;
  }
  for (const auto& name : env::task_names())
    if (env::task(name).family == "antmaze") {
      EXPECT_TRUE(env::task(name).camera.followable) << name;
    }
}

// Drawn: the goal's disc in its colour where the goal is seen, and the floor's colour there
// without it; the path changes the picture only near where it runs.
TEST(SceneLayers, TheGoalIsDrawnInItsColourWhereTheCameraSeesIt) {
  OffscreenContext context;
  const auto& task = env::task("antmaze-umaze-v2");
  const auto model = env::load_model(task);
  constexpr int kWidth = 640, kHeight = 480;
  const auto view = task_camera(task.camera);
  SceneRenderer renderer(model.get(), kWidth, kHeight, view, RenderQuality::fast());
  std::vector<double> qpos(model->qpos0, model->qpos0 + model->nq),
      qvel(static_cast<std::size_t>(model->nv), 0.0);
  const std::vector<double> goal{0.7, 8.4};  // the U's other end, where the evaluation goal is
  const auto markers = task.markers(qpos, goal);
  ASSERT_FALSE(markers.empty());
  SceneLayers layers;
  layers.markers = {markers.front()};
  const auto plain = renderer.render(qpos, qvel);
  const auto marked = renderer.render(qpos, qvel, layers);
  const auto at = project(view, model->vis.global.fovy, kWidth, kHeight, {goal[0], goal[1], 0.0});
  ASSERT_TRUE(at.has_value());
  const auto px = static_cast<std::size_t>((*at)[0]), py = static_cast<std::size_t>((*at)[1]);
  ASSERT_LT(px, static_cast<std::size_t>(kWidth));
  ASSERT_LT(py, static_cast<std::size_t>(kHeight));
  const auto colour = [](const Image& image, std::size_t x, std::size_t y) {
    const auto* p = &image.rgb[3 * (y * static_cast<std::size_t>(image.width) + x)];
    return std::array<int, 3>{p[0], p[1], p[2]};
  };
  const auto seen = colour(marked, px, py), floor = colour(plain, px, py);
  // The goal is red (0.95, 0.3, 0.2) over a blue-grey floor: red leads where the disc is.
  EXPECT_GT(seen[0], seen[1] + 60) << "disc " << seen[0] << " " << seen[1] << " " << seen[2];
  EXPECT_GT(seen[0], seen[2] + 60);
  EXPECT_LT(floor[0], floor[2] + 20) << "the floor is not red there by itself";
  // The disc is where the goal is: the pixels it changed centre on the projected goal.
  const auto changed = differing(plain, marked);
  ASSERT_GT(changed.size(), 20u);
  double cx = 0.0, cy = 0.0;
  for (const auto p : changed)
    cx += static_cast<double>(p % kWidth), cy += static_cast<double>(p / kWidth);
  cx /= static_cast<double>(changed.size()), cy /= static_cast<double>(changed.size());
  EXPECT_NEAR(cx, (*at)[0], 4.0);
  EXPECT_NEAR(cy, (*at)[1], 4.0);

  // A path along the U from the start to the goal: drawn where it runs and nowhere else.
  layers.paths.push_back({{{0.0, 0.0}, {8.0, 0.0}, {8.0, 8.4}, {0.7, 8.4}}});
  const auto walked = renderer.render(qpos, qvel, layers);
  const auto line = differing(marked, walked);
  EXPECT_GT(line.size(), 200u) << "the path is seen";
  std::vector<std::array<double, 2>> corners;
  for (const auto& p : layers.paths.front().points) {
    const auto c = project(view, model->vis.global.fovy, kWidth, kHeight, {p[0], p[1], 0.0});
    ASSERT_TRUE(c.has_value());
    corners.push_back(*c);
  }
  const auto distance_to_path = [&corners](double x, double y) {
    double best = 1e9;
    for (std::size_t i = 1; i < corners.size(); ++i) {
      const auto& a = corners[i - 1];
      const auto& b = corners[i];
      const double dx = b[0] - a[0], dy = b[1] - a[1];
      const double t =
          std::clamp(((x - a[0]) * dx + (y - a[1]) * dy) / (dx * dx + dy * dy), 0.0, 1.0);
      best = std::min(best, std::hypot(x - a[0] - t * dx, y - a[1] - t * dy));
    }
    return best;
  };
  for (const auto p : line)
    ASSERT_LT(distance_to_path(static_cast<double>(p % kWidth), static_cast<double>(p / kWidth)),
              4.0)
        << "pixel " << p;
  if (const char* dir = std::getenv("DSTUDIO_SCREENSHOT_DIR")) {
    fs::create_directories(dir);
    write_png(fs::path(dir) / "maze-goal-and-path.png", walked);
  }
}

}  // namespace
}  // namespace dstudio::render

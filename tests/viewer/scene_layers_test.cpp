// Ghost bodies and coloured limbs drawn into a MuJoCo scene (scene_layers.h), checked on pixels:
// an offscreen render of the hopper under a known intervention, each limb segmented by colouring
// it alone, and its colour in the picture compared with the action change on its joint.

#include "dstudio/render/scene_layers.h"

#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <numeric>

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

}  // namespace
}  // namespace dstudio::render

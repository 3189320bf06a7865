#pragma once
/// \file
/// What both viewers draw into a MuJoCo scene beside the body on screen: the ghost bodies of
/// counterfactual branches (one model, one mjData per branch, their geoms added to the one scene,
/// translucent in the branch's colour), limbs coloured by a value per actuator (the effect of
/// an intervention on each joint's action), the task's markers (AntMaze's goal and the navigator's
/// waypoint, as flat discs on the floor) and the paths the bodies took over the ground (lines of
/// connector geoms). Both act on a scene mjv_updateScene has just filled, before it is
/// rendered, so the studio's Viewer tab (through SceneRenderer) and decision-viewer (its own
/// window) draw the same picture.

#include <array>
#include <memory>
#include <span>
#include <vector>

#include "dstudio/common/palette.h"
#include "dstudio/env/environment.h"

struct mjModel_;
struct mjvScene_;
struct mjvOption_;

namespace dstudio::render {

/// A branch's body at one step.
struct Ghost {
  std::vector<double> qpos;
  palette::Rgb colour;
  float alpha = 0.35f;
};

/// Limbs coloured by `values[i]`, one per actuator: the geoms of the body actuator i's joint moves
/// take palette::effect_colour(|values[i]| / scale), the body's other geoms the colour of no
/// change (the floor and the world keep theirs). Empty values: nothing coloured.
struct LimbColours {
  std::vector<double> values;
  double scale = 1.0;
};

/// A point on the ground (x, y), in world coordinates.
using GroundPoint = std::array<double, 2>;

/// The way a body went over the ground, drawn as a line three pixels wide just above the floor.
struct GroundPath {
  std::vector<GroundPoint> points;  ///< in the order visited
  palette::Rgb colour{235, 235, 235};
  float alpha = 1.0f;  ///< below 1 MuJoCo draws it again in its pass for translucent geoms
};

/// The most segments the painter draws for all paths of a frame together: a 1,000-step episode is
/// subsampled to this, so a maze with its walls, four ghosts and their paths stays inside the
/// scene's geoms (maxgeom 2000 in both viewers).
inline constexpr int kMaxPathSegments = 300;

/// `points` thinned to at most `max_segments` segments (max_segments + 1 points) at evenly spaced
/// indices, the first and the last kept; unchanged when it has no more. Nothing for fewer than
/// two points or no segments allowed.
std::vector<GroundPoint> subsample_path(std::span<const GroundPoint> points, int max_segments);

/// What is added to a scene beyond the body on screen.
struct SceneLayers {
  std::vector<Ghost> ghosts;
  LimbColours limbs;
  /// Drawn as flat translucent discs of their radius at (x, y, z) in their colour.
  std::vector<env::Marker> markers;
  /// The main run's path first, then the forks' in their colours.
  std::vector<GroundPath> paths;
  [[nodiscard]] bool empty() const {
    return ghosts.empty() && limbs.values.empty() && markers.empty() && paths.empty();
  }
};

/// Per actuator, the body its joint moves (-1 for an actuator not on a joint).
std::vector<int> actuated_bodies(const mjModel_* model);

/// The full scale of the limb colours for a model: half the widest control range of its
/// actuators (1 for actions in [-1, 1]; 1 when none is limited). A property of the body, not of
/// the changes seen so far, so that a colour means the same change in every run and episode.
double limb_colour_scale(const mjModel_* model);

/// Adds layers to scenes of one model. Keeps one mjData for the ghosts' poses.
class SceneLayerPainter {
 public:
  explicit SceneLayerPainter(const mjModel_* model);
  ~SceneLayerPainter();
  SceneLayerPainter(const SceneLayerPainter&) = delete;
  SceneLayerPainter& operator=(const SceneLayerPainter&) = delete;

  /// Colours the limbs of the body already in `scene` (its geoms so far), then adds each ghost's
  /// moving geoms (the floor and other static geoms are not repeated), the markers' discs and the
  /// paths' segments (kMaxPathSegments at most, shared between the paths). A ghost whose qpos does
  /// not fit the model is left out. Nothing is added beyond the scene's maxgeom: the markers come
  /// before the ghosts, and the paths take only the room left. The model must be the one the
  /// scene was updated with.
  void paint(mjvScene_* scene, const mjvOption_* option, const SceneLayers& layers);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace dstudio::render

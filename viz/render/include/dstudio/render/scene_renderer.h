#pragma once
/// \file
/// Drawing a MuJoCo scene to pixels. `SceneRenderer` needs only a current OpenGL context, so the
/// same code draws into the studio's viewer widget and offscreen; `OffscreenContext` provides a
/// context without a visible window (a hidden GLFW window: under a headless X server such as
/// xvfb-run on machines without a screen).

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "dstudio/common/error.h"
#include "dstudio/render/lean_drawing.h"
#include "dstudio/render/scene_layers.h"

struct mjModel_;
struct mjData_;

namespace dstudio::render {

/// No display to create a context on, or an OpenGL failure.
class RenderError : public Error {
 public:
  using Error::Error;
};

/// An OpenGL context with no visible window, current on the creating thread.
class OffscreenContext {
 public:
  OffscreenContext();
  ~OffscreenContext();
  OffscreenContext(const OffscreenContext&) = delete;
  OffscreenContext& operator=(const OffscreenContext&) = delete;

 private:
  void* window_ = nullptr;
};

/// An RGB image, rows top to bottom.
struct Image {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgb;
};

/// Where the camera looks from. The default follows the torso from the side, as Gym's viewer.
struct CameraView {
  int track_body = 1;  ///< body the camera follows; -1 for a free camera
  double distance = 4.0;
  double azimuth = 90.0;
  double elevation = -10.0;
  double lookat_z = 1.0;  ///< height of the point looked at
  /// Where a free camera looks along the ground (a tracking one looks at its body).
  double lookat_x = 0.0, lookat_y = 0.0;
  bool operator==(const CameraView&) const = default;
};

/// The viewers' camera (the studio's Viewer tab and decision-viewer): CameraView's, looking 1.4 m
/// above the ground instead of 1 m, so that the body and its ghosts stand in the lower part of
/// the picture and the text over its top left covers none of them.
inline CameraView viewer_camera() {
  CameraView view;
  view.lookat_z = 1.4;
  return view;
}

/// Where the viewers' camera starts for a task (env::CameraDefault): viewer_camera() when the
/// task's camera tracks its body (the locomotion tasks), else a free camera at the task's own
/// place (AntMaze: high over the maze, looking down at its middle). "Reset camera" returns here.
inline CameraView task_camera(const env::CameraDefault& task) {
  if (task.track) return viewer_camera();
  CameraView view;
  view.track_body = -1;
  view.distance = task.distance;
  view.azimuth = task.azimuth;
  view.elevation = task.elevation;
  view.lookat_x = task.lookat[0];
  view.lookat_y = task.lookat[1];
  view.lookat_z = task.lookat[2];
  return view;
}

/// The camera once tracking is switched on (`on`) or off from `now`. For a task whose camera
/// tracks, today's behaviour: the camera follows body 1 from where it is, or stays where it is.
/// For a task seen from a free camera (a maze), following the body from the whole maze's
/// distance would show little of it: tracking on comes down over it at the body's scale (7 m,
/// steeply enough, 65 degrees down, that the walls hide little of a corridor), and off goes back
/// to the task's own view. A task whose camera cannot follow (env::CameraDefault::followable: the
/// hand, the kitchen) keeps `now`, untracked.
inline CameraView tracking_camera(const env::CameraDefault& task, const CameraView& now, bool on) {
  CameraView view = now;
  if (task.track) {
    view.track_body = on ? 1 : -1;
    return view;
  }
  if (!task.followable) {
    view.track_body = -1;
    return view;
  }
  if (!on) return task_camera(task);
  view.track_body = 1;
  view.distance = 7.0;
  view.elevation = -65.0;
  view.lookat_z = 0.5;
  return view;
}

/// How much the picture costs. Software OpenGL (Mesa's llvmpipe) spends most of a frame on
/// multisampling, shadows and the floor's reflection; `fast()` drops them.
struct RenderQuality {
  int samples = 4;  ///< multisamples of the offscreen buffer (0: none)
  bool shadows = true;
  bool reflections = true;
  static RenderQuality fast() { return {0, false, false}; }
};

/// Renders scenes of one model into an offscreen buffer of a fixed size.
class SceneRenderer {
 public:
  /// Needs a current OpenGL context. The model is copied (the offscreen size lives in it).
  SceneRenderer(const mjModel_* model, int width, int height, CameraView view = {},
                RenderQuality quality = {});
  ~SceneRenderer();
  SceneRenderer(const SceneRenderer&) = delete;
  SceneRenderer& operator=(const SceneRenderer&) = delete;

  /// Draws `data` (which must belong to the model) and reads the pixels back.
  Image render(const mjData_* data);
  /// The same for a state given by its generalised positions and velocities.
  Image render(std::span<const double> qpos, std::span<const double> qvel);
  /// The same with ghost bodies and coloured limbs drawn in (scene_layers.h).
  Image render(std::span<const double> qpos, std::span<const double> qvel,
               const SceneLayers& layers);

  /// While an episode plays (lean_drawing.h): the same picture drawn from the lean copy of the
  /// model at `scale` (0.1 to 1) of the buffer's width and height, read back at that size for
  /// the caller to stretch. The lean copy is made on the first call.
  Image render_playing(std::span<const double> qpos, std::span<const double> qvel,
                       const SceneLayers& layers, double scale);
  /// What the lean copy's meshes were simplified to (zeros before the first render_playing).
  [[nodiscard]] LeanDrawing lean_drawing() const;

  [[nodiscard]] int width() const;
  [[nodiscard]] int height() const;
  /// The camera; changes apply from the next frame.
  [[nodiscard]] CameraView view() const;
  void set_view(const CameraView& view);
  /// Edits the renderer's copy of the model, for a task that keeps an episode's values there (the
  /// pen's target: EnvironmentDefinition::configure_model); applies from the next frame.
  void configure_model(const std::function<void(mjModel_*)>& edit);

 private:
  Image draw(std::span<const double> qpos, std::span<const double> qvel, const SceneLayers& layers,
             bool lean, double scale);
  struct State;
  std::unique_ptr<State> state_;
};

/// The OpenGL renderer of the current context (e.g. "llvmpipe (LLVM 15.0.6, 256 bits)").
std::string current_renderer();
/// Whether the current context draws in software (Mesa's llvmpipe or softpipe).
bool software_renderer();

/// Writes `image` as PNG; throws RenderError on failure.
void write_png(const std::filesystem::path& path, const Image& image);
/// Places `frames` side by side in rows of `columns` (a film strip for quick inspection).
Image contact_sheet(const std::vector<Image>& frames, int columns);

}  // namespace dstudio::render

#pragma once
/// \file
/// The 3-D view of a MuJoCo scene: MuJoCo draws the state it is given (render/scene_renderer.h)
/// in an offscreen OpenGL context of the view's own, and the view shows that picture with a text
/// overlay and a camera that follows the torso or is dragged and zoomed with the mouse. It draws a
/// copy of a state and never touches a simulation, so physics can run on another thread. Where Qt
/// has no OpenGL (the offscreen platform), it says so in place of the scene.

#include <QColor>
#include <QImage>
#include <QStringList>
#include <QWidget>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "dstudio/render/scene_layers.h"
#include "dstudio/render/scene_renderer.h"

struct mjModel_;

namespace dstudio::viz {

class SceneCanvas;

class SceneView : public QWidget {
  Q_OBJECT
 public:
  explicit SceneView(QWidget* parent = nullptr);
  ~SceneView() override;

  /// Whether this Qt platform can give the view an OpenGL context.
  static bool openGlAvailable();

  /// The model whose states will be drawn (shared; it must not change while shown).
  void setPhysicsModel(std::shared_ptr<const mjModel_> model);
  /// The state to draw next (copied); schedules a repaint.
  void setState(std::span<const double> qpos, std::span<const double> qvel);
  /// For a task that keeps an episode's values in its model (EnvironmentDefinition::
  /// configure_model: the pen's target, the door's frame), how to write them into the drawn
  /// model; empty for any other task.
  void setModelConfiguration(std::function<void(mjModel_*, std::span<const double>)> configure);
  /// The episode's values (PhysicsState::task_state) drawn with the next state.
  void setTaskState(std::span<const double> values);
  /// Ghost bodies and limb colours drawn with the next state (render/scene_layers.h); empty
  /// layers draw the body alone. A legend of the limb colours is drawn when they are on.
  void setLayers(render::SceneLayers layers);
  /// The layers as last set (also where no scene is drawn).
  [[nodiscard]] const render::SceneLayers& layers() const { return layers_; }
  /// Lines of text drawn over the scene's top-left corner, each in its colour when one is given
  /// (`colours[i]`, else the overlay's own).
  void setOverlay(const QStringList& lines, const std::vector<QColor>& colours = {});
  /// The overlay's lines and their colours, as last set (also where no scene is drawn).
  [[nodiscard]] const QStringList& overlay() const { return overlay_; }
  [[nodiscard]] const std::vector<QColor>& overlayColours() const { return overlay_colours_; }
  /// A small line plot drawn under the text (e.g. the attention entropy of the last steps), its
  /// last value marked; empty values hide it. NaNs are gaps.
  void setOverlayPlot(const QString& label, std::vector<double> values);
  /// The caption over that plot: the label and the newest value that is a number ("—" while
  /// there is none). The step on screen has often not acted yet, so its own value is NaN.
  [[nodiscard]] static QString overlayPlotCaption(const QString& label,
                                                  const std::vector<double>& values);
  /// The task's camera (env::CameraDefault): where "reset camera" goes and what tracking does
  /// (render::tracking_camera). Sets the camera only through resetCamera(). By default, a task
  /// whose camera tracks its body.
  void setTaskCamera(const env::CameraDefault& camera);
  /// The task's own camera (render::task_camera): following the torso, or over a whole maze.
  void resetCamera();
  /// Follow the torso (body 1) along the ground, or leave the camera where it is (for a task seen
  /// from a free camera, a maze: come down behind the body, or go back over the maze).
  void setTracking(bool on);
  [[nodiscard]] bool tracking() const;
  /// Whether an episode is playing: under software OpenGL the scene is then drawn lean, at a
  /// scale that keeps it within its share of a 60 Hz frame (render/lean_drawing.h), and in full
  /// again once paused.
  void setPlaying(bool on);
  /// The camera as it is now (tracking, distance, angles, the point looked at), and set again:
  /// what a recording's recipe keeps to draw the clip from the same place.
  [[nodiscard]] render::CameraView cameraView() const;
  void setCameraView(const render::CameraView& view);

  /// The milliseconds the last frame took (scene, read-back and overlay). Multisampling, shadows
  /// and the floor's reflection are on, except on software OpenGL where they cost most of a frame.
  [[nodiscard]] double lastFrameMilliseconds() const;
  [[nodiscard]] long framesDrawn() const;
  /// Draws what is set once more (framesDrawn() then grows): for a caller that needs a frame of
  /// the state as it is now.
  void redraw();
  /// The scale of the view's size the last frame was drawn at (1 unless drawn lean).
  [[nodiscard]] double lastScale() const;
  /// Whether the scene is drawn (else the view shows why not).
  [[nodiscard]] bool hasScene() const { return canvas_ != nullptr; }
  /// The last frame drawn, overlay included (null before the first).
  [[nodiscard]] QImage lastFrame() const;

 signals:
  /// The first frame after a model was set, or a failure to draw.
  void frameDrawn();
  /// Every frame drawn, overlay included (for recording).
  void framePainted(const QImage& frame);
  void renderFailed(const QString& message);

 private:
  SceneCanvas* canvas_ = nullptr;
  QStringList overlay_;
  std::vector<QColor> overlay_colours_;
  render::SceneLayers layers_;
};

}  // namespace dstudio::viz

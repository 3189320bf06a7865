// The MuJoCo scene, drawn offscreen in an OpenGL context of its own and shown as an image. See
// scene_view.h.

#include "dstudio/viz/scene_view.h"

#include <mujoco/mujoco.h>

#include <QElapsedTimer>
#include <QGuiApplication>
#include <QLabel>
#include <QMouseEvent>
#include <QOffscreenSurface>
#include <QOpenGLContext>
#include <QPainter>
#include <QPainterPath>
#include <QVBoxLayout>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

#include "dstudio/render/lean_drawing.h"
#include "dstudio/render/scene_renderer.h"
#include "dstudio/viz/number_text.h"

namespace dstudio::viz {

/// The scene's surface: a plain widget. MuJoCo draws into the offscreen buffer of an OpenGL
/// context that belongs to this canvas alone and shares nothing with the window; the pixels are
/// read back, the overlay painted on them, and the picture drawn as an image.
///
/// Not a QOpenGLWidget with MuJoCo drawing in the widget's context: Qt 6 composes such a widget's
/// texture into the window through its RHI, in a context sharing objects with the widget's, and
/// after MuJoCo's raw GL had run there (it binds framebuffer 0 and sets a window's draw and read
/// buffers, not Qt's redirected framebuffer) that composition showed black on screen under Mesa,
/// while the widget's framebuffer, which grab() reads, held the scene. A context of its own keeps
/// MuJoCo's state away from everything Qt draws with, and the window stays a raster one.
class SceneCanvas : public QWidget {
 public:
  explicit SceneCanvas(SceneView* owner) : QWidget(owner), owner_(owner) {
    setMinimumSize(240, 180);
    setMouseTracking(false);
    setAttribute(Qt::WA_OpaquePaintEvent);  // every pixel is painted: no background first
    base_point_size_ = std::max(1.0, font().pointSizeF());
  }
  ~SceneCanvas() override { releaseRenderer(); }

  void setModel(std::shared_ptr<const mjModel_> model) {
    model_ = std::move(model);
    qpos_.clear();
    qvel_.clear();
    first_frame_ = true;
    releaseRenderer();
    update();
  }
  void setState(std::span<const double> qpos, std::span<const double> qvel) {
    qpos_.assign(qpos.begin(), qpos.end());
    qvel_.assign(qvel.begin(), qvel.end());
    update();
  }
  void setModelConfiguration(std::function<void(mjModel_*, std::span<const double>)> configure) {
    configure_ = std::move(configure);
    configured_.clear();
    update();
  }
  void setTaskState(std::span<const double> values) {
    if (std::equal(values.begin(), values.end(), task_state_.begin(), task_state_.end())) return;
    task_state_.assign(values.begin(), values.end());
    update();
  }
  void setOverlay(const QStringList& lines, const std::vector<QColor>& colours) {
    overlay_ = lines;
    overlay_colours_ = colours;
    update();
  }
  void setLayers(render::SceneLayers layers) {
    layers_ = std::move(layers);
    update();
  }
  void setOverlayPlot(const QString& label, std::vector<double> values) {
    plot_label_ = label;
    plot_values_ = std::move(values);
    update();
  }
  void setPlaying(bool on) {
    if (on == playing_) return;
    playing_ = on;
    render_scale_.reset();
    update();
  }
  void setTracking(bool on) { setView(render::tracking_camera(task_camera_, view(), on)); }
  void setTaskCamera(const env::CameraDefault& camera) { task_camera_ = camera; }
  void resetCamera() { setView(render::task_camera(task_camera_)); }
  // The renderer's camera once there is one: it knows where a tracking camera left the point
  // looked at, which a free camera keeps.
  [[nodiscard]] render::CameraView view() const { return renderer_ ? renderer_->view() : view_; }
  void setView(const render::CameraView& view) {
    view_ = view;
    if (renderer_) renderer_->set_view(view_);
    update();
  }
  [[nodiscard]] bool tracking() const { return view_.track_body >= 0; }
  double last_ms = 0.0;
  double last_scale = 1.0;
  long frames = 0;
  QImage last_frame_;

 protected:
  void paintEvent(QPaintEvent*) override {
    QElapsedTimer timer;
    timer.start();
    const qreal ratio = devicePixelRatioF();
    const int w = std::max(1, static_cast<int>(width() * ratio)),
              h = std::max(1, static_cast<int>(height() * ratio));
    QImage frame;
    QString failure;
    if (model_ && !qpos_.empty()) {
      try {
        makeContextCurrent();
        if (!renderer_ || renderer_->width() != w || renderer_->height() != h) {
          view_ = view();  // a resized view keeps its camera
          renderer_.reset();
          renderer_ = std::make_unique<render::SceneRenderer>(
              model_.get(), w, h, view_,
              high_quality_ ? render::RenderQuality{} : render::RenderQuality::fast());
          configured_.clear();
        }
        // The episode's values into the drawn model, once each time they change.
        if (configure_ && !task_state_.empty() && configured_ != task_state_) {
          renderer_->configure_model([this](mjModel_* m) { configure_(m, task_state_); });
          configured_ = task_state_;
        }
        // Lean while playing under software OpenGL (render/lean_drawing.h); the full picture
        // for pauses, recordings and exports.
        const bool lean = playing_ && !high_quality_;
        last_scale = lean ? render_scale_.scale() : 1.0;
        const auto image =
            lean ? renderer_->render_playing(qpos_, qvel_, layers_, render_scale_.scale())
                 : renderer_->render(qpos_, qvel_, layers_);
        frame = QImage(image.rgb.data(), image.width, image.height, image.width * 3,
                       QImage::Format_RGB888)
                    .convertToFormat(QImage::Format_RGB32);
        if (frame.width() != w || frame.height() != h)
          frame = frame.scaled(w, h, Qt::IgnoreAspectRatio, Qt::SmoothTransformation);
      } catch (const std::exception& e) {
        failure = QString::fromUtf8(e.what());
        renderer_.reset();
      }
      if (context_) context_->doneCurrent();
    }
    // The frame is composed in memory (scene, then overlay) and drawn in one piece: the same
    // picture is kept for lastFrame() and exports.
    QImage composed = frame.isNull() ? QImage(w, h, QImage::Format_RGB32) : frame;
    composed.setDevicePixelRatio(ratio);
    {
      QPainter painter(&composed);
      if (frame.isNull()) {
        painter.fillRect(rect(), QColor(0x20, 0x24, 0x2b));
        painter.setPen(Qt::lightGray);
        painter.drawText(rect().adjusted(12, 12, -12, -12), Qt::AlignCenter | Qt::TextWordWrap,
                         failure.isEmpty()
                             ? tr("No episode yet: open a checkpoint to watch its policy act.")
                             : failure);
      }
      if (!overlay_.isEmpty()) drawOverlay(painter);
    }
    last_frame_ = composed;
    QPainter painter(this);
    painter.drawImage(QPointF(0, 0), composed);
    painter.end();
    if (!frame.isNull()) {
      ++frames;
      last_ms = static_cast<double>(timer.nsecsElapsed()) / 1e6;
      if (playing_ && !high_quality_) render_scale_.add_frame(last_ms);
      emit owner_->framePainted(last_frame_);
      if (first_frame_) {
        first_frame_ = false;
        emit owner_->frameDrawn();
      }
    } else if (!failure.isEmpty()) {
      emit owner_->renderFailed(failure);
    }
  }

  void drawOverlay(QPainter& painter) const {
    QFont font(QStringLiteral("DejaVu Sans Mono"));
    font.setStyleHint(QFont::Monospace);
    // Grows with the window's type (presentation mode), from 9.5 pt at the type it started with;
    // but keeps to the scene's top left, its text over at most a third of its height and 60% of
    // its width: smaller type where it would cover more, and a line too long for that cut with an
    // ellipsis. The body and the ghosts stand below (render::viewer_camera).
    const double now = this->font().pointSizeF();
    const double largest = now > 0 ? 9.5 * now / base_point_size_ : 9.5;
    const int max_width = static_cast<int>(0.6 * width()) - 16;
    const int max_height = static_cast<int>(0.32 * height()) - 10;
    const auto longest_of = [this](const QFontMetrics& m) {
      int longest = 0;
      for (const auto& line : overlay_) longest = std::max(longest, m.horizontalAdvance(line));
      return longest;
    };
    double size = largest;
    for (; size > 8.0; size -= 0.5) {
      font.setPointSizeF(size);
      const QFontMetrics m(font);
      if (m.lineSpacing() * static_cast<int>(overlay_.size()) <= max_height &&
          longest_of(m) <= max_width)
        break;
    }
    font.setPointSizeF(std::max(size, 8.0));
    painter.setFont(font);
    const QFontMetrics metrics(font);
    QStringList lines;
    for (const auto& line : overlay_)
      lines << metrics.elidedText(line, Qt::ElideRight, std::max(40, max_width));
    int longest = 0;
    for (const auto& line : lines) longest = std::max(longest, metrics.horizontalAdvance(line));
    const QRect box(8, 8, longest + 16,
                    metrics.lineSpacing() * static_cast<int>(lines.size()) + 10);
    painter.fillRect(box, QColor(0, 0, 0, 150));
    for (int i = 0; i < lines.size(); ++i) {
      const auto at = static_cast<std::size_t>(i);
      painter.setPen(at < overlay_colours_.size() && overlay_colours_[at].isValid()
                         ? overlay_colours_[at]
                         : QColor(Qt::white));
      painter.drawText(box.left() + 8, box.top() + 5 + metrics.ascent() + i * metrics.lineSpacing(),
                       lines[i]);
    }
    int below = box.bottom() + 6;
    // The legend and the plot below it where there is room for them above the bodies.
    const int room = static_cast<int>(0.42 * height());
    if (!layers_.limbs.values.empty() &&
        below + metrics.lineSpacing() * 3 + metrics.height() <= room)
      below = drawLimbLegend(painter, box.left(), below, metrics);
    const int plot_height = std::max(40, metrics.lineSpacing() * 4);
    if (below + plot_height <= room)
      drawOverlayPlot(painter,
                      QRect(box.left(), below,
                            std::max(box.width(), 15 * metrics.averageCharWidth()), plot_height),
                      metrics);
  }

  // The legend of the limb colours: the scale from no change to its full value. Returns the y
  // below it.
  int drawLimbLegend(QPainter& painter, int x, int y, const QFontMetrics& metrics) const {
    const int w = std::max(
                  120, metrics.horizontalAdvance(tr("limb colour: action change on its joint"))),
              bar = metrics.height() * 2 / 3;
    const QRect box(x, y, w + 16, metrics.lineSpacing() * 2 + bar + 12);
    painter.fillRect(box, QColor(0, 0, 0, 150));
    painter.setPen(Qt::white);
    painter.drawText(x + 8, y + 4 + metrics.ascent(),
                     tr("limb colour: action change on its joint"));
    const int top = y + 6 + metrics.lineSpacing();
    constexpr int kSteps = 32;
    for (int i = 0; i < kSteps; ++i) {
      const auto c = palette::effect_colour((i + 0.5) / kSteps);
      painter.fillRect(QRect(x + 8 + w * i / kSteps, top, w / kSteps + 1, bar),
                       QColor(c.r, c.g, c.b));
    }
    const int text_y = top + bar + 2 + metrics.ascent();
    painter.drawText(x + 8, text_y, QStringLiteral("0"));
    const QString full = fixed_text(layers_.limbs.scale, layers_.limbs.scale < 0.1 ? 2 : 1);
    painter.drawText(x + 8 + w - metrics.horizontalAdvance(full), text_y, full);
    return box.bottom() + 6;
  }

  // The plot inside the scene: its values scaled to the box, the newest one marked.
  void drawOverlayPlot(QPainter& painter, const QRect& box, const QFontMetrics& metrics) const {
    double lo = 1e300, hi = -1e300;
    for (double v : plot_values_)
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
    if (plot_values_.size() < 2 || lo > hi) return;
    if (hi - lo < 1e-9) hi = lo + 1.0;
    painter.fillRect(box, QColor(0, 0, 0, 150));
    painter.setPen(Qt::white);
    painter.drawText(box.left() + 8, box.top() + 4 + metrics.ascent(),
                     SceneView::overlayPlotCaption(plot_label_, plot_values_));
    const QRectF area(box.left() + 8, box.top() + 8 + metrics.height(), box.width() - 16,
                      box.height() - 14 - metrics.height());
    const auto n = static_cast<double>(plot_values_.size() - 1);
    QPainterPath path;
    bool pen_down = false;
    QPointF last;
    for (std::size_t i = 0; i < plot_values_.size(); ++i) {
      const double v = plot_values_[i];
      if (!std::isfinite(v)) {
        pen_down = false;
        continue;
      }
      const QPointF p(area.left() + area.width() * static_cast<double>(i) / n,
                      area.bottom() - area.height() * (v - lo) / (hi - lo));
      if (pen_down)
        path.lineTo(p);
      else
        path.moveTo(p);
      pen_down = true;
      last = p;
    }
    painter.setRenderHint(QPainter::Antialiasing);
    // White on the dark box: the colours are the ghosts' and the traces', and this is neither.
    painter.setPen(QPen(QColor(235, 235, 235), 1.5));
    painter.drawPath(path);
    painter.setBrush(Qt::white);
    painter.setPen(Qt::NoPen);
    if (pen_down) painter.drawEllipse(last, 3.0, 3.0);
  }

  void mousePressEvent(QMouseEvent* event) override { last_mouse_ = event->position(); }
  void mouseMoveEvent(QMouseEvent* event) override {
    const QPointF d = event->position() - last_mouse_;
    last_mouse_ = event->position();
    auto v = view();
    v.azimuth -= d.x() * 0.4;
    v.elevation = std::clamp(v.elevation - d.y() * 0.4, -89.0, 89.0);
    setView(v);
  }
  void wheelEvent(QWheelEvent* event) override {
    auto v = view();
    v.distance = std::clamp(v.distance * std::pow(0.999, event->angleDelta().y()), 0.5, 40.0);
    setView(v);
  }

 private:
  // The canvas's own context, made on first use; throws render::RenderError when there is none.
  void makeContextCurrent() {
    if (!context_) {
      surface_ = std::make_unique<QOffscreenSurface>();
      surface_->create();
      auto context = std::make_unique<QOpenGLContext>();
      context->setShareContext(nullptr);
      if (!context->create())
        throw render::RenderError("cannot create an OpenGL context for the scene");
      context_ = std::move(context);
    }
    if (!context_->makeCurrent(surface_.get()))
      throw render::RenderError("cannot make the scene's OpenGL context current");
    if (!checked_renderer_) {
      // Software OpenGL spends most of a frame on multisampling, shadows and reflections.
      high_quality_ = !render::software_renderer();
      checked_renderer_ = true;
    }
  }
  // MuJoCo's buffers and textures are freed in the context that made them.
  void releaseRenderer() {
    if (!renderer_) return;
    if (context_ && context_->makeCurrent(surface_.get())) {
      renderer_.reset();
      context_->doneCurrent();
    } else {
      (void)renderer_.release();  // no context to free them in: GL calls without one are undefined
    }
  }

  SceneView* owner_;
  std::unique_ptr<QOffscreenSurface> surface_;
  std::unique_ptr<QOpenGLContext> context_;
  bool checked_renderer_ = false;
  double base_point_size_ = 1.0;
  std::shared_ptr<const mjModel_> model_;
  std::unique_ptr<render::SceneRenderer> renderer_;
  render::CameraView view_ = render::viewer_camera();
  env::CameraDefault task_camera_;  // the locomotion tasks' by default: tracking
  std::vector<double> qpos_, qvel_;
  std::function<void(mjModel_*, std::span<const double>)> configure_;  // the task's, if any
  std::vector<double> task_state_, configured_;  // to draw, and last written into the model
  QStringList overlay_;
  std::vector<QColor> overlay_colours_;
  render::SceneLayers layers_;
  QString plot_label_;
  std::vector<double> plot_values_;
  QPointF last_mouse_;
  bool first_frame_ = true;
  bool high_quality_ = true;
  bool playing_ = false;
  // The scene's share of a 60 Hz frame: the timeline, the attention map and the rest of the
  // window draw in the remainder.
  render::RenderScale render_scale_{12.0};
};

SceneView::SceneView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  if (openGlAvailable()) {
    canvas_ = new SceneCanvas(this);
    layout->addWidget(canvas_);
  } else {
    auto* label = new QLabel(
        tr("The 3-D view needs OpenGL, which this window does not have (Qt platform \"%1\").\n"
           "Start the studio on a desktop, or under xvfb-run on a machine without a screen.\n"
           "The timeline, plots and attention map below still follow the episode.")
            .arg(QGuiApplication::platformName()));
    label->setAlignment(Qt::AlignCenter);
    label->setWordWrap(true);
    label->setMinimumSize(240, 180);
    label->setStyleSheet(QStringLiteral("background: #20242b; color: #d0d0d0; padding: 12px;"));
    layout->addWidget(label);
  }
}

SceneView::~SceneView() = default;

bool SceneView::openGlAvailable() {
  static const bool available = [] {
    const QString platform = QGuiApplication::platformName();
    if (platform == QLatin1String("offscreen") || platform == QLatin1String("minimal"))
      return false;
    QOpenGLContext context;
    return context.create();
  }();
  return available;
}

void SceneView::setPhysicsModel(std::shared_ptr<const mjModel_> model) {
  if (canvas_) canvas_->setModel(std::move(model));
}
void SceneView::setState(std::span<const double> qpos, std::span<const double> qvel) {
  if (canvas_) canvas_->setState(qpos, qvel);
}
void SceneView::setModelConfiguration(
    std::function<void(mjModel_*, std::span<const double>)> configure) {
  if (canvas_) canvas_->setModelConfiguration(std::move(configure));
}
void SceneView::setTaskState(std::span<const double> values) {
  if (canvas_) canvas_->setTaskState(values);
}
void SceneView::setOverlay(const QStringList& lines, const std::vector<QColor>& colours) {
  overlay_ = lines;
  overlay_colours_ = colours;
  if (canvas_) canvas_->setOverlay(lines, colours);
}
void SceneView::setLayers(render::SceneLayers layers) {
  layers_ = layers;
  if (canvas_) canvas_->setLayers(std::move(layers));
}
QString SceneView::overlayPlotCaption(const QString& label, const std::vector<double>& values) {
  const auto newest =
      std::find_if(values.rbegin(), values.rend(), [](double v) { return std::isfinite(v); });
  return QStringLiteral("%1  %2").arg(
      label, newest == values.rend() ? missing_text() : fixed_text(*newest, 2));
}

void SceneView::setOverlayPlot(const QString& label, std::vector<double> values) {
  if (canvas_) canvas_->setOverlayPlot(label, std::move(values));
}
void SceneView::setTaskCamera(const env::CameraDefault& camera) {
  if (canvas_) canvas_->setTaskCamera(camera);
}
void SceneView::resetCamera() {
  if (canvas_) canvas_->resetCamera();
}
void SceneView::setTracking(bool on) {
  if (canvas_) canvas_->setTracking(on);
}
void SceneView::setPlaying(bool on) {
  if (canvas_) canvas_->setPlaying(on);
}
bool SceneView::tracking() const {
  return canvas_ ? canvas_->tracking() : true;
}
render::CameraView SceneView::cameraView() const {
  return canvas_ ? canvas_->view() : render::CameraView{};
}
void SceneView::setCameraView(const render::CameraView& view) {
  if (canvas_) canvas_->setView(view);
}
double SceneView::lastFrameMilliseconds() const {
  return canvas_ ? canvas_->last_ms : 0.0;
}
long SceneView::framesDrawn() const {
  return canvas_ ? canvas_->frames : 0;
}
void SceneView::redraw() {
  if (canvas_) canvas_->update();
}
double SceneView::lastScale() const {
  return canvas_ ? canvas_->last_scale : 1.0;
}
QImage SceneView::lastFrame() const {
  return canvas_ ? canvas_->last_frame_ : QImage();
}

}  // namespace dstudio::viz

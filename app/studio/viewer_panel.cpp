// The live viewer panel. See viewer_panel.h.

// Index of this file:
//   [SECTION] Construction
//   [SECTION] Recording
//   [SECTION] The player
//   [SECTION] Showing a frame
//   [SECTION] The live viewer
//   [SECTION] Workspace settings

#include "viewer_panel.h"

#include <qcustomplot.h>

#include <QActionGroup>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QCursor>
#include <QDateTime>
#include <QDir>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHoverEvent>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QPointer>
#include <QProcess>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QShortcut>
#include <QSlider>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStyle>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "dstudio/behaviour/mlp_policy.h"
#include "dstudio/common/error.h"
#include "dstudio/common/palette.h"
#include "dstudio/env/environment.h"
#include "dstudio/env/episode_end.h"
#include "dstudio/viz/attention_map_view.h"
#include "dstudio/viz/episode_timeline.h"
#include "dstudio/viz/export_dialog.h"
#include "dstudio/viz/figures.h"
#include "dstudio/viz/number_text.h"
#include "dstudio/viz/scene_view.h"
#include "dstudio/viz/target_chooser.h"
#include "pane_splitter.h"
#include "video_writer.h"
#include "view_recipes.h"

namespace dstudio::studio {
namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] Construction

// While playing, the attention map and the timeline are redrawn at most this often (their plots
// cost milliseconds each, which software OpenGL needs for the scene); when paused, at once.
constexpr qint64 kMapIntervalMs = 250;
constexpr qint64 kTimelineIntervalMs = 100;
// Steps of entropy plotted inside the 3-D view.
constexpr std::size_t kOverlaySteps = 150;

// The widgets of `area` under the mouse drawn as at rest for as long as it lives: a recording's
// frame shows no hover highlight (a button, a tab, a field the hand rests on), as its recipe draws
// the panel again without a mouse. Their hover comes back, where the mouse still is, afterwards.
class HoverAway {
 public:
  explicit HoverAway(QWidget* area) {
    if (area->testAttribute(Qt::WA_UnderMouse)) hovered_.emplace_back(area);
    for (auto* w : area->findChildren<QWidget*>())
      if (w->testAttribute(Qt::WA_UnderMouse)) hovered_.emplace_back(w);
    // Styles read the attribute; tab bars, sliders and spin boxes keep their own hovered part,
    // which a hover's end clears.
    const QPointF away(-1.0, -1.0);
    for (const auto& w : hovered_) {
      w->setAttribute(Qt::WA_UnderMouse, false);
      QHoverEvent leave(QEvent::HoverLeave, away, away, away);
      QCoreApplication::sendEvent(w, &leave);
    }
  }
  ~HoverAway() {
    for (const auto& w : hovered_) {
      if (!w) continue;
      w->setAttribute(Qt::WA_UnderMouse, true);
      const QPointF at = w->mapFromGlobal(QCursor::pos()), global = QCursor::pos();
      QHoverEvent enter(QEvent::HoverEnter, at, global, QPointF(-1.0, -1.0));
      QCoreApplication::sendEvent(w, &enter);
    }
  }
  HoverAway(const HoverAway&) = delete;
  HoverAway& operator=(const HoverAway&) = delete;

 private:
  std::vector<QPointer<QWidget>> hovered_;
};

// Whether the keyboard's focus is on a widget inside `area` (its highlight, a text cursor).
bool focus_inside(const QWidget* area) {
  const QWidget* f = QApplication::focusWidget();
  return f && f != area && area->isAncestorOf(f);
}

// The step readout always keeps room for two lines: its text changes every frame, and a line
// more or less would resize the 3-D view above it while playing (and a recording's frames).
class ReadoutLabel : public QLabel {
 public:
  int heightForWidth(int width) const override {
    return std::max(QLabel::heightForWidth(width), twoLines());
  }
  QSize minimumSizeHint() const override {
    return QLabel::minimumSizeHint().expandedTo({0, twoLines()});
  }
  QSize sizeHint() const override { return QLabel::sizeHint().expandedTo({0, twoLines()}); }

 private:
  int twoLines() const {
    return 2 * fontMetrics().lineSpacing() + contentsMargins().top() + contentsMargins().bottom();
  }
};

// Tabs as large as the page shown, not as the largest page: QTabWidget asks every page for its
// size. The head grid and the Forks tab's buttons would otherwise hold the Conditioning tab as
// tall, pushing the scene into a strip in large type, and as wide, past a laptop's screen beside
// a lesson.
class PageSizedTabs : public QTabWidget {
 public:
  QSize sizeHint() const override {
    return fit(QTabWidget::sizeHint(), [](const QWidget* w) { return w->sizeHint(); });
  }
  QSize minimumSizeHint() const override {
    return fit(QTabWidget::minimumSizeHint(),
               [](const QWidget* w) { return w->minimumSizeHint().expandedTo(w->minimumSize()); });
  }

 private:
  // `all` with the largest page's part of it replaced by the current page's.
  template <typename Of>
  QSize fit(QSize all, const Of& of) const {
    const QWidget* shown = currentWidget();
    if (!shown) return all;
    QSize largest(0, 0);
    for (int i = 0; i < count(); ++i) largest = largest.expandedTo(of(widget(i)));
    const QSize page = of(shown);
    return {
        std::max(tabBar()->minimumSizeHint().width(), all.width() - largest.width() + page.width()),
        all.height() - largest.height() + page.height()};
  }
};

}  // namespace

ViewerPanel::ViewerPanel(QWidget* parent)
    : QWidget(parent),
      scene_(new viz::SceneView),
      attention_(new viz::AttentionMapView),
      timeline_(new viz::EpisodeTimeline),
      readout_(new ReadoutLabel),
      map_caption_(new QLabel),
      restart_(new QPushButton),
      back_(new QPushButton),
      play_(new QPushButton),
      forward_(new QPushButton),
      speed_(new QComboBox),
      rate_(new QLabel),
      slider_(new QSlider(Qt::Horizontal)),
      position_(new QLabel),
      track_(new QCheckBox(tr("Track torso"))),
      target_(new QDoubleSpinBox),
      target_from_(new viz::TargetChooser(target_)),
      zeroing_(new QComboBox),
      seed_(new QSpinBox),
      timer_(new QTimer(this)),
      record_(new QPushButton(tr("Record"))),
      record_options_(new QPushButton),
      live_viewer_(new QPushButton(tr("Open in Live Viewer"))) {
  attention_->setComparable(false);
  setUpRecordButtons();
  setUpTransport();
  setUpConditioning();
  QHBoxLayout* transport = buildTransportRow();
  QWidget* conditioning = buildConditioningTab();

  readout_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  readout_->setWordWrap(true);
  // Wrapped (more lines when narrower) rather than hold the panel wide.
  readout_->setMinimumWidth(readout_->fontMetrics().averageCharWidth() * 24);

  QWidget* left = buildPlayerColumn(transport, conditioning);

  auto* right = new QWidget;
  auto* right_layout = new QVBoxLayout(right);
  right_layout->setContentsMargins(0, 0, 0, 0);
  map_caption_->setWordWrap(true);
  right_layout->addWidget(map_caption_);
  right_layout->addWidget(attention_, 1);

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(paneSplitter(Qt::Horizontal, left, right, 3, 2));

  connectControls();
  addShortcuts();
  restorePlaybackSettings();

  timer_->setInterval(16);  // about 60 frames per second
  connect(timer_, &QTimer::timeout, this, &ViewerPanel::poll);
  clear(tr("Open a checkpoint (File ▸ Open Checkpoint) to watch its policy act."));
}

void ViewerPanel::setUpRecordButtons() {
  record_->setCheckable(true);
  record_->setFocusPolicy(Qt::NoFocus);
  record_->setToolTip(VideoWriter::ffmpegAvailable()
                          ? tr("Record the episode from the step on screen as an MP4 video, frame "
                               "by frame at a fixed rate")
                          : tr("Record the episode from the step on screen as numbered PNGs, frame "
                               "by frame at a fixed rate "
                               "(install ffmpeg to get an MP4 straight away)"));
  record_->setEnabled(viz::SceneView::openGlAvailable());
  connect(record_, &QPushButton::toggled, this, [this](bool on) {
    if (on == recording_) return;
    if (!on) return stopRecording();
    if (record_folder_.isEmpty() || !QDir(record_folder_).exists()) chooseRecordFolder();
    if (record_folder_.isEmpty() || !startRecording()) {
      const QSignalBlocker block(record_);
      record_->setChecked(false);
    }
  });
  // What to record, how fast, and where: remembered between sessions.
  {
    QSettings settings;
    record_folder_ = settings.value("viewer/record_folder").toString();
    record_area_ =
        settings.value("viewer/record_area", "panel").toString() == QLatin1String("scene")
            ? RecordArea::Scene
            : RecordArea::Panel;
    record_fps_ = std::clamp(settings.value("viewer/record_fps", 30).toInt(), 1, 120);
  }
  record_options_->setFocusPolicy(Qt::NoFocus);
  record_options_->setToolTip(tr("What to record, at how many frames per second, and where"));
  record_options_->setFixedWidth(record_options_->fontMetrics().height() +
                                 16);  // the menu's arrow alone
  record_options_->setMenu(buildRecordOptionsMenu());
  record_options_->setEnabled(viz::SceneView::openGlAvailable());
}

QMenu* ViewerPanel::buildRecordOptionsMenu() {
  auto* options = new QMenu(this);
  auto* areas = new QActionGroup(options);
  for (const auto& [area, label] :
       {std::pair{RecordArea::Panel, tr("The Whole Panel (Scene, Map and Timeline)")},
        std::pair{RecordArea::Scene, tr("The Scene Alone")}}) {
    auto* a = options->addAction(label, this, [this, area = area] { setRecordArea(area); });
    a->setCheckable(true);
    a->setChecked(record_area_ == area);
    a->setObjectName(area == RecordArea::Panel ? QStringLiteral("recordPanel")
                                               : QStringLiteral("recordScene"));
    areas->addAction(a);
  }
  options->addSeparator();
  auto* rates = new QActionGroup(options);
  for (int fps : {24, 30, 60}) {
    auto* a = options->addAction(tr("%1 Frames per Second").arg(fps), this,
                                 [this, fps] { setRecordFrameRate(fps); });
    a->setCheckable(true);
    a->setChecked(record_fps_ == fps);
    rates->addAction(a);
  }
  options->addSeparator();
  options->addAction(tr("Recording Folder…"), this, &ViewerPanel::chooseRecordFolder);
  connect(options, &QMenu::aboutToShow, this, [this, areas, rates] {
    for (auto* a : areas->actions())
      a->setChecked((a->objectName() == QLatin1String("recordScene")) ==
                    (record_area_ == RecordArea::Scene));
    for (auto* a : rates->actions())
      a->setChecked(a->text().startsWith(QString::number(record_fps_) + ' '));
  });
  return options;
}

void ViewerPanel::setUpTransport() {
  // A new episode, not "go to start" (|<): it drops the episode's steps and its forks.
  restart_->setIcon(style()->standardIcon(QStyle::SP_BrowserReload));
  restart_->setToolTip(tr("New episode with the seed on the right (N)"));
  back_->setIcon(style()->standardIcon(QStyle::SP_MediaSeekBackward));
  back_->setToolTip(tr("Step back (Left or ,)"));
  play_->setIcon(style()->standardIcon(QStyle::SP_MediaPlay));
  play_->setToolTip(tr("Play or pause (Space)"));
  forward_->setIcon(style()->standardIcon(QStyle::SP_MediaSeekForward));
  forward_->setToolTip(tr("Single step: the policy acts once (Right or .)"));
  // The speeds decision-viewer offers too (playback.h).
  for (const double s : models::playback_speeds())
    speed_->addItem(QString::fromStdString(models::speed_label(s)), s);
  speed_->setItemData(static_cast<int>(models::playback_speeds().size()) - 1,
                      tr("As fast as the policy acts"), Qt::ToolTipRole);
  speed_->setCurrentIndex(3);
  speed_->setToolTip(tr("Speed: times real time (the task's simulated seconds per step)"));
  speed_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  rate_->setObjectName(QStringLiteral("realRate"));
  rate_->setStyleSheet(QStringLiteral("QLabel { color: #c0392b; font-weight: bold; }"));
  rate_->hide();
  slider_->setRange(0, 0);
  slider_->setMinimumWidth(60);
  position_->setToolTip(tr("The step on screen / the last step kept"));
  slider_->setToolTip(tr("The episode's timeline: drag to go back to any step"));
  fitReadouts();
  track_->setChecked(true);
  track_->setToolTip(
      tr("Keep the camera on the torso as it moves; off, drag to orbit and scroll to zoom"));
}

void ViewerPanel::setUpConditioning() {
  target_->setObjectName(QStringLiteral("target"));
  target_from_->setObjectName(QStringLiteral("targetFrom"));
  target_->setRange(-1e6, 1e6);
  target_->setDecimals(0);
  target_->setSingleStep(100);
  target_->setKeyboardTracking(false);
  target_->setToolTip(tr(
      "The return the policy is asked for. Changing it re-conditions the policy from the step on "
      "screen: its return-to-go becomes the new target minus the return collected so far."));
  for (const auto z : models::kModalityZeroings)
    zeroing_->addItem(QString::fromUtf8(models::zeroing_label(z)), static_cast<int>(z));
  zeroing_->setToolTip(tr("Zero a modality in the policy's input from the step on screen on"));
  seed_->setRange(0, 1'000'000);
  seed_->setToolTip(
      tr("Reset noise of the next new episode (the same seed as `dstudio eval --seed`)"));
}

QHBoxLayout* ViewerPanel::buildTransportRow() {
  auto* transport = new QHBoxLayout;
  for (auto* b : {restart_, back_, play_, forward_}) {
    b->setFocusPolicy(Qt::NoFocus);
    transport->addWidget(b);
  }
  transport->addWidget(speed_);
  transport->addWidget(rate_);
  transport->addWidget(slider_, 1);
  transport->addWidget(position_);
  return transport;
}

QWidget* ViewerPanel::buildConditioningTab() {
  auto* conditioning = new QWidget;
  // Two rows, so that the target's source is read in full beside the scene, in large type too.
  auto* form = new QGridLayout(conditioning);
  form->addWidget(new QLabel(tr("Target return")), 0, 0);
  form->addWidget(target_, 0, 1);
  form->addWidget(target_from_, 0, 2, 1, 3);
  form->addWidget(new QLabel(tr("Zero")), 1, 0);
  form->addWidget(zeroing_, 1, 1);
  live_viewer_->setToolTip(
      tr("The same policy, seed, target, zeroing and step in decision-viewer: a window of its own "
         "that draws faster, for a projector or a recording"));
  live_viewer_->setFocusPolicy(Qt::NoFocus);
  connect(live_viewer_, &QPushButton::clicked, this, &ViewerPanel::openInLiveViewer);
  form->addWidget(live_viewer_, 1, 2, Qt::AlignRight);
  form->addWidget(new QLabel(tr("Seed")), 1, 3, Qt::AlignRight);
  form->addWidget(seed_, 1, 4);
  form->setColumnStretch(2, 1);
  return conditioning;
}

QWidget* ViewerPanel::buildPlayerColumn(QHBoxLayout* transport, QWidget* conditioning) {
  // The scene with its transport above a divider, what acts on the policy and the timeline
  // below: a maze or a hand wants more of the height than a hopper, and the user drags it.
  auto* top = new QWidget;
  auto* top_layout = new QVBoxLayout(top);
  top_layout->setContentsMargins(0, 0, 0, 0);
  top_layout->addWidget(scene_, 1);
  top_layout->addLayout(transport);
  auto* left = new QWidget;
  auto* left_layout = new QVBoxLayout(left);
  left_layout->setContentsMargins(0, 0, 0, 0);
  left_layout->addWidget(buildActingTabs(conditioning));
  left_layout->addWidget(timeline_, 2);
  // The timeline as a figure: with forks, the divergence plot.
  timeline_export_ = new QPushButton(tr("Export Timeline…"));
  timeline_export_->setObjectName(QStringLiteral("exportTimeline"));
  timeline_export_->setFocusPolicy(Qt::NoFocus);
  auto* export_report = new QLabel;
  export_report->setOpenExternalLinks(true);
  viz::ExportDialog::attach(timeline_export_, this, *timeline_, export_report);
  timeline_->setFigureRecipeMaker([this] { return timelineRecipe(); });
  timeline_export_->setToolTip(
      tr("The timeline as a figure at a venue's size: the returns, and the entropy or, with "
         "forks, each fork's action difference from the main run or a joint"));
  buildBookmarkControls();
  // The readout on a row of its own, the whole width for its two lines (beside the buttons, in
  // large type, it wrapped into seven); the bookmarks and the export under it.
  left_layout->addWidget(readout_);
  auto* below = new QHBoxLayout;
  below->addWidget(export_report, 1);
  below->addWidget(bookmark_list_, 0, Qt::AlignTop);
  below->addWidget(bookmark_add_, 0, Qt::AlignTop);
  below->addWidget(timeline_export_, 0, Qt::AlignTop);
  left_layout->addLayout(below);
  QSplitter* column = paneSplitter(Qt::Vertical, top, left, 3, 2);
  column->setObjectName(QStringLiteral("playerSplitter"));
  column->setChildrenCollapsible(false);
  return column;
}

QTabWidget* ViewerPanel::buildActingTabs(QWidget* conditioning) {
  // What acts on the running policy, a tab each: the conditioning, interventions inside the
  // forward pass, counterfactual forks.
  acting_ = new PageSizedTabs;
  auto* acting = acting_;
  acting->setDocumentMode(true);
  acting->addTab(conditioning, tr("Conditioning"));
  interventions_tab_ = buildInterventionsTab();
  forks_tab_ = buildForksTab();
  acting->addTab(interventions_tab_, tr("Interventions"));
  acting->addTab(forks_tab_, tr("Forks"));
  // The camera and the recording beside the tabs, on the row their bar leaves free: the transport
  // above stays narrow enough for the panel beside a lesson, and in large type.
  auto* corner = new QWidget;
  auto* corner_layout = new QHBoxLayout(corner);
  corner_layout->setContentsMargins(0, 0, 0, 2);
  corner_layout->addWidget(track_);
  corner_layout->addWidget(record_);
  corner_layout->addWidget(record_options_);
  acting->setCornerWidget(corner, Qt::TopRightCorner);
  acting->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum);
  // Laid out again for the page chosen (PageSizedTabs).
  connect(acting, &QTabWidget::currentChanged, acting, [acting] { acting->updateGeometry(); });
  return acting;
}

void ViewerPanel::connectControls() {
  connect(restart_, &QPushButton::clicked, this, &ViewerPanel::requestNewEpisode);
  connect(back_, &QPushButton::clicked, this, &ViewerPanel::stepBack);
  connect(play_, &QPushButton::clicked, this, &ViewerPanel::togglePlay);
  connect(forward_, &QPushButton::clicked, this, &ViewerPanel::stepForward);
  connect(speed_, &QComboBox::currentIndexChanged, this,
          [this] { setSpeed(speed_->currentData().toDouble()); });
  connect(slider_, &QSlider::sliderMoved, this, &ViewerPanel::seek);
  connect(timeline_, &viz::EpisodeTimeline::seekRequested, this, &ViewerPanel::seek);
  connect(track_, &QCheckBox::toggled, scene_, &viz::SceneView::setTracking);
  connect(target_, &QDoubleSpinBox::valueChanged, this, [this](double v) {
    if (live_ && v != live_->target()) setTarget(v);
  });
  connect(zeroing_, &QComboBox::currentIndexChanged, this, [this] {
    const auto z = static_cast<models::ModalityZeroing>(zeroing_->currentData().toInt());
    if (live_ && z != live_->zeroing()) setZeroing(z);
  });

  // A choice made in a list hands the keyboard back to the panel, so that its shortcuts act on
  // the episode again (and, after a dialog, focus does not come back to the list, where the
  // arrow keys would change the speed).
  setFocusPolicy(Qt::StrongFocus);
  for (auto* box : findChildren<QComboBox*>())
    connect(box, &QComboBox::activated, this, [this] { setFocus(Qt::OtherFocusReason); });
}

void ViewerPanel::addShortcuts() {
  // Shortcuts work anywhere in the panel except where a field needs the key.
  auto shortcut = [this](const QKeySequence& keys, void (ViewerPanel::*slot)()) {
    auto* s = new QShortcut(keys, this);
    s->setContext(Qt::WidgetWithChildrenShortcut);
    connect(s, &QShortcut::activated, this, slot);
  };
  shortcut(Qt::Key_Space, &ViewerPanel::togglePlay);
  shortcut(Qt::Key_Right, &ViewerPanel::stepForward);
  shortcut(Qt::Key_Period, &ViewerPanel::stepForward);
  shortcut(Qt::Key_Left, &ViewerPanel::stepBack);
  shortcut(Qt::Key_Comma, &ViewerPanel::stepBack);
  shortcut(Qt::Key_N, &ViewerPanel::requestNewEpisode);
  shortcut(Qt::Key_Home, &ViewerPanel::goToFirstStep);
}

void ViewerPanel::restorePlaybackSettings() {
  // Speed and camera tracking are remembered between sessions.
  {
    QSettings settings;
    const int speed = speed_->findData(settings.value("viewer/speed", 1.0).toDouble());
    if (speed >= 0) speed_->setCurrentIndex(speed);
    track_->setChecked(settings.value("viewer/track", true).toBool());
  }
  connect(speed_, &QComboBox::currentIndexChanged, this,
          [this] { QSettings().setValue("viewer/speed", speed_->currentData()); });
  // A maze's camera is its own: tracking there says nothing of how the user likes a runner seen.
  connect(track_, &QCheckBox::toggled, this, [this](bool on) {
    if (!free_camera_task_) QSettings().setValue("viewer/track", on);
  });
}

ViewerPanel::~ViewerPanel() {
  stopRecording();
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Recording

void ViewerPanel::setRecordArea(RecordArea area) {
  record_area_ = area;
  QSettings().setValue("viewer/record_area", area == RecordArea::Scene ? "scene" : "panel");
}

void ViewerPanel::setRecordFrameRate(int fps) {
  record_fps_ = std::clamp(fps, 1, 120);
  QSettings().setValue("viewer/record_fps", record_fps_);
}

void ViewerPanel::setRecordFolder(const QString& folder) {
  record_folder_ = folder;
  QSettings().setValue("viewer/record_folder", folder);
}

void ViewerPanel::chooseRecordFolder() {
  QString start = record_folder_;
  if (start.isEmpty()) start = QStandardPaths::writableLocation(QStandardPaths::MoviesLocation);
  if (start.isEmpty()) start = QDir::homePath();
  const QString dir = QFileDialog::getExistingDirectory(this, tr("Folder for recordings"), start);
  if (!dir.isEmpty()) setRecordFolder(dir);
}

bool ViewerPanel::startRecording() {
  return startRecordingInto(QString(), 0);
}

bool ViewerPanel::startRecordingInto(const QString& base, int frames) {
  if (recording_) return true;
  if (!live_) {
    emit message(tr("Nothing to record: open a checkpoint first."));
    return false;
  }
  if (!scene_->hasScene()) {
    emit message(tr("Recording needs the 3-D view, which needs OpenGL."));
    return false;
  }
  // At the end of an ended episode nothing follows the step on screen: no one-frame file.
  if (const auto state = live_->state(); state.at_end()) {
    emit message(tr("Nothing to record: the episode ended at step %1. Go back, or start a new "
                    "episode, first.")
                     .arg(state.cursor));
    return false;
  }
  const QString folder = base.isEmpty() ? record_folder_ : QFileInfo(base).absolutePath();
  if (folder.isEmpty() || !QDir().mkpath(folder)) {
    emit message(tr("Cannot record into \"%1\": choose a folder for recordings.").arg(folder));
    return false;
  }
  QString path = base;
  if (path.isEmpty()) {
    // <model>-<time>: a name of its own for every recording, safe on any file system.
    QString name = title_;
    name.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]+")), QStringLiteral("-"));
    name = name.left(80);
    while (name.endsWith('-')) name.chop(1);
    name = (name.isEmpty() ? QStringLiteral("viewer") : name) + '-' +
           QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-hhmmss"));
    path = QDir(record_folder_).filePath(name);
  }
  // A field's focus (its highlight, a blinking cursor) is not the panel at rest: the focus leaves
  // the area recorded, what was typed into a field and not entered is entered (as clicking
  // elsewhere enters it), before anything of the clip is taken.
  QWidget* area = record_area_ == RecordArea::Scene ? static_cast<QWidget*>(scene_) : this;
  if (focus_inside(area)) setFocus(Qt::OtherFocusReason);
  record_focus_shown_ = false;
  video_ = std::make_unique<VideoWriter>(path, record_fps_);
  record_limit_ = std::max(0, frames);
  record_look_ = std::make_shared<const recipes::ClipLook>(clipLook());
  record_panel_size_ = size();
  record_frame_size_ = record_area_ == RecordArea::Scene ? scene_->size() : size();
  // The timeline grows with the video from the first step recorded (whatever was drawn beyond it
  // before): every frame shows the episode up to its step, the same however far it was played.
  timeline_->clear();
  timeline_frames_ = 0;
  map_step_ = -1;  // and the first frame's map drawn, whatever was shown before
  settleLayout();
  recording_path_ = video_->path();
  recorded_ = 0;
  recording_ = true;
  // The policy runs ahead as fast as it acts; each frame shows the step the episode reaches at
  // the chosen speed, so the video plays at that speed whatever the machine managed.
  const double speed = speed_->currentData().toDouble();
  speed_before_ = speed;
  record_first_ = shown_.cursor;
  clip_log_ = std::make_unique<models::ClipLog>("decision-studio", title_.toStdString(),
                                                shown_.seed, record_first_, record_fps_, speed);
  record_shown_ = -1;
  live_->set_speed(0.0);
  live_->play();
  {
    const QSignalBlocker block(record_);
    record_->setChecked(true);
  }
  record_options_->setEnabled(false);
  record_->setText(tr("Stop (0.0 s)"));
  record_->setStyleSheet(
      QStringLiteral("QPushButton { color: white; background: #c0392b; font-weight: bold; }"));
  emit message(tr("Recording into %1 …").arg(recording_path_));
  QTimer::singleShot(0, this, &ViewerPanel::recordNext);
  return true;
}

void ViewerPanel::recordNext() {
  if (!recording_) return;
  if (!live_) return stopRecording();
  const auto state = live_->state();
  // The step this frame shows: the episode's time at the recording's speed (the clock both viewers
  // record by).
  const int step =
      models::recorded_step(record_first_, recorded_, record_fps_, speed_before_, live_->dt());
  if (step >= state.frames) {
    // The episode ended before this frame, or the policy has not reached it yet.
    if (state.finished || !state.error.empty()) {
      record_end_reason_ = state.finished ? tr("the episode ended at step %1").arg(state.frames - 1)
                                          : QString::fromStdString(state.error);
      return stopRecording();
    }
    if (!state.playing) live_->play();  // paused meanwhile (or not started yet): the video goes on
    QTimer::singleShot(2, this, &ViewerPanel::recordNext);
    return;
  }
  // A step is drawn once it has acted, in every run that has not ended before it: its attention
  // map, entropy and the forks' ghosts are then those of the step, however far the policy got.
  const auto acted = [step](int frames, bool finished) {
    return frames > step + 1 || (finished && frames > 0);
  };
  bool waiting = !acted(state.frames, state.finished);
  for (const auto& b : live_->branches()) waiting = waiting || !acted(b.frames, b.finished);
  if (waiting) {
    if (!state.playing) live_->play();
    QTimer::singleShot(2, this, &ViewerPanel::recordNext);
    return;
  }
  if (step == record_shown_) return captureFrame();  // slower than real time: the same step again
  // Each run's frame at the step (its last, when it ended before: a fork may outlive the main run).
  const auto at = [](std::vector<models::FramePtr> from_step,
                     const std::function<std::vector<models::FramePtr>()>& all) {
    if (!from_step.empty()) return from_step.front();
    const auto every = all();
    return every.empty() ? models::FramePtr{} : every.back();
  };
  auto main_from = live_->frames(step);
  if (main_from.empty() && !live_->frames().back()->terminal) {
    // A fork has the step, the main run not yet: wait for it.
    QTimer::singleShot(2, this, &ViewerPanel::recordNext);
    return;
  }
  models::PlaybackState shown = state;
  shown.frame = at(std::move(main_from), [this] { return live_->frames(); });
  if (!shown.frame) return stopRecording();
  for (std::size_t b = 0; b < shown.branch_frames.size(); ++b) {
    const int branch = static_cast<int>(b);
    shown.branch_frames[b] = at(live_->branch_frames(branch, step),
                                [this, branch] { return live_->branch_frames(branch); });
  }
  shown.cursor = step;
  shown.frames = step + 1;  // the timeline grows with the video
  shown.playing = false;
  record_shown_ = step;
  shown_.frame.reset();  // drawn even when it is the step already on screen
  showFrame(shown, true);
  slider_->setValue(step);
  position_->setText(QString::number(step));
  captureFrame();
}

void ViewerPanel::captureFrame() {
  if (!recording_) return;
  // Labels resize and plots (timeline, attention map) redraw on the next turn of the event loop;
  // the frame shows them as they are for this step.
  if (record_area_ == RecordArea::Panel) {
    QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    for (auto* plot : findChildren<QCustomPlot*>()) {
      if (!plot->isVisible()) continue;
      // The first frame's ticks as they fit what it shows, not as the panel's history thinned
      // them; each later frame's follow on from there.
      if (recorded_ == 0)
        viz::refit_text(plot);
      else
        plot->replot(QCustomPlot::rpImmediateRefresh);
    }
  }
  // Grabbing draws the widgets, the 3-D scene included, as they are now: the step just shown,
  // without the hover of wherever the mouse rests. A field given the focus while recording shows
  // it, and the clip then has no recipe (clipRecipe).
  QWidget* area = record_area_ == RecordArea::Scene ? static_cast<QWidget*>(scene_) : this;
  record_focus_shown_ = record_focus_shown_ || focus_inside(area);
  QImage frame;
  {
    const HoverAway at_rest(area);
    frame = area->grab().toImage();
  }
  if (!video_->add(frame)) {
    const QString error = video_->error();
    stopRecording();
    emit message(tr("Recording stopped: %1").arg(error));
    return;
  }
  ++recorded_;
  if (clip_log_ && shown_.frame) {
    const auto& f = *shown_.frame;
    std::vector<models::ClipLog::Branch> forks;
    const auto branches = live_ ? live_->branches() : std::vector<models::BranchInfo>{};
    for (std::size_t b = 0; b < branches.size() && b < shown_.branch_frames.size(); ++b)
      if (const auto& bf = shown_.branch_frames[b])
        forks.push_back({branches[b].label, branches[b].fork_step, bf->step, bf->return_so_far});
    clip_log_->add({record_shown_, f.return_so_far, f.target, models::to_string(f.zeroing),
                    f.interventions, std::move(forks)});
  }
  record_->setText(tr("Stop (%1 s)").arg(static_cast<double>(recorded_) / record_fps_, 0, 'f', 1));
  if (record_limit_ > 0 && recorded_ >= record_limit_) return stopRecording();
  QTimer::singleShot(0, this, &ViewerPanel::recordNext);
}

void ViewerPanel::stopRecording() {
  if (!recording_) return;
  recording_ = false;
  {
    const QSignalBlocker block(record_);
    record_->setChecked(false);
  }
  record_->setText(tr("Record"));
  record_->setStyleSheet({});
  record_options_->setEnabled(true);
  // Back to where the video ended, paused, at the speed the user chose.
  if (live_) {
    live_->pause();
    live_->set_speed(speed_before_);
    if (record_shown_ >= 0) live_->seek(record_shown_);
  }
  // Abandoned (abandonRecording): no video, nothing beside it.
  bool ok = video_ && video_->finish();
  QString error = !video_ ? tr("the recording was abandoned") : ok ? QString() : video_->error();
  if (video_) recording_path_ = video_->path();
  QString no_recipe;
  if (ok && clip_log_ && recorded_ > 0) {
    try {
      const auto log = models::ClipLog::path_for(recording_path_.toStdString());
      clip_log_->write(log);
      // The recipe beside the log: <base>.recipe.json (the clip stands without it).
      if (auto recipe = clipRecipe(no_recipe)) {
        recipe->outputs = {QFileInfo(recording_path_).fileName().toStdString(),
                           log.filename().string()};
        try {
          write_figure_recipe(log.parent_path() / (log.stem().string() + ".recipe.json"), *recipe);
        } catch (const Error& e) {
          no_recipe = QString::fromStdString(e.what());
        }
      }
    } catch (const Error& e) {
      ok = false;
      error = QString::fromStdString(e.what());
    }
  }
  record_limit_ = 0;
  record_look_.reset();
  clip_log_.reset();
  video_.reset();
  const QString ended = record_end_reason_.isEmpty()
                            ? QString()
                            : tr("Recording ended: %1. ").arg(record_end_reason_);
  record_end_reason_.clear();
  if (ok)
    emit message(ended +
                 tr("Recorded %1 frames (%2 s at %3 frames per second) into %4")
                     .arg(recorded_)
                     .arg(static_cast<double>(recorded_) / record_fps_, 0, 'f', 1)
                     .arg(record_fps_)
                     .arg(recording_path_) +
                 (no_recipe.isEmpty() ? QString() : tr(" (no recipe: %1)").arg(no_recipe)));
  else
    emit message(ended + tr("The recording could not be written: %1").arg(error));
  emit recordingFinished(recording_path_, recorded_, error);
}

void ViewerPanel::settleLayout() {
  // A tab's page that changed while hidden leaves the sizes around it stale until something else
  // moves: a recording's frames are laid out as the panel's contents say, not as its history left
  // them.
  for (auto* w : findChildren<QWidget*>()) w->updateGeometry();
  QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
}

void ViewerPanel::abandonRecording() {
  if (!recording_) return;
  video_.reset();  // its unfinished file removed
  clip_log_.reset();
  stopRecording();
}

void ViewerPanel::waitForRecording() {
  while (recording_) QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The player

void ViewerPanel::clear(const QString& message) {
  stopRecording();  // a recording is of one episode of one policy
  timer_->stop();
  live_.reset();
  rate_meter_.reset();
  shown_ = {};
  timeline_->clear();
  timeline_->replotIfChanged();
  timeline_frames_ = 0;
  scene_->setOverlayPlot(QString(), {});
  map_step_ = -1;
  attention_->clear(message);
  map_caption_->setText(QString());
  readout_->setText(message);
  scene_->setOverlay({});
  scene_->setLayers({});
  updateControls();
}

void ViewerPanel::setPlayer(const QString& title, std::shared_ptr<models::EpisodePlayer> player,
                            bool autoplay, const std::vector<models::TargetChoice>& targets) {
  clear(QString());
  title_ = title;
  scene_->setPhysicsModel(player->physics_model());
  const auto& task = player->task();
  scene_->setModelConfiguration(task.configure_model);
  // The task's camera: a maze is seen whole from above, untracked; the locomotion tasks follow
  // the torso as the tracking setting says (from the usual place again after a maze).
  scene_->setTaskCamera(task.camera);
  {
    const QSignalBlocker block(track_);  // the remembered setting is the user's, not the task's
    track_->setChecked(task.camera.track && QSettings().value("viewer/track", true).toBool());
  }
  if (!task.camera.track || free_camera_task_) scene_->resetCamera();
  free_camera_task_ = !task.camera.track;
  // A fixed workspace (the hand, the kitchen) has nothing to follow: the box is greyed out.
  const bool followable = task.camera.track || task.camera.followable;
  track_->setEnabled(followable);
  track_->setToolTip(
      followable
          ? tr("Keep the camera on the torso as it moves; off, drag to orbit and scroll to zoom")
          : tr("This task's camera stays on its workspace: drag to orbit and scroll to zoom"));
  if (task.camera.track) scene_->setTracking(track_->isChecked());
  {
    const QSignalBlocker block(target_);
    // Without the model's data (a replay), the task's reference targets.
    target_from_->setChoices(targets.empty() ? models::target_choices(task, {})
                                             : targets);  // the first goes into the field
    if (!player->frames().empty()) target_->setValue(player->frames().front()->target);
  }
  {
    const QSignalBlocker block(zeroing_);
    zeroing_->setCurrentIndex(0);
  }
  if (player->frames().empty())
    player->reset(static_cast<std::uint64_t>(seed_->value()), target_->value());
  live_ = std::make_unique<models::LivePlayer>(std::move(player));
  rate_meter_.emplace(live_->dt());
  live_->set_speed(speed_->currentData().toDouble());
  live_->set_plain_actions(effects_->isChecked());
  fork_target_->setValue(target_->value());
  // The task's DAPG expert can take over (D4RL's Adroit tasks ship one).
  expert_available_ = false;
  try {
    (void)behaviour::shipped_dapg_policy(task.name);
    expert_available_ = true;
  } catch (const Error&) {
  }
  rebuildHeadGrid();
  rebuildDivergenceChoice();
  if (live_->behaviour())
    attention_->clear(
        tr("A behaviour policy plays: an MLP acting on the observation alone, with its mean "
           "action. It attends to no window, so there is no map."));
  else if (!live_->replay())
    attention_->clear(
        tr("No map yet: the policy has not acted. Play or step, and the map of the "
           "window it acts on is drawn here."));
  if (live_->replay()) {
    attention_->clear(
        tr("A dataset episode replayed from its recorded states: no policy acts, so there is no "
           "attention "
           "map. Open a checkpoint to watch a policy."));
    map_caption_->setText(QString());
  }
  timeline_generation_ = live_->state().generation;
  if (autoplay) live_->play();
  timer_->start();
  sync();
  settleLayout();  // the grids and lists filled while their tabs were hidden take their room now
}

void ViewerPanel::play() {
  if (live_) live_->play();
}
void ViewerPanel::pause() {
  if (live_) live_->pause();
}
void ViewerPanel::togglePlay() {
  if (!live_) return;
  if (live_->state().playing)
    live_->pause();
  else
    live_->play();
}
void ViewerPanel::stepForward() {
  if (live_) live_->step_forward();
}
void ViewerPanel::stepBack() {
  if (live_) live_->step_back();
}
void ViewerPanel::seek(int frame) {
  if (live_) live_->seek(frame);
}
void ViewerPanel::restart() {
  if (live_) live_->restart(static_cast<std::uint64_t>(seed_->value()));
}
void ViewerPanel::goToFirstStep() {
  seek(0);
}
void ViewerPanel::requestNewEpisode() {
  if (!live_) return;
  // A replayed dataset episode only goes back to its first step: nothing is lost.
  const auto forks = live_->branches().size();
  if (live_->replay() || forks == 0) {
    restart();
    return;
  }
  auto* box =
      new QMessageBox(QMessageBox::Question, tr("Start a new episode?"),
                      (forks == 1 ? tr("A new episode drops this one's %1 steps and its fork.")
                                  : tr("A new episode drops this one's %1 steps and its %2 forks.")
                                        .arg(QStringLiteral("%1"), QString::number(forks)))
                          .arg(shown_.frames),
                      QMessageBox::Cancel, this);
  box->setInformativeText(
      tr("Home goes back to the first step and keeps them; Export Timeline… keeps their curves."));
  auto* start = box->addButton(tr("New Episode"), QMessageBox::AcceptRole);
  box->setDefaultButton(QMessageBox::Cancel);
  box->setObjectName(QStringLiteral("newEpisodeDialog"));
  box->setAttribute(Qt::WA_DeleteOnClose);
  connect(box, &QMessageBox::buttonClicked, this, [this, start](QAbstractButton* clicked) {
    if (clicked == start) restart();
  });
  box->open();
}
void ViewerPanel::setSpeed(double speed) {
  const int i = speed_->findData(speed);
  if (i >= 0 && i != speed_->currentIndex()) {
    const QSignalBlocker block(speed_);
    speed_->setCurrentIndex(i);
  }
  if (live_) live_->set_speed(speed);
  if (rate_meter_) rate_meter_->reset();  // measured afresh at the new speed
}
void ViewerPanel::setTarget(double target) {
  {
    const QSignalBlocker block(target_);
    target_->setValue(target);
  }
  if (live_) live_->set_target(target);
}
void ViewerPanel::setZeroing(models::ModalityZeroing zeroing) {
  {
    const QSignalBlocker block(zeroing_);
    zeroing_->setCurrentIndex(zeroing_->findData(static_cast<int>(zeroing)));
  }
  if (live_) live_->set_zeroing(zeroing);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Showing a frame

void ViewerPanel::sync() {
  if (!live_ || recording_) return;  // a recording shows its frames itself
  showFrame(live_->state(), true);
}

void ViewerPanel::poll() {
  if (!live_ || recording_) return;  // a recording shows its frames itself
  showFrame(live_->state(), false);
}

void ViewerPanel::showRate(const models::PlaybackState& state) {
  // A recording plays its own clock (the player runs ahead as fast as it can): nothing to say.
  if (!rate_meter_ || recording_ || !state.playing) {
    if (rate_meter_) rate_meter_->reset();
    rate_->hide();
    return;
  }
  if (!clock_.isValid()) clock_.start();
  rate_meter_->add(static_cast<double>(clock_.nsecsElapsed()) / 1e9, state.cursor);
  const auto real = rate_meter_->rate();
  const bool behind = models::falls_behind(state.speed, real) || (state.speed <= 0.0 && real);
  if (behind) {
    const QString rate = QString::fromStdString(models::rate_label(*real));
    rate_->setText(tr("%1 real").arg(rate));
    rate_->setToolTip(
        state.speed > 0.0
            ? tr("The episode plays at %1 real time, not the %2 asked for: the policy, the "
                 "physics and the drawing of a step take longer than the step lasts on this "
                 "machine. A recording still plays at the speed asked for.")
                  .arg(rate, QString::fromStdString(models::speed_label(state.speed)))
            : tr("As fast as the policy acts: %1 real time on this machine.").arg(rate));
  }
  rate_->setVisible(behind);
}

void ViewerPanel::setPresentation(bool on) {
  // The scene needs the room in large type: the map keeps its caption, not its choices and tables.
  attention_->setControlsShown(!on);
}

QString ViewerPanel::speedStatus() const {
  if (!live_) return QString();
  const auto real = rate_meter_ && shown_.playing ? rate_meter_->rate() : std::nullopt;
  return QString::fromStdString(models::speed_status(shown_.speed, real));
}

void ViewerPanel::showFrame(const models::PlaybackState& state, bool force_map) {
  showRate(state);
  const bool moved = state.cursor != shown_.cursor || state.generation != shown_.generation ||
                     state.branch_generation != shown_.branch_generation || !shown_.frame;
  addTimelineSteps(state);
  timeline_->setCursor(state.cursor);
  const qint64 now = QDateTime::currentMSecsSinceEpoch();
  if (force_map || !state.playing || now - last_timeline_ms_ >= kTimelineIntervalMs) {
    last_timeline_ms_ = now;
    replotTimeline(state);
  }
  if (state.frame && moved) showScene(state);
  if (!state.error.empty() && QString::fromStdString(state.error) != error_shown_) {
    error_shown_ = QString::fromStdString(state.error);
    readout_->setText(tr("The policy stopped: %1").arg(error_shown_));
    emit failed(error_shown_);
  }
  if (state.frame && (force_map || !state.playing || now - last_map_ms_ >= kMapIntervalMs))
    showAttentionMap(state, now);
  if (state.frame) showReadout(state);
  refreshSurgery();
  // Lean while playing; a recording's frames and a paused picture in full.
  scene_->setPlaying(state.playing && !recording_);
  const bool controls_changed = state.playing != shown_.playing || state.frames != shown_.frames ||
                                state.cursor != shown_.cursor || state.finished != shown_.finished;
  shown_ = state;
  if (controls_changed) updateControls();
}

void ViewerPanel::addTimelineSteps(const models::PlaybackState& state) {
  // New frames (or, after a branch or restart, all of them) go to the timeline.
  if (state.generation != timeline_generation_) {
    timeline_->clear();
    timeline_frames_ = 0;
    timeline_generation_ = state.generation;
  }
  if (state.frames != timeline_frames_) {
    // The last one has acted since; frames past state.frames (a recording's) wait their turn.
    const int from = std::max(0, timeline_frames_ - 1);
    const auto fresh = live_->frames(from);
    for (std::size_t i = 0; i < fresh.size() && from + static_cast<int>(i) < state.frames; ++i) {
      const auto& f = *fresh[i];
      // A behaviour policy's return-to-go answers no target it was given: left out.
      timeline_->addStep(f.step, live_->behaviour() ? std::nan("") : f.return_to_go,
                         f.return_so_far, f.entropy);
    }
    timeline_frames_ = state.frames;
  }
}

void ViewerPanel::replotTimeline(const models::PlaybackState& state) {
  QElapsedTimer timer;
  timer.start();
  if (!state.branch_frames.empty() || !timeline_->forks().empty()) {
    timeline_->setForks(forkCurves(state));
    if (divergence_->currentIndex() > 0)
      timeline_->setDivergence(divergence_->currentText(),
                               mainDivergence(recording_ ? state.frames : -1));
  }
  timeline_->replotIfChanged();
  timeline_export_->setEnabled(timeline_->hasFigure());
  timeline_ms_ = static_cast<double>(timer.nsecsElapsed()) / 1e6;
}

void ViewerPanel::showScene(const models::PlaybackState& state) {
  const auto& f = *state.frame;
  scene_->setLayers(sceneLayers(state));
  scene_->setTaskState(f.physics.task_state);
  scene_->setState(f.physics.qpos, f.physics.qvel);
  QStringList overlay = frameCaption(f);
  // What was done, so that a screenshot or a clip says it: interventions, forks in colour.
  std::vector<QColor> colours(static_cast<std::size_t>(overlay.size()));
  addTaskLines(f, overlay, colours);
  addActingLines(state, overlay, colours);
  scene_->setOverlay(overlay, colours);
  // The entropy of the last steps, inside the scene: what the policy attends to as it moves.
  const auto& entropy = timeline_->entropy();
  const auto end = std::min(entropy.size(), static_cast<std::size_t>(f.step) + 1);
  const auto begin = end > kOverlaySteps ? end - kOverlaySteps : 0;
  scene_->setOverlayPlot(tr("entropy, layer 1"),
                         std::vector<double>(entropy.begin() + static_cast<std::ptrdiff_t>(begin),
                                             entropy.begin() + static_cast<std::ptrdiff_t>(end)));
  emit cursorMoved(f.step);
}

QStringList ViewerPanel::frameCaption(const models::PlayerFrame& f) const {
  QStringList overlay;
  overlay << QStringLiteral("%1  step %2").arg(title_).arg(f.step);
  if (live_ && live_->replay())
    overlay << tr("dataset episode   return-to-go %1").arg(viz::fixed_text(f.return_to_go, 1));
  else if (live_ && live_->behaviour())
    overlay << tr("behaviour policy: its mean action (no target conditions it)");
  else
    overlay << tr("target %1   return-to-go %2")
                   .arg(viz::fixed_text(f.target, 0), viz::fixed_text(f.return_to_go, 1));
  if (live_ && live_->replay() && live_->task().goal_reaching)
    // A dataset's goal-reaching episode goes on at the goal (AntMaze's data pays every step
    // there), so its return counts steps, not the success an evaluation's score is.
    overlay << tr("return %1   (steps at the goal)").arg(viz::fixed_text(f.return_so_far, 0));
  else
    overlay << tr("return %1   score %2")
                   .arg(
                       viz::fixed_text(f.return_so_far, 1),
                       viz::fixed_text(
                           live_ ? env::normalized_score(live_->task(), f.return_so_far) : 0.0, 1));
  if (f.zeroing != models::ModalityZeroing::None)
    overlay << tr("zeroed: %1")
                   .arg(zeroing_->itemText(zeroing_->findData(static_cast<int>(f.zeroing))));
  if (f.terminal)
    overlay << tr("episode over: %1")
                   .arg(live_ ? QString::fromStdString(
                                    env::episode_end_reason(live_->task(), f.terminated))
                        : f.terminated ? tr("the task ended it")
                                       : tr("time limit"));
  return overlay;
}

void ViewerPanel::addTaskLines(const models::PlayerFrame& f, QStringList& overlay,
                               std::vector<QColor>& colours) const {
  // A task done in stages lists its elements, ticked off from the step each was first done.
  if (live_ && live_->task().subtasks) {
    const auto& task = live_->task();
    std::vector<env::SubTask> so_far;
    for (const auto& g : live_->frames()) {
      if (g->step > f.step) break;
      env::accumulate_subtasks(so_far, task.subtasks(g->observation, g->physics.task_state));
    }
    for (const auto& e : so_far) {
      overlay << (e.done
                      ? tr("☑ %1  done").arg(QString::fromStdString(e.name))
                      : tr("☐ %1  %2 from its goal")
                            .arg(QString::fromStdString(e.name), viz::fixed_text(e.distance, 2)));
      colours.push_back(e.done ? QColor(115, 217, 115) : QColor(220, 220, 220));
    }
  }
  // A success counted over the episode (Adroit's goal-achieved steps); a replay's task state
  // holds the episode's values, not the count.
  if (live_ && !live_->replay() && live_->task().progress) {
    const auto progress = live_->task().progress(f.physics.task_state);
    if (!progress.text.empty()) {
      overlay << QString::fromStdString(progress.text);
      colours.push_back(progress.success ? QColor(115, 217, 115) : QColor(220, 220, 220));
    }
  }
}

void ViewerPanel::addActingLines(const models::PlaybackState& state, QStringList& overlay,
                                 std::vector<QColor>& colours) const {
  const auto& f = *state.frame;
  if (!f.interventions.empty()) {
    QStringList specs;
    for (const auto& i : f.interventions) specs << QString::fromStdString(i);
    overlay << tr("interventions: %1").arg(specs.join(QStringLiteral(", ")));
    colours.emplace_back(242, 191, 115);
  }
  // The forks' legend: what a ghost is, then each ghost by its colour's name and its change.
  const auto branches = live_ ? live_->branches() : std::vector<models::BranchInfo>{};
  const auto legend = std::min(branches.size(), state.branch_frames.size());
  if (legend > 0) {
    overlay << QString::fromUtf8(palette::kGhostMeaning.data(),
                                 static_cast<int>(palette::kGhostMeaning.size()));
    colours.emplace_back(200, 200, 200);
  }
  for (std::size_t b = 0; b < legend; ++b) {
    const auto& style = palette::kBranches[b % palette::kBranches.size()];
    const auto& bf = state.branch_frames[b];
    overlay << tr("■ %1   return %2%3")
                   .arg(QString::fromStdString(models::fork_legend(
                            static_cast<int>(b), branches[b].fork_step, branches[b].label)),
                        viz::fixed_text(bf ? bf->return_so_far : 0.0, 1),
                        bf && bf->terminal && bf->step < state.cursor ? tr(" (ended)") : QString());
    colours.emplace_back(style.colour.r, style.colour.g, style.colour.b);
  }
}

void ViewerPanel::showAttentionMap(const models::PlaybackState& state, qint64 now) {
  // The attention map of the window the policy acted on at the step on screen; the newest step
  // has not acted yet, so it shows the one before.
  const models::FramePtr source =
      models::acted_window(live_->frames(state.cursor - 1), state.frame);
  if (!source || (source->step == map_step_ && state.generation == map_generation_ &&
                  state.branch_generation == map_branch_generation_))
    return;
  map_step_ = source->step;
  map_generation_ = state.generation;
  map_branch_generation_ = state.branch_generation;
  compareWithFork(state);
  last_map_ms_ = now;
  QElapsedTimer timer;
  timer.start();
  attention_->setInspections(QStringLiteral("%1, step %2").arg(title_).arg(source->step),
                             {*source->inspection});
  map_ms_ = static_cast<double>(timer.nsecsElapsed()) / 1e6;
  map_caption_->setText(
      source->step == state.frame->step
          ? tr("The window the policy acted on at step %1.").arg(source->step)
          : tr("The window the policy acted on at step %1 (it has not acted at step %2 yet).")
                .arg(source->step)
                .arg(state.frame->step));
}

void ViewerPanel::compareWithFork(const models::PlaybackState& state) {
  // A fork another checkpoint plays: its map beside this one's, for the same step.
  const auto branches = live_->branches();
  models::FramePtr other;
  QString other_title;
  for (std::size_t b = 0; b < branches.size() && b < state.branch_frames.size(); ++b) {
    if (branches[b].checkpoint.empty() || !state.branch_frames[b]) continue;
    const auto& shown_there = state.branch_frames[b];
    if (shown_there->step == state.frame->step)
      other = models::acted_window(live_->branch_frames(static_cast<int>(b), state.cursor - 1),
                                   shown_there);
    other_title =
        tr("fork %1: %2")
            .arg(b + 1)
            .arg(QFileInfo(QString::fromStdString(branches[b].checkpoint)).completeBaseName());
    break;
  }
  if (other) {
    attention_->setComparable(true);
    attention_->setComparison(QStringLiteral("%1, step %2").arg(other_title).arg(other->step),
                              {*other->inspection});
    if (attention_->comparisonMode() == viz::AttentionMapView::Comparison::Alone)
      attention_->setComparisonMode(viz::AttentionMapView::Comparison::SideBySide);
  } else if (attention_->hasComparison()) {
    attention_->clearComparison();
    attention_->setComparable(false);
  }
}

void ViewerPanel::showReadout(const models::PlaybackState& state) {
  const auto& f = *state.frame;
  QString text = tr("Step %1 of %2 kept").arg(f.step).arg(state.frames - 1);
  // A behaviour policy is conditioned on no return; a replay's is the recorded episode's rest.
  // Neither has attention: its entropy is not a number.
  if (!live_ || !live_->behaviour())
    text += tr(" · return-to-go %1").arg(viz::fixed_text(f.return_to_go, 1));
  text += tr(" · return %1").arg(viz::fixed_text(f.return_so_far, 1));
  if (f.acted) text += tr(" · reward %1").arg(viz::fixed_text(f.reward, 3));
  if (f.acted && std::isfinite(f.entropy))
    text += tr(" · entropy (layer 1) %1 nats").arg(viz::fixed_text(f.entropy, 3));
  if (state.error.empty()) readout_->setText(text);
}

void ViewerPanel::fitReadouts() {
  // The step readout as wide as its longest text, so that it neither clips nor shifts the
  // slider as the step grows.
  position_->setMinimumWidth(
      position_->fontMetrics().horizontalAdvance(tr("%1 / %2").arg(88888).arg(88888)) + 6);
}

void ViewerPanel::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  // Presentation mode's type, once the readout has taken it too.
  if (event->type() == QEvent::FontChange) QTimer::singleShot(0, this, &ViewerPanel::fitReadouts);
}

void ViewerPanel::updateControls() {
  const bool ready = live_ != nullptr;
  for (QWidget* w :
       std::initializer_list<QWidget*>{restart_, back_, play_, forward_, speed_, slider_})
    w->setEnabled(ready);
  // A replayed dataset episode has no policy to re-condition.
  const bool policy = ready && !live_->replay();
  for (QWidget* w : std::initializer_list<QWidget*>{seed_, live_viewer_, forks_tab_})
    w->setEnabled(policy);
  // A behaviour policy is conditioned on nothing and has no model to intervene in.
  const bool model = policy && !live_->behaviour();
  for (QWidget* w :
       std::initializer_list<QWidget*>{target_, target_from_, zeroing_, interventions_tab_})
    w->setEnabled(model);
  expert_fork_->setEnabled(policy && expert_available_);
  restart_->setToolTip(policy ? tr("New episode with the seed on the right (N)")
                              : tr("Back to the first step (N or Home)"));
  play_->setIcon(
      style()->standardIcon(shown_.playing ? QStyle::SP_MediaPause : QStyle::SP_MediaPlay));
  {
    const QSignalBlocker block(slider_);
    slider_->setRange(0, std::max(0, shown_.frames - 1));
    slider_->setValue(shown_.cursor);
  }
  position_->setText(ready ? tr("%1 / %2").arg(shown_.cursor).arg(std::max(0, shown_.frames - 1))
                           : QString());
}

QString ViewerPanel::readout() const {
  return readout_->text();
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The live viewer

QStringList ViewerPanel::liveViewerArguments() const {
  if (!live_ || live_->replay() || live_->info().path.empty()) return {};
  QStringList arguments;
  if (live_->behaviour()) {
    // decision-viewer plays the same behaviour policy (info().path: "dapg" or its file).
    arguments = {QStringLiteral("--behaviour"), QString::fromStdString(live_->info().path),
                 QStringLiteral("--env"),       QString::fromStdString(live_->task().name),
                 QStringLiteral("--seed"),      QString::number(shown_.seed),
                 QStringLiteral("--speed"),     QString::number(speed_->currentData().toDouble()),
                 QStringLiteral("--step"),      QString::number(shown_.cursor)};
  } else {
    const auto zeroing = static_cast<models::ModalityZeroing>(zeroing_->currentData().toInt());
    arguments = {QString::fromStdString(live_->info().path),
                 QStringLiteral("--env"),
                 QString::fromStdString(live_->task().name),
                 QStringLiteral("--seed"),
                 QString::number(shown_.seed),
                 QStringLiteral("--target"),
                 QString::number(target_->value(), 'g', 10),
                 QStringLiteral("--zeroing"),
                 QString::fromLatin1(models::to_string(zeroing)),
                 QStringLiteral("--speed"),
                 QString::number(speed_->currentData().toDouble()),
                 QStringLiteral("--step"),
                 QString::number(shown_.cursor)};
    // The interventions in force, from the start there (as the target in force is).
    for (const auto& spec : live_->interventions())
      arguments << QStringLiteral("--intervene") << QString::fromStdString(spec);
  }
  // The forks on screen, each made again where it was made, with its change.
  for (const auto& b : live_->branches())
    arguments << QStringLiteral("--fork")
              << QStringLiteral("%1:%2")
                     .arg(b.fork_step)
                     .arg(QString::fromStdString(models::change_text(b.change)));
  return arguments;
}

bool ViewerPanel::openInLiveViewer() {
  const QStringList arguments = liveViewerArguments();
  if (arguments.isEmpty()) {
    emit message(tr("Nothing to open in the live viewer: it plays a checkpoint's policy."));
    return false;
  }
  QString exe = QCoreApplication::applicationDirPath() + QStringLiteral("/decision-viewer");
  if (!QFileInfo(exe).isExecutable())
    exe = QStandardPaths::findExecutable(QStringLiteral("decision-viewer"));
  if (exe.isEmpty()) {
    emit message(tr("decision-viewer is not installed beside decision-studio or on the PATH."));
    return false;
  }
  pause();
  if (!QProcess::startDetached(exe, arguments)) {
    emit message(tr("decision-viewer did not start (%1).").arg(exe));
    return false;
  }
  emit message(tr("Opened %1 at step %2 in decision-viewer.").arg(title_).arg(shown_.cursor));
  return true;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Workspace settings

WorkspaceViewer ViewerPanel::settings() const {
  WorkspaceViewer o;
  o.target = target_->value();
  o.zeroing = static_cast<models::ModalityZeroing>(zeroing_->currentData().toInt());
  o.seed = seed_->value();
  o.speed = speed_->currentData().toDouble();
  o.track = track_->isChecked();
  o.step = shown_.cursor;
  if (live_) {
    o.interventions = live_->interventions();
    // The forks whose change reads back (a typed list of interventions is several changes).
    for (const auto& b : live_->branches()) {
      const auto spec = std::to_string(b.fork_step) + ":" + b.label;
      try {
        models::parse_fork(spec);
        o.forks.push_back(spec);
      } catch (const UsageError&) {
      }
    }
  }
  if (effects()) o.effects = true;
  return o;
}

void ViewerPanel::applySettings(const WorkspaceViewer& o) {
  if (o.speed) {
    const int i = speed_->findData(*o.speed);
    if (i >= 0) speed_->setCurrentIndex(i);
  }
  if (o.track) track_->setChecked(*o.track);
  if (o.seed) seed_->setValue(*o.seed);
  setEffects(o.effects.value_or(false));
  if (!live_) return;
  live_->pause();
  live_->clear_branches();
  live_->restart(static_cast<std::uint64_t>(seed_->value()));
  if (o.target) setTarget(*o.target);
  if (o.zeroing) setZeroing(*o.zeroing);
  // Interventions from the first step; forks made when the episode reaches their steps. What does
  // not fit this model is said, not applied.
  try {
    if (!live_->replay() && !live_->behaviour()) live_->set_interventions(o.interventions);
    for (const auto& f : o.forks) {
      const auto fork = models::parse_fork(f);
      live_->fork(fork.step, fork.change);
    }
  } catch (const Error& e) {
    emit message(tr("The workspace's viewer settings do not fit this model: %1")
                     .arg(QString::fromStdString(e.what())));
  }
  // The saved step is reached by playing there: the episode is recomputed, not stored.
  for (int i = 0; i < o.step.value_or(0); ++i) live_->step_forward();
}

}  // namespace dstudio::studio

#pragma once
/// \file
/// The live viewer: a checkpoint's policy acting in its MuJoCo task, next to the attention map of
/// the window it acts on and the episode's timeline. Physics and policy run on the player's own
/// thread (models::LivePlayer); this panel pulls a snapshot at 60 Hz, draws it, and turns the
/// controls into requests: play, pause, step, step back, speed, seek on the slider or the plot,
/// camera tracking, the target return and modality zeroing acting on the running policy.

#include <QJsonObject>
#include <QWidget>
#include <atomic>
#include <memory>

#include "dstudio/models/episode_player.h"
#include "dstudio/models/targets.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSlider;
class QSpinBox;
class QThreadPool;
class QTimer;

namespace dstudio::viz {
class AttentionMapView;
class EpisodeTimeline;
class SceneView;
class TargetChooser;
}  // namespace dstudio::viz

namespace dstudio::studio {

class ViewerPanel : public QWidget {
  Q_OBJECT
 public:
  explicit ViewerPanel(QWidget* parent = nullptr);
  ~ViewerPanel() override;

  /// Plays `player` (takes it: nothing else may touch it; the previous one stops). `title` names the model.
  /// `targets` (models::target_choices) are offered next to the target field, the first in use;
  /// without them the task's first reference target is.
  void setPlayer(const QString& title, std::shared_ptr<models::EpisodePlayer> player, bool autoplay = true,
                 const std::vector<models::TargetChoice>& targets = {});
  /// Stops and forgets the player; `message` says why the view is empty.
  void clear(const QString& message);
  [[nodiscard]] bool hasPlayer() const { return live_ != nullptr; }

  void play();
  void pause();
  void togglePlay();
  void stepForward();
  void stepBack();
  void seek(int frame);
  void restart();
  void setSpeed(double speed);
  void setTarget(double target);
  void setZeroing(models::ModalityZeroing zeroing);

  /// Writes every frame the scene draws, overlay included, as <dir>/frame-000000.png, ... on a
  /// writer thread, until stopRecording(); the frame rate goes to <dir>/recording.txt with the
  /// command that makes a video of them. Returns false (with the reason in the readout) when the
  /// folder cannot be made or there is no 3-D view.
  bool startRecording(const QString& dir);
  /// Stops recording; the frames still being written are finished on the writer thread.
  void stopRecording();
  [[nodiscard]] bool isRecording() const { return recording_; }
  /// Frames handed to the writer, and frames dropped because it fell behind.
  [[nodiscard]] int recordedFrames() const { return recorded_; }
  [[nodiscard]] int droppedFrames() const { return dropped_; }
  /// Waits (processing events) until every recorded frame is on disk.
  void waitForRecording();

  /// What the panel last drew (updated by its timer; `sync()` forces an update now).
  [[nodiscard]] models::PlaybackState shown() const { return shown_; }
  void sync();
  [[nodiscard]] viz::SceneView* scene() const { return scene_; }
  [[nodiscard]] viz::AttentionMapView* attention() const { return attention_; }
  [[nodiscard]] viz::EpisodeTimeline* timeline() const { return timeline_; }
  [[nodiscard]] QSlider* slider() const { return slider_; }
  [[nodiscard]] QString readout() const;
  /// Milliseconds the last attention-map and timeline updates took on the GUI thread.
  [[nodiscard]] double lastMapMilliseconds() const { return map_ms_; }
  [[nodiscard]] double lastTimelineMilliseconds() const { return timeline_ms_; }
  /// Steps per second at 1x: the task's simulated seconds per step, inverted (0 without a player).
  [[nodiscard]] double stepsPerSecond() const { return live_ ? 1.0 / live_->dt() : 0.0; }
  /// The conditioning and playback settings (target, zeroing, seed, speed, camera tracking, the
  /// step on screen), for workspaces.
  [[nodiscard]] QJsonObject settings() const;
  /// Applies settings() of a workspace to the running player (a new episode with its seed).
  void applySettings(const QJsonObject& settings);

 signals:
  /// The frame on screen changed (its step).
  void cursorMoved(int step);
  /// The player stopped with an error.
  void failed(const QString& message);
  /// Something to tell the user in the status bar (e.g. where a recording went).
  void message(const QString& text);

 private:
  void poll();
  void recordFrame(const QImage& frame);
  void showFrame(const models::PlaybackState& state, bool force_map);
  void updateControls();

  std::unique_ptr<models::LivePlayer> live_;
  QString title_;
  models::PlaybackState shown_;
  int timeline_frames_ = 0;
  std::uint64_t timeline_generation_ = 0;
  qint64 last_map_ms_ = 0;
  qint64 last_timeline_ms_ = 0;
  double map_ms_ = 0.0, timeline_ms_ = 0.0;
  int map_step_ = -1;
  std::uint64_t map_generation_ = 0;
  QString error_shown_;

  viz::SceneView* scene_;
  viz::AttentionMapView* attention_;
  viz::EpisodeTimeline* timeline_;
  QLabel* readout_;
  QLabel* map_caption_;
  QPushButton* restart_;
  QPushButton* back_;
  QPushButton* play_;
  QPushButton* forward_;
  QComboBox* speed_;
  QSlider* slider_;
  QLabel* position_;
  QCheckBox* track_;
  QDoubleSpinBox* target_;
  viz::TargetChooser* target_from_;
  QComboBox* zeroing_;
  QSpinBox* seed_;
  QTimer* timer_;
  QPushButton* record_;
  bool recording_ = false;
  QString record_dir_;
  int recorded_ = 0, dropped_ = 0;
  qint64 record_started_ms_ = 0;
  std::shared_ptr<std::atomic<int>> pending_writes_;
  QThreadPool* writer_;
};

}  // namespace dstudio::studio

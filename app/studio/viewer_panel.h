#pragma once
/// \file
/// The live viewer: a checkpoint's policy acting in its MuJoCo task, next to the attention map of
/// the window it acts on and the episode's timeline. Physics and policy run on the player's own
/// thread (models::LivePlayer); this panel pulls a snapshot at 60 Hz, draws it, and turns the
/// controls into requests: play, pause, step, step back, speed, seek on the slider or the plot,
/// camera tracking, the target return and modality zeroing acting on the running policy;
/// interventions inside the forward pass (a layer x head grid of buttons that cycle zero, mean and
/// off, MLPs, the context, steering) from the step on screen; counterfactual forks drawn as ghost
/// bodies in their own colours; the limbs coloured by the interventions' action change. A
/// behaviour policy (models::EpisodePlayer::behaviour: an Adroit task's DAPG expert, a D4RL file's
/// metadata/policy) plays here too, with no map, target or interventions; on an Adroit task the
/// Forks tab lets the expert take a checkpoint's episode over from the step on screen.

#include <QElapsedTimer>
#include <QStringList>
#include <QWidget>
#include <memory>
#include <optional>

#include "dstudio/common/workspace.h"
#include "dstudio/models/episode_player.h"
#include "dstudio/models/playback.h"
#include "dstudio/models/targets.h"
#include "dstudio/render/scene_layers.h"
#include "dstudio/viz/episode_timeline.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QGridLayout;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QMenu;
class QPushButton;
class QSlider;
class QSpinBox;
class QTabWidget;
class QTimer;

namespace dstudio::recipes {
struct ClipLook;
}

namespace dstudio::viz {
class AttentionMapView;
class SceneView;
class TargetChooser;
}  // namespace dstudio::viz

namespace dstudio::studio {

class VideoWriter;

class ViewerPanel : public QWidget {
  Q_OBJECT
 public:
  explicit ViewerPanel(QWidget* parent = nullptr);
  ~ViewerPanel() override;

  /// Plays `player` (takes it: nothing else may touch it; the previous one stops). `title` names
  /// the model. `targets` (models::target_choices) are offered next to the target field, the first
  /// in use; without them the task's first reference target is.
  void setPlayer(const QString& title, std::shared_ptr<models::EpisodePlayer> player,
                 bool autoplay = true, const std::vector<models::TargetChoice>& targets = {});
  /// Stops and forgets the player; `message` says why the view is empty.
  void clear(const QString& message);
  [[nodiscard]] bool hasPlayer() const { return live_ != nullptr; }

  void play();
  void pause();
  void togglePlay();
  void stepForward();
  void stepBack();
  void seek(int frame);
  /// A new episode with the seed field's seed, at once (programs and tests call this).
  void restart();
  /// What the New Episode button and N do: restart(), after asking when the episode has forks
  /// that a new one would drop.
  void requestNewEpisode();
  /// Home: back to the episode's first step, keeping every step and fork.
  void goToFirstStep();
  void setSpeed(double speed);
  void setTarget(double target);
  void setZeroing(models::ModalityZeroing zeroing);
  /// Interventions inside the forward pass from the step on screen (models::LivePlayer); throws
  /// UsageError for a spec the model refuses.
  void setInterventions(const std::vector<std::string>& specs);
  [[nodiscard]] std::vector<std::string> interventions() const;
  /// Forks the episode at the step on screen with `change`; throws what LivePlayer::fork throws.
  void fork(const models::BranchChange& change);
  /// The same at `step` (made when the episode gets there).
  void forkAt(int step, const models::BranchChange& change);
  void removeForks();
  /// Limbs coloured by the action change of the interventions in force (off by default).
  void setEffects(bool on);
  [[nodiscard]] bool effects() const;
  /// The main run's frames as the player keeps them now.
  [[nodiscard]] std::vector<models::FramePtr> playerFrames() const {
    return live_ ? live_->frames() : std::vector<models::FramePtr>{};
  }

  /// What a recording shows: the whole panel (scene, transport, timeline and attention map) or
  /// the 3-D scene with its overlay alone.
  enum class RecordArea { Panel, Scene };
  void setRecordArea(RecordArea area);
  [[nodiscard]] RecordArea recordArea() const { return record_area_; }
  /// Frames per second of the video (24, 30 or 60 on offer; any from 1 to 120 taken).
  void setRecordFrameRate(int fps);
  [[nodiscard]] int recordFrameRate() const { return record_fps_; }
  /// Where recordings go; asked the first time Record is pressed, then remembered (QSettings).
  void setRecordFolder(const QString& folder);
  [[nodiscard]] QString recordFolder() const { return record_folder_; }

  /// Records the episode from the step on screen on, into recordFolder(): frame by frame at
  /// recordFrameRate() (each frame the step the episode reaches at the chosen speed, drawn before
  /// it is taken, however long the policy or the drawing takes), until stopRecording() or the
  /// episode's end. With ffmpeg the frames go straight into <title>-<time>.mp4, else into a
  /// folder of PNGs of that name. Returns false (with the reason in message()) when there is no
  /// policy, no 3-D view or no folder.
  bool startRecording();
  /// The same into `base`.mp4 (or the folder `base`), ending after `frames` frames (or the
  /// episode's end): a clip drawn again from its recipe.
  bool startRecordingInto(const QString& base, int frames);
  /// Ends the recording and finishes its file; recordingFinished() says where it is. Beside a
  /// recording go its clip log (`base`.json) and, when the run can be played again as it was
  /// recorded, its recipe (`base`.recipe.json, view_recipes.h's ClipShown; `dstudio figure render`
  /// draws the clip again from it).
  void stopRecording();
  [[nodiscard]] bool isRecording() const { return recording_; }
  /// Frames written so far (or by the last recording).
  [[nodiscard]] int recordedFrames() const { return recorded_; }
  /// The video, or the folder of frames, being or last written.
  [[nodiscard]] QString recordingPath() const { return recording_path_; }
  /// Ends the recording without finishing it: the unfinished video is removed, nothing is written
  /// beside it, and recordingFinished() says it was abandoned.
  void abandonRecording();
  /// Lays every part out now as its contents say (a recording does so before its first frame).
  void settleLayout();
  /// Waits (processing events) until the recording ends.
  void waitForRecording();
  /// The camera and what the controls show, as a clip's recipe keeps them, and set again (the
  /// forks tab's target, the interventions tab's click, the attention map's layer and head...).
  [[nodiscard]] recipes::ClipLook clipLook() const;
  void setClipLook(const recipes::ClipLook& look);
  /// The targets offered beside the target field.
  [[nodiscard]] std::vector<models::TargetChoice> targetChoices() const;

  /// The arguments that open decision-viewer on what this panel shows: the same checkpoint, seed,
  /// target, zeroing, speed and step (empty without a policy: a replay or nothing open).
  [[nodiscard]] QStringList liveViewerArguments() const;
  /// Starts decision-viewer (beside this program, else on the PATH) with liveViewerArguments();
  /// false, with the reason in message(), when there is nothing to open or it cannot start.
  bool openInLiveViewer();

  /// What the panel last drew (updated by its timer; `sync()` forces an update now, except while
  /// it records: a recording draws its own frames).
  [[nodiscard]] models::PlaybackState shown() const { return shown_; }
  void sync();
  [[nodiscard]] viz::SceneView* scene() const { return scene_; }
  [[nodiscard]] viz::AttentionMapView* attention() const { return attention_; }
  [[nodiscard]] viz::EpisodeTimeline* timeline() const { return timeline_; }
  /// The recipe of the timeline on screen (view_recipes.h's TimelineShown): none for a dataset's
  /// episode replayed or before a step is drawn.
  [[nodiscard]] std::optional<FigureRecipe> timelineRecipe() const;
  /// The episode's bookmarks (named steps with notes), by step; those not on the viewer are
  /// left out. Drawn on the timeline, listed to go to.
  void setBookmarks(std::vector<Bookmark> bookmarks);
  [[nodiscard]] const std::vector<Bookmark>& bookmarks() const { return bookmarks_; }
  void addBookmark(Bookmark bookmark);
  /// Shows `step`: the frame when it has been played, else the episode played on to it.
  void goToStep(int step);
  [[nodiscard]] QSlider* slider() const { return slider_; }
  [[nodiscard]] QString readout() const;
  /// Milliseconds the last attention-map and timeline updates took on the GUI thread.
  [[nodiscard]] double lastMapMilliseconds() const { return map_ms_; }
  [[nodiscard]] double lastTimelineMilliseconds() const { return timeline_ms_; }
  /// Presentation mode (large type): the attention map without its choices and tables beside the
  /// scene, so that the panel fits a laptop's screen.
  void setPresentation(bool on);
  /// The speed as the transport shows it: the speed asked for, and beside it the rate the episode
  /// really plays at when the machine falls behind (models::speed_status), measured over the last
  /// seconds of playing; the speed alone while it keeps up or is paused.
  [[nodiscard]] QString speedStatus() const;
  /// Steps per second at 1x: the task's simulated seconds per step, inverted (0 without a player).
  [[nodiscard]] double stepsPerSecond() const { return live_ ? 1.0 / live_->dt() : 0.0; }
  /// What plays (a checkpoint's name, or a dataset's episode) and in which task (empty without).
  [[nodiscard]] QString playerTitle() const { return title_; }
  [[nodiscard]] QString taskName() const {
    return live_ ? QString::fromStdString(live_->task().name) : QString();
  }
  /// The conditioning and playback settings (target, zeroing, seed, speed, camera tracking, the
  /// step on screen), for workspaces.
  [[nodiscard]] WorkspaceViewer settings() const;
  /// Applies settings() of a workspace to the running player (a new episode with its seed).
  void applySettings(const WorkspaceViewer& settings);

 signals:
  /// The frame on screen changed (its step).
  void cursorMoved(int step);
  /// The player stopped with an error.
  void failed(const QString& message);
  /// Something to tell the user in the status bar (e.g. where a recording went).
  void message(const QString& text);
  /// A recording ended: its file (or folder of frames) and frames; `error` is empty on success.
  void recordingFinished(const QString& path, int frames, const QString& error);

 private:
  // The panel's parts, set up and built in this order by the constructor: the Record button and
  // its menu of options; the transport's controls; the conditioning's fields; the transport row;
  // the Conditioning tab; the player's column (the scene, the transport, the acting tabs with the
  // camera and recording in their corner, the timeline, the readout, the bookmarks and the
  // timeline's export); then the controls' signals, the keyboard shortcuts, and the speed and
  // tracking remembered between sessions.
  void setUpRecordButtons();
  QMenu* buildRecordOptionsMenu();
  void setUpTransport();
  void setUpConditioning();
  QHBoxLayout* buildTransportRow();
  QWidget* buildConditioningTab();
  QWidget* buildPlayerColumn(QHBoxLayout* transport, QWidget* conditioning);
  QTabWidget* buildActingTabs(QWidget* conditioning);
  void connectControls();
  void addShortcuts();
  void restorePlaybackSettings();
  void poll();
  // One frame of a recording: the next step shown, then taken.
  void recordNext();
  void captureFrame();
  void chooseRecordFolder();
  void showFrame(const models::PlaybackState& state, bool force_map);
  // What showFrame draws: the steps played since on the timeline, and its forks replotted; the
  // scene at the frame with its overlay (the caption, the task's stages, what was done); the
  // attention map of the window acted on (beside a fork's, another checkpoint's); the readout.
  void addTimelineSteps(const models::PlaybackState& state);
  void replotTimeline(const models::PlaybackState& state);
  void showScene(const models::PlaybackState& state);
  [[nodiscard]] QStringList frameCaption(const models::PlayerFrame& f) const;
  void addTaskLines(const models::PlayerFrame& f, QStringList& overlay,
                    std::vector<QColor>& colours) const;
  void addActingLines(const models::PlaybackState& state, QStringList& overlay,
                      std::vector<QColor>& colours) const;
  void showAttentionMap(const models::PlaybackState& state, qint64 now);
  void compareWithFork(const models::PlaybackState& state);
  void showReadout(const models::PlaybackState& state);
  // The real rate beside the speed: measured while playing, hidden while it keeps up.
  void showRate(const models::PlaybackState& state);
  void updateControls();
  void fitReadouts();
  // Interventions and forks (viewer_panel_surgery.cpp).
  QWidget* buildInterventionsTab();
  QWidget* buildForksTab();
  // The Forks tab's rows: the buttons that fork from the step on screen (with a target, the
  // interventions typed, another checkpoint, the task's expert); the forks made, one chosen to
  // rewind to or remove; what the timeline's right axis shows of them.
  QGridLayout* buildForkButtons();
  void addForkList(QGridLayout* grid);
  QHBoxLayout* buildDivergenceRow();
  void rebuildHeadGrid();
  void rebuildDivergenceChoice();  // the joints of the task played
  void buildBookmarkControls();
  void refreshBookmarks();
  void refreshSurgery();
  void applySpecs(const std::vector<std::string>& specs);
  // fork(), its refusal said in the status bar (the Forks tab's buttons).
  void forkSaying(const models::BranchChange& change);
  [[nodiscard]] render::SceneLayers sceneLayers(const models::PlaybackState& state) const;
  // The task's markers at the frame on screen and the paths over the ground (goal-reaching tasks).
  void addTaskLayers(const models::PlaybackState& state, render::SceneLayers& layers) const;
  // The open task is seen from a free camera of its own (a maze), not tracked.
  bool free_camera_task_ = false;
  [[nodiscard]] std::vector<viz::EpisodeTimeline::Fork> forkCurves(
      const models::PlaybackState& state) const;
  /// The main run's values of the joint on the timeline's right axis (none for the difference),
  /// of its first `frames` frames (-1: all kept).
  [[nodiscard]] std::vector<double> mainDivergence(int frames = -1) const;
  // The recipe of the recording ending now (nullopt, with the reason in `why`, when the clip
  // cannot be played again as it was recorded).
  [[nodiscard]] std::optional<FigureRecipe> clipRecipe(QString& why) const;

 protected:
  void changeEvent(QEvent* event) override;

 private:
  std::unique_ptr<models::LivePlayer> live_;
  // Interventions and forks.
  QWidget* interventions_tab_ = nullptr;
  QWidget* forks_tab_ = nullptr;
  QTabWidget* acting_ = nullptr;
  QWidget* head_grid_ = nullptr;
  QSpinBox* context_ = nullptr;
  QComboBox* click_mode_ = nullptr;
  QDoubleSpinBox* patch_target_ = nullptr;
  QLineEdit* steer_file_ = nullptr;
  QSpinBox* steer_layer_ = nullptr;
  QDoubleSpinBox* steer_alpha_ = nullptr;
  QLineEdit* specs_ = nullptr;
  QCheckBox* effects_ = nullptr;
  QDoubleSpinBox* fork_target_ = nullptr;
  QLabel* forks_ = nullptr;
  QComboBox* fork_choice_ = nullptr;
  QPushButton* expert_fork_ = nullptr;  // "the expert takes over from here" (behaviour=dapg)
  bool expert_available_ = false;       // the task ships a DAPG expert
  QComboBox* divergence_ = nullptr;     // the timeline's right axis with forks: -1 or a qpos index
  QPushButton* timeline_export_ = nullptr;
  std::vector<Bookmark> bookmarks_;
  QComboBox* bookmark_list_ = nullptr;
  QPushButton* bookmark_add_ = nullptr;
  std::vector<std::string> specs_shown_;
  std::uint64_t forks_generation_ = ~0ull;
  std::vector<models::BranchInfo> branches_;
  QString title_;
  models::PlaybackState shown_;
  int timeline_frames_ = 0;
  std::uint64_t timeline_generation_ = 0;
  qint64 last_map_ms_ = 0;
  qint64 last_timeline_ms_ = 0;
  double map_ms_ = 0.0, timeline_ms_ = 0.0;
  int map_step_ = -1;
  std::uint64_t map_generation_ = 0;
  std::uint64_t map_branch_generation_ = 0;
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
  QLabel* rate_;  // the real rate, when the machine falls behind the speed
  std::optional<models::PlaybackRate> rate_meter_;
  QElapsedTimer clock_;
  QSlider* slider_;
  QLabel* position_;
  QCheckBox* track_;
  QDoubleSpinBox* target_;
  viz::TargetChooser* target_from_;
  QComboBox* zeroing_;
  QSpinBox* seed_;
  QTimer* timer_;
  QPushButton* record_;
  QPushButton* record_options_;
  QPushButton* live_viewer_;
  RecordArea record_area_ = RecordArea::Panel;
  int record_fps_ = 30;
  QString record_folder_;
  bool recording_ = false;
  int recorded_ = 0;
  QString recording_path_;
  QString record_end_reason_;  // why the recording ended by itself (the episode ended), said with
                               // where it went
  std::unique_ptr<VideoWriter> video_;
  int record_first_ = 0;                       // the step the recording started at
  std::unique_ptr<models::ClipLog> clip_log_;  // what each frame showed, written beside it
  int record_shown_ = -1;                      // the step the last frame showed
  int record_limit_ = 0;                       // frames to record; 0 until stopped or the end
  bool record_focus_shown_ = false;            // a frame showed a field's keyboard focus
  // How the panel was when the recording started (its recipe's look and sizes): a recording
  // during which they changed has no recipe.
  std::shared_ptr<const recipes::ClipLook> record_look_;
  QSize record_panel_size_, record_frame_size_;
  double speed_before_ = 1.0;
};

}  // namespace dstudio::studio

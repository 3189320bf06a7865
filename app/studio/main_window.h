#pragma once
/// \file
/// The studio's main window. Datasets are opened by menu, drag-and-drop or argument, loaded on a
/// worker thread with progress and cancel in the status bar; a file that cannot be used is
/// explained in a dialog and whatever was open stays open.

#include <QFont>
#include <QMainWindow>
#include <QSize>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "dstudio/common/progress.h"
#include "dstudio/common/workspace.h"
#include "dstudio/data/dataset.h"
#include "dstudio/models/episode_player.h"
#include "dstudio/models/evaluation.h"
#include "dstudio/models/windows.h"

class QAction;
class QLabel;
class QMenu;
class QProgressBar;
class QPushButton;
class QTimer;

namespace dstudio::viz {
class AttentionMapView;
class EntropyRewardView;
class ReturnAnalysisView;
class DatasetView;
class FigureSource;
class TsneView;
class MarkovLabView;
class WorkspaceView;
}  // namespace dstudio::viz

class QTabWidget;

namespace dstudio::studio {

class Job;
class FigureRenderJob;
class AnalysesPanel;
class CheckpointJobs;
struct OpenedCheckpoint;
class LessonPanel;
class ReturnJobs;
class SweepPanel;
class TrainingPanel;
class UserGuideDialog;
class TsneJob;
class MarkovLabJob;
class ViewerPanel;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  /// Starts loading `path` in the background (cancelling a load already running).
  void openDataset(const QString& path);
  /// Writes the embedded default dataset if needed, then opens it.
  void openDefaultDataset();
  /// Makes a task's default dataset if needed (an AntMaze task's as D4RL made it, an Adroit
  /// task's expert data), then opens it; the making is cancellable like any load.
  void openTaskDataset(const QString& env);
  /// Asks the running load to stop; the previous dataset stays.
  void cancelLoad();
  /// Inspects a checkpoint on a worker thread (16 windows of its dataset) and shows its
  /// attention maps. While another inspection runs, that one is cancelled and this one follows.
  void openCheckpoint(const QString& path);
  /// Asks the running inspection to stop; the open checkpoint stays.
  void cancelInspection();
  /// The shipped DT checkpoint: the open dataset's task's own where one is shipped (AntMaze),
  /// else the story's.
  void openDefaultCheckpoint();
  /// The task whose shipped DT openDefaultCheckpoint opens, or empty for the story's DT.
  [[nodiscard]] QString shippedTaskOfDefaultCheckpoint() const;
  /// Inspects another checkpoint on the open checkpoint's windows (worker thread) and shows the
  /// difference of the two attention maps.
  void compareCheckpoint(const QString& path);

  [[nodiscard]] bool isLoading() const;
  /// What is open, as the status bar shows it when no job is speaking: the dataset, the model and
  /// the model it is compared with.
  [[nodiscard]] QString openSummary() const;
  [[nodiscard]] QString statusText() const;
  [[nodiscard]] QString currentPath() const;
  [[nodiscard]] viz::DatasetView* datasetView() const { return view_; }
  [[nodiscard]] viz::AttentionMapView* attentionView() const { return attention_; }
  [[nodiscard]] viz::EntropyRewardView* rolloutView() const { return rollout_view_; }
  /// Rolls the open checkpoint's policy out on a worker thread (progress in the status bar).
  void runRollout(const models::RolloutConfig& config);
  void cancelRollout();
  [[nodiscard]] bool isRollingOut() const;
  [[nodiscard]] viz::ReturnAnalysisView* returnsView() const { return returns_view_; }
  /// Normalised score with each modality zeroed (none, RTG, past states, actions).
  void runAblation();
  /// Normalised score at each of the view's targets; with a compared checkpoint (Attention ▸
  /// Compare with…), both are swept over the same targets and drawn together.
  void runSweep();
  [[nodiscard]] QTabWidget* tabs() const { return tabs_; }
  /// The tabs' pages: each sits in a scroll area of its own (tabs()->widget(i) is that area).
  [[nodiscard]] QWidget* page(int index) const;
  [[nodiscard]] QWidget* currentPage() const;
  /// The tab index of `page` (a view), -1 when it is none of the tabs'.
  [[nodiscard]] int pageIndex(QWidget* page) const;
  /// Brings the tab of `page` (a view, not its scroll area) to the front.
  void showPage(QWidget* page);
  [[nodiscard]] bool isInspecting() const;
  [[nodiscard]] ViewerPanel* viewer() const { return viewer_; }
  [[nodiscard]] TrainingPanel* trainingPanel() const { return training_; }
  /// The Sweep tab: a sweep folder's cells, groups and results, read again every two seconds.
  [[nodiscard]] SweepPanel* sweepPanel() const { return sweep_; }
  /// Opens the sweep folder `dir` in the Sweep tab (read in the background) and shows the tab; a
  /// folder that is not a sweep is explained in a dialog naming the file.
  void openSweep(const QString& dir);
  [[nodiscard]] viz::TsneView* tsneView() const { return tsne_view_; }
  [[nodiscard]] viz::MarkovLabView* markovLab() const { return markov_lab_; }
  [[nodiscard]] MarkovLabJob* markovLabJob() const { return markov_lab_job_; }
  [[nodiscard]] viz::WorkspaceView* workspaceView() const { return workspace_view_; }
  /// Draws every figure recipe the workspace keeps again into `folder`, in the background
  /// (Workspace tab ▸ Render Figures…); false when it cannot start (the status bar says why).
  bool renderFigures(const QString& folder);
  [[nodiscard]] FigureRenderJob* figureRenderJob() const { return figure_render_; }
  [[nodiscard]] TsneJob* tsneJob() const { return tsne_job_; }
  /// The panel of the registered analyses (those plugins add among them).
  [[nodiscard]] AnalysesPanel* analysesPanel() const { return analyses_; }
  /// Every background job of the window: loading, inspecting, comparing, rolling out, zeroing
  /// and sweeping, the t-SNE and each registered analysis. Each can be cancelled.
  [[nodiscard]] std::vector<Job*> jobs() const;
  /// Asks the running comparison to stop; the maps on screen stay.
  void cancelComparison();
  [[nodiscard]] bool isComparing() const;
  /// The open checkpoint ("" before one is shown).
  [[nodiscard]] QString checkpointPath() const;
  /// Type in presentation mode, relative to the usual.
  static constexpr double kPresentationScale = 1.6;
  /// The smallest type of the tab bar, relative to the usual, before it scrolls (fitTabBar).
  static constexpr double kSmallestTabType = 0.8;
  /// Large type for a lecture hall: every widget's font, and every plot's text, at
  /// kPresentationScale times its size (remembered). Leaving restores the window's size.
  void setPresentationMode(bool on);
  /// Makes the window, its frame included, fit the screen's available area (a laptop's 1280 x
  /// 800 under a title bar and a panel): moved into it, and made smaller where it is larger.
  /// Done when it is shown, once the window manager has framed it, and after presentation mode.
  void fitToScreen();
  [[nodiscard]] bool presentationMode() const { return presentation_; }
  /// Replays episode `episode` of the open dataset in the viewer from its recorded states.
  bool replayEpisode(qint64 episode);
  /// Plays a behaviour policy in the viewer, with its mean action (File > Play a Behaviour
  /// Policy): `policy` "dapg" (the DAPG expert shipped for the Adroit task `task`, or for the open
  /// dataset's task when `task` is empty) or "dataset" (the open dataset's metadata/policy, as
  /// D4RL's expert files carry it). False, with the reason in the status bar, when there is none.
  bool playBehaviour(const QString& policy, const QString& task = {});
  /// Opens a dataset, a checkpoint (.pt), a workspace (.dstudio or .json) or a sweep folder (one
  /// holding sweep.json), by its name.
  void openAny(const QString& path);
  /// The files of a command line or a drop, each by its kind. The first checkpoint is opened and a
  /// second is compared with it once it is shown (the status bar says so); a third and more are
  /// refused with a message naming them, since only a model and its comparison are open at once.
  void openFiles(const QStringList& paths);
  /// What File ▸ Export All Views offers: each tab's figure once, in the tabs' order, and the
  /// Analyses tab's only where it has a result.
  [[nodiscard]] std::vector<const viz::FigureSource*> figureSources() const;
  /// The recipe of the figure on the tab on screen as JSON (what Edit ▸ Copy Figure Recipe puts
  /// on the clipboard), or empty with `why` set when it has none.
  [[nodiscard]] std::string figureRecipeText(QString* why = nullptr) const;

  /// The workspace: the open dataset and checkpoint, the viewer's conditioning, the tab on
  /// screen (by its id) and the window's layout. core's to_json writes it.
  [[nodiscard]] Workspace workspace() const;
  /// Opens what `workspace` names (in the background) and applies its settings once they arrive.
  /// Files that are gone are left out and named in `error`; returns true.
  bool applyWorkspace(const Workspace& workspace, QString* error = nullptr);
  /// A workspace's JSON text, read by core's parse_workspace (with "@resources/" resolved to
  /// `resources` when given, as a lesson's steps need), then applied. Returns false with `error`
  /// set when it is not a workspace of this studio; nothing is applied then.
  bool applyWorkspaceText(const QByteArray& json, QString* error = nullptr,
                          const QString& resources = {});
  /// Writes workspace() to `path` (atomically); false with `error` set on failure.
  bool saveWorkspace(const QString& path, QString* error = nullptr) const;
  /// Reads a workspace file and applies it.
  bool loadWorkspace(const QString& path, QString* error = nullptr);
  /// Help ▸ Lessons: shows lesson `lesson` (of the shipped ones, in order) at `step` in the lesson
  /// panel and opens that step's workspace.
  void openLesson(int lesson, int step = 0);
  [[nodiscard]] LessonPanel* lessonPanel() const { return lessons_; }
  /// Help ▸ User Guide (F1): shows the guide's window, made on first use.
  void showUserGuide();
  [[nodiscard]] UserGuideDialog* userGuide() const { return user_guide_; }

 signals:
  void datasetOpened(const QString& path);
  void loadFailed(const QString& message);
  /// A workspace opened from a file could not be opened (`opened` false), or opened without some
  /// of its files (`opened` true; the message names them).
  void workspaceFailed(const QString& message, bool opened);
  void loadCancelled();
  void checkpointShown(const QString& path);
  void checkpointFailed(const QString& message);
  void checkpointCancelled(const QString& path);
  void comparisonShown(const QString& path);
  void comparisonFailed(const QString& message);
  void rolloutShown();
  void rolloutStopped(const QString& why);
  void returnsShown(bool sweep);

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;
  void closeEvent(QCloseEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;
  void showEvent(QShowEvent* event) override;
  void moveEvent(QMoveEvent* event) override;

 private:
  // Runs resolve_path (which may make the file) and then the load on a worker thread.
  void startLoad(const QString& label, std::function<QString(const Progress&)> resolve_path);
  // Every job of the window reports to the status bar: its progress, Cancel, its outcome.
  Job* addJob(const QString& name);
  Job* addJob(Job* job);
  void showDataset(const QString& path, const std::shared_ptr<const data::Dataset>& dataset);
  // Says when the open dataset is not data the open checkpoint fits (its states or actions of
  // another size, or another environment), naming both; the checkpoint's views use its own
  // dataset. Empty when they agree or either is not open.
  [[nodiscard]] QString datasetMismatch() const;
  // What opening a lesson's step (its workspace JSON) would take away unasked: the Analyses tab's
  // results when the step opens another checkpoint. Empty when nothing is lost.
  [[nodiscard]] QString lostToLesson(const QByteArray& step_json) const;
  // An opened checkpoint goes to every view of the model; a comparison to those that show it.
  void showCheckpoint(const OpenedCheckpoint& opened);
  void showComparison(const QString& path, const models::CheckpointInfo& info);
  // The status bar's bar and Cancel button show while any job runs; they follow the newest.
  void updateBusy();
  enum class ErrorOf { Dataset, Checkpoint, Workspace, Sweep };
  /// A window-modal message naming what could not be opened; the window stays as it was.
  void showError(const QString& message, ErrorOf what = ErrorOf::Dataset);
  void chooseFile();
  void chooseCheckpoint();
  // A rollout job that was cancelled or failed: says so (`status` takes the reason) and emits
  // rolloutStopped.
  void reportStopped(const QString& status, Job* job);
  void startReturnJob(bool sweep);
  void rememberRecent(const QString& path);
  void chooseWorkspaceToSave();
  void chooseWorkspaceToOpen();
  void applyPendingViewer();
  // A lesson's requests that wait for its checkpoint: the map, the comparison, a sweep or ablation.
  void applyPendingLesson();
  void refreshRuns();
  // The figure recipes the workspace keeps, shown in the Workspace tab.
  void refreshFigures();
  void chooseFigureRecipe();
  std::vector<std::string> figures_;
  FigureRenderJob* figure_render_ = nullptr;
  void rebuildRecentMenu();
  // The window's wiring, made by the constructor in this order: a lesson's steps and bookmarks;
  // the Workspace tab's requests and the figures drawn again from their recipes; the Training
  // and Sweep tabs' runs; then, after the menus, the status bar with its progress and Cancel;
  // the dataset's loading, the checkpoints' opening and comparing, and the Analyses tab's
  // messages.
  void connectLessons();
  void connectWorkspaceView();
  void connectTrainingAndSweeps();
  void setUpStatusBar();
  void connectLoadingAndCheckpoints();
  // File, View and Help (main_window_menus.cpp), a function each.
  void createMenus();
  void createFileMenu();
  void createViewMenu();
  void createHelpMenu();
  void showAbout();

  viz::DatasetView* view_;
  viz::AttentionMapView* attention_;
  QTabWidget* tabs_;
  std::vector<Job*> jobs_;    // every job, in the order made
  Job* shown_job_ = nullptr;  // the one the status bar's bar follows
  Job* load_job_;
  CheckpointJobs* checkpoints_;  // opening and comparing them
  QString
      compare_when_shown_;  // a second checkpoint given with the first: compared once it is shown
  QAction* presentation_action_ = nullptr;
  /// The tab bar's type, as large as lets every tab show.
  void fitTabBar();
  /// Adds `page` as a tab, in a scroll area; `id` is what workspaces call it ("attention").
  void addPage(QWidget* page, const QString& title, const QString& id);
  /// One tab: its page, its title, the id workspaces name it by, and its figures (what Export All
  /// Views writes, in order; the first is what Copy Figure Recipe copies while the tab is on show,
  /// unless `shown_recipe` says otherwise).
  struct Tab {
    QWidget* page;
    QString title;
    QString id;
    std::function<std::vector<const viz::FigureSource*>()> figures;
    std::function<std::string()> shown_recipe;  ///< the recipe of the figure on show, "" for none
  };
  /// Every tab, once, in the order they stand.
  [[nodiscard]] std::vector<Tab> tabTable() const;
  viz::EntropyRewardView* rollout_view_;
  viz::ReturnAnalysisView* returns_view_;
  ReturnJobs* return_jobs_;  // their rollouts, ablation and sweep
  ViewerPanel* viewer_;
  TrainingPanel* training_;
  SweepPanel* sweep_;
  viz::TsneView* tsne_view_;
  TsneJob* tsne_job_;
  viz::MarkovLabView* markov_lab_;
  MarkovLabJob* markov_lab_job_;
  AnalysesPanel* analyses_;
  viz::WorkspaceView* workspace_view_;
  std::optional<WorkspaceViewer>
      pending_viewer_;   // a workspace's viewer settings, applied when its player arrives
  QString pending_tab_;  // a tab's id (or an earlier studio's title)
  std::optional<WorkspaceAttention> pending_attention_;  // a workspace's map selection
  QString pending_compare_;  // a checkpoint to compare with, once the open one is shown
  std::optional<WorkspaceComparison> pending_comparison_;  // once the comparison is shown
  std::optional<WorkspaceRun> pending_run_;                // once the checkpoint is shown
  LessonPanel* lessons_;
  UserGuideDialog* user_guide_ = nullptr;
  bool presentation_ = false;
  bool framed_ = false;  // the window manager has drawn the window's frame (fitToScreen)
  QByteArray geometry_before_presentation_;
  QSize size_before_presentation_;
  QFont base_font_;
  QMenu* recent_menu_;
  QLabel* status_;
  models::CheckpointInfo shown_info_;  ///< the open checkpoint's description (path "": none)
  QProgressBar* progress_;
  QPushButton* cancel_button_;
};

}  // namespace dstudio::studio

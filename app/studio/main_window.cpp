// The main window: the shell around the tabs and the wiring of their work. See main_window.h.
// The menus are in main_window_menus.cpp, workspaces and lessons in main_window_workspace.cpp.
// The tabs' work is done by their controllers: checkpoint_jobs (Attention), return_jobs (Entropy
// and reward, Zeroing and target sweep), tsne_job, markov_lab_job, analyses_panel,
// training_panel and sweep_panel.

// Index of this file:
//   [SECTION] The window
//   [SECTION] Jobs and the status bar
//   [SECTION] Datasets
//   [SECTION] Errors, recent files, drag and drop
//   [SECTION] Presentation mode and tabs
//   [SECTION] Opening files and sweeps
//   [SECTION] The tab table and its figures
//   [SECTION] Closing and help
//   [SECTION] Checkpoints
//   [SECTION] Training runs

#include "main_window.h"

#include <qcustomplot.h>

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontMetrics>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QLayout>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QMoveEvent>
#include <QPainter>
#include <QProgressBar>
#include <QPushButton>
#include <QSaveFile>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QStatusBar>
#include <QTabBar>
#include <QTabWidget>
#include <QTextDocument>
#include <QTimer>
#include <QTreeWidget>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <utility>

#include "analyses_panel.h"
#include "checkpoint_jobs.h"
#include "default_dataset.h"
#include "dstudio/behaviour/d4rl_policy.h"
#include "dstudio/behaviour/default_datasets.h"
#include "dstudio/common/error.h"
#include "dstudio/common/resources.h"
#include "dstudio/common/system_info.h"
#include "dstudio/common/workspace.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/env/environment.h"
#include "dstudio/models/checkpoint.h"
#include "dstudio/models/dataset_fit.h"
#include "dstudio/models/targets.h"
#include "dstudio/viz/analysis_view.h"
#include "dstudio/viz/attention_map_view.h"
#include "dstudio/viz/dataset_view.h"
#include "dstudio/viz/entropy_reward_view.h"
#include "dstudio/viz/export_dialog.h"
#include "dstudio/viz/figures.h"
#include "dstudio/viz/markov_lab_view.h"
#include "dstudio/viz/number_text.h"
#include "dstudio/viz/return_analysis_view.h"
#include "dstudio/viz/sweep_results_view.h"
#include "dstudio/viz/tsne_view.h"
#include "dstudio/viz/workspace_view.h"
#include "figure_render_job.h"
#include "job.h"
#include "lesson_panel.h"
#include "lessons.h"
#include "markov_lab_job.h"
#include "plugins_dialog.h"
#include "return_jobs.h"
#include "sweep_panel.h"
#include "training_panel.h"
#include "tsne_job.h"
#include "user_guide.h"
#include "viewer_panel.h"

namespace dstudio::studio {
namespace {

// The status bar's text: a line too long for the window is shortened in the middle (its whole
// text in the tooltip) instead of cut off or widening the window. Text with a link is drawn as
// it is.
class StatusLabel : public QLabel {
 public:
  StatusLabel() { setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred); }

 protected:
  void paintEvent(QPaintEvent* event) override {
    const QString full = text();
    if (Qt::mightBeRichText(full)) return QLabel::paintEvent(event);
    const QString shown = fontMetrics().elidedText(full, Qt::ElideMiddle, contentsRect().width());
    setToolTip(shown == full ? QString() : full);
    QPainter painter(this);
    painter.setPen(palette().color(foregroundRole()));
    painter.drawText(contentsRect(), static_cast<int>(alignment()), shown);
  }
};

constexpr int kMaxRecent = 10;
const char* kRecentKey = "recentFiles";

bool isCheckpointFile(const QString& path) {
  return path.endsWith(QLatin1String(".pt"), Qt::CaseInsensitive);
}
// Workspaces are saved as .dstudio (a MIME type of its own, so a file manager opens them here);
// the JSON inside is the same, and .json files are read too.
bool isWorkspaceFile(const QString& path) {
  return path.endsWith(QLatin1String(".dstudio"), Qt::CaseInsensitive) ||
         path.endsWith(QLatin1String(".json"), Qt::CaseInsensitive);
}
// What a checkpoint is called on screen (models::checkpoint_label: a run by its folder).
QString labelOf(const QString& checkpoint) {
  return QString::fromStdString(models::checkpoint_label(checkpoint.toStdString()));
}
}  // namespace

// ---------------------------------------------------------------------------------------------
// The window: tabs, menus, status bar and the wiring of their jobs

// ---------------------------------------------------------------------------------------------
// [SECTION] The window

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      view_(new viz::DatasetView),
      attention_(new viz::AttentionMapView),
      tabs_(new QTabWidget),
      load_job_(addJob(tr("Loading"))),
      checkpoints_(new CheckpointJobs(attention_, addJob(tr("Inspecting")),
                                      addJob(tr("Comparing with")), this)),
      rollout_view_(new viz::EntropyRewardView),
      returns_view_(new viz::ReturnAnalysisView),
      return_jobs_(new ReturnJobs(rollout_view_, returns_view_, addJob(tr("Rolling out")),
                                  addJob(tr("Running")), this)),
      viewer_(new ViewerPanel),
      training_(new TrainingPanel),
      sweep_(new SweepPanel),
      tsne_view_(new viz::TsneView),
      tsne_job_(new TsneJob(tsne_view_, this)),
      markov_lab_(new viz::MarkovLabView),
      markov_lab_job_(new MarkovLabJob(markov_lab_, this)),
      analyses_(new AnalysesPanel),
      workspace_view_(new viz::WorkspaceView),
      lessons_(new LessonPanel(shippedLessons(), this)),
      status_(new StatusLabel),
      progress_(new QProgressBar),
      cancel_button_(new QPushButton(tr("Cancel"))) {
  setWindowTitle(tr("Decision Studio"));
  for (const auto& tab : tabTable()) addPage(tab.page, tab.title, tab.id);
  connect(workspace_view_, &viz::WorkspaceView::saveRequested, this,
          &MainWindow::chooseWorkspaceToSave);
  // The tabs never hold the window wider than the screen: scroll buttons are the last resort,
  // after fitTabBar() made the tabs' type smaller.
  tabs_->setUsesScrollButtons(true);
  tabs_->installEventFilter(this);
  addDockWidget(Qt::RightDockWidgetArea, lessons_);
  lessons_->hide();
  connectLessons();
  connectWorkspaceView();
  connectTrainingAndSweeps();
  tabs_->setMovable(true);
  // A job's last words belong to the tab that ran it: another tab shows what is open instead.
  connect(tabs_, &QTabWidget::currentChanged, this, [this] {
    if (!shown_job_) status_->setText(openSummary());
  });
  connect(view_, &viz::DatasetView::replayRequested, this, &MainWindow::replayEpisode);
  connect(viewer_, &ViewerPanel::message, status_, &QLabel::setText);
  connect(return_jobs_, &ReturnJobs::status, status_, &QLabel::setText);
  connect(return_jobs_, &ReturnJobs::stopped, this, &MainWindow::reportStopped);
  connect(return_jobs_, &ReturnJobs::rolloutShown, this, &MainWindow::rolloutShown);
  connect(return_jobs_, &ReturnJobs::returnsShown, this, &MainWindow::returnsShown);
  addJob(tsne_job_->job());
  addJob(markov_lab_job_->job());
  for (Job* job : analyses_->jobs()) addJob(job);
  setCentralWidget(tabs_);
  setAcceptDrops(true);
  resize(1280, 800);

  createMenus();

  setUpStatusBar();

  connectLoadingAndCheckpoints();

  QSettings settings;
  restoreGeometry(settings.value("mainWindow/geometry").toByteArray());
  rebuildRecentMenu();
  // The font before any window enlarged it (once per process: windows share the application font).
  static const QFont base = QApplication::font();
  base_font_ = base;
  // Every plot keeps its tick labels apart and its axis titles whole as it is resized or its
  // type grows.
  for (auto* plot : findChildren<QCustomPlot*>()) viz::keep_text_fitted(plot);
  // A plain start is in normal type: presentation mode is asked for (F11, --presentation), not
  // carried over from a lecture into the next day's work.
}

void MainWindow::connectLessons() {
  // A lesson's step is a workspace; its files are the shipped ones.
  connect(lessons_, &LessonPanel::stepChosen, this, [this](const QJsonObject& w) {
    const QByteArray json = QJsonDocument(w).toJson(QJsonDocument::Compact);
    const auto apply = [this, json] {
      QString error;
      if (!applyWorkspaceText(json, &error, QString::fromStdString(resources_dir().string())) &&
          !error.isEmpty())
        showError(tr("The lesson's step cannot open: %1").arg(error), ErrorOf::Workspace);
    };
    // A step that opens another checkpoint would take what was made on the open one with it:
    // asked first, never silently.
    const QString lost = lostToLesson(json);
    if (lost.isEmpty()) {
      apply();
      return;
    }
    auto* box = new QMessageBox(
        QMessageBox::Question, tr("Open the lesson?"),
        tr("The lesson opens another checkpoint in place of %1.").arg(labelOf(checkpointPath())),
        QMessageBox::Cancel, this);
    box->setInformativeText(
        tr("%1 would be lost. Export or save a workspace first to keep them.").arg(lost));
    auto* open = box->addButton(tr("Open the Lesson"), QMessageBox::AcceptRole);
    box->setDefaultButton(QMessageBox::Cancel);
    box->setObjectName(QStringLiteral("lessonReplacesDialog"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    connect(box, &QMessageBox::buttonClicked, this, [open, apply](QAbstractButton* clicked) {
      if (clicked == open) apply();
    });
    box->open();
  });
  connect(lessons_, &LessonPanel::bookmarkChosen, this, [this](int step) {
    showPage(viewer_);
    viewer_->goToStep(step);
  });
}

void MainWindow::connectWorkspaceView() {
  connect(workspace_view_, &viz::WorkspaceView::openRequested, this,
          &MainWindow::chooseWorkspaceToOpen);
  connect(workspace_view_, &viz::WorkspaceView::addFigureRequested, this,
          &MainWindow::chooseFigureRecipe);
  // A paper's figures drawn again from their recipes, one `dstudio figure render` each.
  figure_render_ = new FigureRenderJob(this);
  connect(workspace_view_, &viz::WorkspaceView::renderFiguresRequested, this, [this] {
    const QString folder = QFileDialog::getExistingDirectory(this, tr("Draw the Figures Into"));
    if (!folder.isEmpty()) renderFigures(folder);
  });
  connect(workspace_view_, &viz::WorkspaceView::cancelRenderRequested, figure_render_,
          &FigureRenderJob::cancel);
  connect(figure_render_, &FigureRenderJob::progressed, this,
          [this](int index, int total, const QString& recipe) {
            status_->setText(tr("Drawing figure %1 of %2 from %3…")
                                 .arg(index + 1)
                                 .arg(total)
                                 .arg(QFileInfo(recipe).fileName()));
          });
  connect(figure_render_, &FigureRenderJob::rendered, this, [this](int index) {
    const auto& r = figure_render_->results()[static_cast<std::size_t>(index)];
    workspace_view_->setFigureResult(
        index, r.ok ? tr("drawn: %1").arg(r.out) : tr("not drawn: %1").arg(r.message), r.ok);
  });
  connect(figure_render_, &FigureRenderJob::finished, this, [this](bool cancelled) {
    workspace_view_->setRendering(false);
    const auto& results = figure_render_->results();
    const auto drawn = std::count_if(results.begin(), results.end(),
                                     [](const FigureRenderJob::Result& r) { return r.ok; });
    status_->setText(cancelled ? tr("Drawing the figures cancelled: %1 drawn.").arg(drawn)
                               : tr("%1 of %2 figures drawn again from their recipes.")
                                     .arg(drawn)
                                     .arg(results.size()));
  });
}

void MainWindow::connectTrainingAndSweeps() {
  connect(training_, &TrainingPanel::runStarted, this, &MainWindow::refreshRuns);
  connect(training_, &TrainingPanel::runFinished, this, &MainWindow::refreshRuns);
  connect(training_, &TrainingPanel::openCheckpointRequested, this, &MainWindow::openCheckpoint);
  connect(training_, &TrainingPanel::compareCheckpointRequested, this,
          [this](const QString& checkpoint) {
            if (checkpoints_->path().isEmpty())
              status_->setText(tr("Open a model first: the run is compared with it."));
            else
              compareCheckpoint(checkpoint);
          });
  // A sweep's seeds on the chosen dataset, compared by setting in the Training tab.
  connect(sweep_, &SweepPanel::compareRequested, this,
          [this](const QStringList& dirs, const QStringList& settings, bool show) {
            training_->compareRunFolders(dirs, settings);
            if (show) showPage(training_);
          });
  connect(training_, &TrainingPanel::runFoldersCompared, this, &MainWindow::refreshRuns);
  connect(sweep_, &SweepPanel::openFailed, this, [this](const QString& message) {
    status_->setText(tr("Could not open the sweep."));
    showError(message, ErrorOf::Sweep);
  });
  connect(sweep_, &SweepPanel::sweepOpened, this, [this](const QString& dir) {
    status_->setText(tr("Sweep %1 open; its cells are read again every two seconds.")
                         .arg(QFileInfo(dir).fileName()));
  });
}

void MainWindow::setUpStatusBar() {
  progress_->setRange(0, 1000);
  progress_->setMinimumWidth(320);
  progress_->setMaximumWidth(420);
  // The share done and what is being done, on the bar itself: a first run makes the default
  // dataset for minutes, and a bar without words looks stuck.
  progress_->setTextVisible(true);
  progress_->setFormat(QStringLiteral("%p%"));
  progress_->hide();
  cancel_button_->hide();
  cancel_button_->setShortcut(Qt::Key_Escape);
  // Cancel stops what the bar shows: the job started last of those running.
  connect(cancel_button_, &QPushButton::clicked, this, [this] {
    if (shown_job_) shown_job_->cancel();
    if (shown_job_ == load_job_ || shown_job_ == checkpoints_->openJob())
      status_->setText(tr("Cancelling …"));
  });
  status_->setOpenExternalLinks(true);  // an export names its folder as a link
  statusBar()->addWidget(status_, 1);
  statusBar()->addPermanentWidget(progress_);
  statusBar()->addPermanentWidget(cancel_button_);
  status_->setText(tr("Open a D4RL or Minari dataset: File ▸ Open, or drop a file here."));
}

void MainWindow::connectLoadingAndCheckpoints() {
  connect(load_job_, &Job::finished, this, [this](Job::End end, const QString& error) {
    if (end == Job::End::Cancelled) {
      status_->setText(
          tr("Loading cancelled; %1")
              .arg(currentPath().isEmpty()
                       ? tr("nothing is open.")
                       : tr("still showing %1.").arg(QFileInfo(currentPath()).fileName())));
      emit loadCancelled();
    } else if (end == Job::End::Failed) {
      status_->setText(tr("Could not open the dataset."));
      showError(error);
      emit loadFailed(error);
    }
  });
  connect(checkpoints_, &CheckpointJobs::status, status_, &QLabel::setText);
  connect(checkpoints_, &CheckpointJobs::opened, this, &MainWindow::showCheckpoint);
  connect(checkpoints_, &CheckpointJobs::openStopped, this,
          [this](const QString& path, bool cancelled, const QString& error) {
            if (cancelled) {
              emit checkpointCancelled(path);
            } else {
              showError(error, ErrorOf::Checkpoint);
              emit checkpointFailed(error);
            }
          });
  connect(checkpoints_, &CheckpointJobs::compared, this, &MainWindow::showComparison);
  connect(checkpoints_, &CheckpointJobs::comparisonStopped, this,
          [this](const QString&, bool cancelled, const QString& error) {
            if (cancelled) {
              emit comparisonFailed(tr("cancelled"));
            } else {
              showError(error, ErrorOf::Checkpoint);
              emit comparisonFailed(error);
            }
          });
  connect(analyses_, &AnalysesPanel::message, status_, &QLabel::setText);
  connect(attention_, &viz::AttentionMapView::compareRequested, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Compare with Checkpoint"),
                                                      training_->runsDirectory(),
                                                      tr("Checkpoints (*.pt);;All files (*)"));
    if (!path.isEmpty()) compareCheckpoint(path);
  });
}

MainWindow::~MainWindow() {
  // Never destroy the window under a running worker: stop them all, then wait.
  for (Job* job : jobs_) job->cancel();
  for (Job* job : jobs_) job->cancelAndWait();
  viewer_->clear(QString());  // stops the player's thread before the widgets go
  // The type is the application's: a window closed in presentation mode gives it back.
  if (presentation_) QApplication::setFont(base_font_);
}

// ---------------------------------------------------------------------------------------------
// Jobs and the status bar

// ---------------------------------------------------------------------------------------------
// [SECTION] Jobs and the status bar

Job* MainWindow::addJob(const QString& name) {
  return addJob(new Job(name, this));
}

Job* MainWindow::addJob(Job* job) {
  jobs_.push_back(job);
  connect(job, &Job::started, this, [this, job] {
    shown_job_ = job;
    progress_->setValue(0);
    progress_->setFormat(QStringLiteral("%p% · ") + job->name().toLower());
    updateBusy();
  });
  connect(job, &Job::progressed, this, [this, job](double fraction, const QString& stage) {
    if (job != shown_job_) return;
    progress_->setValue(static_cast<int>(fraction * 1000));
    const QString what = stage.isEmpty() ? QFileInfo(job->label()).fileName() : stage;
    progress_->setToolTip(job->name() + ": " + what);
    // One line on the bar, however long the stage: the tooltip has all of it.
    const QFontMetrics metrics = progress_->fontMetrics();
    const int room = std::max(
        40, progress_->width() - metrics.horizontalAdvance(QStringLiteral("100% · ")) - 16);
    progress_->setFormat(QStringLiteral("%p% · ") + metrics.elidedText(what, Qt::ElideRight, room));
  });
  connect(job, &Job::stopped, this, &MainWindow::updateBusy);
  return job;
}

std::vector<Job*> MainWindow::jobs() const {
  return jobs_;
}

void MainWindow::updateBusy() {
  if (!shown_job_ || !shown_job_->isRunning()) {
    shown_job_ = nullptr;
    for (Job* job : jobs_)
      if (job->isRunning()) shown_job_ = job;  // the last made of those running
  }
  const bool busy = shown_job_ != nullptr;
  // Wide enough for the share and a stage such as "step 1000 of 1000" in the type of the moment,
  // and never under the bar's own minimum: the status text beside it stretches to take the rest.
  const QFontMetrics metrics = progress_->fontMetrics();
  const int wanted =
      std::max(320, metrics.horizontalAdvance(QStringLiteral("100% · step 1000 of 1000")) +
                        2 * metrics.height());
  progress_->setMinimumWidth(wanted);
  progress_->setMaximumWidth(std::max(420, wanted));
  progress_->setVisible(busy);
  cancel_button_->setVisible(busy);
  if (busy) cancel_button_->setToolTip(tr("Cancel: %1").arg(shown_job_->name().toLower()));
}

bool MainWindow::isLoading() const {
  return load_job_->isRunning();
}

QString MainWindow::statusText() const {
  return status_->text();
}

QString MainWindow::openSummary() const {
  QStringList open;
  if (!currentPath().isEmpty()) open << tr("dataset %1").arg(QFileInfo(currentPath()).fileName());
  if (!checkpointPath().isEmpty()) open << tr("model %1").arg(labelOf(checkpointPath()));
  if (!checkpoints_->comparedPath().isEmpty())
    open << tr("compared with %1").arg(labelOf(checkpoints_->comparedPath()));
  if (open.isEmpty()) return tr("Open a D4RL or Minari dataset: File ▸ Open, or drop a file here.");
  const QString mismatch = datasetMismatch();
  return tr("Open: %1").arg(open.join(QStringLiteral(" · "))) +
         (mismatch.isEmpty() ? QString() : QStringLiteral(" — ") + mismatch);
}

QString MainWindow::lostToLesson(const QByteArray& step_json) const {
  if (checkpointPath().isEmpty()) return {};
  Workspace step;
  try {
    step =
        resolve_resources(parse_workspace(std::string_view(
                              step_json.constData(), static_cast<std::size_t>(step_json.size()))),
                          resources_dir());
  } catch (const std::exception&) {
    return {};  // said when the step is applied
  }
  if (step.checkpoint.empty() ||
      QFileInfo(QString::fromStdString(step.checkpoint)) == QFileInfo(checkpointPath()))
    return {};
  QStringList results;
  for (const QString& name : analyses_->names())
    if (const auto* view = analyses_->view(name); view && view->hasResult()) results << name;
  return results.isEmpty()
             ? QString()
             : tr("The Analyses tab's results (%1)").arg(results.join(QStringLiteral(", ")));
}

QString MainWindow::datasetMismatch() const {
  const auto& ds = view_->dataset();
  if (!ds || shown_info_.path.empty()) return {};
  std::string why;
  try {
    why = models::check_dataset_fits(shown_info_, *ds);
  } catch (const models::CheckpointError& e) {
    why = e.what();
  }
  if (why.empty()) return {};
  return tr("Note: %1. The checkpoint's views use its own dataset.")
      .arg(QString::fromStdString(why));
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Datasets

QString MainWindow::currentPath() const {
  const auto& ds = view_->dataset();
  return ds ? QString::fromStdString(ds->path) : QString();
}

// ---------------------------------------------------------------------------------------------
// Datasets

void MainWindow::openDataset(const QString& path) {
  startLoad(QFileInfo(path).fileName(), [path](const Progress&) { return path; });
}

void MainWindow::openDefaultDataset() {
  const auto& d = behaviour::kStoryDataset;
  const bool made =
      std::filesystem::exists(behaviour::default_dataset_path(d.env, d.kind, d.algorithm));
  startLoad(tr("default dataset"), [](const Progress& progress) {
    // Making the dataset is the first half of the bar, loading it the second.
    Progress making = progress;
    making.report = [&progress](double f, std::string_view stage) {
      if (progress.report)
        progress.report(0.5 * f, std::string("making the default dataset: ") + std::string(stage));
    };
    return ensureDefaultDataset(making);
  });
  // The first start makes the dataset: say so, and for how long, rather than only "Loading".
  if (!made)
    status_->setText(
        tr("First run: making the default dataset (%1 %2, %3 transitions) from the shipped "
           "behaviour policies, "
           "about 2 to 3 minutes on two cores; it is kept in %4 for the next start.")
            .arg(QString::fromUtf8(d.env), QString::fromUtf8(behaviour::to_string(d.kind)))
            .arg(QLocale().toString(
                static_cast<qlonglong>(behaviour::default_transitions(d.env, d.kind, d.algorithm))))
            .arg(QString::fromStdString(behaviour::cache_folder().string())));
}

void MainWindow::openTaskDataset(const QString& env) {
  const std::string task = env.toStdString();
  const auto path = behaviour::default_dataset_path(task, behaviour::DatasetKind::Expert);
  const bool made = std::filesystem::exists(path);
  startLoad(env, [task](const Progress& progress) {
    Progress making = progress;
    making.report = [&progress, &task](double f, std::string_view stage) {
      if (progress.report)
        progress.report(0.5 * f, "making " + task + "'s dataset: " + std::string(stage));
    };
    // The kind does not apply to these tasks: each has the one dataset its policy makes.
    return QString::fromStdString(
        behaviour::ensure_default_dataset(task, behaviour::DatasetKind::Expert, making).string());
  });
  if (made) return;
  const auto info = behaviour::identify_default_dataset(path);
  status_->setText(
      tr("First use: making %1, a few minutes on two cores (the progress bar says how far; Cancel "
         "stops it and leaves no file); it is kept in %2 for the next time.")
          .arg(QString::fromStdString(info ? info->label : task),
               QString::fromStdString(behaviour::cache_folder().string())));
}

void MainWindow::startLoad(const QString& label,
                           std::function<QString(const Progress&)> resolve_path) {
  status_->setText(tr("Loading %1 …").arg(label));
  load_job_->start(
      [this, resolve_path = std::move(resolve_path)](const Progress& progress) -> Job::Deliver {
        const QString path = resolve_path(progress);
        auto dataset = std::make_shared<const data::Dataset>(
            data::load_dataset(path.toStdString(), {.isolate = true}, progress));
        return [this, path, dataset] { showDataset(path, dataset); };
      },
      label);
}

void MainWindow::cancelLoad() {
  if (!load_job_->isRunning()) return;
  load_job_->cancel();
  status_->setText(tr("Cancelling …"));
}

void MainWindow::showDataset(const QString& path,
                             const std::shared_ptr<const data::Dataset>& dataset) {
  view_->setDataset(dataset);
  training_->setDataset(dataset, path);
  workspace_view_->setDataset(dataset.get());
  analyses_->setDataset(path);
  const auto s = data::summarize(*dataset);
  const QString name = QFileInfo(path).fileName();
  QString what = name;
  // The studio's own datasets by what they are, as `dstudio dataset default` names them.
  if (const auto info = behaviour::identify_default_dataset(path.toStdString()))
    what = QString::fromStdString(info->name) +
           (info->story ? tr(" (the default dataset, the shipped checkpoints' data)") : QString()) +
           QStringLiteral(", ") + name;
  setWindowTitle(tr("%1 — Decision Studio").arg(name));
  status_->setText(
      tr("%1: %2 transitions, %3 complete episodes, %4 %5")
          .arg(what)
          .arg(QLocale().toString(static_cast<qlonglong>(s.transitions)))
          .arg(s.episodes)
          .arg(s.tail_steps)
          .arg(s.tail_steps == 1 ? tr("tail step") : tr("tail steps")) +
      (datasetMismatch().isEmpty() ? QString() : QStringLiteral(" — ") + datasetMismatch()));
  rememberRecent(path);
  emit datasetOpened(path);
}

// ---------------------------------------------------------------------------------------------
// Errors, recent files, drag and drop

// ---------------------------------------------------------------------------------------------
// [SECTION] Errors, recent files, drag and drop

void MainWindow::showError(const QString& message, ErrorOf what) {
  // Window-modal and non-blocking: the event loop (and any test driving it) keeps running.
  const bool checkpoint = what == ErrorOf::Checkpoint, workspace = what == ErrorOf::Workspace,
             sweep = what == ErrorOf::Sweep;
  auto* box = new QMessageBox(QMessageBox::Critical,
                              checkpoint  ? tr("Cannot open checkpoint")
                              : workspace ? tr("Cannot open workspace")
                              : sweep     ? tr("Cannot open sweep")
                                          : tr("Cannot open dataset"),
                              checkpoint  ? tr("This file cannot be inspected as a checkpoint.")
                              : workspace ? tr("This file cannot be opened as a workspace.")
                              : sweep     ? tr("This folder cannot be read as a sweep.")
                                          : tr("This file cannot be used as a dataset."),
                              QMessageBox::Ok, this);
  box->setInformativeText(message);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->setObjectName(checkpoint  ? "checkpointErrorDialog"
                     : workspace ? "workspaceErrorDialog"
                     : sweep     ? "sweepErrorDialog"
                                 : "datasetErrorDialog");
  box->open();
}

void MainWindow::chooseFile() {
  QSettings settings;
  const QString dir = settings.value("lastDatasetFolder").toString();
  const QString path = QFileDialog::getOpenFileName(
      this, tr("Open Dataset"), dir, tr("HDF5 datasets (*.hdf5 *.h5);;All files (*)"));
  if (path.isEmpty()) return;
  settings.setValue("lastDatasetFolder", QFileInfo(path).absolutePath());
  openDataset(path);
}

void MainWindow::rememberRecent(const QString& path) {
  QSettings settings;
  QStringList recent = settings.value(kRecentKey).toStringList();
  const QString absolute = QFileInfo(path).absoluteFilePath();
  recent.removeAll(absolute);
  recent.prepend(absolute);
  while (recent.size() > kMaxRecent) recent.removeLast();
  settings.setValue(kRecentKey, recent);
  rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
  recent_menu_->clear();
  const QStringList recent = QSettings().value(kRecentKey).toStringList();
  for (int i = 0; i < recent.size(); ++i) {
    const QString path = recent[i];
    auto* action =
        recent_menu_->addAction(QString("&%1  %2").arg(i + 1).arg(QFileInfo(path).fileName()), this,
                                [this, path] { openAny(path); });
    action->setToolTip(path);
  }
  recent_menu_->setEnabled(!recent.isEmpty());
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (event->mimeData()->hasUrls() && event->mimeData()->urls().first().isLocalFile())
    event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const auto urls = event->mimeData()->urls();
  if (urls.isEmpty() || !urls.first().isLocalFile()) return;
  event->acceptProposedAction();
  QStringList paths;
  for (const auto& url : urls)
    if (url.isLocalFile()) paths << url.toLocalFile();
  openFiles(paths);
}

// ---------------------------------------------------------------------------------------------
// Presentation mode and tabs

// ---------------------------------------------------------------------------------------------
// [SECTION] Presentation mode and tabs

void MainWindow::setPresentationMode(bool on) {
  if (on == presentation_) return;
  presentation_ = on;
  // The window grows with its type; leaving gives it back the size it had.
  if (on) geometry_before_presentation_ = saveGeometry(), size_before_presentation_ = size();
  if (presentation_action_ && presentation_action_->isChecked() != on) {
    const QSignalBlocker block(presentation_action_);
    presentation_action_->setChecked(on);
  }
  QFont font = base_font_;
  if (on) font.setPointSizeF(base_font_.pointSizeF() * kPresentationScale);
  QApplication::setFont(font);
  viewer_->setPresentation(on);
  fitTabBar();
  QTimer::singleShot(0, this, &MainWindow::fitToScreen);  // once the larger type is laid out
  // Plots draw their text in fonts of their own: they are scaled alike.
  for (auto* plot : findChildren<QCustomPlot*>())
    viz::set_plot_text_scale(plot, on ? kPresentationScale : 1.0);
  // The smaller type lays the window out anew once its events are handled; the size it had
  // comes back after that, when nothing holds it larger any more.
  if (!on && !geometry_before_presentation_.isEmpty())
    QTimer::singleShot(
        0, this,
        [this, geometry = geometry_before_presentation_, size = size_before_presentation_] {
          if (presentation_) return;
          // Layouts take the smaller type first, so that nothing holds the window at its large
          // size.
          QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
          if (layout()) layout()->activate();
          restoreGeometry(geometry);
          if (!isMaximized() && !isFullScreen()) resize(size);
        });
}

void MainWindow::addPage(QWidget* page, const QString& title, const QString& id) {
  // Each page scrolls rather than hold the window wider or taller than the screen: a lesson panel
  // beside the tabs, or large type, on a laptop's 1280 x 800.
  auto* area = new QScrollArea;
  area->setWidget(page);
  area->setWidgetResizable(true);
  area->setFrameShape(QFrame::NoFrame);
  const int index = tabs_->addTab(area, title);
  tabs_->tabBar()->setTabData(index, id);  // what workspaces name it by, whatever the language
}

QWidget* MainWindow::page(int index) const {
  auto* area = qobject_cast<QScrollArea*>(tabs_->widget(index));
  return area ? area->widget() : nullptr;
}

QWidget* MainWindow::currentPage() const {
  return page(tabs_->currentIndex());
}

int MainWindow::pageIndex(QWidget* shown) const {
  for (int i = 0; i < tabs_->count(); ++i)
    if (page(i) == shown) return i;
  return -1;
}

void MainWindow::showPage(QWidget* shown) {
  if (const int i = pageIndex(shown); i >= 0) tabs_->setCurrentIndex(i);
}

void MainWindow::fitTabBar() {
  // Every tab in view: the tab bar's own type shrinks (to a fifth under the normal size at most)
  // until all the tabs fit the width they have, rather than scrolling some off screen or holding
  // the window wider than the screen (a lesson panel beside the tabs at 1280 pixels).
  QTabBar* bar = tabs_->tabBar();
  QFont font = QApplication::font();
  const double largest = font.pointSizeF();
  const double smallest = std::min(largest, kSmallestTabType * base_font_.pointSizeF());
  for (double size = largest; size >= smallest - 1e-9; size -= 0.25) {
    font.setPointSizeF(size);
    bar->setFont(font);
    if (bar->sizeHint().width() <= tabs_->width()) return;
  }
}

void MainWindow::fitToScreen() {
  // Qt's offscreen platform has a nominal screen and no window manager: nothing to fit.
  if (isMaximized() || isFullScreen() || !screen() ||
      QGuiApplication::platformName() == QLatin1String("offscreen"))
    return;
  const QRect available = screen()->availableGeometry();
  const QRect frame = frameGeometry(), inside = geometry();
  if (available.contains(frame)) return;
  // The frame's edges as the window manager draws them (none before it has framed the window).
  const int left = inside.left() - frame.left(), top = inside.top() - frame.top(),
            right = frame.right() - inside.right(), bottom = frame.bottom() - inside.bottom();
  resize(std::min(width(), available.width() - left - right),
         std::min(height(), available.height() - top - bottom));
  const QRect now = frameGeometry();
  move(std::clamp(now.left(), available.left(),
                  std::max(available.left(), available.right() - now.width() + 1)),
       std::clamp(now.top(), available.top(),
                  std::max(available.top(), available.bottom() - now.height() + 1)));
}

void MainWindow::showEvent(QShowEvent* event) {
  QMainWindow::showEvent(event);
  QTimer::singleShot(0, this, &MainWindow::fitToScreen);
}

void MainWindow::moveEvent(QMoveEvent* event) {
  QMainWindow::moveEvent(event);
  // The window manager has framed the window (its frame is known once it moved it there).
  if (!framed_) {
    framed_ = frameGeometry() != geometry();
    if (framed_) QTimer::singleShot(0, this, &MainWindow::fitToScreen);
  }
}

bool MainWindow::eventFilter(QObject* watched, QEvent* event) {
  if (watched == tabs_ && event->type() == QEvent::Resize) fitTabBar();
  return QMainWindow::eventFilter(watched, event);
}

// ---------------------------------------------------------------------------------------------
// Opening files and sweeps

// ---------------------------------------------------------------------------------------------
// [SECTION] Opening files and sweeps

bool MainWindow::replayEpisode(qint64 episode) {
  const auto& dataset = view_->dataset();
  if (!dataset) return false;
  try {
    std::shared_ptr<models::EpisodePlayer> replay =
        models::EpisodePlayer::replay(*dataset, static_cast<int>(episode));
    viewer_->setPlayer(tr("%1, episode %2")
                           .arg(QFileInfo(QString::fromStdString(dataset->path)).completeBaseName())
                           .arg(episode),
                       replay);
    showPage(viewer_);
    status_->setText(tr("Replaying episode %1 of the dataset in the viewer").arg(episode));
    return true;
  } catch (const std::exception& e) {
    status_->setText(
        tr("Cannot replay episode %1: %2").arg(episode).arg(QString::fromStdString(e.what())));
    return false;
  }
}

bool MainWindow::playBehaviour(const QString& policy, const QString& task) {
  const auto& dataset = view_->dataset();
  try {
    std::string env = task.toStdString();
    if (env.empty() && dataset) env = dataset->env_id;
    behaviour::MlpPolicy mlp;
    std::string name;
    if (policy == QLatin1String("dataset")) {
      if (!dataset) throw UsageError("no dataset is open");
      if (!behaviour::has_d4rl_policy(*dataset))
        throw UsageError(dataset->path + " carries no behaviour policy (metadata/policy)");
      mlp = behaviour::d4rl_policy(*dataset);
      name = dataset->path;
      if (env.empty()) env = mlp.task;
      if (env.empty())
        throw UsageError(dataset->path +
                         " names no task its policy acts in (metadata/env, or "
                         "D4RL's file name)");
    } else {
      if (env.empty())
        throw UsageError(
            "name the Adroit task its expert plays (pen, door, hammer or relocate), "
            "or open one of its datasets");
      mlp = behaviour::shipped_dapg_policy(env);
      name = "dapg";
    }
    std::shared_ptr<models::EpisodePlayer> player =
        models::EpisodePlayer::behaviour(mlp, env, name);
    const QString task_name = QString::fromStdString(player->task().name);
    const QString title =
        name == "dapg" ? tr("%1: the DAPG expert (behaviour policy)").arg(task_name)
                       : tr("%1: %2's metadata/policy (behaviour policy)")
                             .arg(task_name, QFileInfo(QString::fromStdString(name)).fileName());
    viewer_->setPlayer(title, player);
    showPage(viewer_);
    status_->setText(tr("Playing %1 in the viewer, with its mean action").arg(title));
    return true;
  } catch (const std::exception& e) {
    status_->setText(
        tr("Cannot play the behaviour policy: %1").arg(QString::fromStdString(e.what())));
    return false;
  }
}

void MainWindow::openSweep(const QString& dir) {
  status_->setText(tr("Reading the sweep %1 …").arg(QFileInfo(dir).fileName()));
  sweep_->openSweep(dir);
  showPage(sweep_);
}

void MainWindow::openAny(const QString& path) {
  if (QFileInfo(path).isDir() &&
      QFileInfo::exists(QDir(path).filePath(QStringLiteral("sweep.json")))) {
    openSweep(path);
  } else if (isCheckpointFile(path)) {
    openCheckpoint(path);
  } else if (isWorkspaceFile(path)) {
    QString error;
    if (!loadWorkspace(path, &error)) {
      showError(error, ErrorOf::Workspace);
      emit workspaceFailed(error, false);
    } else if (!error.isEmpty()) {
      emit workspaceFailed(error, true);
    }
  } else {
    openDataset(path);
  }
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The tab table and its figures

std::vector<MainWindow::Tab> MainWindow::tabTable() const {
  using Sources = std::vector<const viz::FigureSource*>;
  const auto none = [] { return Sources{}; };
  const auto one = [](const viz::FigureSource* source) {
    return [source] { return Sources{source}; };
  };
  return {
      {view_, tr("Dataset"), QStringLiteral("dataset"), none, {}},
      {attention_, tr("Attention"), QStringLiteral("attention"), one(attention_), {}},
      {rollout_view_,
       tr("Entropy and reward"),
       QStringLiteral("entropy-reward"),
       one(rollout_view_),
       {}},
      {returns_view_,
       tr("Zeroing and target sweep"),
       QStringLiteral("zeroing-sweep"),
       one(returns_view_),
       {}},
      {tsne_view_, tr("Token t-SNE"), QStringLiteral("tsne"), one(tsne_view_), {}},
      // An analysis only when it has a result: the tabs before show the studio's own analyses.
      {analyses_, tr("Analyses"), QStringLiteral("analyses"),
       [this] {
         Sources out;
         for (const auto* source : analyses_->figureSources())
           if (source->hasFigure()) out.push_back(source);
         return out;
       },
       [this] {
         const auto* view = analyses_->currentView();
         return view ? view->figureRecipeText() : std::string();
       }},
      {viewer_, tr("Viewer"), QStringLiteral("viewer"), one(viewer_->timeline()), {}},
      {training_,
       tr("Training"),
       QStringLiteral("training"),
       [this] { return training_->figureSources(); },
       {}},
      {sweep_, tr("Sweep"), QStringLiteral("sweep"), one(sweep_->resultsView()), {}},
      {workspace_view_, tr("Workspace"), QStringLiteral("workspace"), none, {}},
      {markov_lab_, tr("Markov lab"), QStringLiteral("markov-lab"), one(markov_lab_), {}},
  };
}

std::vector<const viz::FigureSource*> MainWindow::figureSources() const {
  std::vector<const viz::FigureSource*> sources;
  for (const auto& tab : tabTable())
    for (const auto* source : tab.figures()) sources.push_back(source);
  return sources;
}

std::string MainWindow::figureRecipeText(QString* why) const {
  const auto say = [why](const QString& text) {
    if (why) *why = text;
    return std::string();
  };
  QWidget* shown = currentPage();
  try {
    for (const auto& tab : tabTable()) {
      if (tab.page != shown) continue;
      if (tab.shown_recipe) {
        const std::string text = tab.shown_recipe();
        return text.empty() ? say(tr("The analysis on screen has no figure yet.")) : text;
      }
      // The tab's figure, as Export All Views writes it.
      const auto sources = tab.figures();
      if (sources.empty()) return say(tr("This tab draws no figure."));
      const auto* source = sources.front();
      if (!source->hasFigure()) return say(tr("This tab has no figure yet."));
      const auto recipe = source->figureRecipe();
      if (!recipe)
        return say(
            tr("This figure has no recipe: what it shows was not computed from files (a "
               "replayed dataset episode, a run still training)."));
      return to_json(*recipe);
    }
    return say(tr("This tab draws no figure."));
  } catch (const std::exception& e) {
    return say(tr("No recipe: %1").arg(QString::fromStdString(e.what())));
  }
}

void MainWindow::openFiles(const QStringList& paths) {
  QStringList checkpoints;
  for (const auto& path : paths) {
    if (isCheckpointFile(path) && !QFileInfo(path).isDir())
      checkpoints << path;
    else
      openAny(path);
  }
  if (checkpoints.isEmpty()) return;
  if (checkpoints.size() > 2) {
    QStringList extra;
    for (int i = 2; i < checkpoints.size(); ++i) extra << QFileInfo(checkpoints[i]).fileName();
    const QString message =
        tr("Two checkpoints are open at once, a model and the one it is compared with: %1 and %2. "
           "Not opened: %3.")
            .arg(QFileInfo(checkpoints[0]).fileName(), QFileInfo(checkpoints[1]).fileName(),
                 extra.join(QStringLiteral(", ")));
    std::fprintf(stderr, "decision-studio: %s\n", qPrintable(message));
    showError(message, ErrorOf::Checkpoint);
  }
  compare_when_shown_ = checkpoints.size() > 1 ? checkpoints[1] : QString();
  openCheckpoint(checkpoints[0]);
}

// ---------------------------------------------------------------------------------------------
// Closing, help

// ---------------------------------------------------------------------------------------------
// [SECTION] Closing and help

void MainWindow::closeEvent(QCloseEvent* event) {
  QSettings settings;
  settings.setValue("mainWindow/geometry", saveGeometry());
  settings.setValue("session/last", QByteArray::fromStdString(to_json(workspace())));
  training_->cancelAll();
  for (Job* job : jobs_) job->cancel();
  QMainWindow::closeEvent(event);
}

void MainWindow::showUserGuide() {
  if (!user_guide_) user_guide_ = new UserGuideDialog(this);
  user_guide_->show();
  user_guide_->raise();
  user_guide_->activateWindow();
}

void MainWindow::showAbout() {
  QMessageBox::about(this, tr("About Decision Studio"),
                     tr("<b>%1</b><p>A studio for return-conditioned sequence models in offline "
                        "reinforcement learning.</p><p>BLAS: %2</p>")
                         .arg(QString::fromStdString(studio_version()),
                              QString::fromStdString(active_blas_name())));
}

// ---------------------------------------------------------------------------------------------
// Checkpoints: inspection, comparison, rollouts and their analyses (return_jobs.h)

// ---------------------------------------------------------------------------------------------
// [SECTION] Checkpoints

void MainWindow::chooseCheckpoint() {
  // The runs folder: where the window's own runs are.
  const QString path =
      QFileDialog::getOpenFileName(this, tr("Open Checkpoint"), training_->runsDirectory(),
                                   tr("Checkpoints (*.pt);;All files (*)"));
  if (!path.isEmpty()) openCheckpoint(path);
}

QString MainWindow::shippedTaskOfDefaultCheckpoint() const {
  const auto& dataset = view_->dataset();
  // Only a registered task's name: a file's env_id is the file's word, not a path to follow.
  if (!dataset || !env::find_task(dataset->env_id)) return {};
  const auto dir = resources_dir();
  if (dir.empty()) return {};
  // The story's tasks have a DT per dataset kind (hopper-medium-expert-dt.pt), not per task.
  return std::filesystem::exists(dir / "checkpoints" / (dataset->env_id + "-dt.pt"))
             ? QString::fromStdString(dataset->env_id)
             : QString();
}

void MainWindow::openDefaultCheckpoint() {
  const QString task = shippedTaskOfDefaultCheckpoint();
  openCheckpoint(
      task.isEmpty()
          ? defaultCheckpoint()
          : QString::fromStdString(
                (resources_dir() / "checkpoints" / (task.toStdString() + "-dt.pt")).string()));
}

bool MainWindow::isInspecting() const {
  return checkpoints_->isOpening();
}

void MainWindow::openCheckpoint(const QString& path) {
  showPage(attention_);
  checkpoints_->open(path);
}

void MainWindow::cancelInspection() {
  checkpoints_->cancelOpen();
}

QString MainWindow::checkpointPath() const {
  return checkpoints_->path();
}

void MainWindow::showCheckpoint(const OpenedCheckpoint& opened) {
  const auto& inspected = opened.inspected;
  const auto& info = inspected.info;
  const QString& path = opened.path;
  const QString& title = opened.title;
  // Work on the previous model stops; its results leave every view below.
  // (The t-SNE and the analyses panel stop their own when they are given the new checkpoint.)
  tsne_job_->setCheckpoint(path, title, 40, opened.checkpoint);
  analyses_->setCheckpoint(path, title, opened.checkpoint);
  // Paused at step 0: the user starts the policy (Space) when the viewer is on screen.
  if (opened.player)
    viewer_->setPlayer(title, opened.player, /*autoplay=*/false,
                       models::target_choices(opened.player->task(), inspected.episode_returns,
                                              info.training.reward_shift));
  else
    viewer_->clear(tr("This checkpoint cannot act in an environment: %1").arg(opened.player_error));
  workspace_view_->setCheckpoint(&info);
  workspace_view_->setCheckpoint(nullptr, /*compared=*/true);
  rememberRecent(path);
  // Targets on offer: the task's references and what this model's data reached.
  std::vector<models::TargetChoice> targets;
  const QString env = QString::fromStdString(info.env_id);
  try {
    if (!info.env_id.empty())
      targets = models::target_choices(env::task(info.env_id), inspected.episode_returns,
                                       info.training.reward_shift);
  } catch (const std::exception&) {
  }
  const QString label = labelOf(path);
  rollout_view_->setReady(targets.empty() ? QString() : env, targets, label);
  returns_view_->setReady(targets, label);
  // The rollouts, the ablation and the sweep act on the model read above (return_jobs.h).
  return_jobs_->setCheckpoint(
      opened.checkpoint, info, label,
      info.env_id.empty() ? std::nan("")
                          : env::normalized_score(env::task(info.env_id), inspected.best_return));
  shown_info_ = info;
  shown_info_.path = path.toStdString();
  const QString mismatch = datasetMismatch();
  status_->setText(
      tr("%1: attention maps on %2")
          .arg(title, viz::count_text(static_cast<qint64>(inspected.inspections.size()),
                                      tr("dataset window"), tr("dataset windows"))) +
      (mismatch.isEmpty() ? QString() : QStringLiteral(" — ") + mismatch));
  applyPendingViewer();
  applyPendingLesson();
  emit checkpointShown(path);
  if (!compare_when_shown_.isEmpty()) {
    const QString other = std::exchange(compare_when_shown_, QString());
    status_->setText(
        tr("%1 opened; comparing it with %2…").arg(title, QFileInfo(other).fileName()));
    compareCheckpoint(other);
  }
}

void MainWindow::compareCheckpoint(const QString& path) {
  if (!checkpoints_->compare(path))
    emit comparisonFailed(tr("Open a checkpoint first: the comparison uses its windows."));
}

void MainWindow::showComparison(const QString& path, const models::CheckpointInfo& info) {
  workspace_view_->setCheckpoint(&info, /*compared=*/true);
  return_jobs_->setCompared(path);
  showPage(attention_);
  if (pending_comparison_) {
    attention_->setComparisonMode(*pending_comparison_ == WorkspaceComparison::Difference
                                      ? viz::AttentionMapView::Comparison::Difference
                                      : viz::AttentionMapView::Comparison::SideBySide);
    pending_comparison_.reset();
  }
  emit comparisonShown(path);
}

void MainWindow::cancelComparison() {
  checkpoints_->cancelComparison();
}

bool MainWindow::isComparing() const {
  return checkpoints_->isComparing();
}

bool MainWindow::isRollingOut() const {
  return return_jobs_->isRunning();
}
void MainWindow::runRollout(const models::RolloutConfig& config) {
  return_jobs_->runRollout(config);
}
void MainWindow::cancelRollout() {
  return_jobs_->cancel();
}
void MainWindow::runAblation() {
  return_jobs_->runAblation();
}
void MainWindow::runSweep() {
  return_jobs_->runSweep();
}

void MainWindow::reportStopped(const QString& status, Job* job) {
  const bool cancelled = job->lastEnd() == Job::End::Cancelled;
  const QString why = cancelled ? tr("cancelled") : job->lastError();
  status_->setText(status.arg(why));
  if (!cancelled) showError(why, ErrorOf::Checkpoint);
  emit rolloutStopped(why);
}

// ---------------------------------------------------------------------------------------------
// Training runs

// ---------------------------------------------------------------------------------------------
// [SECTION] Training runs

void MainWindow::refreshRuns() {
  // The run list and the folders are in the same order: one row per run, as it was added.
  const QStringList folders = training_->runFolders();
  std::vector<viz::WorkspaceView::Run> runs;
  for (int i = 0; i < folders.size(); ++i) {
    const auto* item = training_->runList()->topLevelItem(i);
    runs.push_back({folders[i], item ? item->text(TrainingPanel::ColumnState) : QString(),
                    item ? item->text(TrainingPanel::ColumnLoss) : QString()});
  }
  workspace_view_->setRuns(runs);
}

}  // namespace dstudio::studio

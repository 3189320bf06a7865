// The window's workspaces and lessons: what it has open as a typed Workspace, applied back
// (files that moved are reported, the rest opens), saved and loaded whole. See main_window.h.

#include <qcustomplot.h>

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QLayout>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPainter>
#include <QProgressBar>
#include <QPushButton>
#include <QSaveFile>
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
#include "dstudio/behaviour/default_datasets.h"
#include "dstudio/common/error.h"
#include "dstudio/common/figure_recipe.h"
#include "dstudio/common/read_file.h"
#include "dstudio/common/resources.h"
#include "dstudio/common/system_info.h"
#include "dstudio/common/workspace.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/env/environment.h"
#include "dstudio/models/checkpoint.h"
#include "dstudio/models/targets.h"
#include "dstudio/viz/attention_map_view.h"
#include "dstudio/viz/dataset_view.h"
#include "dstudio/viz/entropy_reward_view.h"
#include "dstudio/viz/export_dialog.h"
#include "dstudio/viz/figures.h"
#include "dstudio/viz/markov_lab_view.h"
#include "dstudio/viz/return_analysis_view.h"
#include "dstudio/viz/sweep_results_view.h"
#include "dstudio/viz/tsne_view.h"
#include "dstudio/viz/workspace_view.h"
#include "figure_render_job.h"
#include "job.h"
#include "lesson_panel.h"
#include "lessons.h"
#include "main_window.h"
#include "markov_lab_job.h"
#include "plugins_dialog.h"
#include "return_jobs.h"
#include "sweep_panel.h"
#include "training_panel.h"
#include "tsne_job.h"
#include "user_guide.h"
#include "viewer_panel.h"

namespace dstudio::studio {

Workspace MainWindow::workspace() const {
  Workspace w;
  if (!currentPath().isEmpty())
    w.dataset = QFileInfo(currentPath()).absoluteFilePath().toStdString();
  if (!checkpointPath().isEmpty())
    w.checkpoint = QFileInfo(checkpointPath()).absoluteFilePath().toStdString();
  w.tab = tabs_->tabBar()->tabData(tabs_->currentIndex()).toString().toStdString();
  if (viewer_->hasPlayer()) w.viewer = viewer_->settings();
  for (const QString& run : training_->runFolders()) w.runs.push_back(run.toStdString());
  w.sweep = sweep_->sweepDir().toStdString();
  w.figures = figures_;
  w.bookmarks = viewer_->bookmarks();
  for (const auto& b : training_->runBookmarks()) w.bookmarks.push_back(b);
  w.window_geometry = saveGeometry().toBase64().toStdString();
  w.window_state = saveState().toBase64().toStdString();
  return w;
}

bool MainWindow::applyWorkspaceText(const QByteArray& json, QString* error,
                                    const QString& resources) {
  // Every key's type and range is checked (core's parser) before anything is applied: a file
  // that does not fit changes nothing.
  Workspace w;
  try {
    w = parse_workspace(std::string_view(json.constData(), static_cast<std::size_t>(json.size())));
    if (!resources.isEmpty()) w = resolve_resources(std::move(w), resources.toStdString());
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
  return applyWorkspace(w, error);
}

bool MainWindow::applyWorkspace(const Workspace& w, QString* error) {
  const auto q = [](const std::string& s) { return QString::fromStdString(s); };
  // Files that moved are reported, and what can be opened still is.
  QStringList missing;
  // "default" names the studio's default dataset, made when missing: not a file that moved.
  if (!w.dataset.empty() && w.dataset != "default" && !QFileInfo::exists(q(w.dataset)))
    missing << q(w.dataset);
  if (!w.checkpoint.empty() && !QFileInfo::exists(q(w.checkpoint))) missing << q(w.checkpoint);
  restoreGeometry(QByteArray::fromBase64(QByteArray::fromStdString(w.window_geometry)));
  restoreState(QByteArray::fromBase64(QByteArray::fromStdString(w.window_state)));
  pending_tab_ = q(w.tab);
  pending_viewer_ = w.viewer;
  pending_attention_ = w.attention;
  pending_compare_ = q(w.compare);
  pending_comparison_ = w.comparison;
  pending_run_ = w.run;
  // The workspace's bookmarks replace the ones shown: they name steps of its episode and runs.
  viewer_->setBookmarks(w.bookmarks);
  figures_ = w.figures;
  refreshFigures();
  training_->setRunBookmarks(w.bookmarks);
  if (!pending_compare_.isEmpty() && !QFileInfo::exists(pending_compare_))
    missing << pending_compare_, pending_compare_.clear();
  // "default": the default dataset, when no dataset is open yet.
  if (w.dataset == "default") {
    if (currentPath().isEmpty() && !load_job_->isRunning()) openDefaultDataset();
  } else if (!w.dataset.empty() && QFileInfo::exists(q(w.dataset))) {
    openDataset(q(w.dataset));
  }
  // The Markov lab needs no checkpoint: its chain and model are set, and trained if asked.
  if (w.markov_lab) {
    try {
      markov_lab_->setOptions(w.markov_lab->apply(markov_lab_->options()));
      if (w.markov_lab->train) markov_lab_job_->start();
    } catch (const std::exception& e) {
      missing << tr("the Markov lab's settings (%1)").arg(QString::fromStdString(e.what()));
    }
  }
  const QStringList open_runs = training_->runFolders();
  for (const auto& run : w.runs) {
    const QString dir = q(run);
    if (open_runs.contains(dir)) continue;
    if (!QFileInfo::exists(dir))
      missing << dir;
    else if (!training_->addRunFolder(dir))
      missing << dir + " (" + training_->lastError() + ")";
  }
  refreshRuns();
  if (!w.sweep.empty()) {
    const QString dir = q(w.sweep);
    if (!QFileInfo(dir).isDir())
      missing << dir;
    else if (QFileInfo(dir) != QFileInfo(sweep_->sweepDir()))
      sweep_->openSweep(dir);
  }
  const QString checkpoint = q(w.checkpoint);
  if (!checkpoint.isEmpty() && QFileInfo(checkpoint) == QFileInfo(checkpointPath()) &&
      !checkpoints_->isOpening()) {
    // Open already: its views stay, the requests apply now.
    checkpoints_->cancelComparison();
    if (pending_compare_.isEmpty())
      attention_->setComparisonMode(viz::AttentionMapView::Comparison::Alone);
    applyPendingViewer();
    applyPendingLesson();
  } else if (!checkpoint.isEmpty() && QFileInfo::exists(checkpoint)) {
    openCheckpoint(checkpoint);
  } else {
    applyPendingViewer();
  }
  if (!missing.isEmpty()) {
    if (error) *error = tr("these files are gone: %1").arg(missing.join(", "));
    status_->setText(tr("Workspace opened; not found, so left out: %1").arg(missing.join(", ")));
  }
  return true;
}

void MainWindow::applyPendingViewer() {
  if (pending_viewer_ && viewer_->hasPlayer()) {
    viewer_->applySettings(*pending_viewer_);
    pending_viewer_.reset();
  }
  if (!pending_tab_.isEmpty()) {
    // By the tab's id; a workspace of an earlier studio names it by its title.
    for (int i = 0; i < tabs_->count(); ++i)
      if (tabs_->tabBar()->tabData(i).toString() == pending_tab_ ||
          tabs_->tabText(i).remove('&') == pending_tab_)
        tabs_->setCurrentIndex(i);
    pending_tab_.clear();
  }
}

void MainWindow::applyPendingLesson() {
  if (pending_attention_) {
    switch (pending_attention_->map) {
      case WorkspaceMap::MeanOverLayers:
        attention_->setMode(viz::AttentionMapView::Mode::MeanOverLayers);
        break;
      case WorkspaceMap::Rollout:
        attention_->setMode(viz::AttentionMapView::Mode::Rollout);
        break;
      case WorkspaceMap::Layer:
        attention_->setMode(viz::AttentionMapView::Mode::Layer);
        // Counted from 1 as in the papers, head 0 the mean over heads (analysis::MapSelection).
        attention_->setLayer(pending_attention_->layer - 1);
        attention_->setHead(pending_attention_->head - 1);
        break;
    }
    pending_attention_.reset();
  }
  if (!pending_compare_.isEmpty()) {
    compareCheckpoint(pending_compare_);
    pending_compare_.clear();
  }
  if (pending_run_ == WorkspaceRun::Sweep)
    runSweep();
  else if (pending_run_ == WorkspaceRun::Ablation)
    runAblation();
  pending_run_.reset();
}

void MainWindow::openLesson(int lesson, int step) {
  if (lesson < 0 || lesson >= lessons_->lessons().size()) return;
  lessons_->open(lesson, step);
}

bool MainWindow::saveWorkspace(const QString& path, QString* error) const {
  QSaveFile file(path);  // written to a temporary file and renamed: never half a workspace
  if (!file.open(QIODevice::WriteOnly) ||
      file.write(QByteArray::fromStdString(to_json(workspace()))) < 0 || !file.commit()) {
    if (error) *error = tr("%1: cannot be written (%2)").arg(path, file.errorString());
    return false;
  }
  return true;
}

bool MainWindow::loadWorkspace(const QString& path, QString* error) {
  // A FIFO, a device or a file far larger than any workspace is refused before it is read.
  std::string text;
  try {
    text = read_regular_file(path.toStdString(), kMaxWorkspaceBytes);
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
  QString why;
  if (!applyWorkspaceText(QByteArray::fromStdString(text), &why) && !why.isEmpty()) {
    if (error) *error = tr("%1: %2").arg(path, why);
    return false;
  }
  rememberRecent(path);
  if (!why.isEmpty() && error) *error = tr("%1: %2").arg(path, why);
  return true;
}

void MainWindow::chooseWorkspaceToSave() {
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Save Workspace"), QStringLiteral("workspace.dstudio"),
                                   tr("Decision Studio workspaces (*.dstudio *.json)"));
  if (path.isEmpty()) return;
  QString error;
  if (saveWorkspace(path, &error)) {
    status_->setText(tr("Workspace saved to %1").arg(path));
    rememberRecent(path);
  } else {
    showError(error, ErrorOf::Workspace);
  }
}

void MainWindow::chooseWorkspaceToOpen() {
  const QString path = QFileDialog::getOpenFileName(
      this, tr("Open Workspace"), QString(), tr("Decision Studio workspaces (*.dstudio *.json)"));
  if (path.isEmpty()) return;
  QString error;
  if (!loadWorkspace(path, &error))
    showError(error, ErrorOf::Workspace);
  else if (!error.isEmpty())
    status_->setText(error);
}

void MainWindow::refreshFigures() {
  std::vector<viz::WorkspaceView::Figure> shown;
  for (const auto& path : figures_) {
    viz::WorkspaceView::Figure f;
    f.recipe = QString::fromStdString(path);
    try {
      const auto recipe = read_figure_recipe(path);
      f.figure = QString::fromStdString(recipe.figure.name);
      f.analysis = QString::fromStdString(recipe.analysis);
      // What it drew from: the checkpoint, or the sweep of a `sweep collect` figure.
      const auto sweep = recipe.options.find("sweep");
      f.checkpoint = QString::fromStdString(
          !recipe.checkpoint.empty() || sweep == recipe.options.end() ? recipe.checkpoint
                                                                      : sweep->second);
    } catch (const Error& e) {
      f.problem = QString::fromStdString(e.what());
    }
    shown.push_back(f);
  }
  workspace_view_->setFigures(shown);
}

bool MainWindow::renderFigures(const QString& folder) {
  QStringList recipes;
  for (const auto& path : figures_) recipes << QString::fromStdString(path);
  if (!figure_render_->start(recipes, folder)) {
    status_->setText(figure_render_->lastError());
    return false;
  }
  workspace_view_->setRendering(true);
  return true;
}

void MainWindow::chooseFigureRecipe() {
  const QString file = QFileDialog::getOpenFileName(this, tr("Add a Figure's Recipe"), QString(),
                                                    tr("Figure recipes (*.recipe.json *.json)"));
  if (file.isEmpty()) return;
  try {
    read_figure_recipe(file.toStdString());  // refused here, not when the workspace reopens
  } catch (const Error& e) {
    showError(tr("This file is not a figure recipe: %1").arg(QString::fromStdString(e.what())),
              ErrorOf::Workspace);
    return;
  }
  const std::string path = QFileInfo(file).absoluteFilePath().toStdString();
  if (std::find(figures_.begin(), figures_.end(), path) == figures_.end()) figures_.push_back(path);
  refreshFigures();
}

}  // namespace dstudio::studio

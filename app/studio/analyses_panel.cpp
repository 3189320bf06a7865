// The registered analyses in the window. See analyses_panel.h.

#include "analyses_panel.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QStackedWidget>
#include <QStandardPaths>
#include <memory>

#include "analysis_recipes.h"
#include "dstudio/analysis/analysis_registry.h"
#include "dstudio/viz/analysis_view.h"
#include "job.h"

namespace dstudio::studio {

AnalysesPanel::AnalysesPanel(QWidget* parent)
    : QWidget(parent), list_(new QListWidget), stack_(new QStackedWidget) {
  for (const auto& definition : analysis::analysis_registry().all()) {
    auto* view = new viz::AnalysisView(definition);
    const QString name = QString::fromStdString(definition->name);
    auto* job = new Job(tr("Running %1").arg(name), this);
    definitions_.push_back(definition);
    views_.push_back(view);
    jobs_.push_back(job);
    stack_->addWidget(view);
    auto* item = new QListWidgetItem(
        QString::fromStdString(definition->title.empty() ? definition->name : definition->title),
        list_);
    item->setToolTip(
        QString::fromStdString(definition->description + " (" + definition->origin.label() + ")"));
    connect(view, &viz::AnalysisView::runRequested, this, [this, name] { run(name); });
    connect(view, &viz::AnalysisView::cancelRequested, job, &Job::cancel);
    connect(job, &Job::progressed, view, &viz::AnalysisView::setProgress);
    connect(job, &Job::restarting, this, [this, view] {
      emit message(tr("%1: the earlier run stops, this one follows").arg(view->figureName()));
    });
    connect(job, &Job::finished, this, [this, view](Job::End end, const QString& error) {
      if (end == Job::End::Done)
        emit resultShown(view->figureName());
      else if (end == Job::End::Cancelled)
        view->stop(tr("cancelled"));
      else if (end == Job::End::Failed) {
        view->stop(error);
        emit message(tr("%1 failed: %2").arg(view->figureName(), error));
      }
    });
  }
  if (views_.empty()) {
    auto* none = new QLabel(tr("No analyses are registered."));
    none->setWordWrap(true);
    none->setAlignment(Qt::AlignCenter);
    stack_->addWidget(none);
  }
  // $XDG_DATA_HOME/decision-studio/analyses, as the Training tab keeps its runs.
  results_dir_ = QDir(QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation))
                     .filePath(QCoreApplication::applicationName() + QStringLiteral("/analyses"));
  list_->setMaximumWidth(220);
  connect(list_, &QListWidget::currentRowChanged, stack_, &QStackedWidget::setCurrentIndex);
  if (!views_.empty()) list_->setCurrentRow(0);
  auto* layout = new QHBoxLayout(this);
  layout->addWidget(list_);
  layout->addWidget(stack_, 1);
}

void AnalysesPanel::setCheckpoint(const QString& path, const QString& title,
                                  std::shared_ptr<const models::LoadedCheckpoint> opened) {
  // Another model: analyses of the previous one stop and their results leave the panels.
  if (path != checkpoint_)
    for (std::size_t i = 0; i < views_.size(); ++i)
      if (definitions_[i]->needs_checkpoint) {
        jobs_[i]->cancel();
        views_[i]->clearResult();
      }
  checkpoint_ = path;
  checkpoint_title_ = title;
  opened_ = std::move(opened);
  updateReady();
}

void AnalysesPanel::setDataset(const QString& path) {
  dataset_ = path;
  updateReady();
}

void AnalysesPanel::updateReady() {
  for (auto* view : views_) {
    if (view->definition().needs_checkpoint)
      view->setReady(!checkpoint_.isEmpty(),
                     tr("Runs on %1 and windows of its dataset.").arg(checkpoint_title_));
    else  // it says what it needs in its options; the open dataset, if any, is handed to it
      view->setReady(
          true,
          dataset_.isEmpty()
              ? QString()
              : tr("The open dataset, %1, is its dataset.").arg(QFileInfo(dataset_).fileName()));
  }
}

bool AnalysesPanel::run(const QString& name) {
  for (std::size_t i = 0; i < views_.size(); ++i) {
    auto* view = views_[i];
    if (view->figureName() != name) continue;
    const auto shared = definitions_[i];
    if (shared->needs_checkpoint && checkpoint_.isEmpty()) return false;
    // With a checkpoint, windows of its own dataset (as on the command line); without, the open
    // one.
    const QString on = shared->needs_checkpoint ? checkpoint_ : dataset_;
    // The paths absolute, as `dstudio analyze` gives them: the figure's recipe names the same
    // call, so `dstudio figure render` draws what this run drew.
    const auto call = recipes::absolute_call(
        *shared, checkpoint_.toStdString(),
        shared->needs_checkpoint ? std::string() : dataset_.toStdString(), view->options());
    analysis::AnalysisInputs inputs{call.checkpoint, call.dataset,
                                    analysis::AnalysisOptions(call.given),
                                    shared->needs_checkpoint ? opened_ : nullptr};
    view->setRunning(true);
    const QString model = shared->needs_checkpoint ? checkpoint_title_ : QString();
    // Files other commands read back (a steering direction for the live viewer) are kept at once,
    // with the summary and tables they belong to, in a folder of their own.
    const QString folder =
        QDir(results_dir_)
            .filePath((checkpoint_.isEmpty()
                           ? QString()
                           : QFileInfo(checkpoint_).completeBaseName() + QLatin1Char('-')) +
                      name + QLatin1Char('-') +
                      QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")));
    written_.erase(name);
    jobs_[i]->start(
        [this, view, shared, inputs, model, call, name,
         folder](const Progress& progress) -> Job::Deliver {
          auto result = std::make_shared<analysis::AnalysisResult>(
              analysis::run_analysis(*shared, inputs, progress));
          std::vector<std::string> kept;
          if (!result->documents.empty())
            analysis::write_result_files(*result, folder.toStdString());
          for (const auto& [file, text] : result->documents) kept.push_back(file);
          return [this, view, result, model, shared, call, name, folder, kept] {
            view->setRecipeMaker([shared, call](const viz::FigureStyle& style) {
              return recipes::analysis_recipe(*shared, call, std::string(), style);
            });
            view->setResult(*result, model);
            if (!kept.empty()) {
              QStringList files;
              for (const auto& f : kept) files << QString::fromStdString(f);
              written_[name] = folder;
              view->appendStatus(
                  tr("%1 written to %2; the Viewer's Interventions tab steers with them.")
                      .arg(files.join(QStringLiteral(", ")), folder));
              emit resultsWritten(name, folder);
            }
          };
        },
        on);
    return true;
  }
  return false;
}

QString AnalysesPanel::writtenFolder(const QString& name) const {
  const auto it = written_.find(name);
  return it == written_.end() ? QString() : it->second;
}

viz::AnalysisView* AnalysesPanel::currentView() const {
  return qobject_cast<viz::AnalysisView*>(stack_->currentWidget());
}

viz::AnalysisView* AnalysesPanel::view(const QString& name) const {
  for (auto* v : views_)
    if (v->figureName() == name) return v;
  return nullptr;
}

Job* AnalysesPanel::job(const QString& name) const {
  for (std::size_t i = 0; i < views_.size(); ++i)
    if (views_[i]->figureName() == name) return jobs_[i];
  return nullptr;
}

void AnalysesPanel::select(const QString& name) {
  for (std::size_t i = 0; i < views_.size(); ++i)
    if (views_[i]->figureName() == name) list_->setCurrentRow(static_cast<int>(i));
}

QStringList AnalysesPanel::names() const {
  QStringList out;
  for (auto* v : views_) out << v->figureName();
  return out;
}

std::vector<const viz::FigureSource*> AnalysesPanel::figureSources() const {
  std::vector<const viz::FigureSource*> out;
  for (auto* v : views_) out.push_back(v);
  return out;
}

}  // namespace dstudio::studio

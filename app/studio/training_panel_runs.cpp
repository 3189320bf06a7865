// The Training tab's runs: starting, resuming, pausing and cancelling them, the run list's rows and
// the selected run's curves. See training_panel.h; the panel's construction and forms are in
// training_panel.cpp.

#include <qcustomplot.h>

#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QCoreApplication>
#include <QDateTime>
#include <QDesktopServices>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSet>
#include <QSettings>
#include <QShortcut>
#include <QSlider>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardPaths>
#include <QTimer>
#include <QTreeWidget>
#include <QUrl>
#include <QVBoxLayout>
#include <algorithm>
#include <climits>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "bookmark_dialog.h"
#include "dstudio/analysis/curves.h"
#include "dstudio/analysis/metrics_row.h"
#include "dstudio/common/atomic_file.h"
#include "dstudio/common/error.h"
#include "dstudio/models/checkpoint.h"
#include "dstudio/models/config_fields.h"
#include "dstudio/models/evaluation.h"
#include "dstudio/models/run_description.h"
#include "dstudio/models/run_folder.h"
#include "dstudio/models/variant_registry.h"
#include "dstudio/viz/config_form.h"
#include "dstudio/viz/export_dialog.h"
#include "dstudio/viz/figures.h"
#include "dstudio/viz/number_text.h"
#include "dstudio/viz/run_curves_view.h"
#include "dstudio/viz/step_marks.h"
#include "job.h"
#include "training_panel.h"

namespace dstudio::studio {
namespace {

using nlohmann::ordered_json;

QString duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return viz::missing_text();
  const auto s = static_cast<long long>(std::llround(seconds));
  if (s < 60) return QObject::tr("%1 s").arg(s);
  if (s < 3600) return QObject::tr("%1 min %2 s").arg(s / 60).arg(s % 60);
  return QObject::tr("%1 h %2 min").arg(s / 3600).arg((s % 3600) / 60);
}

// A run list row that sorts numbers as numbers: a cell's Qt::UserRole holds its value. Blank
// cells sort after those with a number.
class RunItem : public QTreeWidgetItem {
 public:
  bool operator<(const QTreeWidgetItem& other) const override {
    const int c = treeWidget() ? treeWidget()->sortColumn() : 0;
    const QVariant a = data(c, Qt::UserRole), b = other.data(c, Qt::UserRole);
    if (a.isValid() && b.isValid()) return a.toDouble() < b.toDouble();
    if (a.isValid() != b.isValid()) return a.isValid();
    return QString::localeAwareCompare(text(c), other.text(c)) < 0;
  }
};

// A cell's text, and its number for sorting when it is one.
void set_cell(QTreeWidgetItem* item, int column, const QString& text,
              std::optional<double> number = std::nullopt) {
  item->setText(column, text);
  if (!number) {
    bool ok = false;
    const double v = text.toDouble(&ok);
    if (ok) number = v;
  }
  item->setData(column, Qt::UserRole, number ? QVariant(*number) : QVariant());
  if (number) item->setTextAlignment(column, Qt::AlignRight | Qt::AlignVCenter);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Runs

bool TrainingPanel::startTraining() {
  if (!dataset_) {
    showMessage(tr("Open a dataset first: runs train on the open dataset."), true);
    return false;
  }
  models::VariantConfig variant;
  models::TrainingConfig training;
  try {
    variant = variantConfig();
    training = trainingConfig();
  } catch (const UsageError& e) {
    const QString why = QString::fromStdString(e.what());
    showMessage(tr("Not started: %1").arg(why), true);
    markInvalidField(why);
    return false;
  }
  if (runs_dir_.isEmpty()) {
    showMessage(tr("Not started: choose a runs folder."), true);
    return false;
  }
  // A new folder per run.
  const QString label = variantLabel();
  std::filesystem::path dir;
  try {
    dir = models::make_run_folder(
        runs_dir_.toStdString(), label.toStdString(), training.seed,
        QDateTime::currentDateTime().toString("yyyyMMdd-hhmmss").toStdString());
  } catch (const std::exception& e) {
    showMessage(tr("Not started: %1").arg(QString::fromStdString(e.what())), true);
    return false;
  }
  std::unique_ptr<models::Trainer> trainer;
  try {
    trainer = std::make_unique<models::Trainer>(*dataset_, variant, training, dir);
  } catch (const std::exception& e) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    showMessage(tr("Not started: %1").arg(QString::fromStdString(e.what())), true);
    markInvalidField(QString::fromStdString(e.what()));
    return false;
  }
  // What produced the run, next to its metrics, so the folder can be compared later.
  models::RunDescription description;
  description.label = label.toStdString();
  description.variant = trainer->variant();
  description.training = training;
  description.dataset_path = dataset_path_.toStdString();
  description.dataset_fingerprint = dataset_->fingerprint;
  description.evaluation_episodes = eval_episodes_->value();
  try {
    write_text_atomically(dir / "run.json", models::run_description_text(description));
  } catch (const std::exception& e) {
    showMessage(tr("Not started: %1").arg(QString::fromStdString(e.what())), true);
    return false;
  }
  return launch(std::make_unique<TrainingRun>(QString::fromStdString(dir.string()), label, dataset_,
                                              std::move(trainer)),
                training.eval_every);
}

bool TrainingPanel::resumeFromCheckpoint(const QString& checkpoint) {
  if (!dataset_) {
    showMessage(tr("Open the dataset the checkpoint was trained on first."), true);
    return false;
  }
  std::unique_ptr<models::Trainer> trainer;
  try {
    trainer = models::Trainer::resume(*dataset_, checkpoint.toStdString());
  } catch (const std::exception& e) {
    showMessage(tr("Not continued: %1").arg(QString::fromStdString(e.what())), true);
    return false;
  }
  const auto eval_every = trainer->training().eval_every;
  const QString label = QString::fromStdString(trainer->variant().variant);
  auto run = std::make_unique<TrainingRun>(QFileInfo(checkpoint).absolutePath(), label, dataset_,
                                           std::move(trainer));
  // The curves so far, from the run's own metrics, so the continuation draws on after them.
  try {
    run->setMetrics(analysis::read_run_metrics(run->dir().toStdString()));
  } catch (const std::exception&) {
    // A checkpoint without its metrics next to it: the curves start at the resumed step.
  }
  return launch(std::move(run), eval_every);
}

bool TrainingPanel::launch(std::unique_ptr<TrainingRun> run, std::int64_t eval_every) {
  RunRow& row = addRow(std::move(run));
  row.run->start(eval_every, eval_episodes_->value());
  updateItem(row);
  runs_list_->setCurrentItem(row.item);
  showMessage(tr("Started %1.").arg(row.run->name()), false);
  showRun(&row);
  updateButtons();
  timer_->start();
  emit runStarted(row.run->dir());
  return true;
}

TrainingPanel::RunRow& TrainingPanel::addRow(std::unique_ptr<TrainingRun> run) {
  auto* item = new RunItem;
  item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
  {
    const QSignalBlocker block(runs_list_);
    item->setCheckState(ColumnRun, Qt::Checked);
    runs_list_->addTopLevelItem(item);
  }
  runs_.push_back({std::move(run), item});
  updateConfigColumns();
  return runs_.back();
}

TrainingPanel::RunRow* TrainingPanel::selectedRun() {
  const auto* item = runs_list_->currentItem();
  for (auto& row : runs_)
    if (row.item == item) return &row;
  return nullptr;
}

void TrainingPanel::pauseTraining() {
  if (RunRow* row = selectedRun()) row->run->pause();
  updateButtons();
}

void TrainingPanel::resumeTraining() {
  if (RunRow* row = selectedRun()) row->run->resume();
  updateButtons();
}

void TrainingPanel::cancelTraining() {
  if (RunRow* row = selectedRun()) row->run->cancel();
  updateButtons();
}

bool TrainingPanel::isTraining() const {
  return std::any_of(runs_.begin(), runs_.end(),
                     [](const RunRow& row) { return row.run->active(); });
}

void TrainingPanel::pull() {
  std::vector<std::pair<QString, QString>> finished;
  bool changed_any = false;
  const RunRow* selected = selectedRun();
  for (auto& row : runs_) {
    if (!row.run->active()) continue;
    if (!row.run->drain()) continue;
    changed_any = true;
    if (!row.run->active()) {
      const QString state = TrainingRun::stateName(row.run->state());
      finished.emplace_back(row.run->dir(), state);
      // "Started …" under Start would outlive the run it speaks of.
      if (message_->text() == tr("Started %1.").arg(row.run->name()))
        showMessage(tr("%1: %2.").arg(row.run->name(), state.toLower()), false);
    }
    updateItem(row);
    if (&row == selected) showRun(&row);
  }
  if (changed_any) updateComparison();
  updateButtons();
  if (!isTraining()) timer_->stop();
  for (const auto& [dir, state] : finished) emit runFinished(dir, state);
}

void TrainingPanel::updateItem(RunRow& row) {
  const QSignalBlocker block(runs_list_);  // text changes are not check changes
  const TrainingRun& run = *row.run;
  auto* item = row.item;
  const bool failed = run.state() == TrainingRun::State::Failed;
  item->setText(ColumnRun, run.name());
  item->setText(ColumnVariant, run.label());
  set_cell(item, ColumnSeed, run.seed().isEmpty() ? viz::missing_text() : run.seed());
  const QString state = TrainingRun::stateName(run.state());
  item->setText(ColumnState,
                failed && !run.note().isEmpty() ? tr("Failed: %1").arg(run.note()) : state);
  const auto loss = run.metrics().columns.find(analysis::metrics::kLoss);
  const bool has_loss = loss != run.metrics().columns.end() && !loss->second.y.empty();
  const auto step = has_loss ? static_cast<std::int64_t>(loss->second.x.back()) : run.last().step;
  set_cell(
      item, ColumnStep,
      run.totalSteps() > 0 ? tr("%1 / %2").arg(step).arg(run.totalSteps()) : QString::number(step),
      static_cast<double>(step));
  const auto number = [&](int column, std::optional<double> v, int digits) {
    if (v)
      set_cell(item, column, QString::number(*v, 'f', digits), *v);
    else
      set_cell(item, column, QString());
  };
  if (has_loss)
    set_cell(item, ColumnLoss, QString::number(loss->second.y.back(), 'g', 4),
             loss->second.y.back());
  else
    set_cell(item, ColumnLoss, QString());
  number(ColumnScore, run.last(analysis::metrics::kEvalScore), 1);
  number(ColumnEntropy, run.last(analysis::metrics::kEntropyLayer1), 3);
  for (int k = 0; k < config_keys_.size(); ++k)
    set_cell(item, ColumnCount + k, run.configValue(config_keys_[k]));
  QString tip = run.dir();
  if (!run.note().isEmpty()) {
    tip += '\n';
    tip += run.note();
  }
  for (int c = 0; c < runs_list_->columnCount(); ++c) item->setToolTip(c, tip);
  item->setForeground(ColumnState,
                      failed ? QColor(213, 94, 0) : runs_list_->palette().text().color());
}

void TrainingPanel::setRunBookmarks(std::vector<Bookmark> bookmarks) {
  run_bookmarks_ = bookmarks_on(std::move(bookmarks), BookmarkPlace::Run);
  showRun(selectedRun());
}

bool TrainingPanel::addRunBookmark(Bookmark bookmark) {
  const RunRow* row = selectedRun();
  if (!row) return false;
  bookmark.on = BookmarkPlace::Run;
  bookmark.run = row->run->dir().toStdString();
  auto all = run_bookmarks_;
  all.push_back(std::move(bookmark));
  setRunBookmarks(std::move(all));
  return true;
}

void TrainingPanel::drawRunBookmarks(const RunRow* row) {
  std::vector<viz::StepMark> marks;
  if (row)
    for (const auto& b : run_bookmarks_)
      if (QFileInfo(QString::fromStdString(b.run)) == QFileInfo(row->run->dir()))
        marks.push_back({static_cast<double>(b.step), QString::fromStdString(b.name)});
  for (auto* plot : {live_->lossPlot(), live_->learningRatePlot(), live_->throughputPlot(),
                     live_->evaluationPlot()}) {
    viz::draw_step_marks(plot, marks);
    plot->replot(QCustomPlot::rpQueuedReplot);
  }
}

void TrainingPanel::showRun(const RunRow* row) {
  if (!row) {
    live_->clear();
    drawRunBookmarks(nullptr);
    progress_->setRange(0, 1);
    progress_->setValue(0);
    progress_->setFormat(tr("no run"));
    status_->clear();
    return;
  }
  const TrainingRun& run = *row->run;
  using State = TrainingRun::State;
  const std::int64_t step = run.step(), total = run.totalSteps();
  live_->setRun({}, run.metrics());  // the status line above names the run
  drawRunBookmarks(row);

  if (total > 0 && total <= INT_MAX) {
    progress_->setRange(0, static_cast<int>(total));
    progress_->setValue(static_cast<int>(std::min<std::int64_t>(step, total)));
  } else {
    progress_->setRange(0, 1);
    progress_->setValue(run.active() ? 0 : 1);
  }
  QString format = total > 0 ? tr("step %1 / %2").arg(step).arg(total) : tr("step %1").arg(step);
  if (run.state() == State::Running && run.last().step > 0) {
    format += tr("  ·  ETA %1").arg(duration(run.last().eta_seconds));
  } else if (!run.active()) {
    format += tr("  ·  %1").arg(TrainingRun::stateName(run.state()).toLower());
  }
  progress_->setFormat(format);

  const auto loss = run.metrics().columns.find(analysis::metrics::kLoss);
  const bool has_loss = loss != run.metrics().columns.end() && !loss->second.y.empty();
  const QString loss_text =
      has_loss ? QString::number(loss->second.y.back(), 'g', 4) : viz::missing_text();
  QString status;
  switch (run.state()) {
    case State::Starting:
    case State::Running:
      status = run.last().step > 0 ? tr("%1: running, loss %2, learning rate %3, %4 steps/s")
                                         .arg(run.name(), loss_text,
                                              QString::number(run.last().learning_rate, 'g', 3))
                                         .arg(run.last().steps_per_second, 0, 'f', 1)
                                   : tr("%1: starting…").arg(run.name());
      break;
    case State::Paused:
      status = tr("%1: paused at step %2").arg(run.name()).arg(step);
      break;
    case State::Finished:
      status = tr("%1: finished, final loss %2; checkpoint.pt in %3")
                   .arg(run.name(), loss_text, run.dir());
      break;
    case State::Cancelled:
      status = tr("%1: cancelled, %2").arg(run.name(), run.note());
      break;
    case State::Failed:
      status = tr("%1 failed: %2").arg(run.name(), run.note());
      break;
    case State::Incomplete:
      status = tr("%1: %2, final loss %3 (%4)")
                   .arg(run.name(), TrainingRun::stateName(run.state()), loss_text, run.dir());
      break;
  }
  // What this run was trained with: the forms above hold the next run's settings, not its own.
  QStringList settings;
  for (const char* key : {"variant", "hidden", "layers", "heads", "context_length", "batch_size",
                          "steps", "learning_rate"}) {
    const QString value = run.configValue(QString::fromLatin1(key));
    if (!value.isEmpty())
      settings << (std::string_view(key) == "variant"
                       ? value
                       : QStringLiteral("%1 %2").arg(QString::fromLatin1(key), value));
  }
  if (!settings.isEmpty())
    status += tr("\nThis run's settings: %1 (the forms above are the next run's)")
                  .arg(settings.join(QStringLiteral(", ")));
  status_->setText(status);
  status_->setStyleSheet(run.state() == State::Failed ? QStringLiteral("color: #d55e00;")
                                                      : QString());
}

void TrainingPanel::updateButtons() {
  start_->setEnabled(dataset_ != nullptr);
  const RunRow* row = selectedRun();
  const bool active = row && row->run->active();
  const bool paused =
      active && (row->run->pauseRequested() || row->run->state() == TrainingRun::State::Paused);
  pause_->setEnabled(active && !paused);
  resume_->setEnabled(paused);
  cancel_->setEnabled(active && !row->run->cancelRequested());
}

}  // namespace dstudio::studio

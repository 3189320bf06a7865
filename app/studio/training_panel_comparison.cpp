// The Training tab's comparison of runs (groups over seeds, run folders added from disk or a sweep,
// the run list's columns) and its figures for export. See training_panel.h; the panel's
// construction and forms are in training_panel.cpp.

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

#include "dstudio/analysis/curves.h"
#include "dstudio/analysis/metrics_row.h"
#include "dstudio/common/atomic_file.h"
#include "dstudio/common/error.h"
#include "dstudio/models/checkpoint.h"
#include "dstudio/models/config_fields.h"
#include "dstudio/models/evaluation.h"
#include "dstudio/models/run_folder.h"
#include "dstudio/models/variant_registry.h"
#include "dstudio/viz/config_form.h"
#include "dstudio/viz/export_dialog.h"
#include "dstudio/viz/figures.h"
#include "dstudio/viz/number_text.h"
#include "dstudio/viz/run_curves_view.h"
#include "job.h"
#include "training_panel.h"
#include "training_panel_figures.h"

namespace dstudio::studio {
namespace {

// "grouped by" a sweep's settings (compareRunFolders): no configuration field starts with '@'.
const QString kSettingKey = QStringLiteral("@setting");

}  // namespace

// ---------------------------------------------------------------------------------------------
// Comparison and run folders

analysis::Band TrainingPanel::band() const {
  return band_->currentIndex() == 0 ? analysis::Band::MinMax : analysis::Band::MeanStd;
}

std::vector<analysis::CurveGroup> TrainingPanel::comparedGroups() const {
  // Checked runs with the chosen metric, grouped by the chosen field in the order they appear.
  const std::string key = metric_->currentData().toString().toStdString();
  std::vector<std::pair<std::string, const analysis::Curve*>> curves;
  for (const auto& row : runs_) {
    if (row.item->checkState(ColumnRun) != Qt::Checked) continue;
    const auto it = row.run->metrics().columns.find(key);
    if (it != row.run->metrics().columns.end() && !it->second.x.empty())
      curves.emplace_back(groupOf(*row.run).toStdString(), &it->second);
  }
  return analysis::group_curves(curves, smoothing_->value() / 100.0, band());
}

void TrainingPanel::updateComparison() {
  smoothing_label_->setText(QString::number(smoothing_->value() / 100.0, 'f', 2));
  compare_->setGroups(viz::drawn_groups(comparedGroups()), metric_->currentText(),
                      metric_->currentData().toString() == QLatin1String(analysis::metrics::kLoss),
                      runs_.empty() ? tr("Start runs or add run folders to compare them.")
                                    : tr("No checked run has %1 yet.").arg(metric_->currentText()));
}

bool TrainingPanel::addRunFolder(const QString& dir) {
  models::RunFolder folder;
  try {
    folder = models::read_run_folder(dir.toStdString());
  } catch (const std::exception& e) {
    last_error_ = tr("Cannot add the run: %1").arg(QString::fromStdString(e.what()));
    status_->setText(last_error_);
    status_->setStyleSheet(QStringLiteral("color: #d55e00;"));
    return false;
  }
  listRunFolder(std::move(folder));
  updateComparison();
  return true;
}

void TrainingPanel::listRunFolder(models::RunFolder folder) {
  const QString path = QString::fromStdString(folder.dir.string());
  last_error_.clear();
  for (auto& row : runs_)
    if (row.run->dir() == path && !row.run->active()) {  // read it again
      row.run->setMetrics(std::move(folder.metrics));
      updateItem(row);
      runs_list_->setCurrentItem(row.item);
      return;
    }
  RunRow& row = addRow(std::make_unique<TrainingRun>(std::move(folder)));
  updateItem(row);
  runs_list_->setCurrentItem(row.item);
}

void TrainingPanel::compareRunFolders(const QStringList& dirs, const QStringList& settings) {
  // The folders are read on a worker (a sweep's cells may be many, on a slow shared filesystem);
  // a newer request replaces one under way.
  folders_job_->start(
      [this, dirs, settings](const Progress& progress) -> Job::Deliver {
        auto folders = std::make_shared<std::vector<std::pair<models::RunFolder, QString>>>();
        for (int i = 0; i < dirs.size(); ++i) {
          progress.check();
          progress.update(static_cast<double>(i) / std::max<qsizetype>(1, dirs.size()),
                          "reading run folders");
          try {
            folders->emplace_back(models::read_run_folder(dirs[i].toStdString()),
                                  i < settings.size() ? settings[i] : QString());
          } catch (const std::exception&) {
            // Without metrics yet (a cell that has not logged): left out of the comparison.
          }
        }
        return [this, folders] { showComparedFolders(std::move(*folders)); };
      },
      dirs.isEmpty() ? QString() : dirs.front());
}

void TrainingPanel::showComparedFolders(
    std::vector<std::pair<models::RunFolder, QString>> folders) {
  // Listed (or read again), named by their setting, then the only ones checked.
  QSet<QString> compared;
  for (auto& [folder, setting] : folders) {
    const QString dir = QString::fromStdString(folder.dir.string());
    listRunFolder(std::move(folder));
    run_settings_[dir] = setting;
    compared.insert(dir);
  }
  {
    const QSignalBlocker block(runs_list_);
    for (auto& row : runs_)
      row.item->setCheckState(ColumnRun,
                              compared.contains(row.run->dir()) ? Qt::Checked : Qt::Unchecked);
  }
  const bool first = group_by_->findData(kSettingKey) < 0;
  if (first) group_by_->addItem(tr("setting"), kSettingKey);
  {
    const QSignalBlocker block(group_by_);
    group_by_->setCurrentIndex(group_by_->findData(kSettingKey));
  }
  if (first) {
    const bool evaluated = std::any_of(runs_.begin(), runs_.end(), [&](const RunRow& row) {
      return compared.contains(row.run->dir()) &&
             row.run->metrics().columns.count(analysis::metrics::kEvalScore) > 0;
    });
    const int score = metric_->findData(QString::fromLatin1(analysis::metrics::kEvalScore));
    if (evaluated && score >= 0) {
      const QSignalBlocker block(metric_);
      metric_->setCurrentIndex(score);
    }
  }
  updateComparison();
  emit runFoldersCompared(static_cast<int>(compared.size()));
}

QMenu* TrainingPanel::runMenu(int row) {
  // The row as the list shows it, which sorting may have reordered.
  const QTreeWidgetItem* item = runs_list_->topLevelItem(row);
  const auto at = std::find_if(runs_.begin(), runs_.end(),
                               [item](const RunRow& r) { return item && r.item == item; });
  if (at == runs_.end()) return nullptr;
  const TrainingRun& run = *at->run;
  const QString checkpoint = QDir(run.dir()).filePath(QStringLiteral("checkpoint.pt"));
  const bool saved = QFile::exists(checkpoint);
  auto* menu = new QMenu(this);
  auto* open = menu->addAction(tr("Open in the Analysis Views"), this,
                               [this, checkpoint] { emit openCheckpointRequested(checkpoint); });
  open->setEnabled(saved);
  auto* compare = menu->addAction(tr("Compare with the Open Model"), this, [this, checkpoint] {
    emit compareCheckpointRequested(checkpoint);
  });
  compare->setEnabled(saved);
  auto* resume = menu->addAction(tr("Continue Training"), this,
                                 [this, checkpoint] { resumeFromCheckpoint(checkpoint); });
  resume->setEnabled(saved && !run.active() && dataset_ != nullptr);
  menu->addSeparator();
  const QString dir = run.dir();
  menu->addAction(tr("Reveal Folder"), this,
                  [dir] { QDesktopServices::openUrl(QUrl::fromLocalFile(dir)); });
  for (QAction* a : menu->actions()) a->setObjectName(a->text());
  return menu;
}

int TrainingPanel::configColumn(const QString& key) const {
  const auto k = config_keys_.indexOf(key);
  return k < 0 ? -1 : ColumnCount + static_cast<int>(k);
}

QString TrainingPanel::groupOf(const TrainingRun& run) const {
  const QString key = group_by_->currentData().toString();
  if (key.isEmpty()) return run.label();
  if (key == kSettingKey) return run_settings_.value(run.dir(), run.label());
  const QString value = run.configValue(key);
  return QStringLiteral("%1=%2").arg(key, value.isEmpty() ? QStringLiteral("?") : value);
}

void TrainingPanel::updateConfigColumns() {
  // The variant and the seed have columns of their own.
  bool added = false;
  for (const auto& row : runs_)
    for (const auto& [key, value] : row.run->config()) {
      const QString k = QString::fromStdString(key);
      if (k != QLatin1String("variant") && k != QLatin1String("seed") &&
          !config_keys_.contains(k)) {
        config_keys_ << k;
        added = true;
      }
    }
  if (added) {
    runs_list_->setColumnCount(ColumnCount + static_cast<int>(config_keys_.size()));
    for (int k = 0; k < config_keys_.size(); ++k) {
      runs_list_->headerItem()->setText(ColumnCount + k, config_keys_[k]);
      if (const auto* field = models::config_field(config_keys_[k].toStdString()))
        runs_list_->headerItem()->setToolTip(ColumnCount + k,
                                             QString::fromStdString(field->description));
      runs_list_->header()->setSectionResizeMode(ColumnCount + k, QHeaderView::ResizeToContents);
    }
    const QSignalBlocker block(group_by_);
    const QString current = group_by_->currentData().toString();
    while (group_by_->count() > 1) group_by_->removeItem(1);
    if (!run_settings_.isEmpty()) group_by_->addItem(tr("setting"), kSettingKey);
    for (const auto& k : config_keys_) group_by_->addItem(k, k);
    group_by_->setCurrentIndex(std::max(0, group_by_->findData(current)));
  }
  // A field is shown when the runs listed differ in it, unless the user said otherwise.
  for (int k = 0; k < config_keys_.size(); ++k) {
    std::set<QString> values;
    for (const auto& row : runs_) values.insert(row.run->configValue(config_keys_[k]));
    const auto choice = column_choice_.constFind(config_keys_[k]);
    runs_list_->setColumnHidden(ColumnCount + k,
                                choice != column_choice_.constEnd() ? !*choice : values.size() < 2);
  }
  for (auto& row : runs_) updateItem(row);
}

QMenu* TrainingPanel::columnMenu() {
  auto* menu = new QMenu(this);
  for (int c = ColumnRun + 1; c < runs_list_->columnCount(); ++c) {
    const QString name = runs_list_->headerItem()->text(c);
    if (c == ColumnCount) menu->addSection(tr("Configuration"));
    auto* action = menu->addAction(name);
    action->setObjectName(name);
    action->setCheckable(true);
    action->setChecked(!runs_list_->isColumnHidden(c));
    connect(action, &QAction::toggled, this, [this, c, name](bool on) {
      column_choice_[name] = on;
      runs_list_->setColumnHidden(c, !on);
    });
  }
  return menu;
}

void TrainingPanel::chooseRunFolder() {
  const QString dir = QFileDialog::getExistingDirectory(this, tr("Add run folder"), runs_dir_);
  if (!dir.isEmpty()) addRunFolder(dir);
}

// ---------------------------------------------------------------------------------------------
// Figures

const TrainingRun* TrainingPanel::currentRun() const {
  const auto* item = runs_list_->currentItem();
  for (const auto& row : runs_)
    if (row.item == item) return row.run.get();
  return nullptr;
}

std::vector<const viz::FigureSource*> TrainingPanel::figureSources() const {
  return {curves_figure_.get(), comparison_figure_.get()};
}

std::vector<std::string> TrainingPanel::writeComparison(const std::string& base,
                                                        const viz::FigureStyle& style) const {
  return viz::save_run_comparison(base, comparedGroups(), compare_->yLabel(),
                                  smoothing_->value() / 100.0, band(), style);
}

std::vector<std::string> TrainingPanel::exportComparison(const QString& base) {
  if (comparedGroups().empty()) {
    last_error_ = tr("Nothing to export: check runs that have %1.").arg(metric_->currentText());
    status_->setText(last_error_);
    return {};
  }
  std::vector<std::string> written;
  try {
    written = writeComparison(base.toStdString(),
                              viz::with_defaults({}, comparison_figure_->figureText()));
  } catch (const std::exception& e) {
    last_error_ = tr("Export failed: %1").arg(QString::fromStdString(e.what()));
    status_->setText(last_error_);
    return written;
  }
  status_->setText(tr("Wrote %1 files: %2.*").arg(written.size()).arg(base));
  status_->setStyleSheet({});
  return written;
}

void TrainingPanel::exportWithDialog() {
  if (comparedGroups().empty()) {
    exportComparison({});  // says why there is nothing to write
    return;
  }
  // The dialog every view exports with: a venue's size, a preview, the folder remembered.
  try {
    const auto written = viz::ExportDialog::exportSource(this, *comparison_figure_);
    if (!written.empty()) {
      status_->setText(viz::ExportDialog::writtenReport(written));
      status_->setStyleSheet({});
    }
  } catch (const std::exception& e) {
    last_error_ = tr("Export failed: %1").arg(QString::fromStdString(e.what()));
    status_->setText(last_error_);
  }
}

}  // namespace dstudio::studio

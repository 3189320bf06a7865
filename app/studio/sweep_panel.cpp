// The Sweep tab. See sweep_panel.h.

// Index of this file:
//   [SECTION] A read of the sweep
//   [SECTION] Cell text and colours
//   [SECTION] Construction
//   [SECTION] Opening and reading a sweep
//   [SECTION] Showing a read
//   [SECTION] Comparing runs
//   [SECTION] Statistics
//   [SECTION] Column widths

#include "sweep_panel.h"

#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QStyledItemDelegate>
#include <QTime>
#include <QTimer>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "dstudio/common/error.h"
#include "dstudio/viz/number_text.h"
#include "dstudio/viz/sweep_results_view.h"
#include "job.h"
#include "pane_splitter.h"
#include "view_recipes.h"

namespace dstudio::studio {
namespace fs = std::filesystem;
using sweep::CellState;

// ---------------------------------------------------------------------------------------------
// [SECTION] A read of the sweep

// What one read of the sweep found: the manifest, every cell's task.json, which cells have
// metrics yet, and the groups' results. Made on the worker, shown on the GUI thread.
struct SweepPanel::Snapshot {
  sweep::Sweep sweep;
  std::vector<sweep::CellStatus> status;  // one a cell, in the manifest's order
  std::vector<bool> has_metrics;
  std::vector<sweep::GroupResult> groups;
  sweep::SweepStatistics statistics;  // rliable's, without the profiles
  QStringList damaged;                // why a task.json could not be read, naming it
};

// ---------------------------------------------------------------------------------------------
// [SECTION] Cell text and colours

namespace {

constexpr int kFractionRole = Qt::UserRole + 1;  // a progress cell's fraction in [0, 1]

// "72.3 [70.1, 74.5]", or nothing where no seed has a score.
QString interval_cell(const analysis::Interval& i, int decimals = 1) {
  return std::isfinite(i.estimate) ? QString::fromStdString(analysis::interval_text(i, decimals))
                                   : QString();
}

// The progress column: a bar with "step/total" on it.
class ProgressDelegate : public QStyledItemDelegate {
 public:
  using QStyledItemDelegate::QStyledItemDelegate;
  void paint(QPainter* painter, const QStyleOptionViewItem& option,
             const QModelIndex& index) const override {
    const QVariant fraction = index.data(kFractionRole);
    if (!fraction.isValid()) return QStyledItemDelegate::paint(painter, option, index);
    // The row's selection shows behind the bar.
    QStyleOptionViewItem background = option;
    initStyleOption(&background, index);
    background.text.clear();
    QApplication::style()->drawControl(QStyle::CE_ItemViewItem, &background, painter,
                                       option.widget);
    QStyleOptionProgressBar bar;
    bar.rect = option.rect.adjusted(2, 2, -2, -2);
    bar.minimum = 0;
    bar.maximum = 1000;
    bar.progress =
        static_cast<int>(std::lround(1000.0 * std::clamp(fraction.toDouble(), 0.0, 1.0)));
    bar.text = index.data(Qt::DisplayRole).toString();
    bar.textVisible = true;
    bar.textAlignment = Qt::AlignCenter;
    bar.state = option.state | QStyle::State_Horizontal;
    QApplication::style()->drawControl(QStyle::CE_ProgressBar, &bar, painter, option.widget);
  }
};

QString mean_std(double mean, double std) {
  if (!std::isfinite(mean)) return viz::missing_text();
  return QStringLiteral("%1 ± %2").arg(viz::fixed_text(mean, 1), viz::fixed_text(std, 1));
}

QColor state_colour(CellState state) {
  switch (state) {
    case CellState::Finished:
      return {0, 120, 80};
    case CellState::Running:
      return {0, 114, 178};
    case CellState::Failed:
      return {213, 94, 0};
    case CellState::Pending:
      break;
  }
  return {110, 110, 110};
}

void set_row_tooltip(QTreeWidgetItem* item, const QString& tip) {
  for (int c = 0; c < SweepPanel::ColumnCount; ++c) item->setToolTip(c, tip);
}

// Steps done over steps asked for, for a progress bar; invalid when nothing says how many.
QVariant fraction_of(std::int64_t step, std::int64_t total) {
  if (total <= 0) return {};
  return static_cast<double>(step) / static_cast<double>(total);
}

QString progress_text(std::int64_t step, std::int64_t total) {
  if (total <= 0) return step > 0 ? QString::number(step) : QString();
  return QStringLiteral("%1/%2").arg(step).arg(total);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] Construction

SweepPanel::SweepPanel(QWidget* parent)
    : QWidget(parent),
      path_(new QLabel),
      summary_(new QLabel),
      message_(new QLabel),
      tree_(new QTreeWidget),
      aggregates_(new QTreeWidget),
      improvements_(new QTreeWidget),
      footnote_(new QLabel),
      results_(new viz::SweepResultsView),
      dataset_(new QComboBox),
      compare_(new QPushButton(tr("Compare Seeds in Training"))),
      timer_(new QTimer(this)),
      job_(new Job(tr("Reading the sweep"), this)) {
  // The scores drawn name the sweep read and every cell file they came from.
  results_->setFigureRecipeMaker([this]() -> std::optional<FigureRecipe> {
    if (!last_) return std::nullopt;
    return recipes::sweep_scores_recipe(last_->sweep, QFileInfo(dir_).fileName().toStdString(),
                                        results_->measure());
  });
  QHBoxLayout* top = buildOpenRow();

  setUpCellTree();
  setUpStatistics();
  // Sized to show a cell's whole name and every column at the window's usual width, and grown
  // with the type (presentation mode) so that no header or "mean ± std" is cut.
  base_point_size_ = std::max(1.0, font().pointSizeF());
  sizeColumns();
  tree_->setMinimumWidth(300);

  QHBoxLayout* compare_row = buildCompareRow();

  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  message_->setStyleSheet(QStringLiteral("color: #d55e00;"));
  message_->hide();
  auto* left = new QWidget;
  auto* left_layout = new QVBoxLayout(left);
  left_layout->setContentsMargins(0, 0, 0, 0);
  left_layout->addWidget(summary_);
  left_layout->addWidget(tree_, 1);
  left_layout->addWidget(aggregates_);
  left_layout->addWidget(improvements_);
  left_layout->addWidget(footnote_);
  left_layout->addWidget(message_);
  left_layout->addLayout(compare_row);
  auto* split = paneSplitter(Qt::Horizontal, left, results_, 3, 2);
  split->setChildrenCollapsible(false);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  layout->addWidget(split, 1);
  summary_->setText(
      tr("No sweep is open: File ▸ Open Sweep…, or decision-studio --sweep DIR. A sweep is made by "
         "`dstudio sweep create` (docs/sweeps.md)."));
  summary_->setWordWrap(true);

  connectReading();
}

QHBoxLayout* SweepPanel::buildOpenRow() {
  auto* open = new QPushButton(tr("Open Sweep…"));
  open->setToolTip(
      tr("A sweep folder: the one `dstudio sweep create` wrote, with sweep.json and cells/"));
  connect(open, &QPushButton::clicked, this, &SweepPanel::chooseSweepFolder);
  auto* reload = new QPushButton(tr("Refresh"));
  reload->setToolTip(tr("Read the cells' task.json files now (they are read every two seconds)"));
  connect(reload, &QPushButton::clicked, this, &SweepPanel::refresh);
  path_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  path_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  auto* top = new QHBoxLayout;
  top->addWidget(open);
  top->addWidget(reload);
  top->addWidget(path_, 1);
  return top;
}

void SweepPanel::setUpCellTree() {
  const QStringList headers = {tr("Setting / cell"), tr("Seed"),         tr("State"),
                               tr("Progress"),       tr("Loss"),         tr("Score"),
                               tr("Best eval."),     tr("IQM [95% CI]"), tr("Best IQM [95% CI]"),
                               tr("Where"),          tr("Restarts")};
  tree_->setHeaderLabels(headers);
  tree_->setColumnCount(ColumnCount);
  tree_->setItemDelegateForColumn(ColumnProgress, new ProgressDelegate(tree_));
  tree_->setUniformRowHeights(true);
  tree_->setAlternatingRowColors(true);
  tree_->headerItem()->setToolTip(
      ColumnScore,
      tr("D4RL-normalised score of the final policy: a cell's mean ± std over its evaluation "
         "episodes; a setting's mean ± std over its finished seeds (n - 1)"));
  tree_->headerItem()->setToolTip(
      ColumnBest,
      tr("The best of the periodic evaluations (training.eval_every); a setting's mean ± std "
         "over its finished seeds"));
  tree_->headerItem()->setToolTip(
      ColumnIqm, tr("A setting's interquartile mean of the final scores over its finished seeds, "
                    "with its 95% stratified bootstrap interval (rliable)"));
  tree_->headerItem()->setToolTip(ColumnBestIqm, tr("The same of the best periodic evaluations"));
  tree_->headerItem()->setToolTip(
      ColumnWhere, tr("The host the cell's task ran on, and its Slurm job (<array job>_<task>)"));
  tree_->headerItem()->setToolTip(ColumnRestarts, tr("Times the cell resumed from its checkpoint"));
  tree_->header()->setSectionResizeMode(QHeaderView::Interactive);
  tree_->header()->setStretchLastSection(false);
}

void SweepPanel::setUpStatistics() {
  // Each setting over every dataset it ran on: rliable's aggregates, final and best side by side,
  // then the probability of improvement of each setting over another.
  aggregates_->setObjectName(QStringLiteral("aggregates"));
  aggregates_->setHeaderLabels({tr("Over its datasets and seeds"), tr("IQM"), tr("Median"),
                                tr("Mean"), tr("Optimality gap")});
  aggregates_->setRootIsDecorated(false);
  aggregates_->setUniformRowHeights(true);
  aggregates_->setToolTip(
      tr("rliable (Agarwal et al., 2021): each setting's final scores (and best evaluations) over "
         "every dataset it has finished seeds on, with 95% stratified bootstrap intervals "
         "(2000 resamples)"));
  aggregates_->setMaximumHeight(170);  // grown to its rows by showStatistics, up to this
  aggregates_->header()->setStretchLastSection(false);
  aggregates_->hide();
  // P(X > Y) is a probability, not a score: a table of its own, not under the aggregates' names.
  improvements_->setObjectName(QStringLiteral("improvements"));
  improvements_->setHeaderLabels({tr("Probability of improvement"), tr("Final"), tr("Best")});
  improvements_->setRootIsDecorated(false);
  improvements_->setUniformRowHeights(true);
  improvements_->setToolTip(
      tr("P(X > Y): the probability that a run of X scores above a run of Y on the same dataset "
         "(0.5: neither is better), over the datasets both have, with its 95% bootstrap interval"));
  improvements_->setMaximumHeight(110);  // likewise
  improvements_->header()->setStretchLastSection(false);
  improvements_->hide();
  footnote_->setObjectName(QStringLiteral("footnote"));
  footnote_->setWordWrap(true);
  footnote_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  footnote_->setStyleSheet(QStringLiteral("color: #555555;"));
  footnote_->hide();
}

QHBoxLayout* SweepPanel::buildCompareRow() {
  dataset_->setToolTip(tr("The dataset whose seeds the Training tab compares, grouped by setting"));
  dataset_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  dataset_->setMinimumContentsLength(14);
  compare_->setToolTip(
      tr("The chosen dataset's runs in the Training tab's comparison: the mean over seeds of each "
         "setting, with its spread"));
  compare_->setEnabled(false);
  connect(compare_, &QPushButton::clicked, this, [this] { emitCompare(true); });
  connect(dataset_, &QComboBox::currentIndexChanged, this, [this] { emitCompare(false); });
  auto* compare_row = new QHBoxLayout;
  compare_row->addWidget(new QLabel(tr("Seeds on")));
  compare_row->addWidget(dataset_, 1);
  compare_row->addWidget(compare_);
  // A dataset's or a group's row chooses the dataset compared.
  connect(tree_, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem* item) {
    for (; item; item = item->parent()) {
      if (item->parent()) continue;
      const int at = dataset_->findText(item->text(ColumnName));
      if (at >= 0) dataset_->setCurrentIndex(at);
      return;
    }
  });
  return compare_row;
}

void SweepPanel::connectReading() {
  connect(job_, &Job::finished, this, [this](Job::End end, const QString& error) {
    if (end != Job::End::Failed) return;
    message_->setText(error);
    message_->show();
    if (opening_) {
      // What was open stays open; the one asked for is named as the reason.
      opening_ = false;
      dir_ = last_ ? QString::fromStdString(last_->sweep.dir.string()) : QString();
      path_->setText(dir_);
      if (!last_) timer_->stop();
      emit openFailed(error);
    }
  });
  timer_->setInterval(2000);
  connect(timer_, &QTimer::timeout, this, [this] {
    if (!job_->isRunning()) refresh();
  });
}

SweepPanel::~SweepPanel() {
  job_->cancelAndWait();
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Opening and reading a sweep

void SweepPanel::chooseSweepFolder() {
  const QString dir = QFileDialog::getExistingDirectory(this, tr("Open Sweep"), dir_);
  if (!dir.isEmpty()) openSweep(dir);
}

void SweepPanel::openSweep(const QString& dir) {
  dir_ = QFileInfo(dir).absoluteFilePath();
  opening_ = true;
  path_->setText(dir_);
  path_->setToolTip(dir_);
  refresh();
  if (timer_->interval() > 0) timer_->start();
}

void SweepPanel::closeSweep() {
  timer_->stop();
  job_->cancel();
  dir_.clear();
  opening_ = false;
  last_.reset();
  groups_.clear();
  cell_names_.clear();
  cell_items_.clear();
  group_items_.clear();
  dataset_items_.clear();
  compared_state_.clear();
  tree_->clear();
  dataset_->clear();
  compare_->setEnabled(false);
  results_->setGroups({});
  showStatistics({});
  path_->clear();
  message_->hide();
}

void SweepPanel::setRefreshInterval(int ms) {
  timer_->setInterval(std::max(0, ms));
  if (ms <= 0)
    timer_->stop();
  else if (!dir_.isEmpty())
    timer_->start();
}

void SweepPanel::refresh() {
  if (dir_.isEmpty()) return;
  const std::string dir = dir_.toStdString();
  job_->start(
      [this, dir](const Progress& progress) -> Job::Deliver {
        auto snap = std::make_shared<Snapshot>();
        snap->sweep = sweep::read_sweep(dir);
        for (const auto& cell : snap->sweep.cells) {
          progress.check();
          auto status = sweep::result_status(snap->sweep, cell);
          // A task.json that cannot be parsed reads as a failed cell naming the file
          // (result_status).
          if (status.state == CellState::Failed &&
              status.error.find("task.json is damaged") != std::string::npos)
            snap->damaged << QString::fromStdString(status.error);
          const auto folder = sweep::cell_dir(snap->sweep, cell);
          std::error_code ec;
          snap->has_metrics.push_back(fs::exists(folder / "metrics.jsonl", ec) ||
                                      fs::exists(folder / "metrics.csv", ec));
          snap->status.push_back(std::move(status));
        }
        try {
          snap->groups = sweep::collect_groups(snap->sweep);
          snap->statistics.aggregates = sweep::aggregate_settings(snap->groups);
          snap->statistics.improvements = sweep::setting_improvements(snap->groups);
        } catch (const nlohmann::json::exception& e) {
          throw Error((fs::path(dir) / "sweep.json").string() +
                      " is damaged: a cell's overrides are not JSON (" + e.what() + ")");
        }
        return [this, snap] { showSnapshot(*snap); };
      },
      dir_);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Showing a read

void SweepPanel::showSnapshot(const Snapshot& snapshot) {
  const bool opened = std::exchange(opening_, false);
  const bool rebuild = !last_ || last_->sweep.dir != snapshot.sweep.dir || [&] {
    if (cell_names_.size() != static_cast<qsizetype>(snapshot.sweep.cells.size())) return true;
    for (std::size_t i = 0; i < snapshot.sweep.cells.size(); ++i)
      if (cell_names_[static_cast<qsizetype>(i)] !=
          QString::fromStdString(snapshot.sweep.cells[i].name))
        return true;
    return false;
  }();
  last_ = std::make_shared<const Snapshot>(snapshot);
  groups_ = snapshot.groups;
  dir_ = QString::fromStdString(snapshot.sweep.dir.string());
  path_->setText(dir_);
  if (rebuild) rebuildTree(snapshot);
  updateRows(snapshot);
  results_->setGroups(groups_, QFileInfo(dir_).fileName());
  showStatistics(snapshot.statistics);
  if (rebuild) updateDatasets();
  if (snapshot.damaged.isEmpty()) {
    message_->clear();
    message_->hide();
  } else {
    message_->setText(tr("Cells shown as failed because their task.json cannot be read: %1")
                          .arg(snapshot.damaged.join(QStringLiteral("; "))));
    message_->show();
  }
  ++reads_;
  emitCompare(false);
  if (opened) emit sweepOpened(dir_);
  emit refreshed();
}

void SweepPanel::rebuildTree(const Snapshot& snapshot) {
  // Datasets, then settings on each, then the cells of a setting, in the order collect_groups
  // meets them.
  tree_->clear();
  cell_items_.clear();
  group_items_.clear();
  dataset_items_.clear();
  cell_names_.clear();
  for (const auto& g : snapshot.groups) {
    const QString dataset = QString::fromStdString(g.dataset);
    QTreeWidgetItem*& top = dataset_items_[dataset];
    if (!top) {
      top = new QTreeWidgetItem(tree_);
      top->setText(ColumnName, dataset);
      QFont bold = top->font(ColumnName);
      bold.setBold(true);
      top->setFont(ColumnName, bold);
    }
    auto* item = new QTreeWidgetItem(top);
    item->setText(ColumnName, QString::fromStdString(g.setting));
    group_items_[QString::fromStdString(g.group)] = item;
  }
  for (const auto& cell : snapshot.sweep.cells) {
    cell_names_ << QString::fromStdString(cell.name);
    auto* parent = group_items_.value(QString::fromStdString(cell.group));
    auto* item = parent ? new QTreeWidgetItem(parent) : new QTreeWidgetItem(tree_);
    item->setText(ColumnName, QString::fromStdString(cell.name));
    item->setText(ColumnSeed, QString::number(cell.seed));
    item->setTextAlignment(ColumnSeed, Qt::AlignRight | Qt::AlignVCenter);
    item->setData(ColumnName, Qt::UserRole, cell.index);
    cell_items_[cell.index] = item;
  }
  // Small sweeps open whole; large ones show their settings, a click away from their cells.
  if (snapshot.sweep.cells.size() <= 60)
    tree_->expandAll();
  else
    for (auto* top : dataset_items_) top->setExpanded(true);
}

struct SweepPanel::Tally {
  std::int64_t step = 0, total = 0;
  int restarts = 0;
  std::map<CellState, int> states;
  std::set<std::uint64_t> seeds;
};

void SweepPanel::updateRows(const Snapshot& snapshot) {
  std::map<QString, Tally> by_group, by_dataset;
  updateCellRows(snapshot, by_group, by_dataset);
  updateGroupRows(snapshot, by_group);
  updateDatasetRows(by_dataset);
  showSummary(snapshot);
}

void SweepPanel::updateCellRows(const Snapshot& snapshot, std::map<QString, Tally>& by_group,
                                std::map<QString, Tally>& by_dataset) {
  for (std::size_t i = 0; i < snapshot.sweep.cells.size(); ++i) {
    const auto& cell = snapshot.sweep.cells[i];
    const auto& st = snapshot.status[i];
    auto* item = cell_items_.value(cell.index);
    if (!item) continue;
    item->setText(ColumnState, QString::fromLatin1(sweep::to_string(st.state)));
    item->setForeground(ColumnState, state_colour(st.state));
    item->setText(ColumnProgress, progress_text(st.step, st.total));
    item->setData(ColumnProgress, kFractionRole, fraction_of(st.step, st.total));
    item->setText(ColumnLoss,
                  std::isfinite(st.loss) ? QString::number(st.loss, 'f', 4) : QString());
    item->setText(ColumnScore,
                  std::isfinite(st.score) ? mean_std(st.score, st.score_std) : QString());
    item->setText(ColumnBest,
                  std::isfinite(st.best_score) ? viz::fixed_text(st.best_score, 1) : QString());
    QString where = QString::fromStdString(st.host);
    if (!st.slurm_job.empty())
      where += QStringLiteral(" (%1)").arg(QString::fromStdString(st.slurm_job));
    item->setText(ColumnWhere, where);
    item->setText(ColumnRestarts, st.restarts > 0 ? QString::number(st.restarts) : QString());
    for (int c : {ColumnLoss, ColumnScore, ColumnBest, ColumnRestarts})
      item->setTextAlignment(c, Qt::AlignRight | Qt::AlignVCenter);
    QStringList tip;
    tip << QString::fromStdString(sweep::cell_dir(snapshot.sweep, cell).string());
    if (!st.error.empty()) tip << QString::fromStdString(st.error);
    if (!st.updated.empty())
      tip << tr("task.json written %1").arg(QString::fromStdString(st.updated));
    set_row_tooltip(item, tip.join('\n'));
    for (Tally* t : {&by_group[QString::fromStdString(cell.group)],
                     &by_dataset[QString::fromStdString(fs::path(cell.dataset).stem().string())]}) {
      t->step += st.step;
      t->total += st.total;
      t->restarts += st.restarts;
      ++t->states[st.state];
      t->seeds.insert(cell.seed);
    }
  }
}

QString SweepPanel::stateText(const Tally& t, int cells) {
  QStringList parts;
  parts << tr("%1/%2 finished")
               .arg(t.states.count(CellState::Finished) ? t.states.at(CellState::Finished) : 0)
               .arg(cells);
  if (t.states.count(CellState::Running))
    parts << tr("%1 running").arg(t.states.at(CellState::Running));
  if (t.states.count(CellState::Failed))
    parts << tr("%1 failed").arg(t.states.at(CellState::Failed));
  return parts.join(QStringLiteral(", "));
}

void SweepPanel::updateGroupRows(const Snapshot& snapshot, std::map<QString, Tally>& by_group) {
  for (const auto& g : snapshot.groups) {
    auto* item = group_items_.value(QString::fromStdString(g.group));
    if (!item) continue;
    const Tally& t = by_group[QString::fromStdString(g.group)];
    QStringList seeds;
    for (auto s : t.seeds) seeds << QString::number(s);
    item->setText(ColumnSeed, seeds.join(QStringLiteral(", ")));
    item->setText(ColumnState, stateText(t, g.cells));
    item->setForeground(ColumnState,
                        state_colour(g.finished == g.cells                ? CellState::Finished
                                     : t.states.count(CellState::Failed)  ? CellState::Failed
                                     : t.states.count(CellState::Running) ? CellState::Running
                                                                          : CellState::Pending));
    item->setText(ColumnProgress, progress_text(t.step, t.total));
    item->setData(ColumnProgress, kFractionRole, fraction_of(t.step, t.total));
    item->setText(ColumnScore, mean_std(g.score_mean, g.score_std));
    item->setText(ColumnBest, mean_std(g.best_mean, g.best_std));
    item->setText(ColumnIqm, interval_cell(g.score_iqm));
    item->setText(ColumnBestIqm, interval_cell(g.best_iqm));
    item->setText(ColumnRestarts, t.restarts > 0 ? QString::number(t.restarts) : QString());
    for (int c : {ColumnScore, ColumnBest, ColumnIqm, ColumnBestIqm, ColumnRestarts})
      item->setTextAlignment(c, Qt::AlignRight | Qt::AlignVCenter);
    set_row_tooltip(item,
                    tr("%1 on %2: %3 of %4 seeds finished.\nScore: mean ± std over the finished "
                       "seeds (n - 1); best "
                       "evaluation likewise.\nGroup: %5")
                        .arg(QString::fromStdString(g.setting), QString::fromStdString(g.dataset))
                        .arg(g.finished)
                        .arg(g.cells)
                        .arg(QString::fromStdString(g.group)));
  }
}

void SweepPanel::updateDatasetRows(std::map<QString, Tally>& by_dataset) {
  for (auto it = dataset_items_.begin(); it != dataset_items_.end(); ++it) {
    const Tally& t = by_dataset[it.key()];
    int cells = 0;
    for (const auto& [state, n] : t.states) cells += n;
    it.value()->setText(ColumnState, stateText(t, cells));
    it.value()->setText(ColumnProgress, progress_text(t.step, t.total));
    it.value()->setData(ColumnProgress, kFractionRole, fraction_of(t.step, t.total));
  }
}

void SweepPanel::showSummary(const Snapshot& snapshot) {
  // The summary line: every state's count and when it was read.
  std::map<CellState, int> counts;
  for (const auto& st : snapshot.status) ++counts[st.state];
  QStringList parts;
  for (CellState s :
       {CellState::Finished, CellState::Running, CellState::Pending, CellState::Failed})
    if (counts[s] > 0)
      parts << QStringLiteral("%1 %2").arg(counts[s]).arg(QString::fromLatin1(sweep::to_string(s)));
  summary_->setText(tr("%1: %2 cells, %3 · read at %4")
                        .arg(QFileInfo(dir_).fileName())
                        .arg(snapshot.sweep.cells.size())
                        .arg(parts.join(QStringLiteral(", ")),
                             QTime::currentTime().toString(QStringLiteral("HH:mm:ss"))));
}

void SweepPanel::updateDatasets() {
  const QSignalBlocker block(dataset_);
  const QString current = dataset_->currentText();
  dataset_->clear();
  for (const auto& g : groups_) {
    const QString d = QString::fromStdString(g.dataset);
    if (dataset_->findText(d) < 0) dataset_->addItem(d);
  }
  dataset_->setCurrentIndex(std::max(0, dataset_->findText(current)));
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Comparing runs

QTreeWidgetItem* SweepPanel::groupItem(const QString& dataset, const QString& setting) const {
  for (const auto& g : groups_)
    if (QString::fromStdString(g.dataset) == dataset &&
        QString::fromStdString(g.setting) == setting)
      return group_items_.value(QString::fromStdString(g.group));
  return nullptr;
}

QTreeWidgetItem* SweepPanel::cellItem(int index) const {
  return cell_items_.value(index);
}

std::vector<std::size_t> SweepPanel::comparedCells() const {
  std::vector<std::size_t> cells;
  if (!last_) return cells;
  const QString dataset = dataset_->currentText();
  for (std::size_t i = 0; i < last_->sweep.cells.size(); ++i)
    if (last_->has_metrics[i] &&
        QString::fromStdString(fs::path(last_->sweep.cells[i].dataset).stem().string()) == dataset)
      cells.push_back(i);
  return cells;
}

QStringList SweepPanel::comparedFolders() const {
  QStringList dirs;
  for (const auto i : comparedCells())
    dirs << QString::fromStdString(sweep::cell_dir(last_->sweep, last_->sweep.cells[i]).string());
  return dirs;
}

QStringList SweepPanel::comparedSettings() const {
  QStringList settings;
  for (const auto i : comparedCells()) {
    const auto& cell = last_->sweep.cells[i];
    QString setting = QString::fromStdString(cell.variant);
    for (const auto& g : groups_)
      if (g.group == cell.group) setting = QString::fromStdString(g.setting);
    settings << setting;
  }
  return settings;
}

void SweepPanel::emitCompare(bool show) {
  const QStringList dirs = comparedFolders();
  compare_->setEnabled(!dirs.isEmpty());
  // Sent again only when something compared changes: a run that appears or changes state.
  QString state = dataset_->currentText();
  if (last_)
    for (std::size_t i = 0; i < last_->sweep.cells.size(); ++i)
      if (last_->has_metrics[i])
        state += QStringLiteral("|%1:%2").arg(i).arg(static_cast<int>(last_->status[i].state));
  if (!show && (dirs.isEmpty() || state == compared_state_)) return;
  compared_state_ = state;
  emit compareRequested(dirs, comparedSettings(), show);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Statistics

void SweepPanel::showStatistics(const sweep::SweepStatistics& statistics) {
  aggregates_->clear();
  const auto add = [this](const QString& name, const analysis::AggregateSummary& s) {
    auto* item = new QTreeWidgetItem(aggregates_);
    item->setText(0, name);
    int c = 1;
    for (const auto* i : {&s.iqm, &s.median, &s.mean, &s.optimality_gap}) {
      item->setText(c, interval_cell(*i));
      item->setTextAlignment(c++, Qt::AlignRight | Qt::AlignVCenter);
    }
    item->setToolTip(0, tr("%1 dataset(s), %2 run(s)").arg(s.tasks).arg(s.runs));
  };
  for (const auto& a : statistics.aggregates) {
    const auto setting = QString::fromStdString(a.setting);
    if (a.last) add(tr("%1, final").arg(setting), *a.last);
    if (a.best) add(tr("%1, best").arg(setting), *a.best);
  }
  improvements_->clear();
  for (const auto& p : statistics.improvements) {
    if (!p.last) continue;
    auto* item = new QTreeWidgetItem(improvements_);
    item->setText(0,
                  tr("P(%1 > %2)").arg(QString::fromStdString(p.x), QString::fromStdString(p.y)));
    item->setText(1, interval_cell(*p.last, 2));
    if (p.best) item->setText(2, interval_cell(*p.best, 2));
    for (int c : {1, 2}) item->setTextAlignment(c, Qt::AlignRight | Qt::AlignVCenter);
    item->setToolTip(0, tr("over %1 dataset(s)").arg(p.datasets.size()));
  }
  for (auto* tree : {aggregates_, improvements_}) {
    tree->setVisible(tree->topLevelItemCount() > 0);
    for (int c = 0; c < tree->columnCount(); ++c) tree->resizeColumnToContents(c);
  }
  // One meaning for each sign in every table here, said once under them; and what an IQM over so
  // few runs that it trims nothing is.
  std::vector<analysis::AggregateSummary> shown;
  for (const auto& a : statistics.aggregates)
    for (const auto& summary : {a.last, a.best})
      if (summary) shown.push_back(*summary);
  std::vector<int> seeds;
  for (const auto& g : groups_)
    seeds.insert(seeds.end(),
                 {static_cast<int>(g.scores.size()), static_cast<int>(g.best_scores.size())});
  QStringList notes;
  if (!groups_.empty())
    notes << tr(
        "±: one standard deviation (over a setting's finished seeds, n − 1; over a cell's "
        "evaluation episodes). [low, high]: 95% stratified bootstrap interval.");
  if (const auto note = sweep::aggregates_note(shown, seeds); !note.empty())
    notes << QString::fromStdString(note);
  footnote_->setText(notes.join(' '));
  footnote_->setVisible(!notes.isEmpty());
  // Each table as tall as its rows, up to its most: no empty rows under a pair or two.
  for (auto* tree : {aggregates_, improvements_}) {
    const int rows = tree->topLevelItemCount();
    if (rows == 0) continue;
    tree->setFixedHeight(std::min(tree == aggregates_ ? 170 : 110,
                                  tree->header()->sizeHint().height() +
                                      rows * tree->sizeHintForRow(0) + 2 * tree->frameWidth() + 2));
  }
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Column widths

void SweepPanel::sizeColumns() {
  const double scale = font().pointSizeF() > 0 ? font().pointSizeF() / base_point_size_ : 1.0;
  const std::pair<int, int> widths[] = {
      {ColumnName, 285},    {ColumnSeed, 45},  {ColumnState, 105},  {ColumnProgress, 95},
      {ColumnLoss, 60},     {ColumnScore, 80}, {ColumnBest, 75},    {ColumnIqm, 120},
      {ColumnBestIqm, 120}, {ColumnWhere, 85}, {ColumnRestarts, 60}};
  for (const auto& [column, width] : widths)
    tree_->setColumnWidth(column, static_cast<int>(std::lround(width * scale)));
}

void SweepPanel::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::FontChange) sizeColumns();
}

}  // namespace dstudio::studio

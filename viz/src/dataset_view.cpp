#include "dstudio/viz/dataset_view.h"

#include <QFileInfo>
#include <QFutureWatcher>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <cmath>

#include "colors.h"
#include "dstudio/env/environment.h"
#include "dstudio/viz/episode_table_model.h"
#include "dstudio/viz/return_histogram.h"

namespace dstudio::viz {

namespace {

// A bold heading of the summary, open.
QTreeWidgetItem* add_section(QTreeWidget* summary, const QString& title) {
  auto* item = new QTreeWidgetItem(summary, {title});
  QFont bold = item->font(0);
  bold.setBold(true);
  item->setFont(0, bold);
  item->setExpanded(true);
  return item;
}

// A row of `parent`, its value also its tooltip.
QTreeWidgetItem* add_row(QTreeWidgetItem* parent, const QString& key, const QString& value) {
  auto* item = new QTreeWidgetItem(parent, {key, value});
  item->setToolTip(1, value);
  return item;
}

// A count in the locale's digit groups.
QString locale_count(std::int64_t n) {
  return QLocale().toString(static_cast<qlonglong>(n));
}

QString one_decimal(double v) {
  return QString::number(v, 'f', 1);
}

}  // namespace

DatasetView::DatasetView(QWidget* parent)
    : QWidget(parent),
      summary_(new QTreeWidget),
      table_(new QTableView),
      model_(new EpisodeTableModel(this)),
      proxy_(new QSortFilterProxyModel(this)),
      histogram_(new ReturnHistogram),
      warnings_(new QLabel),
      notes_(new QLabel),
      replay_(new QPushButton(tr("Replay in Viewer"))),
      r2_watcher_(new QFutureWatcher<double>(this)) {
  connect(r2_watcher_, &QFutureWatcher<double>::finished, this, &DatasetView::showActionR2);
  summary_->setColumnCount(2);
  summary_->setHeaderLabels({tr("Dataset"), tr("Value")});
  summary_->setAlternatingRowColors(true);
  summary_->setUniformRowHeights(true);
  summary_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);

  proxy_->setSourceModel(model_);
  proxy_->setSortRole(Qt::UserRole);
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(EpisodeTableModel::Index, Qt::AscendingOrder);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setAlternatingRowColors(true);
  table_->verticalHeader()->setVisible(false);
  table_->verticalHeader()->setDefaultSectionSize(22);
  table_->horizontalHeader()->setStretchLastSection(true);
  connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
          &DatasetView::onRowSelected);

  replay_->setEnabled(false);
  replay_->setToolTip(
      tr("Play the selected episode in the Viewer from the dataset's infos/qpos and infos/qvel "
         "(double-click a row does the same)"));
  connect(replay_, &QPushButton::clicked, this, [this] {
    if (selected_ >= 0) emit replayRequested(selected_);
  });
  connect(table_, &QTableView::doubleClicked, this, [this] {
    if (replay_->isEnabled() && selected_ >= 0) emit replayRequested(selected_);
  });
  auto* episodes = new QWidget;
  auto* episodes_layout = new QVBoxLayout(episodes);
  episodes_layout->setContentsMargins(0, 0, 0, 0);
  episodes_layout->addWidget(table_, 1);
  episodes_layout->addWidget(replay_, 0, Qt::AlignLeft);
  auto* right = new QSplitter(Qt::Vertical);
  right->addWidget(histogram_);
  right->addWidget(episodes);
  right->setStretchFactor(0, 1);
  right->setStretchFactor(1, 1);
  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(summary_);
  split->addWidget(right);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 3);
  // Warnings get a wrapped banner of their own: they matter and are too long for a tree row.
  warnings_->setWordWrap(true);
  warnings_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  warnings_->setObjectName("datasetWarnings");
  warnings_->setStyleSheet(
      "QLabel { background: #fff4e5; border: 1px solid #d55e00; border-radius: 3px; padding: 4px; "
      "}");
  warnings_->hide();
  // Notes (how the file was read, nothing wrong) are quieter than warnings.
  notes_->setWordWrap(true);
  notes_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  notes_->setObjectName("datasetNotes");
  notes_->setStyleSheet(
      "QLabel { color: palette(window-text); border: 1px solid palette(mid); border-radius: 3px; "
      "padding: 4px; }");
  notes_->hide();
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(warnings_);
  layout->addWidget(notes_);
  layout->addWidget(split, 1);
}

DatasetView::~DatasetView() {
  r2_cancel_.cancel();
}

void DatasetView::setDataset(std::shared_ptr<const data::Dataset> dataset) {
  dataset_ = std::move(dataset);
  selected_ = -1;
  replay_->setEnabled(false);
  model_->setDataset(dataset_);
  table_->resizeColumnsToContents();
  std::vector<double> returns;
  if (dataset_)
    for (const auto& ep : dataset_->episodes)
      if (ep.complete()) returns.push_back(ep.ret);
  histogram_->setReturns(returns);
  fillSummary();
}

void DatasetView::showActionR2() {
  if (!r2_row_) return;  // the summary was cleared since
  const double r2 = r2_watcher_->result();
  r2_row_->setText(
      1, std::isfinite(r2) ? QString::number(r2, 'f', 3) : tr("undefined (constant actions)"));
  r2_row_ = nullptr;
  emit summaryCompleted();
}

void DatasetView::fillSummary() {
  r2_row_ = nullptr;
  summary_->clear();
  warnings_->hide();
  notes_->hide();
  if (!dataset_) return;
  const auto& ds = *dataset_;
  const auto s = data::summarize(ds);
  addFileRows(ds);
  addCountRows(ds, s);
  addReturnRows(ds, s);
  startActionR2();
  addArrayRows(ds);
  showWarningsAndNotes(ds);
}

void DatasetView::addFileRows(const data::Dataset& ds) {
  auto* file = add_section(summary_, tr("File"));
  add_row(file, tr("Name"), QFileInfo(QString::fromStdString(ds.path)).fileName());
  add_row(file, tr("Folder"), QFileInfo(QString::fromStdString(ds.path)).absolutePath());
  add_row(file, tr("Format"), QString::fromStdString(ds.format).toUpper());
  if (!ds.env_id.empty()) add_row(file, tr("Environment"), QString::fromStdString(ds.env_id));
  add_row(file, tr("Fingerprint"), QString::fromStdString(ds.fingerprint));
}

void DatasetView::addCountRows(const data::Dataset& ds, const data::DatasetSummary& s) {
  auto* counts = add_section(summary_, tr("Transitions and episodes"));
  add_row(counts, tr("Transitions"), locale_count(s.transitions));
  add_row(counts, tr("Complete episodes"), locale_count(s.episodes));
  add_row(counts, tr("  ending in a terminal"), locale_count(s.terminated));
  add_row(counts, tr("  ending in a timeout"),
          locale_count(s.timed_out) +
              (ds.timeouts_synthesized ? tr(" (cut every 1000 steps)") : QString()));
  auto* tail =
      add_row(counts, tr("Unterminated tail"),
              tr("%1 %2 in %3 %4")
                  .arg(locale_count(s.tail_steps), s.tail_steps == 1 ? tr("step") : tr("steps"))
                  .arg(s.unterminated_episodes)
                  .arg(s.unterminated_episodes == 1 ? tr("episode") : tr("episodes")));
  if (s.tail_steps > 0) tail->setForeground(1, colors::kVermillion);
  add_row(counts, tr("Episode length"),
          tr("min %1, mean %2, max %3")
              .arg(s.length_min)
              .arg(one_decimal(s.length_mean))
              .arg(s.length_max));
}

void DatasetView::addReturnRows(const data::Dataset& ds, const data::DatasetSummary& s) {
  auto* returns = add_section(summary_, tr("Returns (complete episodes)"));
  add_row(returns, tr("Minimum"), one_decimal(s.return_min));
  add_row(returns, tr("Mean ± std"),
          one_decimal(s.return_mean) + " ± " + one_decimal(s.return_std));
  add_row(returns, tr("Maximum"), one_decimal(s.return_max));
  add_row(
      returns, tr("Quantiles 10 / 25 / 50 / 75 / 90 %"),
      QStringLiteral("%1 / %2 / %3 / %4 / %5")
          .arg(one_decimal(s.return_p10), one_decimal(s.return_p25), one_decimal(s.return_median),
               one_decimal(s.return_p75), one_decimal(s.return_p90)));
  try {
    const auto task = ds.env_id.empty() ? nullptr : env::find_task(ds.env_id);
    if (task && task->goal_reaching) {
      // A goal-reaching dataset's return counts steps at the goal: say how many episodes got there.
      std::int64_t reached = 0;
      for (const auto& e : ds.episodes) reached += e.complete() && e.ret > 0.0;
      add_row(returns, tr("Episodes reaching the goal"),
              tr("%1 of %2 (%3%)")
                  .arg(locale_count(reached), locale_count(s.episodes))
                  .arg(s.episodes ? 100.0 * static_cast<double>(reached) / s.episodes : 0.0, 0, 'f',
                       1));
    } else if (!ds.env_id.empty()) {
      add_row(returns, tr("Normalised mean (D4RL)"),
              one_decimal(env::normalized_score(env::task(ds.env_id), s.return_mean)));
    }
  } catch (const env::EnvError&) {
    // An environment the studio does not simulate has no reference returns.
  }
  if (const auto it = ds.metadata.find("controller_success"); it != ds.metadata.end())
    add_row(returns, tr("Controller (no added noise)"), QString::fromStdString(it->second));
}

void DatasetView::startActionR2() {
  // How much of the action the state alone explains: a full pass over the data, so off the GUI
  // thread; the row fills in when it is done.
  auto* behaviour = add_section(summary_, tr("Behaviour"));
  r2_row_ = add_row(behaviour, tr("State → action linear R²"), tr("computing…"));
  r2_row_->setToolTip(
      0,
      tr("Share of the action variance a linear function of the state explains. Near 1 the state "
         "determines the action, and a return-to-go has little left to tell a model."));
  // A dataset opened meanwhile, or the view closing, stops the pass (see ~DatasetView).
  r2_cancel_.cancel();
  r2_cancel_ = CancelToken();
  Progress progress;
  progress.cancel = r2_cancel_;
  r2_watcher_->setFuture(QtConcurrent::run([data = dataset_, progress] {
    try {
      return data::linear_action_r2(data->data, progress);
    } catch (const Cancelled&) {
      return std::nan("");  // nobody waits for it: its row is gone
    }
  }));
}

void DatasetView::addArrayRows(const data::Dataset& ds) {
  auto* dims = add_section(summary_, tr("Dimensions"));
  add_row(dims, tr("Observation"), QString::number(ds.data.obs_dim));
  add_row(dims, tr("Action"), QString::number(ds.data.act_dim));
  if (ds.data.qpos_dim > 0)
    add_row(dims, tr("qpos / qvel"),
            QString("%1 / %2").arg(ds.data.qpos_dim).arg(ds.data.qvel_dim));

  auto* arrays = add_section(summary_, tr("Arrays in the file"));
  arrays->setExpanded(false);
  for (const auto& a : ds.arrays) {
    QStringList shape;
    for (auto d : a.shape) shape << QString::number(d);
    add_row(arrays, QString::fromStdString(a.key),
            QString::fromStdString(a.dtype) + "  (" + shape.join(", ") + ")");
  }
  if (!ds.metadata.empty()) {
    auto* meta = add_section(summary_, tr("Metadata"));
    for (const auto& [k, v] : ds.metadata)
      add_row(meta, QString::fromStdString(k), QString::fromStdString(v));
  }
}

void DatasetView::showWarningsAndNotes(const data::Dataset& ds) {
  QStringList warnings;
  if (!ds.task_caveat.empty())
    warnings << QStringLiteral("⚠ <b>%1</b> ").arg(tr("Another task:")) +
                    QString::fromStdString(ds.task_caveat).toHtmlEscaped();
  for (const auto& w : ds.warnings)
    warnings << QStringLiteral("⚠ ") + QString::fromStdString(w).toHtmlEscaped();
  warnings_->setText(warnings.join("<br>"));
  warnings_->setVisible(!warnings.isEmpty());
  QStringList notes;
  for (const auto& n : ds.notes)
    notes << QStringLiteral("ℹ ") + QString::fromStdString(n).toHtmlEscaped();
  notes_->setText(notes.join("<br>"));
  notes_->setVisible(!notes.isEmpty());
}

void DatasetView::onRowSelected() {
  const auto rows = table_->selectionModel()->selectedRows();
  if (rows.isEmpty() || !dataset_) {
    histogram_->markReturn(std::nan(""));
    selected_ = -1;
    replay_->setEnabled(false);
    return;
  }
  const int episode = proxy_->mapToSource(rows.front()).row();
  selected_ = episode;
  const bool states =
      dataset_->data.qpos_dim > 0 && dataset_->data.qvel_dim > 0 && !dataset_->env_id.empty();
  replay_->setEnabled(states);
  if (!states)
    replay_->setToolTip(
        tr("This dataset has no infos/qpos and infos/qvel (or names no environment): its episodes "
           "cannot be replayed"));
  const auto& ep = dataset_->episodes.at(static_cast<std::size_t>(episode));
  histogram_->markReturn(ep.complete() ? ep.ret : std::nan(""));
  emit episodeSelected(episode);
}

}  // namespace dstudio::viz

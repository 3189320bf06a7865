#pragma once
/// \file
/// The Sweep tab: a sweep folder (docs/sweeps.md) as it trains, here or on a cluster. A tree
/// groups the cells by dataset and setting (the variant and the fields that vary over the
/// sweep, as a paper's table names its columns): a setting's row says how many of its seeds
/// finished and the mean ± std over them of the final score and of the best periodic
/// evaluation (core's sweep::collect_groups); a cell's row its seed, state, progress, loss,
/// scores, where it runs (host, Slurm job), restarts, and why it failed as a tooltip. Beside the
/// tree, the results as the paper's figure (viz::SweepResultsView). Every two seconds the
/// manifest and the cells' task.json files are read again on a worker (a shared filesystem can
/// be slow) and the rows are updated in place, selection and expansion kept. The seeds of the
/// dataset chosen here are compared, grouped by setting, in the Training tab's run comparison
/// (compareRequested). A folder that is not a sweep, a damaged sweep.json or task.json is
/// named in the tab's message line; the tab carries on.

#include <QMap>
#include <QString>
#include <QStringList>
#include <QWidget>
#include <map>
#include <memory>
#include <vector>

#include "dstudio/sweep/sweep.h"

class QComboBox;
class QHBoxLayout;
class QLabel;
class QPushButton;
class QTimer;
class QTreeWidget;
class QTreeWidgetItem;

namespace dstudio::viz {
class SweepResultsView;
}

namespace dstudio::studio {

class Job;

class SweepPanel : public QWidget {
  Q_OBJECT
 public:
  /// The tree's columns. Dataset and setting rows fill those that apply to a group.
  enum Column {
    ColumnName,
    ColumnSeed,
    ColumnState,
    ColumnProgress,
    ColumnLoss,
    ColumnScore,
    ColumnBest,
    ColumnIqm,
    ColumnBestIqm,
    ColumnWhere,
    ColumnRestarts,
    ColumnCount
  };

  explicit SweepPanel(QWidget* parent = nullptr);
  ~SweepPanel() override;

  /// Opens the sweep folder `dir`: read on a worker, shown when read; sweepOpened or openFailed
  /// follows. Another sweep open before is closed once this one reads.
  void openSweep(const QString& dir);
  /// Asks for a sweep folder and opens it.
  void chooseSweepFolder();
  /// Forgets the sweep: the tree and the figure empty, no more reading.
  void closeSweep();
  /// The sweep folder shown (absolute), or the one being opened; empty when none.
  [[nodiscard]] QString sweepDir() const { return dir_; }
  /// Reads the sweep again now, on the worker (a read under way is left to finish).
  void refresh();
  /// How often the sweep is read again, in ms (default 2000; 0: only on refresh()).
  void setRefreshInterval(int ms);
  /// Reads delivered since the panel was made: a test waits for the next one.
  [[nodiscard]] int readCount() const { return reads_; }

  [[nodiscard]] QTreeWidget* tree() const { return tree_; }
  /// The row of `setting` on `dataset` (names as collect_groups gives them), or null.
  [[nodiscard]] QTreeWidgetItem* groupItem(const QString& dataset, const QString& setting) const;
  /// The row of cell `index`, or null.
  [[nodiscard]] QTreeWidgetItem* cellItem(int index) const;
  /// The groups as last read (collect_groups).
  [[nodiscard]] const std::vector<sweep::GroupResult>& groups() const { return groups_; }
  [[nodiscard]] viz::SweepResultsView* resultsView() const { return results_; }
  /// The dataset whose seeds the Training tab compares.
  [[nodiscard]] QComboBox* datasetChooser() const { return dataset_; }
  [[nodiscard]] QPushButton* compareButton() const { return compare_; }
  /// Where a bad folder or file is named; empty when all is well.
  [[nodiscard]] QLabel* messageLabel() const { return message_; }
  /// Each setting over its datasets and seeds (rliable): its IQM, median, mean and optimality gap
  /// with 95% intervals, final and best.
  [[nodiscard]] QTreeWidget* aggregatesTree() const { return aggregates_; }
  /// The probability of improvement of one setting over another, P(X > Y) with its interval,
  /// final and best.
  [[nodiscard]] QTreeWidget* improvementsTree() const { return improvements_; }
  /// Under the tables, what their signs mean ("±" a standard deviation, [low, high] an interval)
  /// and, where it applies, that an IQM over fewer than 4 runs is their mean.
  [[nodiscard]] QLabel* footnoteLabel() const { return footnote_; }
  /// "12 cells: 4 finished, 2 running, 6 pending".
  [[nodiscard]] QLabel* summaryLabel() const { return summary_; }
  [[nodiscard]] Job* job() const { return job_; }
  /// The run folders of the chosen dataset's cells that have metrics, and each one's setting:
  /// what compareRequested carries.
  [[nodiscard]] QStringList comparedFolders() const;
  [[nodiscard]] QStringList comparedSettings() const;

 signals:
  void sweepOpened(const QString& dir);
  /// The sweep named in openSweep cannot be read: `message` names the file.
  void openFailed(const QString& message);
  /// After each read is shown.
  void refreshed();
  /// Compare these run folders grouped by these settings (one each): on opening, when the chosen
  /// dataset changes or one of its cells changes state or gets metrics, and by the Compare button
  /// (`show` true: bring the comparison on screen).
  void compareRequested(const QStringList& dirs, const QStringList& settings, bool show);

 protected:
  void changeEvent(QEvent* event) override;

 private:
  // The panel's parts, built in this order by the constructor: the row that opens a sweep; the
  // tree of cells; the statistics' tables under it; the row that compares a dataset's seeds;
  // then the reads' failures and the timer that reads the sweep again.
  QHBoxLayout* buildOpenRow();
  void setUpCellTree();
  void setUpStatistics();
  QHBoxLayout* buildCompareRow();
  void connectReading();
  /// The columns' widths at the panel's type.
  void sizeColumns();
  double base_point_size_ = 1.0;
  // The indices of the chosen dataset's cells that have metrics, in the sweep's order.
  [[nodiscard]] std::vector<std::size_t> comparedCells() const;
  struct Snapshot;
  void showSnapshot(const Snapshot& snapshot);
  void rebuildTree(const Snapshot& snapshot);
  void updateRows(const Snapshot& snapshot);
  // updateRows' parts: each cell's row, tallied into its setting's and its dataset's; the
  // settings' rows; the datasets' rows; the summary line above the tree.
  struct Tally;  // a setting's or a dataset's cells: steps, restarts, states and seeds
  void updateCellRows(const Snapshot& snapshot, std::map<QString, Tally>& by_group,
                      std::map<QString, Tally>& by_dataset);
  [[nodiscard]] static QString stateText(const Tally& t, int cells);
  void updateGroupRows(const Snapshot& snapshot, std::map<QString, Tally>& by_group);
  void updateDatasetRows(std::map<QString, Tally>& by_dataset);
  void showSummary(const Snapshot& snapshot);
  void updateDatasets();
  void showStatistics(const sweep::SweepStatistics& statistics);
  void emitCompare(bool show);

  QString dir_;
  bool opening_ = false;
  int reads_ = 0;
  std::shared_ptr<const Snapshot> last_;
  std::vector<sweep::GroupResult> groups_;
  QStringList cell_names_;                         // the cells the tree was built for
  QMap<int, QTreeWidgetItem*> cell_items_;         // by cell index
  QMap<QString, QTreeWidgetItem*> group_items_;    // by collect_groups' group
  QMap<QString, QTreeWidgetItem*> dataset_items_;  // by dataset stem
  QString compared_state_;  // what the last compareRequested compared, to send only changes

  QLabel* path_;
  QLabel* summary_;
  QLabel* message_;
  QTreeWidget* tree_;
  QTreeWidget* aggregates_;
  QTreeWidget* improvements_;
  QLabel* footnote_;
  viz::SweepResultsView* results_;
  QComboBox* dataset_;
  QPushButton* compare_;
  QTimer* timer_;
  Job* job_;
};

}  // namespace dstudio::studio

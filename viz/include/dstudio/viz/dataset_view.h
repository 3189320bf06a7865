#pragma once
/// \file
/// The dataset browser: a summary of the file (counts, end reasons, tail, returns and their
/// quantiles, how much of the action the state explains, dims, dtypes, metadata, warnings), the
/// episode list, and the histogram of episode returns. Selecting an episode marks
/// its return on the histogram.

#include <QWidget>
#include <memory>

#include "dstudio/data/dataset.h"

template <typename T>
class QFutureWatcher;
class QLabel;
class QTreeWidgetItem;
class QPushButton;
class QTableView;
class QTreeWidget;
class QSortFilterProxyModel;

namespace dstudio::viz {

class EpisodeTableModel;
class ReturnHistogram;

/// Shows one dataset; `setDataset(nullptr)` clears it.
class DatasetView : public QWidget {
  Q_OBJECT
 public:
  explicit DatasetView(QWidget* parent = nullptr);
  ~DatasetView() override;

  void setDataset(std::shared_ptr<const data::Dataset> dataset);
  [[nodiscard]] const std::shared_ptr<const data::Dataset>& dataset() const { return dataset_; }

  [[nodiscard]] QTreeWidget* summary() const { return summary_; }
  [[nodiscard]] QTableView* episodeTable() const { return table_; }
  [[nodiscard]] ReturnHistogram* returnHistogram() const { return histogram_; }
  /// The banner listing the dataset's warnings (hidden when there are none).
  [[nodiscard]] QLabel* warningsBanner() const { return warnings_; }
  /// The line listing the dataset's notes, how its file was read (hidden when there are none).
  [[nodiscard]] QLabel* notesLine() const { return notes_; }
  [[nodiscard]] QPushButton* replayButton() const { return replay_; }
  /// Whether every summary row is filled (see summaryCompleted()).
  [[nodiscard]] bool summaryComplete() const { return dataset_ && !r2_row_; }

 signals:
  /// Emitted with the index into `Dataset::episodes` when the user selects an episode.
  void episodeSelected(qint64 episode);
  /// The user asked to replay an episode in the viewer (only for datasets with simulator states).
  void replayRequested(qint64 episode);
  /// Every summary row is filled, including those computed on a worker after the dataset was shown.
  void summaryCompleted();

 private:
  void fillSummary();
  // fillSummary's sections: the file, its transitions and episodes, their returns, the behaviour
  // (the R² row, filled in by a pass started here), the dimensions, arrays and metadata, and the
  // banners of warnings and notes.
  void addFileRows(const data::Dataset& ds);
  void addCountRows(const data::Dataset& ds, const data::DatasetSummary& s);
  void addReturnRows(const data::Dataset& ds, const data::DatasetSummary& s);
  void startActionR2();
  void addArrayRows(const data::Dataset& ds);
  void showWarningsAndNotes(const data::Dataset& ds);
  void onRowSelected();
  void showActionR2();

  std::shared_ptr<const data::Dataset> dataset_;
  QTreeWidget* summary_;
  QTableView* table_;
  EpisodeTableModel* model_;
  QSortFilterProxyModel* proxy_;
  ReturnHistogram* histogram_;
  QLabel* warnings_;
  QLabel* notes_;
  QPushButton* replay_;
  qint64 selected_ = -1;
  QFutureWatcher<double>* r2_watcher_;
  CancelToken r2_cancel_;  // the R² pass of the dataset shown
  QTreeWidgetItem* r2_row_ = nullptr;
};

}  // namespace dstudio::viz

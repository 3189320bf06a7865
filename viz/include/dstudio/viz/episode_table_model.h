#pragma once
/// \file
/// A table model listing a dataset's episodes: index, start row, length, return and end reason.
/// The unterminated tail is listed too, greyed, so it is never mistaken for an episode.

#include <QAbstractTableModel>
#include <memory>

#include "dstudio/data/dataset.h"

namespace dstudio::viz {

/// Rows are `Dataset::episodes` in file order. `Qt::UserRole` gives the raw value for sorting.
class EpisodeTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Index, Start, Length, Return, End, ColumnCount };

  explicit EpisodeTableModel(QObject* parent = nullptr);
  void setDataset(std::shared_ptr<const data::Dataset> dataset);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  std::shared_ptr<const data::Dataset> dataset_;
};

}  // namespace dstudio::viz

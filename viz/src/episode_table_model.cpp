#include "dstudio/viz/episode_table_model.h"

#include <QBrush>
#include <QFont>

#include "colors.h"

namespace dstudio::viz {

EpisodeTableModel::EpisodeTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void EpisodeTableModel::setDataset(std::shared_ptr<const data::Dataset> dataset) {
  beginResetModel();
  dataset_ = std::move(dataset);
  endResetModel();
}

int EpisodeTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !dataset_ ? 0 : static_cast<int>(dataset_->episodes.size());
}

int EpisodeTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant EpisodeTableModel::data(const QModelIndex& index, int role) const {
  if (!dataset_ || !index.isValid()) return {};
  const auto& ep = dataset_->episodes.at(static_cast<std::size_t>(index.row()));
  const bool tail = !ep.complete();
  switch (role) {
    case Qt::DisplayRole:
      // Displayed values are the sort values, except where text reads better.
      if (index.column() == Return) return QString::number(ep.ret, 'f', 1);
      if (index.column() == End)
        return tail ? QStringLiteral("unterminated (tail)") : QString(data::to_string(ep.end));
      return data(index, Qt::UserRole);
    case Qt::UserRole:  // raw values for sorting
      switch (index.column()) {
        case Index:
          return index.row();
        case Start:
          return static_cast<qlonglong>(ep.start);
        case Length:
          return static_cast<qlonglong>(ep.length);
        case Return:
          return ep.ret;
        case End:
          return static_cast<int>(ep.end);
      }
      break;
    case Qt::TextAlignmentRole:
      return index.column() == End ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                                   : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ForegroundRole:
      if (tail) return QBrush(colors::kGrey);
      if (index.column() == End)
        return QBrush(ep.end == data::EndReason::Terminal ? colors::kVermillion : colors::kBlue);
      break;
    case Qt::FontRole:
      if (tail) {
        QFont f;
        f.setItalic(true);
        return f;
      }
      break;
    case Qt::ToolTipRole:
      if (tail)
        return tr(
            "Steps after the last terminal or timeout: shown, but left out of the "
            "statistics and of training windows.");
      break;
  }
  return {};
}

QVariant EpisodeTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case Index:
      return tr("#");
    case Start:
      return tr("Start row");
    case Length:
      return tr("Length");
    case Return:
      return tr("Return");
    case End:
      return tr("End");
  }
  return {};
}

}  // namespace dstudio::viz

#pragma once
/// \file
/// The workspace at a glance: the open dataset, the checkpoint (and the one it is compared with)
/// and the training runs, each with its summary as core describes it (data::summarize,
/// models::summarize). Buttons ask the window to save or open a workspace file.

#include <QStringList>
#include <QWidget>

#include "dstudio/data/dataset.h"
#include "dstudio/models/checkpoint_info.h"

class QTreeWidget;
class QTreeWidgetItem;

namespace dstudio::viz {

class WorkspaceView : public QWidget {
  Q_OBJECT
 public:
  explicit WorkspaceView(QWidget* parent = nullptr);

  /// The open dataset (nullptr: none).
  void setDataset(const data::Dataset* dataset);
  /// The open checkpoint, or with `compared` the one its attention maps are compared with
  /// (nullptr: none).
  void setCheckpoint(const models::CheckpointInfo* info, bool compared = false);
  /// Training runs: folder, state and the last loss, one row each.
  struct Run {
    QString folder, state, loss;
  };
  void setRuns(const std::vector<Run>& runs);

  [[nodiscard]] QTreeWidget* tree() const { return tree_; }
  /// The item of a section ("Dataset", "Checkpoint", "Compared with", "Training runs").
  [[nodiscard]] QTreeWidgetItem* section(const QString& name) const;

 signals:
  void saveRequested();
  void openRequested();

 private:
  QTreeWidgetItem* resetSection(const QString& name, const QString& value);

  QTreeWidget* tree_;
};

}  // namespace dstudio::viz

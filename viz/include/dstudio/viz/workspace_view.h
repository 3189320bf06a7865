#pragma once
/// \file
/// The workspace at a glance: the open dataset, the checkpoint (and the one it is compared with)
/// and the training runs, each with its summary as core describes it (data::summarize,
/// models::summarize), and the figure recipes it keeps. Buttons ask the window to save or open a
/// workspace file, to add a figure's recipe, or to draw every recipe's figure again.

#include <QStringList>
#include <QWidget>

class QPushButton;

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
  /// Figure recipes the workspace keeps (a paper's figures): the recipe's file, the figure, what
  /// drew it, and why it cannot be read (empty when it can).
  struct Figure {
    QString recipe, figure, analysis, checkpoint, problem;
  };
  void setFigures(const std::vector<Figure>& figures);
  /// How drawing figure `index` again went: the file drawn, or why not (`ok` false).
  void setFigureResult(int index, const QString& text, bool ok);
  /// While the figures are drawn: Render Figures… reads Cancel.
  void setRendering(bool on);
  [[nodiscard]] QPushButton* renderButton() const { return render_; }

  [[nodiscard]] QTreeWidget* tree() const { return tree_; }
  /// The item of a section ("Dataset", "Checkpoint", "Compared with", "Training runs",
  /// "Figures").
  [[nodiscard]] QTreeWidgetItem* section(const QString& name) const;

 signals:
  void saveRequested();
  void openRequested();
  /// Add Figure Recipe… was pressed: the window asks for a recipe to keep.
  void addFigureRequested();
  /// Render Figures… was pressed: the window asks for a folder and draws every recipe there.
  void renderFiguresRequested();
  /// Cancel was pressed while they are drawn.
  void cancelRenderRequested();

 private:
  QTreeWidgetItem* resetSection(const QString& name, const QString& value);

  QTreeWidget* tree_;
  QPushButton* render_;
  bool rendering_ = false;
};

}  // namespace dstudio::viz

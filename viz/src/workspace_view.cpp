// The workspace view. See workspace_view.h.

#include "dstudio/viz/workspace_view.h"

#include <QColor>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace dstudio::viz {
namespace {
const char* const kSections[] = {"Dataset", "Checkpoint", "Compared with", "Training runs",
                                 "Figures"};
}

WorkspaceView::WorkspaceView(QWidget* parent)
    : QWidget(parent), tree_(new QTreeWidget), render_(new QPushButton(tr("Render Figures…"))) {
  tree_->setColumnCount(2);
  tree_->setHeaderLabels({tr("Workspace"), tr("Value")});
  tree_->setAlternatingRowColors(true);
  tree_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  for (const char* name : kSections) {
    auto* item = new QTreeWidgetItem(tree_, {tr(name), tr("(none)")});
    QFont bold = item->font(0);
    bold.setBold(true);
    item->setFont(0, bold);
  }
  auto* save = new QPushButton(tr("Save Workspace…"));
  auto* open = new QPushButton(tr("Open Workspace…"));
  auto* add_figure = new QPushButton(tr("Add Figure Recipe…"));
  add_figure->setObjectName(QStringLiteral("addFigureRecipe"));
  add_figure->setToolTip(
      tr("Keep a figure's recipe (<figure>.recipe.json) in the workspace: a "
         "paper's figures, each drawn again by `dstudio figure render`"));
  connect(add_figure, &QPushButton::clicked, this, &WorkspaceView::addFigureRequested);
  render_->setObjectName(QStringLiteral("renderFigures"));
  render_->setToolTip(
      tr("Draw every recipe's figure again into a folder, as `dstudio figure "
         "render` does: a recipe whose checkpoint or dataset changed says so"));
  render_->setEnabled(false);
  connect(render_, &QPushButton::clicked, this, [this] {
    if (rendering_)
      emit cancelRenderRequested();
    else
      emit renderFiguresRequested();
  });
  connect(save, &QPushButton::clicked, this, &WorkspaceView::saveRequested);
  connect(open, &QPushButton::clicked, this, &WorkspaceView::openRequested);
  auto* buttons = new QHBoxLayout;
  auto* hint =
      new QLabel(tr("A workspace file reopens all of this, with the viewer's conditioning and the "
                    "window's layout."));
  hint->setWordWrap(true);
  buttons->addWidget(hint, 1);
  buttons->addWidget(add_figure);
  buttons->addWidget(render_);
  buttons->addWidget(open);
  buttons->addWidget(save);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(tree_, 1);
  layout->addLayout(buttons);
}

QTreeWidgetItem* WorkspaceView::section(const QString& name) const {
  for (int i = 0; i < tree_->topLevelItemCount(); ++i)
    if (tree_->topLevelItem(i)->text(0) == name) return tree_->topLevelItem(i);
  return nullptr;
}

QTreeWidgetItem* WorkspaceView::resetSection(const QString& name, const QString& value) {
  auto* item = section(name);
  qDeleteAll(item->takeChildren());
  item->setText(1, value);
  item->setToolTip(1, value);
  return item;
}

void WorkspaceView::setDataset(const data::Dataset* dataset) {
  auto* item = resetSection(
      tr("Dataset"),
      dataset ? QFileInfo(QString::fromStdString(dataset->path)).fileName() : tr("(none)"));
  if (!dataset) return;
  const auto s = data::summarize(*dataset);
  const QLocale locale;
  auto add = [item](const QString& field, const QString& value) {
    new QTreeWidgetItem(item, {field, value});
  };
  add(tr("Path"), QString::fromStdString(dataset->path));
  add(tr("Format"), QString::fromStdString(dataset->format));
  add(tr("Environment"),
      dataset->env_id.empty() ? tr("(not named)") : QString::fromStdString(dataset->env_id));
  add(tr("Transitions"), locale.toString(static_cast<qlonglong>(s.transitions)));
  add(tr("Complete episodes"),
      tr("%1 (%2 terminal, %3 timeout)").arg(s.episodes).arg(s.terminated).arg(s.timed_out));
  add(tr("Returns"), tr("%1 ± %2 (min %3, max %4)")
                         .arg(s.return_mean, 0, 'f', 1)
                         .arg(s.return_std, 0, 'f', 1)
                         .arg(s.return_min, 0, 'f', 1)
                         .arg(s.return_max, 0, 'f', 1));
  add(tr("Simulator states"), dataset->data.qpos_dim > 0
                                  ? tr("infos/qpos and infos/qvel: episodes replay in the viewer")
                                  : tr("none: no replay in the viewer"));
  add(tr("Fingerprint"), QString::fromStdString(dataset->fingerprint));
  item->setExpanded(true);
}

void WorkspaceView::setCheckpoint(const models::CheckpointInfo* info, bool compared) {
  auto* item =
      resetSection(compared ? tr("Compared with") : tr("Checkpoint"),
                   info ? QFileInfo(QString::fromStdString(info->path)).fileName() : tr("(none)"));
  if (!info) return;
  new QTreeWidgetItem(item, {tr("Path"), QString::fromStdString(info->path)});
  QTreeWidgetItem* group = nullptr;
  std::string current;
  for (const auto& row : models::summarize(*info)) {
    if (!group || row.section != current) {
      current = row.section;
      group = new QTreeWidgetItem(item, {QString::fromStdString(row.section)});
      group->setExpanded(true);
    }
    new QTreeWidgetItem(group,
                        {QString::fromStdString(row.field), QString::fromStdString(row.value)});
  }
  item->setExpanded(true);
}

void WorkspaceView::setRuns(const std::vector<Run>& runs) {
  auto* item = resetSection(tr("Training runs"),
                            runs.empty() ? tr("(none)") : tr("%1 runs").arg(runs.size()));
  for (const auto& r : runs) {
    auto* row = new QTreeWidgetItem(
        item, {QFileInfo(r.folder).fileName(),
               r.loss.isEmpty() ? r.state : tr("%1, loss %2").arg(r.state, r.loss)});
    row->setToolTip(0, r.folder);
  }
  item->setExpanded(true);
}

void WorkspaceView::setFigures(const std::vector<Figure>& figures) {
  auto* item = resetSection(tr("Figures"),
                            figures.empty() ? tr("(none)") : tr("%1 recipes").arg(figures.size()));
  for (const auto& f : figures) {
    const QString what = !f.problem.isEmpty() ? f.problem
                         : f.checkpoint.isEmpty()
                             ? f.analysis
                             : tr("%1 of %2").arg(f.analysis, QFileInfo(f.checkpoint).fileName());
    auto* row = new QTreeWidgetItem(
        item, {f.figure.isEmpty() ? QFileInfo(f.recipe).fileName() : f.figure, what});
    row->setToolTip(0, f.recipe);
    row->setToolTip(1, tr("dstudio figure render %1 --out FILE.pdf").arg(f.recipe));
  }
  item->setExpanded(true);
  render_->setEnabled(rendering_ || !figures.empty());
}

void WorkspaceView::setFigureResult(int index, const QString& text, bool ok) {
  auto* item = section(tr("Figures"));
  if (!item || index < 0 || index >= item->childCount()) return;
  auto* row = item->child(index);
  row->setText(1, text);
  row->setToolTip(1, text);
  row->setForeground(1, ok ? palette().color(QPalette::Text) : QColor(0xd5, 0x5e, 0x00));
}

void WorkspaceView::setRendering(bool on) {
  rendering_ = on;
  render_->setText(on ? tr("Cancel Drawing") : tr("Render Figures…"));
  auto* item = section(tr("Figures"));
  render_->setEnabled(on || (item && item->childCount() > 0));
}

}  // namespace dstudio::viz

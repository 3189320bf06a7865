// The main window's menus. See main_window.h; the window itself is in main_window.cpp.

#include <QAction>
#include <QClipboard>
#include <QFileDialog>
#include <QGuiApplication>
#include <QKeySequence>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QTabWidget>

#include "dstudio/behaviour/d4rl_policy.h"
#include "dstudio/behaviour/default_datasets.h"
#include "dstudio/env/environment.h"
#include "dstudio/viz/dataset_view.h"
#include "dstudio/viz/export_dialog.h"
#include "lesson_panel.h"
#include "main_window.h"
#include "plugins_dialog.h"
#include "sweep_panel.h"

namespace dstudio::studio {

// File (datasets, checkpoints, sweeps, workspaces, export, quit), View (a tab each, presentation
// mode) and Help (lessons, shortcuts, the guide, plugins, about).
void MainWindow::createMenus() {
  createFileMenu();
  createViewMenu();
  createHelpMenu();
}

void MainWindow::createFileMenu() {
  auto* file_menu = menuBar()->addMenu(tr("&File"));
  auto* open = file_menu->addAction(tr("&Open Dataset…"), this, &MainWindow::chooseFile);
  open->setShortcut(QKeySequence::Open);
  recent_menu_ = file_menu->addMenu(tr("Open &Recent"));
  // The story's data, then each task whose data a shipped policy makes: made on first use.
  auto* defaults = file_menu->addMenu(tr("Open &Default Dataset"));
  defaults->setObjectName(QStringLiteral("defaultDatasetMenu"));
  defaults->addAction(
      tr("%1 (the Studio's Story)")
          .arg(QString::fromUtf8(behaviour::kStoryDataset.env) + QLatin1Char(' ') +
               QString::fromUtf8(behaviour::to_string(behaviour::kStoryDataset.kind))),
      this, &MainWindow::openDefaultDataset);
  for (const char* family : {"antmaze", "adroit"}) {
    defaults->addSeparator();
    for (const auto& task : env::task_names()) {
      if (env::task(task).family != family) continue;
      const QString name = QString::fromStdString(task);
      defaults->addAction(family == std::string("adroit")
                              ? tr("%1 expert (made by the DAPG Expert)").arg(name)
                              : name,
                          this, [this, name] { openTaskDataset(name); });
    }
  }
  file_menu->addSeparator();
  auto* open_checkpoint =
      file_menu->addAction(tr("Open &Checkpoint…"), this, &MainWindow::chooseCheckpoint);
  open_checkpoint->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
  auto* default_checkpoint = file_menu->addAction(tr("Open Default C&heckpoint (DT)"), this,
                                                  &MainWindow::openDefaultCheckpoint);
  default_checkpoint->setObjectName(QStringLiteral("defaultCheckpointAction"));
  // With a task's data open that has a DT of its own shipped (AntMaze), the item opens that one.
  connect(file_menu, &QMenu::aboutToShow, this, [this, default_checkpoint] {
    const QString task = shippedTaskOfDefaultCheckpoint();
    default_checkpoint->setText(task.isEmpty()
                                    ? tr("Open Default C&heckpoint (DT)")
                                    : tr("Open Default C&heckpoint (DT on %1)").arg(task));
  });
  // A behaviour policy in the viewer instead of a checkpoint: D4RL's Adroit experts.
  auto* behaviour_menu = file_menu->addMenu(tr("Play a &Behaviour Policy"));
  behaviour_menu->setObjectName(QStringLiteral("behaviourMenu"));
  auto* from_dataset = behaviour_menu->addAction(tr("The Open Dataset's Policy (metadata/policy)"),
                                                 this, [this] { playBehaviour("dataset"); });
  connect(behaviour_menu, &QMenu::aboutToShow, this, [this, from_dataset] {
    const auto& dataset = view_->dataset();
    from_dataset->setEnabled(dataset && behaviour::has_d4rl_policy(*dataset));
  });
  behaviour_menu->addSeparator();
  for (const char* task : {"pen", "door", "hammer", "relocate"})
    behaviour_menu->addAction(tr("The DAPG Expert of %1").arg(QLatin1String(task)), this,
                              [this, task] { playBehaviour("dapg", QLatin1String(task)); });
  file_menu->addSeparator();
  file_menu->addAction(tr("Open S&weep…"), this, [this] {
    const QString dir =
        QFileDialog::getExistingDirectory(this, tr("Open Sweep"), sweep_->sweepDir());
    if (!dir.isEmpty()) openSweep(dir);
  });
  file_menu->addSeparator();
  auto* open_workspace =
      file_menu->addAction(tr("Open &Workspace…"), this, &MainWindow::chooseWorkspaceToOpen);
  open_workspace->setShortcut(QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_O));
  auto* save_workspace =
      file_menu->addAction(tr("&Save Workspace…"), this, &MainWindow::chooseWorkspaceToSave);
  save_workspace->setShortcut(QKeySequence::Save);
  file_menu->addAction(tr("Reopen &Last Session"), this, [this] {
    const QByteArray last = QSettings().value("session/last").toByteArray();
    QString error;
    if (last.isEmpty())
      status_->setText(tr("No earlier session to reopen."));
    else if (!applyWorkspaceText(last, &error))
      status_->setText(error);
  });
  file_menu->addSeparator();
  auto* export_all = file_menu->addAction(tr("&Export All Views…"), this, [this] {
    const auto written = viz::ExportDialog::exportSources(this, figureSources());
    if (!written.empty()) status_->setText(viz::ExportDialog::writtenReport(written));
  });
  export_all->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
  auto* copy_recipe = file_menu->addAction(tr("Copy Figure &Recipe"), this, [this] {
    QString why;
    const std::string text = figureRecipeText(&why);
    if (text.empty()) {
      status_->setText(why);
      return;
    }
    QGuiApplication::clipboard()->setText(QString::fromStdString(text));
    status_->setText(
        tr("The figure's recipe is on the clipboard: `dstudio figure render "
           "RECIPE.json --out FILE.pdf` draws it again."));
  });
  copy_recipe->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
  copy_recipe->setObjectName(QStringLiteral("copyFigureRecipe"));
  file_menu->addSeparator();
  auto* quit = file_menu->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);
}

void MainWindow::createViewMenu() {
  auto* view_menu = menuBar()->addMenu(tr("&View"));
  for (int i = 0; i < tabs_->count(); ++i) {
    QWidget* shown = page(i);
    auto* action =
        view_menu->addAction(tabs_->tabText(i), this, [this, shown] { showPage(shown); });
    // Ctrl+1 to Ctrl+9, then Ctrl+0 for the tenth, as browsers number tabs; past ten, the menu.
    if (i < 9)
      action->setShortcut(QKeySequence(Qt::CTRL | static_cast<Qt::Key>(Qt::Key_1 + i)));
    else if (i == 9)
      action->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
  }
  view_menu->addSeparator();
  auto* presentation = view_menu->addAction(tr("&Presentation Mode (large type)"));
  presentation->setCheckable(true);
  presentation->setShortcut(QKeySequence(Qt::Key_F11));
  connect(presentation, &QAction::toggled, this, &MainWindow::setPresentationMode);
  presentation_action_ = presentation;
}

void MainWindow::createHelpMenu() {
  auto* help_menu = menuBar()->addMenu(tr("&Help"));
  auto* lessons_menu = help_menu->addMenu(tr("&Lessons"));
  for (int i = 0; i < lessons_->lessons().size(); ++i)
    lessons_menu->addAction(lessons_->lessons()[i].title, this, [this, i] { openLesson(i); });
  help_menu->addSeparator();
  help_menu->addAction(tr("&Keyboard Shortcuts"), this, [this] {
    QMessageBox::information(
        this, tr("Keyboard shortcuts"),
        tr("<table>"
           "<tr><td><b>Ctrl+O</b></td><td>open a dataset</td></tr>"
           "<tr><td><b>Ctrl+Shift+O</b></td><td>open a checkpoint</td></tr>"
           "<tr><td><b>Ctrl+Alt+O</b> / <b>Ctrl+S</b></td><td>open / save a workspace</td></tr>"
           "<tr><td><b>Ctrl+Shift+E</b></td><td>export all views</td></tr>"
           "<tr><td><b>Ctrl+1</b> … <b>Ctrl+9</b></td><td>go to a tab</td></tr>"
           "<tr><td><b>F11</b></td><td>presentation mode (large type)</td></tr>"
           "<tr><td colspan=2><br><i>In the viewer</i></td></tr>"
           "<tr><td><b>Space</b></td><td>play or pause</td></tr>"
           "<tr><td><b>Right</b> or <b>.</b></td><td>single step</td></tr>"
           "<tr><td><b>Left</b> or <b>,</b></td><td>step back</td></tr>"
           "<tr><td><b>Home</b></td><td>new episode (a replay: back to its start)</td></tr>"
           "<tr><td><b>Esc</b></td><td>cancel what the status bar shows (the newest running "
           "job)</td></tr>"
           "</table>"));
  });
  auto* guide = help_menu->addAction(tr("&User Guide"), this, &MainWindow::showUserGuide);
  guide->setShortcut(QKeySequence::HelpContents);
  help_menu->addAction(tr("&Plugins…"), this, [this] {
    PluginsDialog dialog(this);
    dialog.exec();
  });
  help_menu->addAction(tr("&About Decision Studio"), this, &MainWindow::showAbout);
}

}  // namespace dstudio::studio

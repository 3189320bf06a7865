#pragma once
/// \file
/// Training any model variant on the open dataset, in the background. The model and optimisation
/// forms are generated from the configurations' JSON (core's to_json), so every field of every
/// variant can be set; core validates them and names a bad field before anything starts. Each
/// run trains on its own thread (models::Trainer) into a new folder; its progress callback only
/// appends to the run's buffer under a short lock, and the panel pulls the buffers ten times a
/// second to draw the live curves (loss, learning rate, steps per second, periodic evaluation).
/// Every run started since the studio opened, and finished runs added from disk, stay in a run
/// list, a sortable table of their final metrics and configuration; the checked ones are compared
/// on one plot, grouped by variant or by any configuration field: the mean over the group with a
/// min..max or mean +/- std band, smoothed by an exponential moving average with the raw mean
/// faintly behind.

#include <QMap>
#include <QString>
#include <QStringList>
#include <QVariant>
#include <QWidget>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "dstudio/analysis/curves.h"
#include "dstudio/common/workspace.h"
#include "dstudio/data/dataset.h"
#include "dstudio/models/training.h"
#include "dstudio/models/variant_config.h"
#include "training_run.h"

class QCheckBox;
class QComboBox;
class QFormLayout;
class QGroupBox;
class QLabel;
class QMenu;
class QLineEdit;
class QProgressBar;
class QScrollArea;
class QPushButton;
class QSlider;
class QSpinBox;
class QTimer;
class QTreeWidget;
class QTreeWidgetItem;

namespace dstudio::viz {
class ConfigForm;
class FigureSource;
struct FigureStyle;
class TrainingCurvesView;
class RunComparisonView;
class RunCurvesFigure;
}  // namespace dstudio::viz

namespace dstudio::studio {

class Job;

class TrainingPanel : public QWidget {
  Q_OBJECT
 public:
  /// Run list columns: the run, its state and final metrics, then (from ColumnCount on) one a
  /// configuration field of the runs listed. Every column sorts, numbers as numbers.
  enum Column {
    ColumnRun,
    ColumnState,
    ColumnStep,
    ColumnLoss,
    ColumnScore,
    ColumnEntropy,
    ColumnVariant,
    ColumnSeed,
    ColumnCount
  };

  explicit TrainingPanel(QWidget* parent = nullptr);
  /// Cancels every run still training and waits for its thread.
  ~TrainingPanel() override;

  /// The data runs train on; without it Start is disabled. Runs already training keep theirs.
  void setDataset(std::shared_ptr<const data::Dataset> dataset, const QString& path);
  /// Where each run gets its own folder, <dir>/<variant>-seed<seed>-<yyyyMMdd-hhmmss>.
  void setRunsDirectory(const QString& dir);
  [[nodiscard]] QString runsDirectory() const;

  /// Starts a run of the chosen variant with the forms' values. Returns false, with the reason
  /// next to the Start button (naming the field), when there is no dataset or a value is invalid.
  bool startTraining();
  /// Continues the run saved in `checkpoint` (its folder keeps receiving checkpoints and
  /// metrics) on the open dataset, which must be the one it was trained on. Returns false, with
  /// the reason next to Start, otherwise.
  bool resumeFromCheckpoint(const QString& checkpoint);
  /// Pause, resume and cancel act on the selected run (the newest one when a run is started).
  void pauseTraining();
  void resumeTraining();
  void cancelTraining();
  /// Cancels every run still training and waits for them (also done on destruction).
  void cancelAll();
  /// True while any run of this panel is running or paused.
  [[nodiscard]] bool isTraining() const;

  /// Adds a finished run's folder to the list from its metrics.jsonl or metrics.csv. Returns
  /// false, with the reason in the status line (lastError()), when it has no metrics.
  bool addRunFolder(const QString& dir);
  /// Compares exactly the run folders `dirs` (the seeds of a sweep's settings on one dataset):
  /// read on a worker, each is then listed as addRunFolder lists it (read again when listed
  /// already), the other runs are unchecked, and the runs are grouped by `settings` (one a folder,
  /// as the sweep names its columns), which "grouped by" offers as "setting". The first time, the
  /// score is compared when the runs have evaluations. Folders without metrics are left out;
  /// runFoldersCompared says how many are compared.
  void compareRunFolders(const QStringList& dirs, const QStringList& settings);
  /// The menu of the run in row `row` of the list: Open in the analysis views, Compare with the
  /// open model, Continue training, Reveal folder (each enabled when it applies). The caller owns
  /// it; null for a row that does not exist.
  [[nodiscard]] QMenu* runMenu(int row);
  /// Writes the comparison plot as base.pdf, base.svg, base.png and its numbers as base.csv.
  /// Returns the paths written (none when nothing is compared).
  std::vector<std::string> exportComparison(const QString& base);
  /// The panel's figures for an export of every view: "training_curves" (the selected run's loss
  /// and evaluations, with its metrics as CSV) and "run_comparison" (the compared groups).
  [[nodiscard]] std::vector<const viz::FigureSource*> figureSources() const;

  /// Sets a field of either form by its JSON key ("hidden", "steps", ...); false if unknown.
  bool setField(const QString& key, const QVariant& value);
  /// The editor of a form field (QSpinBox, QDoubleSpinBox, QCheckBox, QComboBox or QLineEdit).
  [[nodiscard]] QWidget* field(const QString& key) const;
  /// The variant's form (its fields as core's configuration has them).
  [[nodiscard]] viz::ConfigForm* variantForm() const { return variant_form_; }
  /// The keys of the variant form, in the configuration's order.
  [[nodiscard]] QStringList variantKeys() const;
  [[nodiscard]] QStringList trainingKeys() const;
  /// What the forms hold, parsed and validated by core. Throw UsageError naming the
  /// field that is out of range.
  [[nodiscard]] models::VariantConfig variantConfig() const;
  [[nodiscard]] models::TrainingConfig trainingConfig() const;

  [[nodiscard]] QComboBox* variantChooser() const { return variant_; }
  [[nodiscard]] QComboBox* mergerChooser() const { return merger_; }
  [[nodiscard]] QComboBox* mixerChooser() const { return mixer_; }
  [[nodiscard]] QPushButton* startButton() const { return start_; }
  [[nodiscard]] QLabel* messageLabel() const { return message_; }
  [[nodiscard]] QLabel* statusLabel() const { return status_; }
  /// The scrolled column of the next run's forms.
  [[nodiscard]] QScrollArea* formsArea() const { return forms_scroll_; }
  [[nodiscard]] QProgressBar* progressBar() const { return progress_; }
  [[nodiscard]] QTreeWidget* runList() const { return runs_list_; }
  /// The run list's column of configuration field `key` ("hidden", "learning_rate", ...), or -1
  /// when no run listed has it. Shown by default when the runs listed differ in it; the header's
  /// menu shows or hides any column.
  [[nodiscard]] int configColumn(const QString& key) const;
  /// What the comparison groups runs by: "variant" (item 0), or any configuration field, whose
  /// value names the group ("hidden=128").
  [[nodiscard]] QComboBox* groupByChooser() const { return group_by_; }
  /// The menu of the run list's header: every column, checked when shown. The caller owns it.
  [[nodiscard]] QMenu* columnMenu();
  [[nodiscard]] viz::TrainingCurvesView* liveView() const { return live_; }
  [[nodiscard]] viz::RunComparisonView* comparisonView() const { return compare_; }
  /// Metric compared: "loss", "eval_score", "entropy_layer1", "learning_rate", "steps_per_second".
  [[nodiscard]] QComboBox* comparisonMetric() const { return metric_; }
  /// 0..99: the EMA weight in hundredths.
  [[nodiscard]] QSlider* smoothingSlider() const { return smoothing_; }
  /// 0: min..max band, 1: mean -/+ std.
  [[nodiscard]] QComboBox* bandChooser() const { return band_; }
  [[nodiscard]] QString lastError() const { return last_error_; }
  /// The folder of each run in the list, in list order.
  [[nodiscard]] QStringList runFolders() const;
  /// Bookmarks on runs' curves (those on the viewer are left out), drawn on the curves of the run
  /// shown when they name its folder.
  void setRunBookmarks(std::vector<Bookmark> bookmarks);
  [[nodiscard]] const std::vector<Bookmark>& runBookmarks() const { return run_bookmarks_; }
  /// Bookmarks `step` of the run shown; false when no run is shown.
  bool addRunBookmark(Bookmark bookmark);

 signals:
  /// The run list's menu: open a run's checkpoint in the analysis views, or compare it with the
  /// open model.
  void openCheckpointRequested(const QString& checkpoint);
  void compareCheckpointRequested(const QString& checkpoint);
  void runStarted(const QString& dir);
  /// `state` is Finished, Cancelled or Failed.
  void runFinished(const QString& dir, const QString& state);
  /// compareRunFolders has listed and checked `count` folders.
  void runFoldersCompared(int count);

 protected:
  void closeEvent(QCloseEvent* event) override;
  void changeEvent(QEvent* event) override;

 private:
  class ComparisonFigure;
  // The panel's parts, built in this order by the constructor: the figures' recipes; the next
  // run's forms (the variant chooser, the model form, the optimisation form with the evaluation
  // episodes) scrolled above the runs folder and the run controls; the progress; the run list
  // and the comparison under the live curves; then the wiring.
  void setFigureRecipeMakers();
  QGroupBox* buildVariantChooser();
  QGroupBox* buildOptimisationBox();
  static void alignFormFields(QFormLayout* form);
  QScrollArea* buildNextRunForms();
  QWidget* buildRunControls(QScrollArea* forms);
  void setUpProgress();
  QWidget* buildRunList();
  QWidget* buildComparison();
  QWidget* buildRunView(QWidget* list_box, QWidget* compare_box);
  void connectSignals();
  // The comparison plot in `style` and its numbers; throws on failure.
  std::vector<std::string> writeComparison(const std::string& base,
                                           const viz::FigureStyle& style) const;
  [[nodiscard]] const TrainingRun* currentRun() const;

  // A run and its row in the run list.
  struct RunRow {
    std::unique_ptr<TrainingRun> run;
    QTreeWidgetItem* item = nullptr;
  };

  bool launch(std::unique_ptr<TrainingRun> run, std::int64_t eval_every);
  RunRow& addRow(std::unique_ptr<TrainingRun> run);
  // Lists a folder read already (read again when listed): the GUI thread's part of adding one.
  void listRunFolder(models::RunFolder folder);
  void showComparedFolders(std::vector<std::pair<models::RunFolder, QString>> folders);
  void rebuildVariantForm();
  /// Shows only the variant fields the configuration in the form uses (models::uses_field).
  void showUsedVariantFields();
  void rebuildTrainingForm(const models::TrainingConfig& config);
  void applyDatasetDefaults();
  void pull();
  void showRun(const RunRow* row);
  void updateItem(RunRow& row);
  void updateButtons();
  void updateComparison();
  void showMessage(const QString& text, bool error);
  void markInvalidField(const QString& message);
  void chooseRunFolder();
  void exportWithDialog();
  RunRow* selectedRun();
  void drawRunBookmarks(const RunRow* row);
  std::vector<Bookmark> run_bookmarks_;
  [[nodiscard]] analysis::Band band() const;
  // The checked runs' curves of the chosen metric, grouped, smoothed and spread (core).
  [[nodiscard]] std::vector<analysis::CurveGroup> comparedGroups() const;
  [[nodiscard]] QString variantLabel() const;
  // Sizes that follow the type: the forms' width, the smoothing readout.
  void fitToFont();
  // Adds a column for each configuration field a run brings, shows those the runs differ in
  // (unless the user chose otherwise) and offers every field to group by.
  void updateConfigColumns();
  [[nodiscard]] QString groupOf(const TrainingRun& run) const;

  std::shared_ptr<const data::Dataset> dataset_;
  QString dataset_path_;
  QString runs_dir_;
  QString last_error_;
  double applied_lr_ = 0.0;            // the learning rate the dataset's table put in the form
  double applied_rtg_scale_ = 1000.0;  // the scale the dataset's task gave (1 for AntMaze)
  std::deque<RunRow> runs_;            // rows stay where they are as runs are added

  QComboBox* variant_;
  QComboBox* merger_;
  QComboBox* mixer_;
  QLabel* merger_label_;
  QLabel* mixer_label_;
  QLabel* defaults_note_;
  viz::ConfigForm* variant_form_;
  viz::ConfigForm* training_form_;
  QSpinBox* eval_episodes_;
  QLineEdit* runs_dir_edit_;
  QPushButton* start_;
  QPushButton* pause_;
  QPushButton* resume_;
  QPushButton* cancel_;
  QLabel* message_;
  QLabel* status_;
  QProgressBar* progress_;
  viz::TrainingCurvesView* live_;
  QTreeWidget* runs_list_;
  viz::RunComparisonView* compare_;
  QComboBox* metric_;
  QComboBox* group_by_;
  QStringList config_keys_;              // the configuration columns, from ColumnCount on
  QMap<QString, bool> column_choice_;    // columns the user showed or hid, by header text
  QMap<QString, QString> run_settings_;  // a sweep's setting of a run, by its folder
  QComboBox* band_;
  QSlider* smoothing_;
  QLabel* smoothing_label_;
  QTimer* timer_;
  QScrollArea* forms_scroll_ = nullptr;
  std::unique_ptr<viz::RunCurvesFigure> curves_figure_;
  std::unique_ptr<ComparisonFigure> comparison_figure_;
  Job* folders_job_ = nullptr;  // reads the folders compareRunFolders compares
};

}  // namespace dstudio::studio

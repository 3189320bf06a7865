// The Training tab: the panel's construction (its forms, run list, plots and buttons), its forms
// (the variant and training fields, the dataset's defaults, invalid fields), its dataset and
// folders. See training_panel.h. The runs (start, resume, pause, cancel, the list's rows and the
// selected run's curves) are in training_panel_runs.cpp; the comparison, the run folders and the
// figures in training_panel_comparison.cpp; a run's own state and its reading of the trainer's
// reports in training_run.cpp.

// Index of this file:
//   [SECTION] Construction
//   [SECTION] Type size and closing
//   [SECTION] Forms
//   [SECTION] Dataset and folders

#include "training_panel.h"

#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QCoreApplication>
#include <QDateTime>
#include <QDesktopServices>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSet>
#include <QSettings>
#include <QShortcut>
#include <QSlider>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTimer>
#include <QTreeWidget>
#include <QUrl>
#include <QVBoxLayout>
#include <algorithm>
#include <climits>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "bookmark_dialog.h"
#include "dstudio/analysis/curves.h"
#include "dstudio/analysis/metrics_row.h"
#include "dstudio/common/atomic_file.h"
#include "dstudio/common/error.h"
#include "dstudio/env/environment.h"
#include "dstudio/models/checkpoint.h"
#include "dstudio/models/config_fields.h"
#include "dstudio/models/evaluation.h"
#include "dstudio/models/run_folder.h"
#include "dstudio/models/variant_registry.h"
#include "dstudio/viz/config_form.h"
#include "dstudio/viz/export_dialog.h"
#include "dstudio/viz/figures.h"
#include "dstudio/viz/number_text.h"
#include "dstudio/viz/run_curves_view.h"
#include "job.h"
#include "pane_splitter.h"
#include "training_panel_figures.h"
#include "view_recipes.h"

namespace dstudio::studio {

// ---------------------------------------------------------------------------------------------
// [SECTION] Construction

namespace {

using nlohmann::ordered_json;

struct MetricChoice {
  const char* key;
  const char* label;
};
const MetricChoice kMetrics[] = {{analysis::metrics::kLoss, "loss (action MSE)"},
                                 {analysis::metrics::kEvalScore, "normalised score"},
                                 {analysis::metrics::kEntropyLayer1, "attention entropy, layer 1"},
                                 {analysis::metrics::kLearningRate, "learning rate"},
                                 {analysis::metrics::kStepsPerSecond, "steps per second"}};

// A plugin mixer's options are edited one field each, "mixer_options.<name>", and read back into
// the configuration's "mixer_options" object.
constexpr const char* kMixerOptionPrefix = "mixer_options.";

// The narrowest the forms get beside the plots before they scroll sideways.
constexpr int kFormsMinimumWidth = 340;

}  // namespace

TrainingPanel::TrainingPanel(QWidget* parent)
    : QWidget(parent),
      variant_(new QComboBox),
      merger_(new QComboBox),
      mixer_(new QComboBox),
      merger_label_(new QLabel(tr("merger"))),
      mixer_label_(new QLabel(tr("mixer"))),
      defaults_note_(new QLabel),
      variant_form_(new viz::ConfigForm),
      training_form_(new viz::ConfigForm),
      eval_episodes_(new QSpinBox),
      runs_dir_edit_(new QLineEdit),
      start_(new QPushButton(tr("Start"))),
      pause_(new QPushButton(tr("Pause"))),
      resume_(new QPushButton(tr("Resume"))),
      cancel_(new QPushButton(tr("Cancel"))),
      message_(new QLabel),
      status_(new QLabel),
      progress_(new QProgressBar),
      live_(new viz::TrainingCurvesView),
      runs_list_(new QTreeWidget),
      compare_(new viz::RunComparisonView),
      metric_(new QComboBox),
      group_by_(new QComboBox),
      band_(new QComboBox),
      smoothing_(new QSlider(Qt::Horizontal)),
      smoothing_label_(new QLabel),
      timer_(new QTimer(this)),
      curves_figure_(std::make_unique<viz::RunCurvesFigure>(
          [this] { return currentRun() ? currentRun()->name() : QString(); },
          [this] { return currentRun() ? &currentRun()->metrics() : nullptr; })),
      comparison_figure_(std::make_unique<ComparisonFigure>(*this)),
      folders_job_(new Job(tr("Reading run folders"), this)) {
  setFigureRecipeMakers();
  QWidget* left = buildRunControls(buildNextRunForms());
  setUpProgress();
  QWidget* list_box = buildRunList();
  QWidget* compare_box = buildComparison();
  QWidget* right = buildRunView(list_box, compare_box);

  auto* layout = new QHBoxLayout(this);
  layout->addWidget(paneSplitter(Qt::Horizontal, left, right, 0, 1));

  connectSignals();

  // $XDG_DATA_HOME/decision-studio/runs, whatever organisation the settings are filed under.
  const QString fallback =
      QDir(QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation))
          .filePath(QCoreApplication::applicationName() + QStringLiteral("/runs"));
  setRunsDirectory(QSettings().value("training/runs_dir", fallback).toString());
  rebuildTrainingForm(models::TrainingConfig{});
  rebuildVariantForm();
  setDataset(nullptr, {});
  updateComparison();
}

// The figures' recipes, which say how an exported figure is drawn again.
void TrainingPanel::setFigureRecipeMakers() {
  // A finished run's curves are its folder's log: their recipe names it (a live run's has none).
  curves_figure_->setFigureRecipeMaker([this]() -> std::optional<FigureRecipe> {
    const auto* run = currentRun();
    if (!run || run->active()) return std::nullopt;
    auto recipe =
        recipes::training_curves_recipe(run->dir().toStdString(), run->name().toStdString());
    // The run's bookmarks go with its curves.
    for (const auto& b : run_bookmarks_)
      if (b.run == run->dir().toStdString()) recipe.bookmarks.push_back({b.step, b.name, b.note});
    return recipe;
  });
  // The checked runs' logs, once none of them is still training.
  comparison_figure_->setFigureRecipeMaker([this]() -> std::optional<FigureRecipe> {
    std::vector<recipes::ComparedRun> runs;
    for (const auto& row : runs_) {
      if (row.item->checkState(ColumnRun) != Qt::Checked) continue;
      if (row.run->active()) return std::nullopt;
      runs.push_back({row.run->dir().toStdString(), groupOf(*row.run).toStdString()});
    }
    return recipes::run_comparison_recipe(runs, metric_->currentData().toString().toStdString(),
                                          compare_->yLabel().toStdString(),
                                          smoothing_->value() / 100.0, band());
  });
}

QGroupBox* TrainingPanel::buildVariantChooser() {
  // Variant chooser: hier takes its merger and mixer.
  for (const auto& name : models::variant_names()) variant_->addItem(QString::fromStdString(name));
  for (const auto& m : models::hier_mergers()) merger_->addItem(QString::fromStdString(m));
  merger_->setCurrentText("conv");
  for (const auto& m : models::hier_mixers()) mixer_->addItem(QString::fromStdString(m));
  mixer_->setCurrentText("pooling");
  variant_->setToolTip(
      tr("dt: Decision Transformer; dc: Decision ConvFormer; gdt: Gaussian-biased DT; udt/udc: "
         "unified "
         "tokens; dhi: Decision HiFormer; hier: any merger and mixer; mlp-bc: behaviour cloning"));
  merger_->setToolTip(
      tr("hier: how a step's (a, R, s) embeddings are merged into one token; none keeps DT's "
         "triplets"));
  mixer_->setToolTip(tr("hier: the token mixer of every block"));
  defaults_note_->setWordWrap(true);
  defaults_note_->setStyleSheet("color: palette(mid);");
  auto* chooser = new QFormLayout;
  chooser->addRow(tr("variant"), variant_);
  chooser->addRow(merger_label_, merger_);
  chooser->addRow(mixer_label_, mixer_);
  chooser->addRow(defaults_note_);
  alignFormFields(chooser);
  // The forms hold the next run's settings; a run chosen in the list below names its own.
  auto* chooser_box = new QGroupBox(tr("Next run: variant"));
  chooser_box->setLayout(chooser);
  return chooser_box;
}

QGroupBox* TrainingPanel::buildOptimisationBox() {
  auto* training_box = new QGroupBox(tr("Next run: optimisation"));
  training_box->setToolTip(tr("The training configuration for the next run"));
  auto* training_layout = new QVBoxLayout(training_box);
  training_layout->addWidget(training_form_);
  auto* eval_form = new QFormLayout;
  eval_episodes_->setRange(1, 1000);
  eval_episodes_->setValue(5);
  eval_episodes_->setToolTip(tr("Episodes rolled out at each evaluation (eval_every > 0)"));
  eval_form->addRow(tr("evaluation episodes"), eval_episodes_);
  training_layout->addLayout(eval_form);
  alignFormFields(eval_form);
  return training_box;
}

void TrainingPanel::alignFormFields(QFormLayout* form) {
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  form->setLabelAlignment(Qt::AlignRight);
}

QScrollArea* TrainingPanel::buildNextRunForms() {
  QGroupBox* chooser_box = buildVariantChooser();
  // Short titles: a group box is at least as wide as its title, in large type too.
  auto* model_box = new QGroupBox(tr("Next run: model"));
  model_box->setToolTip(tr("The variant's configuration for the next run"));
  (new QVBoxLayout(model_box))->addWidget(variant_form_);
  QGroupBox* training_box = buildOptimisationBox();

  auto* forms = new QWidget;
  auto* forms_layout = new QVBoxLayout(forms);
  forms_layout->addWidget(chooser_box);
  forms_layout->addWidget(model_box);
  forms_layout->addWidget(training_box);
  forms_layout->addStretch(1);
  auto* scroll = new QScrollArea;
  scroll->setWidget(forms);
  scroll->setWidgetResizable(true);
  forms_scroll_ = scroll;
  return scroll;
}

QWidget* TrainingPanel::buildRunControls(QScrollArea* forms) {
  // Runs folder and the run controls under the forms.
  auto* browse = new QPushButton(tr("…"));
  browse->setToolTip(tr("Choose the folder that receives a new folder per run"));
  browse->setFixedWidth(32);
  connect(browse, &QPushButton::clicked, this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Runs folder"), runs_dir_);
    if (dir.isEmpty()) return;
    setRunsDirectory(dir);
    QSettings().setValue("training/runs_dir", dir);
  });
  auto* dir_row = new QHBoxLayout;
  dir_row->addWidget(new QLabel(tr("Runs folder")));
  dir_row->addWidget(runs_dir_edit_, 1);
  dir_row->addWidget(browse);
  auto* buttons = new QHBoxLayout;
  for (QPushButton* b : {start_, pause_, resume_, cancel_}) buttons->addWidget(b);
  start_->setDefault(true);
  pause_->setToolTip(tr("Pause the selected run within a step"));
  resume_->setToolTip(tr("Resume the selected run"));
  cancel_->setToolTip(tr("Stop the selected run within a step; a checkpoint keeps what it learnt"));
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* left = new QWidget;
  auto* left_layout = new QVBoxLayout(left);
  left_layout->setContentsMargins(0, 0, 0, 0);
  left_layout->addWidget(forms, 1);
  left_layout->addLayout(dir_row);
  left_layout->addLayout(buttons);
  left_layout->addWidget(message_);
  return left;
}

void TrainingPanel::setUpProgress() {
  // Progress of the selected run above its live curves.
  progress_->setTextVisible(true);
  progress_->setFormat(tr("no run"));
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::LinksAccessibleByMouse);
  status_->setOpenExternalLinks(true);  // an export's folder
}

QWidget* TrainingPanel::buildRunList() {
  // Run list, with the buttons that add runs from disk under it.
  runs_list_->setColumnCount(ColumnCount);
  runs_list_->setHeaderLabels({tr("Run"), tr("State"), tr("Step"), tr("Loss"), tr("Score"),
                               tr("Entropy"), tr("Variant"), tr("Seed")});
  runs_list_->headerItem()->setToolTip(ColumnLoss,
                                       tr("The last logged training loss (action MSE)"));
  runs_list_->headerItem()->setToolTip(ColumnScore, tr("The last evaluation's normalised score"));
  runs_list_->headerItem()->setToolTip(ColumnEntropy,
                                       tr("The last evaluation's attention entropy of layer 1"));
  // Sortable by any column; rows keep the order they came in until a header is clicked.
  runs_list_->header()->setSortIndicator(-1, Qt::AscendingOrder);
  runs_list_->setSortingEnabled(true);
  runs_list_->header()->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(runs_list_->header(), &QHeaderView::customContextMenuRequested, this,
          [this](const QPoint& at) {
            QMenu* menu = columnMenu();
            menu->setAttribute(Qt::WA_DeleteOnClose);
            menu->popup(runs_list_->header()->mapToGlobal(at));
          });
  runs_list_->setRootIsDecorated(false);
  runs_list_->setUniformRowHeights(true);
  runs_list_->setToolTip(
      tr("Every run started since the studio opened, and the run folders added; checked runs are "
         "compared"));
  runs_list_->header()->setStretchLastSection(false);
  runs_list_->header()->setSectionResizeMode(ColumnRun, QHeaderView::Interactive);
  runs_list_->setColumnWidth(
      ColumnRun, runs_list_->fontMetrics().horizontalAdvance("dt-seed0-20240101-000000") + 48);
  for (int c = ColumnRun + 1; c < ColumnCount; ++c)
    runs_list_->header()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
  runs_list_->setMinimumWidth(260);
  auto* add_folder = new QPushButton(tr("Add run folder…"));
  add_folder->setToolTip(
      tr("Compare a finished run from disk (a folder with metrics.jsonl or metrics.csv)"));
  connect(add_folder, &QPushButton::clicked, this, &TrainingPanel::chooseRunFolder);
  auto* list_box = new QWidget;
  auto* list_layout = new QVBoxLayout(list_box);
  list_layout->setContentsMargins(0, 0, 0, 0);
  list_layout->addWidget(runs_list_, 1);
  auto* continue_run = new QPushButton(tr("Continue checkpoint…"));
  continue_run->setToolTip(
      tr("Resume a run from its checkpoint.pt on the open dataset, exactly where it stopped "
         "(optimiser, sampler and random streams included)"));
  connect(continue_run, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Continue training from"), runs_dir_,
                                                      tr("Checkpoints (*.pt)"));
    if (!path.isEmpty()) resumeFromCheckpoint(path);
  });
  auto* list_buttons = new QHBoxLayout;
  list_buttons->addWidget(add_folder);
  list_buttons->addWidget(continue_run);
  list_buttons->addStretch(1);
  list_layout->addLayout(list_buttons);
  return list_box;
}

QWidget* TrainingPanel::buildComparison() {
  for (const auto& m : kMetrics) metric_->addItem(tr(m.label), QString::fromLatin1(m.key));
  group_by_->addItem(tr("variant"), QString());
  // Narrow lists (the popups show the long names), so the tab fits a laptop's screen.
  for (auto* box : {metric_, group_by_}) {
    box->setMinimumContentsLength(box == metric_ ? 17 : 8);
    box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  }
  group_by_->setToolTip(
      tr("Runs with the same value of this field are one curve: the mean over them, with a band"));
  band_->addItems({tr("min..max"), tr("mean ± std")});
  band_->setToolTip(tr("The band around each group's mean over its checked runs"));
  smoothing_->setRange(0, 99);
  smoothing_->setValue(60);
  smoothing_->setMinimumWidth(110);
  smoothing_->setToolTip(
      tr("Exponential moving average weight; the raw mean stays faintly visible"));
  fitToFont();
  auto* export_button = new QPushButton(tr("Export…"));
  export_button->setToolTip(
      tr("Write the comparison as PDF, SVG and PNG, with its numbers as CSV"));
  connect(export_button, &QPushButton::clicked, this, &TrainingPanel::exportWithDialog);
  // Three short rows of controls, so the tab fits a laptop screen, in large type too.
  auto* compare_controls = new QHBoxLayout;
  compare_controls->addWidget(new QLabel(tr("Compare")));
  compare_controls->addWidget(metric_, 1);
  compare_controls->addWidget(export_button);
  auto* grouping_controls = new QHBoxLayout;
  grouping_controls->addWidget(new QLabel(tr("grouped by")));
  grouping_controls->addWidget(group_by_, 1);
  grouping_controls->addWidget(band_);
  auto* smoothing_controls = new QHBoxLayout;
  smoothing_controls->addWidget(new QLabel(tr("smoothing")));
  smoothing_controls->addWidget(smoothing_, 1);
  smoothing_controls->addWidget(smoothing_label_);
  auto* compare_box = new QWidget;
  auto* compare_layout = new QVBoxLayout(compare_box);
  compare_layout->setContentsMargins(0, 0, 0, 0);
  compare_layout->addLayout(compare_controls);
  compare_layout->addLayout(grouping_controls);
  compare_layout->addLayout(smoothing_controls);
  compare_layout->addWidget(compare_, 1);
  return compare_box;
}

QWidget* TrainingPanel::buildRunView(QWidget* list_box, QWidget* compare_box) {
  auto* bottom = paneSplitter(Qt::Horizontal, list_box, compare_box, 1, 1);
  bottom->setSizes({640, 560});  // the runs table's metrics and fields in view
  auto* right_split = paneSplitter(Qt::Vertical, live_, bottom, 1, 1);
  auto* right = new QWidget;
  auto* right_layout = new QVBoxLayout(right);
  right_layout->setContentsMargins(0, 0, 0, 0);
  right_layout->addWidget(progress_);
  // A step of the run shown, named with a note: drawn on its curves, kept in the workspace.
  auto* bookmark = new QPushButton(tr("Bookmark Step…"));
  bookmark->setObjectName(QStringLiteral("bookmarkRunStep"));
  bookmark->setToolTip(
      tr("Name a step of the run shown, with a note: drawn on its curves and "
         "kept in the workspace"));
  connect(bookmark, &QPushButton::clicked, this, [this] {
    const RunRow* row = selectedRun();
    if (!row) return;
    const auto step = static_cast<int>(std::min<std::int64_t>(row->run->step(), 1'000'000'000));
    const auto total = static_cast<int>(
        std::min<std::int64_t>(std::max(row->run->totalSteps(), row->run->step()), 1'000'000'000));
    const auto answer = askBookmark(this, BookmarkPlace::Run, row->run->dir(), step, total);
    if (answer.kind == BookmarkAnswer::Kind::Saved) addRunBookmark(answer.bookmark);
  });
  auto* status_row = new QHBoxLayout;
  status_row->addWidget(status_, 1);
  status_row->addWidget(bookmark, 0, Qt::AlignTop);
  right_layout->addLayout(status_row);
  right_layout->addWidget(right_split, 1);
  return right;
}

void TrainingPanel::connectSignals() {
  connect(variant_, &QComboBox::currentTextChanged, this, [this] { rebuildVariantForm(); });
  connect(merger_, &QComboBox::currentTextChanged, this, [this] { rebuildVariantForm(); });
  connect(mixer_, &QComboBox::currentTextChanged, this, [this] { rebuildVariantForm(); });
  // Changing the form's tokenizer, mixer or hybrid flag changes which fields matter.
  connect(variant_form_, &viz::ConfigForm::edited, this, [this](const QString& key) {
    if (key == QLatin1String("tokenizer") || key == QLatin1String("mixer") ||
        key == QLatin1String("hybrid"))
      showUsedVariantFields();
  });
  connect(start_, &QPushButton::clicked, this, [this] { startTraining(); });
  connect(pause_, &QPushButton::clicked, this, &TrainingPanel::pauseTraining);
  connect(resume_, &QPushButton::clicked, this, &TrainingPanel::resumeTraining);
  connect(cancel_, &QPushButton::clicked, this, &TrainingPanel::cancelTraining);
  connect(runs_dir_edit_, &QLineEdit::editingFinished, this,
          [this] { runs_dir_ = runs_dir_edit_->text().trimmed(); });
  connect(runs_list_, &QTreeWidget::currentItemChanged, this, [this] {
    showRun(selectedRun());
    updateButtons();
  });
  runs_list_->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(runs_list_, &QTreeWidget::customContextMenuRequested, this, [this](const QPoint& at) {
    QMenu* menu = runMenu(runs_list_->indexOfTopLevelItem(runs_list_->itemAt(at)));
    if (!menu) return;
    menu->setAttribute(Qt::WA_DeleteOnClose);
    menu->popup(runs_list_->viewport()->mapToGlobal(at));
  });
  connect(runs_list_, &QTreeWidget::itemChanged, this, [this](QTreeWidgetItem*, int column) {
    if (column == ColumnRun) updateComparison();
  });
  connect(metric_, &QComboBox::currentIndexChanged, this, [this] { updateComparison(); });
  connect(band_, &QComboBox::currentIndexChanged, this, [this] { updateComparison(); });
  connect(group_by_, &QComboBox::currentIndexChanged, this, [this] { updateComparison(); });
  connect(smoothing_, &QSlider::valueChanged, this, [this] { updateComparison(); });
  auto* shortcut = new QShortcut(QKeySequence(Qt::CTRL | Qt::Key_Return), this);
  shortcut->setContext(Qt::WidgetWithChildrenShortcut);
  connect(shortcut, &QShortcut::activated, this, [this] { startTraining(); });
  // The GUI pulls what the training threads pushed, ten times a second.
  timer_->setInterval(100);
  connect(timer_, &QTimer::timeout, this, &TrainingPanel::pull);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Type size and closing

TrainingPanel::~TrainingPanel() {
  folders_job_->cancelAndWait();  // its result refers to this panel
  cancelAll();
}

void TrainingPanel::fitToFont() {
  // The forms in full beside the plots where the window allows (they scroll sideways in a window
  // narrower than a laptop's screen), and the smoothing's value in its own room, at any type size.
  // (In large type the forms' rows wrap, each field under its name, rather than scroll sideways.)
  if (forms_scroll_ && forms_scroll_->widget())
    forms_scroll_->setMinimumWidth(std::min(
        kFormsMinimumWidth, forms_scroll_->widget()->sizeHint().width() +
                                forms_scroll_->verticalScrollBar()->sizeHint().width() + 8));
  smoothing_label_->setMinimumWidth(smoothing_label_->fontMetrics().horizontalAdvance("0.00") + 6);
}

void TrainingPanel::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  // After the children have taken the new type too.
  if (event->type() == QEvent::FontChange) QTimer::singleShot(0, this, &TrainingPanel::fitToFont);
}

void TrainingPanel::closeEvent(QCloseEvent* event) {
  cancelAll();
  event->accept();
}

void TrainingPanel::cancelAll() {
  // Ask every run to stop first, so they wind down together, then wait for each.
  for (auto& row : runs_) row.run->cancel();
  for (auto& row : runs_) row.run->wait();
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Forms

QString TrainingPanel::variantLabel() const {
  const QString name = variant_->currentText();
  if (name != QLatin1String("hier")) return name;
  QString label = name;
  label += '-';
  label += merger_->currentText();
  label += '-';
  label += mixer_->currentText();
  return label;
}

void TrainingPanel::rebuildVariantForm() {
  const bool hier = variant_->currentText() == QLatin1String("hier");
  for (QWidget* w : std::initializer_list<QWidget*>{merger_, mixer_, merger_label_, mixer_label_})
    w->setVisible(hier);
  models::VariantConfig config;
  try {
    config = models::make_variant(variant_->currentText().toStdString(),
                                  merger_->currentText().toStdString(),
                                  mixer_->currentText().toStdString());
  } catch (const UsageError& e) {
    showMessage(QString::fromStdString(e.what()), true);
    return;
  }
  // The variant is chosen above; the shapes come from the dataset; the plugin is the variant's;
  // a plugin mixer's options follow, one field each.
  variant_form_->setConfig(models::to_json(config), {"variant", "state_dim", "act_dim", "plugin",
                                                     "plugin_version", "mixer_options"});
  if (const auto mixer = models::mixer_registry().find(config.mixer))
    for (const auto& option : mixer->options)
      variant_form_->addNumber(
          kMixerOptionPrefix + option.field.key, QString::fromStdString(option.field.key),
          models::mixer_option(config, option.field.key), option.field.minimum, option.integer,
          QString::fromStdString(option.field.description + " (" + mixer->origin.label() + ")"));
  applyDatasetDefaults();
  showUsedVariantFields();
  showMessage({}, false);
}

void TrainingPanel::showUsedVariantFields() {
  models::VariantConfig config;
  try {
    config = models::with_overrides(models::make_variant(variant_->currentText().toStdString(),
                                                         merger_->currentText().toStdString(),
                                                         mixer_->currentText().toStdString()),
                                    variant_form_->json());
  } catch (const std::exception&) {
    return;  // a value being typed that does not parse yet: the rows stay as they are
  }
  for (const QString& key : variant_form_->keys())
    if (!key.startsWith(QLatin1String(kMixerOptionPrefix)))
      variant_form_->setFieldVisible(key, models::uses_field(config, key.toStdString()));
}

void TrainingPanel::rebuildTrainingForm(const models::TrainingConfig& config) {
  training_form_->setConfig(models::to_json(config));
}

void TrainingPanel::applyDatasetDefaults() {
  // Decision ConvFormer's settings depend on the dataset (Table 4); other variants keep theirs.
  models::DatasetDefaults d;
  if (dataset_)
    d = models::dataset_defaults(variant_->currentText().toStdString(),
                                 data::dataset_name(*dataset_));
  if (d.hidden > 0) setField("hidden", d.hidden);
  if (d.learning_rate > 0) {
    setField("learning_rate", d.learning_rate);
    applied_lr_ = d.learning_rate;
  } else if (applied_lr_ > 0) {
    // Back to the recipe's rate, unless the user changed the one the table gave.
    const auto* lr = qobject_cast<const QDoubleSpinBox*>(field("learning_rate"));
    if (lr && lr->value() == applied_lr_)
      setField("learning_rate", models::TrainingConfig{}.learning_rate);
    applied_lr_ = 0.0;
  }
  // The task's return-to-go scale (1000 for locomotion, 1 for AntMaze), unless the user changed
  // the one shown.
  double task_scale = models::TrainingConfig{}.rtg_scale;
  if (dataset_)
    if (const auto task = env::find_task(dataset_->env_id)) task_scale = task->rtg_scale;
  if (const auto* scale = qobject_cast<const QDoubleSpinBox*>(field("rtg_scale"));
      scale && scale->value() == applied_rtg_scale_ && task_scale != applied_rtg_scale_) {
    setField("rtg_scale", task_scale);
    applied_rtg_scale_ = task_scale;
  }
  defaults_note_->setText(d.source.empty() ? QString()
                                           : tr("%1: hidden %2, learning rate %3")
                                                 .arg(QString::fromStdString(d.source))
                                                 .arg(d.hidden)
                                                 .arg(d.learning_rate));
  defaults_note_->setVisible(!d.source.empty());
}

QWidget* TrainingPanel::field(const QString& key) const {
  QWidget* w = variant_form_->field(key);
  return w ? w : training_form_->field(key);
}

bool TrainingPanel::setField(const QString& key, const QVariant& value) {
  return variant_form_->field(key) ? variant_form_->setField(key, value)
                                   : training_form_->setField(key, value);
}

QStringList TrainingPanel::variantKeys() const {
  return variant_form_->keys();
}

QStringList TrainingPanel::trainingKeys() const {
  return training_form_->keys();
}

models::VariantConfig TrainingPanel::variantConfig() const {
  auto j = ordered_json::parse(variant_form_->json());
  j["variant"] = variant_->currentText().toStdString();
  return models::variant_from_json(j.dump());
}

models::TrainingConfig TrainingPanel::trainingConfig() const {
  return models::training_from_json(training_form_->json());
}

// Outlines every field the message names, so the user sees where to look.
void TrainingPanel::markInvalidField(const QString& message) {
  variant_form_->markInvalid(message);
  training_form_->markInvalid(message);
}

void TrainingPanel::showMessage(const QString& text, bool error) {
  message_->setText(text);
  message_->setStyleSheet(error ? QStringLiteral("color: #d55e00;") : QString());
  if (!error) markInvalidField({});
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Dataset and folders

void TrainingPanel::setDataset(std::shared_ptr<const data::Dataset> dataset, const QString& path) {
  dataset_ = std::move(dataset);
  dataset_path_ = path;
  if (dataset_) {
    start_->setToolTip(tr("Train a new run of the chosen variant on %1 (Ctrl+Return)")
                           .arg(QFileInfo(path).fileName()));
    applyDatasetDefaults();
  } else {
    start_->setToolTip(
        tr("Open a dataset first (File ▸ Open): runs train on the open dataset's states, actions "
           "and returns."));
  }
  updateButtons();
}

void TrainingPanel::setRunsDirectory(const QString& dir) {
  runs_dir_ = dir;
  runs_dir_edit_->setText(dir);
}

QString TrainingPanel::runsDirectory() const {
  return runs_dir_;
}

QStringList TrainingPanel::runFolders() const {
  QStringList out;
  for (const auto& row : runs_) out << row.run->dir();
  return out;
}

}  // namespace dstudio::studio

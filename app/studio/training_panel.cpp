// Background training with live and compared curves. See training_panel.h.
//
// Sections, in order: helpers and the panel's construction (its forms, run list, plots and
// buttons); forms (the variant and training fields, the dataset's defaults, invalid fields);
// dataset and folders; runs (start, resume, pause, cancel, the list's rows and the selected
// run's curves); comparison and run folders (groups over seeds, folders added from disk, the
// list's columns); figures (the selected run's curves and the comparison, for export). A run's
// own state and its reading of the trainer's reports are in training_run.cpp.

#include "training_panel.h"

#include "job.h"

#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDesktopServices>
#include <QMenu>
#include <QUrl>
#include <QCoreApplication>
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
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSet>
#include <QSettings>
#include <QShortcut>
#include <QSlider>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardPaths>
#include <QTimer>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <filesystem>
#include <optional>
#include <set>

#include "dstudio/common/error.h"
#include "dstudio/analysis/curves.h"
#include "dstudio/common/atomic_file.h"
#include "dstudio/models/checkpoint.h"
#include "dstudio/models/run_folder.h"
#include "dstudio/models/config_fields.h"
#include "dstudio/models/variant_registry.h"
#include "dstudio/models/evaluation.h"
#include "dstudio/viz/config_form.h"
#include "dstudio/viz/export_dialog.h"
#include "dstudio/viz/figures.h"
#include "dstudio/viz/number_text.h"
#include "dstudio/viz/run_curves_view.h"

namespace dstudio::studio {
namespace {

using nlohmann::ordered_json;

// "grouped by" a sweep's settings (compareRunFolders): no configuration field starts with '@'.
const QString kSettingKey = QStringLiteral("@setting");

QString duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return viz::missing_text();
  const auto s = static_cast<long long>(std::llround(seconds));
  if (s < 60) return QObject::tr("%1 s").arg(s);
  if (s < 3600) return QObject::tr("%1 min %2 s").arg(s / 60).arg(s % 60);
  return QObject::tr("%1 h %2 min").arg(s / 3600).arg((s % 3600) / 60);
}

struct MetricChoice {
  const char* key;
  const char* label;
};
const MetricChoice kMetrics[] = {{"loss", "loss (action MSE)"},
                                 {"eval_score", "normalised score"},
                                 {"entropy_layer1", "attention entropy, layer 1"},
                                 {"learning_rate", "learning rate"},
                                 {"steps_per_second", "steps per second"}};

// A plugin mixer's options are edited one field each, "mixer_options.<name>", and read back into
// the configuration's "mixer_options" object.
constexpr const char* kMixerOptionPrefix = "mixer_options.";

// The narrowest the forms get beside the plots before they scroll sideways.
constexpr int kFormsMinimumWidth = 340;

// A run list row that sorts numbers as numbers: a cell's Qt::UserRole holds its value. Blank
// cells sort after those with a number.
class RunItem : public QTreeWidgetItem {
 public:
  bool operator<(const QTreeWidgetItem& other) const override {
    const int c = treeWidget() ? treeWidget()->sortColumn() : 0;
    const QVariant a = data(c, Qt::UserRole), b = other.data(c, Qt::UserRole);
    if (a.isValid() && b.isValid()) return a.toDouble() < b.toDouble();
    if (a.isValid() != b.isValid()) return a.isValid();
    return QString::localeAwareCompare(text(c), other.text(c)) < 0;
  }
};

// A cell's text, and its number for sorting when it is one.
void set_cell(QTreeWidgetItem* item, int column, const QString& text, std::optional<double> number = std::nullopt) {
  item->setText(column, text);
  if (!number) {
    bool ok = false;
    const double v = text.toDouble(&ok);
    if (ok) number = v;
  }
  item->setData(column, Qt::UserRole, number ? QVariant(*number) : QVariant());
  if (number) item->setTextAlignment(column, Qt::AlignRight | Qt::AlignVCenter);
}

// The last value of a metric, if the run logged it.
std::optional<double> last_value(const analysis::RunMetrics& metrics, const char* key) {
  const auto it = metrics.columns.find(key);
  if (it == metrics.columns.end() || it->second.y.empty()) return std::nullopt;
  return it->second.y.back();
}

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
      curves_figure_(std::make_unique<CurvesFigure>(*this)),
      comparison_figure_(std::make_unique<ComparisonFigure>(*this)),
      folders_job_(new Job(tr("Reading run folders"), this)) {
  // Variant chooser: hier takes its merger and mixer.
  for (const auto& name : models::variant_names()) variant_->addItem(QString::fromStdString(name));
  for (const auto& m : models::hier_mergers()) merger_->addItem(QString::fromStdString(m));
  merger_->setCurrentText("conv");
  for (const auto& m : models::hier_mixers()) mixer_->addItem(QString::fromStdString(m));
  mixer_->setCurrentText("pooling");
  variant_->setToolTip(tr("dt: Decision Transformer; dc: Decision ConvFormer; gdt: Gaussian-biased DT; udt/udc: unified "
                          "tokens; dhi: Decision HiFormer; hier: any merger and mixer; mlp-bc: behaviour cloning"));
  merger_->setToolTip(tr("hier: how a step's (a, R, s) embeddings are merged into one token; none keeps DT's triplets"));
  mixer_->setToolTip(tr("hier: the token mixer of every block"));
  defaults_note_->setWordWrap(true);
  defaults_note_->setStyleSheet("color: palette(mid);");
  auto* chooser = new QFormLayout;
  chooser->addRow(tr("variant"), variant_);
  chooser->addRow(merger_label_, merger_);
  chooser->addRow(mixer_label_, mixer_);
  chooser->addRow(defaults_note_);
  // The forms hold the next run's settings; a run chosen in the list below names its own.
  auto* chooser_box = new QGroupBox(tr("Next run: variant"));
  chooser_box->setLayout(chooser);

  // Short titles: a group box is at least as wide as its title, in large type too.
  auto* model_box = new QGroupBox(tr("Next run: model"));
  model_box->setToolTip(tr("The variant's configuration for the next run"));
  (new QVBoxLayout(model_box))->addWidget(variant_form_);
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
  for (QFormLayout* f : {chooser, eval_form}) {
    f->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    f->setLabelAlignment(Qt::AlignRight);
  }

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

  // Runs folder and the run controls under the forms.
  auto* browse = new QPushButton(tr("…"));
  browse->setToolTip(tr("Choose the folder that receives a new folder per run"));
  browse->setFixedWidth(32);
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
  left_layout->addWidget(scroll, 1);
  left_layout->addLayout(dir_row);
  left_layout->addLayout(buttons);
  left_layout->addWidget(message_);

  // Progress of the selected run above its live curves.
  progress_->setTextVisible(true);
  progress_->setFormat(tr("no run"));
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::LinksAccessibleByMouse);
  status_->setOpenExternalLinks(true);  // an export's folder

  // Run list and the comparison.
  runs_list_->setColumnCount(ColumnCount);
  runs_list_->setHeaderLabels({tr("Run"), tr("State"), tr("Step"), tr("Loss"), tr("Score"), tr("Entropy"), tr("Variant"), tr("Seed")});
  runs_list_->headerItem()->setToolTip(ColumnLoss, tr("The last logged training loss (action MSE)"));
  runs_list_->headerItem()->setToolTip(ColumnScore, tr("The last evaluation's normalised score"));
  runs_list_->headerItem()->setToolTip(ColumnEntropy, tr("The last evaluation's attention entropy of layer 1"));
  // Sortable by any column; rows keep the order they came in until a header is clicked.
  runs_list_->header()->setSortIndicator(-1, Qt::AscendingOrder);
  runs_list_->setSortingEnabled(true);
  runs_list_->header()->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(runs_list_->header(), &QHeaderView::customContextMenuRequested, this, [this](const QPoint& at) {
    QMenu* menu = columnMenu();
    menu->setAttribute(Qt::WA_DeleteOnClose);
    menu->popup(runs_list_->header()->mapToGlobal(at));
  });
  runs_list_->setRootIsDecorated(false);
  runs_list_->setUniformRowHeights(true);
  runs_list_->setToolTip(tr("Every run started since the studio opened, and the run folders added; checked runs are compared"));
  runs_list_->header()->setStretchLastSection(false);
  runs_list_->header()->setSectionResizeMode(ColumnRun, QHeaderView::Interactive);
  runs_list_->setColumnWidth(ColumnRun, runs_list_->fontMetrics().horizontalAdvance("dt-seed0-20240101-000000") + 48);
  for (int c = ColumnRun + 1; c < ColumnCount; ++c) runs_list_->header()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
  runs_list_->setMinimumWidth(260);
  auto* add_folder = new QPushButton(tr("Add run folder…"));
  add_folder->setToolTip(tr("Compare a finished run from disk (a folder with metrics.jsonl or metrics.csv)"));
  auto* list_box = new QWidget;
  auto* list_layout = new QVBoxLayout(list_box);
  list_layout->setContentsMargins(0, 0, 0, 0);
  list_layout->addWidget(runs_list_, 1);
  auto* continue_run = new QPushButton(tr("Continue checkpoint…"));
  continue_run->setToolTip(tr("Resume a run from its checkpoint.pt on the open dataset, exactly where it stopped "
                              "(optimiser, sampler and random streams included)"));
  connect(continue_run, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Continue training from"), runs_dir_, tr("Checkpoints (*.pt)"));
    if (!path.isEmpty()) resumeFromCheckpoint(path);
  });
  auto* list_buttons = new QHBoxLayout;
  list_buttons->addWidget(add_folder);
  list_buttons->addWidget(continue_run);
  list_buttons->addStretch(1);
  list_layout->addLayout(list_buttons);

  for (const auto& m : kMetrics) metric_->addItem(tr(m.label), QString::fromLatin1(m.key));
  group_by_->addItem(tr("variant"), QString());
  // Narrow lists (the popups show the long names), so the tab fits a laptop's screen.
  for (auto* box : {metric_, group_by_}) {
    box->setMinimumContentsLength(box == metric_ ? 17 : 8);
    box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  }
  group_by_->setToolTip(tr("Runs with the same value of this field are one curve: the mean over them, with a band"));
  band_->addItems({tr("min..max"), tr("mean ± std")});
  band_->setToolTip(tr("The band around each group's mean over its checked runs"));
  smoothing_->setRange(0, 99);
  smoothing_->setValue(60);
  smoothing_->setMinimumWidth(110);
  smoothing_->setToolTip(tr("Exponential moving average weight; the raw mean stays faintly visible"));
  fitToFont();
  auto* export_button = new QPushButton(tr("Export…"));
  export_button->setToolTip(tr("Write the comparison as PDF, SVG and PNG, with its numbers as CSV"));
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

  auto* bottom = new QSplitter(Qt::Horizontal);
  bottom->addWidget(list_box);
  bottom->addWidget(compare_box);
  bottom->setStretchFactor(0, 1);
  bottom->setStretchFactor(1, 1);
  bottom->setSizes({640, 560});  // the runs table's metrics and fields in view
  auto* right_split = new QSplitter(Qt::Vertical);
  right_split->addWidget(live_);
  right_split->addWidget(bottom);
  right_split->setStretchFactor(0, 1);
  right_split->setStretchFactor(1, 1);
  auto* right = new QWidget;
  auto* right_layout = new QVBoxLayout(right);
  right_layout->setContentsMargins(0, 0, 0, 0);
  right_layout->addWidget(progress_);
  right_layout->addWidget(status_);
  right_layout->addWidget(right_split, 1);

  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(left);
  split->addWidget(right);
  split->setStretchFactor(0, 0);
  split->setStretchFactor(1, 1);
  auto* layout = new QHBoxLayout(this);
  layout->addWidget(split);

  // Wiring.
  connect(variant_, &QComboBox::currentTextChanged, this, [this] { rebuildVariantForm(); });
  connect(merger_, &QComboBox::currentTextChanged, this, [this] { rebuildVariantForm(); });
  connect(mixer_, &QComboBox::currentTextChanged, this, [this] { rebuildVariantForm(); });
  // Changing the form's tokenizer, mixer or hybrid flag changes which fields matter.
  connect(variant_form_, &viz::ConfigForm::edited, this, [this](const QString& key) {
    if (key == QLatin1String("tokenizer") || key == QLatin1String("mixer") || key == QLatin1String("hybrid")) showUsedVariantFields();
  });
  connect(start_, &QPushButton::clicked, this, [this] { startTraining(); });
  connect(pause_, &QPushButton::clicked, this, &TrainingPanel::pauseTraining);
  connect(resume_, &QPushButton::clicked, this, &TrainingPanel::resumeTraining);
  connect(cancel_, &QPushButton::clicked, this, &TrainingPanel::cancelTraining);
  connect(browse, &QPushButton::clicked, this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Runs folder"), runs_dir_);
    if (dir.isEmpty()) return;
    setRunsDirectory(dir);
    QSettings().setValue("training/runs_dir", dir);
  });
  connect(runs_dir_edit_, &QLineEdit::editingFinished, this, [this] { runs_dir_ = runs_dir_edit_->text().trimmed(); });
  connect(add_folder, &QPushButton::clicked, this, &TrainingPanel::chooseRunFolder);
  connect(export_button, &QPushButton::clicked, this, &TrainingPanel::exportWithDialog);
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

  // $XDG_DATA_HOME/decision-studio/runs, whatever organisation the settings are filed under.
  const QString fallback = QDir(QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation))
                               .filePath(QCoreApplication::applicationName() + QStringLiteral("/runs"));
  setRunsDirectory(QSettings().value("training/runs_dir", fallback).toString());
  rebuildTrainingForm(models::TrainingConfig{});
  rebuildVariantForm();
  setDataset(nullptr, {});
  updateComparison();
}

TrainingPanel::~TrainingPanel() {
  folders_job_->cancelAndWait();  // its result refers to this panel
  cancelAll();
}

void TrainingPanel::fitToFont() {
  // The forms in full beside the plots where the window allows (they scroll sideways in a window
  // narrower than a laptop's screen), and the smoothing's value in its own room, at any type size.
  // (In large type the forms' rows wrap, each field under its name, rather than scroll sideways.)
  if (forms_scroll_ && forms_scroll_->widget())
    forms_scroll_->setMinimumWidth(std::min(kFormsMinimumWidth, forms_scroll_->widget()->sizeHint().width() + forms_scroll_->verticalScrollBar()->sizeHint().width() + 8));
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
// Forms

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
  for (QWidget* w : std::initializer_list<QWidget*>{merger_, mixer_, merger_label_, mixer_label_}) w->setVisible(hier);
  models::VariantConfig config;
  try {
    config = models::make_variant(variant_->currentText().toStdString(), merger_->currentText().toStdString(),
                                  mixer_->currentText().toStdString());
  } catch (const UsageError& e) {
    showMessage(QString::fromStdString(e.what()), true);
    return;
  }
  // The variant is chosen above; the shapes come from the dataset; the plugin is the variant's;
  // a plugin mixer's options follow, one field each.
  variant_form_->setConfig(models::to_json(config), {"variant", "state_dim", "act_dim", "plugin", "plugin_version", "mixer_options"});
  if (const auto mixer = models::mixer_registry().find(config.mixer))
    for (const auto& option : mixer->options)
      variant_form_->addNumber(kMixerOptionPrefix + option.field.key, QString::fromStdString(option.field.key),
                               models::mixer_option(config, option.field.key), option.field.minimum, option.integer,
                               QString::fromStdString(option.field.description + " (" + mixer->origin.label() + ")"));
  applyDatasetDefaults();
  showUsedVariantFields();
  showMessage({}, false);
}

void TrainingPanel::showUsedVariantFields() {
  models::VariantConfig config;
  try {
    config = models::with_overrides(models::make_variant(variant_->currentText().toStdString(), merger_->currentText().toStdString(),
                                                         mixer_->currentText().toStdString()),
                                    variant_form_->json());
  } catch (const std::exception&) {
    return;  // a value being typed that does not parse yet: the rows stay as they are
  }
  for (const QString& key : variant_form_->keys())
    if (!key.startsWith(QLatin1String(kMixerOptionPrefix))) variant_form_->setFieldVisible(key, models::uses_field(config, key.toStdString()));
}

void TrainingPanel::rebuildTrainingForm(const models::TrainingConfig& config) { training_form_->setConfig(models::to_json(config)); }

void TrainingPanel::applyDatasetDefaults() {
  // Decision ConvFormer's settings depend on the dataset (Table 4); other variants keep theirs.
  models::DatasetDefaults d;
  if (dataset_) d = models::dataset_defaults(variant_->currentText().toStdString(), data::dataset_name(*dataset_));
  if (d.hidden > 0) setField("hidden", d.hidden);
  if (d.learning_rate > 0) {
    setField("learning_rate", d.learning_rate);
    applied_lr_ = d.learning_rate;
  } else if (applied_lr_ > 0) {
    // Back to the recipe's rate, unless the user changed the one the table gave.
    const auto* lr = qobject_cast<const QDoubleSpinBox*>(field("learning_rate"));
    if (lr && lr->value() == applied_lr_) setField("learning_rate", models::TrainingConfig{}.learning_rate);
    applied_lr_ = 0.0;
  }
  defaults_note_->setText(d.source.empty() ? QString()
                                           : tr("%1: hidden %2, learning rate %3").arg(QString::fromStdString(d.source)).arg(d.hidden).arg(d.learning_rate));
  defaults_note_->setVisible(!d.source.empty());
}

QWidget* TrainingPanel::field(const QString& key) const {
  QWidget* w = variant_form_->field(key);
  return w ? w : training_form_->field(key);
}

bool TrainingPanel::setField(const QString& key, const QVariant& value) {
  return variant_form_->field(key) ? variant_form_->setField(key, value) : training_form_->setField(key, value);
}

QStringList TrainingPanel::variantKeys() const { return variant_form_->keys(); }

QStringList TrainingPanel::trainingKeys() const { return training_form_->keys(); }

models::VariantConfig TrainingPanel::variantConfig() const {
  auto j = ordered_json::parse(variant_form_->json());
  j["variant"] = variant_->currentText().toStdString();
  return models::variant_from_json(j.dump());
}

models::TrainingConfig TrainingPanel::trainingConfig() const { return models::training_from_json(training_form_->json()); }

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
// Dataset and folders

void TrainingPanel::setDataset(std::shared_ptr<const data::Dataset> dataset, const QString& path) {
  dataset_ = std::move(dataset);
  dataset_path_ = path;
  if (dataset_) {
    start_->setToolTip(tr("Train a new run of the chosen variant on %1 (Ctrl+Return)").arg(QFileInfo(path).fileName()));
    applyDatasetDefaults();
  } else {
    start_->setToolTip(tr("Open a dataset first (File ▸ Open): runs train on the open dataset's states, actions and returns."));
  }
  updateButtons();
}

void TrainingPanel::setRunsDirectory(const QString& dir) {
  runs_dir_ = dir;
  runs_dir_edit_->setText(dir);
}

QString TrainingPanel::runsDirectory() const { return runs_dir_; }

QStringList TrainingPanel::runFolders() const {
  QStringList out;
  for (const auto& row : runs_) out << row.run->dir();
  return out;
}

// ---------------------------------------------------------------------------------------------
// Runs

bool TrainingPanel::startTraining() {
  if (!dataset_) {
    showMessage(tr("Open a dataset first: runs train on the open dataset."), true);
    return false;
  }
  models::VariantConfig variant;
  models::TrainingConfig training;
  try {
    variant = variantConfig();
    training = trainingConfig();
  } catch (const UsageError& e) {
    const QString why = QString::fromStdString(e.what());
    showMessage(tr("Not started: %1").arg(why), true);
    markInvalidField(why);
    return false;
  }
  if (runs_dir_.isEmpty()) {
    showMessage(tr("Not started: choose a runs folder."), true);
    return false;
  }
  // A new folder per run.
  const QString label = variantLabel();
  std::filesystem::path dir;
  try {
    dir = models::make_run_folder(runs_dir_.toStdString(), label.toStdString(), training.seed,
                                  QDateTime::currentDateTime().toString("yyyyMMdd-hhmmss").toStdString());
  } catch (const std::exception& e) {
    showMessage(tr("Not started: %1").arg(QString::fromStdString(e.what())), true);
    return false;
  }
  std::unique_ptr<models::Trainer> trainer;
  try {
    trainer = std::make_unique<models::Trainer>(*dataset_, variant, training, dir);
  } catch (const std::exception& e) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    showMessage(tr("Not started: %1").arg(QString::fromStdString(e.what())), true);
    markInvalidField(QString::fromStdString(e.what()));
    return false;
  }
  // What produced the run, next to its metrics, so the folder can be compared later.
  const ordered_json description = {{"label", label.toStdString()},
                                    {"variant", ordered_json::parse(models::to_json(trainer->variant()))},
                                    {"training", ordered_json::parse(models::to_json(training))},
                                    {"dataset", {{"path", dataset_path_.toStdString()}, {"fingerprint", dataset_->fingerprint}}},
                                    {"evaluation_episodes", eval_episodes_->value()}};
  try {
    write_text_atomically(dir / "run.json", description.dump(2) + "\n");
  } catch (const std::exception& e) {
    showMessage(tr("Not started: %1").arg(QString::fromStdString(e.what())), true);
    return false;
  }
  return launch(std::make_unique<TrainingRun>(QString::fromStdString(dir.string()), label, dataset_, std::move(trainer)), training.eval_every);
}

bool TrainingPanel::resumeFromCheckpoint(const QString& checkpoint) {
  if (!dataset_) {
    showMessage(tr("Open the dataset the checkpoint was trained on first."), true);
    return false;
  }
  std::unique_ptr<models::Trainer> trainer;
  try {
    trainer = models::Trainer::resume(*dataset_, checkpoint.toStdString());
  } catch (const std::exception& e) {
    showMessage(tr("Not continued: %1").arg(QString::fromStdString(e.what())), true);
    return false;
  }
  const auto eval_every = trainer->training().eval_every;
  const QString label = QString::fromStdString(trainer->variant().variant);
  auto run = std::make_unique<TrainingRun>(QFileInfo(checkpoint).absolutePath(), label, dataset_, std::move(trainer));
  // The curves so far, from the run's own metrics, so the continuation draws on after them.
  try {
    run->setMetrics(analysis::read_run_metrics(run->dir().toStdString()));
  } catch (const std::exception&) {
    // A checkpoint without its metrics next to it: the curves start at the resumed step.
  }
  return launch(std::move(run), eval_every);
}

bool TrainingPanel::launch(std::unique_ptr<TrainingRun> run, std::int64_t eval_every) {
  RunRow& row = addRow(std::move(run));
  row.run->start(eval_every, eval_episodes_->value());
  updateItem(row);
  runs_list_->setCurrentItem(row.item);
  showMessage(tr("Started %1.").arg(row.run->name()), false);
  showRun(&row);
  updateButtons();
  timer_->start();
  emit runStarted(row.run->dir());
  return true;
}

TrainingPanel::RunRow& TrainingPanel::addRow(std::unique_ptr<TrainingRun> run) {
  auto* item = new RunItem;
  item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
  {
    const QSignalBlocker block(runs_list_);
    item->setCheckState(ColumnRun, Qt::Checked);
    runs_list_->addTopLevelItem(item);
  }
  runs_.push_back({std::move(run), item});
  updateConfigColumns();
  return runs_.back();
}

TrainingPanel::RunRow* TrainingPanel::selectedRun() {
  const auto* item = runs_list_->currentItem();
  for (auto& row : runs_)
    if (row.item == item) return &row;
  return nullptr;
}

void TrainingPanel::pauseTraining() {
  if (RunRow* row = selectedRun()) row->run->pause();
  updateButtons();
}

void TrainingPanel::resumeTraining() {
  if (RunRow* row = selectedRun()) row->run->resume();
  updateButtons();
}

void TrainingPanel::cancelTraining() {
  if (RunRow* row = selectedRun()) row->run->cancel();
  updateButtons();
}

bool TrainingPanel::isTraining() const {
  return std::any_of(runs_.begin(), runs_.end(), [](const RunRow& row) { return row.run->active(); });
}

void TrainingPanel::pull() {
  std::vector<std::pair<QString, QString>> finished;
  bool changed_any = false;
  const RunRow* selected = selectedRun();
  for (auto& row : runs_) {
    if (!row.run->active()) continue;
    if (!row.run->drain()) continue;
    changed_any = true;
    if (!row.run->active()) finished.emplace_back(row.run->dir(), TrainingRun::stateName(row.run->state()));
    updateItem(row);
    if (&row == selected) showRun(&row);
  }
  if (changed_any) updateComparison();
  updateButtons();
  if (!isTraining()) timer_->stop();
  for (const auto& [dir, state] : finished) emit runFinished(dir, state);
}

void TrainingPanel::updateItem(RunRow& row) {
  const QSignalBlocker block(runs_list_);  // text changes are not check changes
  const TrainingRun& run = *row.run;
  auto* item = row.item;
  const bool failed = run.state() == TrainingRun::State::Failed;
  item->setText(ColumnRun, run.name());
  item->setText(ColumnVariant, run.label());
  set_cell(item, ColumnSeed, run.seed().isEmpty() ? viz::missing_text() : run.seed());
  const QString state = TrainingRun::stateName(run.state());
  item->setText(ColumnState, failed && !run.note().isEmpty() ? tr("Failed: %1").arg(run.note()) : state);
  const auto loss = run.metrics().columns.find("loss");
  const bool has_loss = loss != run.metrics().columns.end() && !loss->second.y.empty();
  const auto step = has_loss ? static_cast<std::int64_t>(loss->second.x.back()) : run.last().step;
  set_cell(item, ColumnStep, run.totalSteps() > 0 ? tr("%1 / %2").arg(step).arg(run.totalSteps()) : QString::number(step), static_cast<double>(step));
  const auto number = [&](int column, std::optional<double> v, int digits) {
    if (v) set_cell(item, column, QString::number(*v, 'f', digits), *v);
    else set_cell(item, column, QString());
  };
  if (has_loss) set_cell(item, ColumnLoss, QString::number(loss->second.y.back(), 'g', 4), loss->second.y.back());
  else set_cell(item, ColumnLoss, QString());
  number(ColumnScore, last_value(run.metrics(), "eval_score"), 1);
  number(ColumnEntropy, last_value(run.metrics(), "entropy_layer1"), 3);
  for (int k = 0; k < config_keys_.size(); ++k) set_cell(item, ColumnCount + k, run.configValue(config_keys_[k]));
  QString tip = run.dir();
  if (!run.note().isEmpty()) {
    tip += '\n';
    tip += run.note();
  }
  for (int c = 0; c < runs_list_->columnCount(); ++c) item->setToolTip(c, tip);
  item->setForeground(ColumnState, failed ? QColor(213, 94, 0) : runs_list_->palette().text().color());
}

void TrainingPanel::showRun(const RunRow* row) {
  if (!row) {
    live_->clear();
    progress_->setRange(0, 1);
    progress_->setValue(0);
    progress_->setFormat(tr("no run"));
    status_->clear();
    return;
  }
  const TrainingRun& run = *row->run;
  using State = TrainingRun::State;
  const std::int64_t step = run.step(), total = run.totalSteps();
  live_->setRun({}, run.metrics());  // the status line above names the run

  if (total > 0 && total <= INT_MAX) {
    progress_->setRange(0, static_cast<int>(total));
    progress_->setValue(static_cast<int>(std::min<std::int64_t>(step, total)));
  } else {
    progress_->setRange(0, 1);
    progress_->setValue(run.active() ? 0 : 1);
  }
  QString format = total > 0 ? tr("step %1 / %2").arg(step).arg(total) : tr("step %1").arg(step);
  if (run.state() == State::Running && run.last().step > 0) {
    format += tr("  ·  ETA %1").arg(duration(run.last().eta_seconds));
  } else if (!run.active()) {
    format += tr("  ·  %1").arg(TrainingRun::stateName(run.state()).toLower());
  }
  progress_->setFormat(format);

  const auto loss = run.metrics().columns.find("loss");
  const bool has_loss = loss != run.metrics().columns.end() && !loss->second.y.empty();
  const QString loss_text = has_loss ? QString::number(loss->second.y.back(), 'g', 4) : viz::missing_text();
  QString status;
  switch (run.state()) {
    case State::Starting:
    case State::Running:
      status = run.last().step > 0 ? tr("%1: running, loss %2, learning rate %3, %4 steps/s")
                                         .arg(run.name(), loss_text, QString::number(run.last().learning_rate, 'g', 3))
                                         .arg(run.last().steps_per_second, 0, 'f', 1)
                                   : tr("%1: starting…").arg(run.name());
      break;
    case State::Paused: status = tr("%1: paused at step %2").arg(run.name()).arg(step); break;
    case State::Finished: status = tr("%1: finished, final loss %2; checkpoint.pt in %3").arg(run.name(), loss_text, run.dir()); break;
    case State::Cancelled: status = tr("%1: cancelled, %2").arg(run.name(), run.note()); break;
    case State::Failed: status = tr("%1 failed: %2").arg(run.name(), run.note()); break;
    case State::Incomplete:
      status = tr("%1: %2, final loss %3 (%4)").arg(run.name(), TrainingRun::stateName(run.state()), loss_text, run.dir());
      break;
  }
  // What this run was trained with: the forms above hold the next run's settings, not its own.
  QStringList settings;
  for (const char* key : {"variant", "hidden", "layers", "heads", "context_length", "batch_size", "steps", "learning_rate"}) {
    const QString value = run.configValue(QString::fromLatin1(key));
    if (!value.isEmpty()) settings << (std::string_view(key) == "variant" ? value : QStringLiteral("%1 %2").arg(QString::fromLatin1(key), value));
  }
  if (!settings.isEmpty()) status += tr("\nThis run's settings: %1 (the forms above are the next run's)").arg(settings.join(QStringLiteral(", ")));
  status_->setText(status);
  status_->setStyleSheet(run.state() == State::Failed ? QStringLiteral("color: #d55e00;") : QString());
}

void TrainingPanel::updateButtons() {
  start_->setEnabled(dataset_ != nullptr);
  const RunRow* row = selectedRun();
  const bool active = row && row->run->active();
  const bool paused = active && (row->run->pauseRequested() || row->run->state() == TrainingRun::State::Paused);
  pause_->setEnabled(active && !paused);
  resume_->setEnabled(paused);
  cancel_->setEnabled(active && !row->run->cancelRequested());
}

// ---------------------------------------------------------------------------------------------
// Comparison and run folders

analysis::Band TrainingPanel::band() const { return band_->currentIndex() == 0 ? analysis::Band::MinMax : analysis::Band::MeanStd; }

std::vector<analysis::CurveGroup> TrainingPanel::comparedGroups() const {
  // Checked runs with the chosen metric, grouped by the chosen field in the order they appear.
  const std::string key = metric_->currentData().toString().toStdString();
  std::vector<std::pair<std::string, const analysis::Curve*>> curves;
  for (const auto& row : runs_) {
    if (row.item->checkState(ColumnRun) != Qt::Checked) continue;
    const auto it = row.run->metrics().columns.find(key);
    if (it != row.run->metrics().columns.end() && !it->second.x.empty()) curves.emplace_back(groupOf(*row.run).toStdString(), &it->second);
  }
  return analysis::group_curves(curves, smoothing_->value() / 100.0, band());
}

void TrainingPanel::updateComparison() {
  smoothing_label_->setText(QString::number(smoothing_->value() / 100.0, 'f', 2));
  std::vector<viz::CurveGroup> drawn;
  for (const auto& g : comparedGroups()) {
    const QString label = QString::fromStdString(g.label);
    drawn.push_back({g.runs == 1 ? label : tr("%1 (%2 runs)").arg(label).arg(g.runs), g.x, g.mean, g.low, g.high, g.raw_x, g.raw_mean});
  }
  compare_->setGroups(std::move(drawn), metric_->currentText(), metric_->currentData().toString() == QLatin1String("loss"),
                      runs_.empty() ? tr("Start runs or add run folders to compare them.")
                                    : tr("No checked run has %1 yet.").arg(metric_->currentText()));
}

bool TrainingPanel::addRunFolder(const QString& dir) {
  models::RunFolder folder;
  try {
    folder = models::read_run_folder(dir.toStdString());
  } catch (const std::exception& e) {
    last_error_ = tr("Cannot add the run: %1").arg(QString::fromStdString(e.what()));
    status_->setText(last_error_);
    status_->setStyleSheet(QStringLiteral("color: #d55e00;"));
    return false;
  }
  listRunFolder(std::move(folder));
  updateComparison();
  return true;
}

void TrainingPanel::listRunFolder(models::RunFolder folder) {
  const QString path = QString::fromStdString(folder.dir.string());
  last_error_.clear();
  for (auto& row : runs_)
    if (row.run->dir() == path && !row.run->active()) {  // read it again
      row.run->setMetrics(std::move(folder.metrics));
      updateItem(row);
      runs_list_->setCurrentItem(row.item);
      return;
    }
  RunRow& row = addRow(std::make_unique<TrainingRun>(std::move(folder)));
  updateItem(row);
  runs_list_->setCurrentItem(row.item);
}

void TrainingPanel::compareRunFolders(const QStringList& dirs, const QStringList& settings) {
  // The folders are read on a worker (a sweep's cells may be many, on a slow shared filesystem);
  // a newer request replaces one under way.
  folders_job_->start(
      [this, dirs, settings](const Progress& progress) -> Job::Deliver {
        auto folders = std::make_shared<std::vector<std::pair<models::RunFolder, QString>>>();
        for (int i = 0; i < dirs.size(); ++i) {
          progress.check();
          progress.update(static_cast<double>(i) / std::max<qsizetype>(1, dirs.size()), "reading run folders");
          try {
            folders->emplace_back(models::read_run_folder(dirs[i].toStdString()), i < settings.size() ? settings[i] : QString());
          } catch (const std::exception&) {
            // Without metrics yet (a cell that has not logged): left out of the comparison.
          }
        }
        return [this, folders] { showComparedFolders(std::move(*folders)); };
      },
      dirs.isEmpty() ? QString() : dirs.front());
}

void TrainingPanel::showComparedFolders(std::vector<std::pair<models::RunFolder, QString>> folders) {
  // Listed (or read again), named by their setting, then the only ones checked.
  QSet<QString> compared;
  for (auto& [folder, setting] : folders) {
    const QString dir = QString::fromStdString(folder.dir.string());
    listRunFolder(std::move(folder));
    run_settings_[dir] = setting;
    compared.insert(dir);
  }
  {
    const QSignalBlocker block(runs_list_);
    for (auto& row : runs_) row.item->setCheckState(ColumnRun, compared.contains(row.run->dir()) ? Qt::Checked : Qt::Unchecked);
  }
  const bool first = group_by_->findData(kSettingKey) < 0;
  if (first) group_by_->addItem(tr("setting"), kSettingKey);
  {
    const QSignalBlocker block(group_by_);
    group_by_->setCurrentIndex(group_by_->findData(kSettingKey));
  }
  if (first) {
    const bool evaluated = std::any_of(runs_.begin(), runs_.end(), [&](const RunRow& row) {
      return compared.contains(row.run->dir()) && row.run->metrics().columns.count("eval_score") > 0;
    });
    const int score = metric_->findData(QStringLiteral("eval_score"));
    if (evaluated && score >= 0) {
      const QSignalBlocker block(metric_);
      metric_->setCurrentIndex(score);
    }
  }
  updateComparison();
  emit runFoldersCompared(static_cast<int>(compared.size()));
}

QMenu* TrainingPanel::runMenu(int row) {
  // The row as the list shows it, which sorting may have reordered.
  const QTreeWidgetItem* item = runs_list_->topLevelItem(row);
  const auto at = std::find_if(runs_.begin(), runs_.end(), [item](const RunRow& r) { return item && r.item == item; });
  if (at == runs_.end()) return nullptr;
  const TrainingRun& run = *at->run;
  const QString checkpoint = QDir(run.dir()).filePath(QStringLiteral("checkpoint.pt"));
  const bool saved = QFile::exists(checkpoint);
  auto* menu = new QMenu(this);
  auto* open = menu->addAction(tr("Open in the Analysis Views"), this, [this, checkpoint] { emit openCheckpointRequested(checkpoint); });
  open->setEnabled(saved);
  auto* compare = menu->addAction(tr("Compare with the Open Model"), this, [this, checkpoint] { emit compareCheckpointRequested(checkpoint); });
  compare->setEnabled(saved);
  auto* resume = menu->addAction(tr("Continue Training"), this, [this, checkpoint] { resumeFromCheckpoint(checkpoint); });
  resume->setEnabled(saved && !run.active() && dataset_ != nullptr);
  menu->addSeparator();
  const QString dir = run.dir();
  menu->addAction(tr("Reveal Folder"), this, [dir] { QDesktopServices::openUrl(QUrl::fromLocalFile(dir)); });
  for (QAction* a : menu->actions()) a->setObjectName(a->text());
  return menu;
}

int TrainingPanel::configColumn(const QString& key) const {
  const auto k = config_keys_.indexOf(key);
  return k < 0 ? -1 : ColumnCount + static_cast<int>(k);
}

QString TrainingPanel::groupOf(const TrainingRun& run) const {
  const QString key = group_by_->currentData().toString();
  if (key.isEmpty()) return run.label();
  if (key == kSettingKey) return run_settings_.value(run.dir(), run.label());
  const QString value = run.configValue(key);
  return QStringLiteral("%1=%2").arg(key, value.isEmpty() ? QStringLiteral("?") : value);
}

void TrainingPanel::updateConfigColumns() {
  // The variant and the seed have columns of their own.
  bool added = false;
  for (const auto& row : runs_)
    for (const auto& [key, value] : row.run->config()) {
      const QString k = QString::fromStdString(key);
      if (k != QLatin1String("variant") && k != QLatin1String("seed") && !config_keys_.contains(k)) {
        config_keys_ << k;
        added = true;
      }
    }
  if (added) {
    runs_list_->setColumnCount(ColumnCount + static_cast<int>(config_keys_.size()));
    for (int k = 0; k < config_keys_.size(); ++k) {
      runs_list_->headerItem()->setText(ColumnCount + k, config_keys_[k]);
      if (const auto* field = models::config_field(config_keys_[k].toStdString()))
        runs_list_->headerItem()->setToolTip(ColumnCount + k, QString::fromStdString(field->description));
      runs_list_->header()->setSectionResizeMode(ColumnCount + k, QHeaderView::ResizeToContents);
    }
    const QSignalBlocker block(group_by_);
    const QString current = group_by_->currentData().toString();
    while (group_by_->count() > 1) group_by_->removeItem(1);
    if (!run_settings_.isEmpty()) group_by_->addItem(tr("setting"), kSettingKey);
    for (const auto& k : config_keys_) group_by_->addItem(k, k);
    group_by_->setCurrentIndex(std::max(0, group_by_->findData(current)));
  }
  // A field is shown when the runs listed differ in it, unless the user said otherwise.
  for (int k = 0; k < config_keys_.size(); ++k) {
    std::set<QString> values;
    for (const auto& row : runs_) values.insert(row.run->configValue(config_keys_[k]));
    const auto choice = column_choice_.constFind(config_keys_[k]);
    runs_list_->setColumnHidden(ColumnCount + k, choice != column_choice_.constEnd() ? !*choice : values.size() < 2);
  }
  for (auto& row : runs_) updateItem(row);
}

QMenu* TrainingPanel::columnMenu() {
  auto* menu = new QMenu(this);
  for (int c = ColumnRun + 1; c < runs_list_->columnCount(); ++c) {
    const QString name = runs_list_->headerItem()->text(c);
    if (c == ColumnCount) menu->addSection(tr("Configuration"));
    auto* action = menu->addAction(name);
    action->setObjectName(name);
    action->setCheckable(true);
    action->setChecked(!runs_list_->isColumnHidden(c));
    connect(action, &QAction::toggled, this, [this, c, name](bool on) {
      column_choice_[name] = on;
      runs_list_->setColumnHidden(c, !on);
    });
  }
  return menu;
}

void TrainingPanel::chooseRunFolder() {
  const QString dir = QFileDialog::getExistingDirectory(this, tr("Add run folder"), runs_dir_);
  if (!dir.isEmpty()) addRunFolder(dir);
}

// ---------------------------------------------------------------------------------------------
// Figures

// The selected run's curves as figures: its loss, and its evaluations (score, with the attention
// entropy on a second axis), with every metric as CSV.
class TrainingPanel::CurvesFigure : public viz::FigureSource {
 public:
  explicit CurvesFigure(const TrainingPanel& panel) : panel_(panel) {}
  [[nodiscard]] QString figureName() const override { return QStringLiteral("training_curves"); }
  [[nodiscard]] QString figureTitle() const override { return QObject::tr("Training: the run's curves"); }
  [[nodiscard]] bool hasFigure() const override {
    const auto* run = panel_.currentRun();
    return run && last_value(run->metrics(), "loss").has_value();
  }
  [[nodiscard]] viz::FigureText figureText() const override {
    const auto* run = panel_.currentRun();
    return {run ? run->name() : QString(), tr("step"), {}};
  }
  std::vector<std::string> exportFigure(const std::string& base, const viz::FigureStyle& style) const override {
    const auto* run = panel_.currentRun();
    if (!hasFigure()) return {};
    const auto& columns = run->metrics().columns;
    const auto series = [&](const char* key, const QString& name, bool right) {
      const auto& c = columns.at(key);
      return viz::Series{name, c.x, c.y, {}, {}, right};
    };
    const QString name = figureText().title;
    std::vector<std::string> written =
        viz::save_lines(base + "_loss", {series("loss", tr("loss"), false)}, tr("step"), tr("loss (action MSE)"),
                        viz::with_defaults(style, {tr("%1: training loss").arg(name), tr("step"), tr("loss (action MSE)")}));
    if (columns.count("eval_score")) {
      std::vector<viz::Series> eval = {series("eval_score", tr("normalised score"), false)};
      const bool entropy = columns.count("entropy_layer1") > 0;
      if (entropy) eval.push_back(series("entropy_layer1", tr("attention entropy, layer 1"), true));
      for (auto& f : viz::save_lines(base + "_evaluation", eval, tr("step"), tr("normalised score"),
                                     viz::with_defaults(style, {tr("%1: evaluation").arg(name), tr("step"), tr("normalised score")}),
                                     entropy ? tr("attention entropy, layer 1") : QString()))
        written.push_back(std::move(f));
    }
    analysis::write_run_metrics_csv(base + ".csv", run->metrics());
    written.push_back(base + ".csv");
    return written;
  }

 private:
  const TrainingPanel& panel_;
};

// The comparison of the checked runs as a figure, with the groups' numbers.
class TrainingPanel::ComparisonFigure : public viz::FigureSource {
 public:
  explicit ComparisonFigure(const TrainingPanel& panel) : panel_(panel) {}
  [[nodiscard]] QString figureName() const override { return QStringLiteral("run_comparison"); }
  [[nodiscard]] QString figureTitle() const override { return QObject::tr("Training: runs compared"); }
  [[nodiscard]] bool hasFigure() const override { return !panel_.compare_->groups().empty(); }
  [[nodiscard]] viz::FigureText figureText() const override { return {{}, tr("step"), panel_.compare_->yLabel()}; }
  std::vector<std::string> exportFigure(const std::string& base, const viz::FigureStyle& style) const override {
    return hasFigure() ? panel_.writeComparison(base, viz::with_defaults(style, figureText())) : std::vector<std::string>{};
  }

 private:
  const TrainingPanel& panel_;
};

const TrainingRun* TrainingPanel::currentRun() const {
  const auto* item = runs_list_->currentItem();
  for (const auto& row : runs_)
    if (row.item == item) return row.run.get();
  return nullptr;
}

std::vector<const viz::FigureSource*> TrainingPanel::figureSources() const { return {curves_figure_.get(), comparison_figure_.get()}; }

std::vector<std::string> TrainingPanel::writeComparison(const std::string& base, const viz::FigureStyle& style) const {
  const auto groups = comparedGroups();
  std::vector<viz::Series> series;
  for (const auto& g : compare_->groups()) series.push_back({g.name, g.x, g.mean, g.low, g.high, false});
  auto written = viz::save_lines(base, series, tr("step"), compare_->yLabel(), style);
  // The numbers behind the figure, next to it.
  analysis::write_curve_groups_csv(base + ".csv", groups, smoothing_->value() / 100.0, band());
  written.push_back(base + ".csv");
  return written;
}

std::vector<std::string> TrainingPanel::exportComparison(const QString& base) {
  if (comparedGroups().empty()) {
    last_error_ = tr("Nothing to export: check runs that have %1.").arg(metric_->currentText());
    status_->setText(last_error_);
    return {};
  }
  std::vector<std::string> written;
  try {
    written = writeComparison(base.toStdString(), viz::with_defaults({}, comparison_figure_->figureText()));
  } catch (const std::exception& e) {
    last_error_ = tr("Export failed: %1").arg(QString::fromStdString(e.what()));
    status_->setText(last_error_);
    return written;
  }
  status_->setText(tr("Wrote %1 files: %2.*").arg(written.size()).arg(base));
  status_->setStyleSheet({});
  return written;
}

void TrainingPanel::exportWithDialog() {
  if (comparedGroups().empty()) {
    exportComparison({});  // says why there is nothing to write
    return;
  }
  // The dialog every view exports with: a venue's size, a preview, the folder remembered.
  try {
    const auto written = viz::ExportDialog::exportSource(this, *comparison_figure_);
    if (!written.empty()) {
      status_->setText(viz::ExportDialog::writtenReport(written));
      status_->setStyleSheet({});
    }
  } catch (const std::exception& e) {
    last_error_ = tr("Export failed: %1").arg(QString::fromStdString(e.what()));
    status_->setText(last_error_);
  }
}

}  // namespace dstudio::studio

// Background training with live and compared curves. See training_panel.h.

#include "training_panel.h"

#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
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
#include <QRegularExpression>
#include <QScrollArea>
#include <QSettings>
#include <QShortcut>
#include <QSlider>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardPaths>
#include <QTextStream>
#include <QTimer>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <fstream>
#include <mutex>

#include "dstudio/common/error.h"
#include "dstudio/analysis/curves.h"
#include "dstudio/models/checkpoint.h"
#include "dstudio/models/config_fields.h"
#include "dstudio/models/variant_registry.h"
#include "dstudio/models/evaluation.h"
#include "dstudio/viz/figures.h"
#include "dstudio/viz/run_curves_view.h"

namespace dstudio::studio {
namespace {

using nlohmann::ordered_json;

// A spin box for rates and scales that span many decades (1e-4, 1000, 1e30): shown with
// significant digits instead of a fixed number of decimals.
class ScientificSpinBox : public QDoubleSpinBox {
 public:
  ScientificSpinBox() {
    setDecimals(323);  // no rounding of the value; the text is formatted below
    setStepType(QAbstractSpinBox::AdaptiveDecimalStepType);
    setKeyboardTracking(false);
  }
  QString textFromValue(double value) const override { return QString::number(value, 'g', 8); }
  double valueFromText(const QString& text) const override { return text.trimmed().toDouble(); }
  QValidator::State validate(QString& text, int&) const override {
    bool ok = false;
    const double v = text.trimmed().toDouble(&ok);
    if (ok) return v >= minimum() && v <= maximum() ? QValidator::Acceptable : QValidator::Intermediate;
    static const QRegularExpression partial(QStringLiteral(R"(^\s*[-+]?[0-9]*\.?[0-9]*([eE][-+]?[0-9]*)?\s*$)"));
    return partial.match(text).hasMatch() ? QValidator::Intermediate : QValidator::Invalid;
  }
};

// The values a string field may take, when it is one of the configuration's enumerations.
QStringList choices_for(const std::string& key) {
  QStringList out;
  if (const auto* field = models::config_field(key))
    for (const auto& c : field->choices) out << QString::fromStdString(c);
  return out;
}

// What each field means, in the papers' words.
QString tooltip_for(const std::string& key) {
  const auto* field = models::config_field(key);
  return field ? QString::fromStdString(field->description) : QString();
}

// The smallest value a number field may take (core's validate() has the last word).
double minimum_for(const std::string& key, double value) {
  const auto* field = models::config_field(key);
  if (field && std::isfinite(field->minimum)) return field->minimum;
  return value < 0 ? -1e300 : 0.0;
}

// An editor for one JSON value, chosen by the value's type.
QWidget* make_editor(const std::string& key, const ordered_json& value) {
  QWidget* editor = nullptr;
  if (value.is_boolean()) {
    auto* box = new QCheckBox;
    box->setChecked(value.get<bool>());
    editor = box;
  } else if (value.is_number_integer()) {
    auto* spin = new QSpinBox;
    const auto v = value.is_number_unsigned() ? static_cast<long long>(std::min<std::uint64_t>(value.get<std::uint64_t>(), INT_MAX))
                                              : value.get<long long>();
    const double low = minimum_for(key, static_cast<double>(v));
    spin->setRange(low < -INT_MAX ? -INT_MAX : static_cast<int>(std::ceil(low)), INT_MAX);
    spin->setValue(static_cast<int>(v));
    spin->setKeyboardTracking(false);
    editor = spin;
  } else if (value.is_number()) {
    auto* spin = new ScientificSpinBox;
    const double v = value.get<double>();
    spin->setRange(minimum_for(key, v), 1e300);
    spin->setValue(v);
    editor = spin;
  } else if (value.is_string()) {
    const auto options = choices_for(key);
    const QString text = QString::fromStdString(value.get<std::string>());
    if (!options.isEmpty()) {
      auto* combo = new QComboBox;
      combo->addItems(options);
      combo->setCurrentText(text);
      editor = combo;
    } else {
      editor = new QLineEdit(text);
    }
  } else {
    editor = new QLineEdit(QString::fromStdString(value.dump()));
  }
  editor->setObjectName(QString::fromStdString(key));
  editor->setToolTip(tooltip_for(key));
  return editor;
}

ordered_json read_editor(const QWidget* w) {
  if (const auto* box = qobject_cast<const QCheckBox*>(w)) return box->isChecked();
  if (const auto* spin = qobject_cast<const QSpinBox*>(w)) return static_cast<long long>(spin->value());
  if (const auto* spin = qobject_cast<const QDoubleSpinBox*>(w)) return spin->value();
  if (const auto* combo = qobject_cast<const QComboBox*>(w)) return combo->currentText().toStdString();
  if (const auto* line = qobject_cast<const QLineEdit*>(w)) return line->text().toStdString();
  return nullptr;
}

// A plugin mixer's options are edited one field each, "mixer_options.<name>", and read back into
// the configuration's "mixer_options" object.
constexpr const char* kMixerOptionPrefix = "mixer_options.";

ordered_json read_form(const std::vector<std::pair<QString, QWidget*>>& fields) {
  ordered_json j = ordered_json::object();
  for (const auto& [key, w] : fields) {
    const std::string k = key.toStdString();
    if (k.rfind(kMixerOptionPrefix, 0) == 0) j["mixer_options"][k.substr(std::strlen(kMixerOptionPrefix))] = read_editor(w);
    else j[k] = read_editor(w);
  }
  return j;
}

void clear_form(QFormLayout* form, std::vector<std::pair<QString, QWidget*>>& fields) {
  while (form->rowCount() > 0) form->removeRow(0);
  fields.clear();
}

QString state_name(models::TrainingState state) {
  switch (state) {
    case models::TrainingState::Idle: return QStringLiteral("Starting");
    case models::TrainingState::Running: return QStringLiteral("Running");
    case models::TrainingState::Paused: return QStringLiteral("Paused");
    case models::TrainingState::Finished: return QStringLiteral("Finished");
    case models::TrainingState::Cancelled: return QStringLiteral("Cancelled");
    case models::TrainingState::Failed: return QStringLiteral("Failed");
  }
  return QStringLiteral("?");
}

bool is_final(models::TrainingState state) {
  return state == models::TrainingState::Finished || state == models::TrainingState::Cancelled || state == models::TrainingState::Failed;
}

QString duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return QStringLiteral("—");
  const auto s = static_cast<long long>(std::llround(seconds));
  if (s < 60) return QObject::tr("%1 s").arg(s);
  if (s < 3600) return QObject::tr("%1 min %2 s").arg(s / 60).arg(s % 60);
  return QObject::tr("%1 h %2 min").arg(s / 3600).arg((s % 3600) / 60);
}

void append(analysis::Curve& curve, double x, double y) {
  curve.x.push_back(x);
  curve.y.push_back(y);
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

}  // namespace

// One training run: live (with a trainer) or read from disk.
struct TrainingPanel::Run {
  QString dir, name, label;  // folder, its name, the variant it is grouped by
  QString seed;
  std::int64_t total = 0;
  std::shared_ptr<const data::Dataset> dataset;  // the trainer reads it until it is joined

  // Written on the training thread, drained by pull() on the GUI thread.
  std::mutex inbox_mutex;
  std::vector<models::TrainingProgress> inbox;
  std::vector<std::pair<std::int64_t, models::EvaluationResult>> inbox_evaluations;

  // GUI thread only.
  analysis::RunMetrics metrics;
  models::TrainingProgress last;
  QString state;
  QString note;  // the error of a failed run, the checkpoint of a cancelled one
  bool active = false;
  bool pause_requested = false;
  bool cancel_requested = false;
  QTreeWidgetItem* item = nullptr;

  std::unique_ptr<models::Trainer> trainer;  // declared last: joined before the rest goes
};

TrainingPanel::TrainingPanel(QWidget* parent)
    : QWidget(parent),
      variant_(new QComboBox),
      merger_(new QComboBox),
      mixer_(new QComboBox),
      merger_label_(new QLabel(tr("merger"))),
      mixer_label_(new QLabel(tr("mixer"))),
      defaults_note_(new QLabel),
      variant_form_(new QFormLayout),
      training_form_(new QFormLayout),
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
      band_(new QComboBox),
      smoothing_(new QSlider(Qt::Horizontal)),
      smoothing_label_(new QLabel),
      timer_(new QTimer(this)) {
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
  auto* chooser_box = new QGroupBox(tr("Variant"));
  chooser_box->setLayout(chooser);

  auto* model_box = new QGroupBox(tr("Model (variant configuration)"));
  model_box->setLayout(variant_form_);
  auto* training_box = new QGroupBox(tr("Optimisation (training configuration)"));
  auto* training_layout = new QVBoxLayout(training_box);
  training_layout->addLayout(training_form_);
  auto* eval_form = new QFormLayout;
  eval_episodes_->setRange(1, 1000);
  eval_episodes_->setValue(5);
  eval_episodes_->setToolTip(tr("Episodes rolled out at each evaluation (eval_every > 0)"));
  eval_form->addRow(tr("evaluation episodes"), eval_episodes_);
  training_layout->addLayout(eval_form);
  for (QFormLayout* f : {chooser, variant_form_, training_form_, eval_form}) {
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
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll->setMinimumWidth(forms->sizeHint().width() + 24);

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
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  // Run list and the comparison.
  runs_list_->setColumnCount(ColumnCount);
  runs_list_->setHeaderLabels({tr("Run"), tr("State"), tr("Step"), tr("Loss"), tr("Variant"), tr("Seed")});
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
  band_->addItems({tr("min..max"), tr("mean ± std")});
  band_->setToolTip(tr("The band around each variant's mean over its checked runs"));
  smoothing_->setRange(0, 99);
  smoothing_->setValue(60);
  smoothing_->setMinimumWidth(110);
  smoothing_->setToolTip(tr("Exponential moving average weight; the raw mean stays faintly visible"));
  smoothing_label_->setMinimumWidth(smoothing_label_->fontMetrics().horizontalAdvance("0.00") + 6);
  auto* export_button = new QPushButton(tr("Export…"));
  export_button->setToolTip(tr("Write the comparison as PDF, SVG and PNG, with its numbers as CSV"));
  // Two rows of controls, so the tab fits a laptop screen.
  auto* compare_controls = new QHBoxLayout;
  compare_controls->addWidget(new QLabel(tr("Compare")));
  compare_controls->addWidget(metric_, 1);
  compare_controls->addWidget(band_);
  compare_controls->addWidget(export_button);
  auto* smoothing_controls = new QHBoxLayout;
  smoothing_controls->addWidget(new QLabel(tr("smoothing")));
  smoothing_controls->addWidget(smoothing_, 1);
  smoothing_controls->addWidget(smoothing_label_);
  auto* compare_box = new QWidget;
  auto* compare_layout = new QVBoxLayout(compare_box);
  compare_layout->setContentsMargins(0, 0, 0, 0);
  compare_layout->addLayout(compare_controls);
  compare_layout->addLayout(smoothing_controls);
  compare_layout->addWidget(compare_, 1);

  auto* bottom = new QSplitter(Qt::Horizontal);
  bottom->addWidget(list_box);
  bottom->addWidget(compare_box);
  bottom->setStretchFactor(0, 1);
  bottom->setStretchFactor(1, 1);
  bottom->setSizes({520, 680});
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
  connect(runs_list_, &QTreeWidget::itemChanged, this, [this](QTreeWidgetItem*, int column) {
    if (column == ColumnRun) updateComparison();
  });
  connect(metric_, &QComboBox::currentIndexChanged, this, [this] { updateComparison(); });
  connect(band_, &QComboBox::currentIndexChanged, this, [this] { updateComparison(); });
  connect(smoothing_, &QSlider::valueChanged, this, [this] { updateComparison(); });
  auto* shortcut = new QShortcut(QKeySequence(Qt::CTRL | Qt::Key_Return), this);
  shortcut->setContext(Qt::WidgetWithChildrenShortcut);
  connect(shortcut, &QShortcut::activated, this, [this] { startTraining(); });
  // The GUI pulls what the training threads pushed, ten times a second.
  timer_->setInterval(100);
  connect(timer_, &QTimer::timeout, this, &TrainingPanel::pull);

  const QString fallback = QDir(QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation)).filePath("runs");
  setRunsDirectory(QSettings().value("training/runs_dir", fallback).toString());
  rebuildTrainingForm(models::TrainingConfig{});
  rebuildVariantForm();
  setDataset(nullptr, {});
  updateComparison();
}

TrainingPanel::~TrainingPanel() { cancelAll(); }

void TrainingPanel::closeEvent(QCloseEvent* event) {
  cancelAll();
  event->accept();
}

void TrainingPanel::cancelAll() {
  // Ask every run to stop first, so they wind down together, then wait for each.
  for (auto& run : runs_)
    if (run->trainer && run->active) run->trainer->cancel();
  for (auto& run : runs_)
    if (run->trainer && run->active) run->trainer->wait();
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
  clear_form(variant_form_, variant_fields_);
  const auto j = ordered_json::parse(models::to_json(config));
  const auto mixer = models::mixer_registry().find(config.registered_mixer);
  for (const auto& [key, value] : j.items()) {
    // The variant is chosen above; the shapes come from the dataset; the plugin is the variant's.
    if (key == "variant" || key == "state_dim" || key == "act_dim" || key == "plugin" || key == "plugin_version") continue;
    if (key == "mixer_options" && mixer) {
      for (const auto& option : mixer->options) {
        const double v = models::mixer_option(config, option.field.key);
        QWidget* editor = nullptr;
        if (option.integer) {
          auto* spin = new QSpinBox;
          spin->setRange(std::isfinite(option.field.minimum) ? static_cast<int>(std::ceil(option.field.minimum)) : -INT_MAX, INT_MAX);
          spin->setValue(static_cast<int>(v));
          editor = spin;
        } else {
          auto* spin = new ScientificSpinBox;
          spin->setRange(std::isfinite(option.field.minimum) ? option.field.minimum : -1e300, 1e300);
          spin->setValue(v);
          editor = spin;
        }
        const QString name = QString::fromStdString(kMixerOptionPrefix + option.field.key);
        editor->setObjectName(name);
        editor->setToolTip(QString::fromStdString(option.field.description + " (" + mixer->origin.label() + ")"));
        variant_form_->addRow(QString::fromStdString(option.field.key), editor);
        variant_fields_.emplace_back(name, editor);
      }
      continue;
    }
    QWidget* editor = make_editor(key, value);
    variant_form_->addRow(QString::fromStdString(key), editor);
    variant_fields_.emplace_back(QString::fromStdString(key), editor);
  }
  applyDatasetDefaults();
  showMessage({}, false);
}

void TrainingPanel::rebuildTrainingForm(const models::TrainingConfig& config) {
  clear_form(training_form_, training_fields_);
  const auto j = ordered_json::parse(models::to_json(config));
  for (const auto& [key, value] : j.items()) {
    QWidget* editor = make_editor(key, value);
    training_form_->addRow(QString::fromStdString(key), editor);
    training_fields_.emplace_back(QString::fromStdString(key), editor);
  }
}

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
  for (const auto* fields : {&variant_fields_, &training_fields_})
    for (const auto& [k, w] : *fields)
      if (k == key) return w;
  return nullptr;
}

bool TrainingPanel::setField(const QString& key, const QVariant& value) {
  QWidget* w = field(key);
  if (!w) return false;
  if (auto* box = qobject_cast<QCheckBox*>(w)) box->setChecked(value.toBool());
  else if (auto* spin = qobject_cast<QSpinBox*>(w)) spin->setValue(value.toInt());
  else if (auto* dspin = qobject_cast<QDoubleSpinBox*>(w)) dspin->setValue(value.toDouble());
  else if (auto* combo = qobject_cast<QComboBox*>(w)) {
    const int i = combo->findText(value.toString());
    if (i < 0) return false;
    combo->setCurrentIndex(i);
  } else if (auto* line = qobject_cast<QLineEdit*>(w)) line->setText(value.toString());
  return true;
}

QStringList TrainingPanel::variantKeys() const {
  QStringList keys;
  for (const auto& [k, w] : variant_fields_) keys << k;
  return keys;
}

QStringList TrainingPanel::trainingKeys() const {
  QStringList keys;
  for (const auto& [k, w] : training_fields_) keys << k;
  return keys;
}

models::VariantConfig TrainingPanel::variantConfig() const {
  auto j = read_form(variant_fields_);
  j["variant"] = variant_->currentText().toStdString();
  return models::variant_from_json(j.dump());
}

models::TrainingConfig TrainingPanel::trainingConfig() const { return models::training_from_json(read_form(training_fields_).dump()); }

// Outlines every field the message names, so the user sees where to look.
void TrainingPanel::markInvalidField(const QString& message) {
  for (const auto* fields : {&variant_fields_, &training_fields_})
    for (const auto& [key, w] : *fields) {
      const QRegularExpression named(QStringLiteral("\\b%1\\b").arg(QRegularExpression::escape(key)));
      w->setStyleSheet(named.match(message).hasMatch() ? QStringLiteral("border: 1px solid #d55e00;") : QString());
    }
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
  for (const auto& run : runs_) out << run->dir;
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

  // A new folder per run; a second run in the same second gets a suffix.
  auto run = std::make_unique<Run>();
  run->label = variantLabel();
  run->seed = QString::number(training.seed);
  QString base = run->label;
  base += QStringLiteral("-seed%1-").arg(training.seed);
  base += QDateTime::currentDateTime().toString("yyyyMMdd-hhmmss");
  QDir root(runs_dir_);
  QString name = base;
  for (int n = 2; root.exists(name); ++n) name = QStringLiteral("%1-%2").arg(base).arg(n);
  if (!root.mkpath(name)) {
    showMessage(tr("Not started: cannot make a folder in %1.").arg(runs_dir_), true);
    return false;
  }
  run->name = name;
  run->dir = root.absoluteFilePath(name);
  run->dataset = dataset_;
  run->total = training.steps;
  try {
    run->trainer = std::make_unique<models::Trainer>(*run->dataset, variant, training, run->dir.toStdString());
  } catch (const std::exception& e) {
    QDir(run->dir).removeRecursively();
    showMessage(tr("Not started: %1").arg(QString::fromStdString(e.what())), true);
    markInvalidField(QString::fromStdString(e.what()));
    return false;
  }

  // What produced the run, next to its metrics, so the folder can be compared later.
  {
    ordered_json description = {{"label", run->label.toStdString()},
                                {"variant", ordered_json::parse(models::to_json(run->trainer->variant()))},
                                {"training", ordered_json::parse(models::to_json(training))},
                                {"dataset", {{"path", dataset_path_.toStdString()}, {"fingerprint", dataset_->fingerprint}}},
                                {"evaluation_episodes", eval_episodes_->value()}};
    std::ofstream(QDir(run->dir).filePath("run.json").toStdString()) << description.dump(2) << '\n';
  }

  return launch(std::move(run), training.eval_every);
}

bool TrainingPanel::resumeFromCheckpoint(const QString& checkpoint) {
  if (!dataset_) {
    showMessage(tr("Open the dataset the checkpoint was trained on first."), true);
    return false;
  }
  auto run = std::make_unique<Run>();
  try {
    run->trainer = models::Trainer::resume(*dataset_, checkpoint.toStdString());
  } catch (const std::exception& e) {
    showMessage(tr("Not continued: %1").arg(QString::fromStdString(e.what())), true);
    return false;
  }
  const auto& training = run->trainer->training();
  const QFileInfo file(checkpoint);
  run->dir = file.absolutePath();
  run->name = QFileInfo(run->dir).fileName();
  run->label = QString::fromStdString(run->trainer->variant().variant);
  run->seed = QString::number(training.seed);
  run->dataset = dataset_;
  run->total = training.steps;
  // The curves so far, from the run's own metrics, so the continuation draws on after them.
  try {
    run->metrics = analysis::read_run_metrics(run->dir.toStdString());
  } catch (const std::exception&) {
    // A checkpoint without its metrics next to it: the curves start at the resumed step.
  }
  return launch(std::move(run), training.eval_every);
}

bool TrainingPanel::launch(std::unique_ptr<Run> run, std::int64_t eval_every) {
  // The training thread only appends to the run's inbox; pull() takes it on the GUI thread.
  Run* r = run.get();
  r->trainer->on_progress([r](const models::TrainingProgress& p) {
    std::lock_guard lock(r->inbox_mutex);
    r->inbox.push_back(p);
  });
  if (eval_every > 0) {
    auto evaluate = models::evaluation_hook(*r->dataset, r->trainer->training().rtg_scale, eval_episodes_->value());
    r->trainer->on_evaluation([r, evaluate](models::DecisionModelImpl& model, std::int64_t step) {
      auto result = evaluate(model, step);
      std::lock_guard lock(r->inbox_mutex);
      r->inbox_evaluations.emplace_back(step, result);
      return result;
    });
  }

  r->state = state_name(models::TrainingState::Running);
  r->active = true;
  r->item = new QTreeWidgetItem;
  r->item->setFlags(r->item->flags() | Qt::ItemIsUserCheckable);
  {
    const QSignalBlocker block(runs_list_);
    r->item->setCheckState(ColumnRun, Qt::Checked);
    runs_list_->addTopLevelItem(r->item);
  }
  runs_.push_back(std::move(run));
  updateItem(*r);
  r->trainer->start();
  runs_list_->setCurrentItem(r->item);
  showMessage(tr("Started %1.").arg(r->name), false);
  showRun(r);
  updateButtons();
  timer_->start();
  emit runStarted(r->dir);
  return true;
}

TrainingPanel::Run* TrainingPanel::selectedRun() const {
  const auto* item = runs_list_->currentItem();
  for (const auto& run : runs_)
    if (run->item == item) return run.get();
  return nullptr;
}

void TrainingPanel::pauseTraining() {
  Run* run = selectedRun();
  if (!run || !run->active) return;
  run->trainer->pause();
  run->pause_requested = true;
  updateButtons();
}

void TrainingPanel::resumeTraining() {
  Run* run = selectedRun();
  if (!run || !run->active) return;
  run->trainer->resume();
  run->pause_requested = false;
  updateButtons();
}

void TrainingPanel::cancelTraining() {
  Run* run = selectedRun();
  if (!run || !run->active) return;
  run->trainer->cancel();
  run->cancel_requested = true;
  updateButtons();
}

bool TrainingPanel::isTraining() const {
  for (const auto& run : runs_)
    if (run->active) return true;
  return false;
}

void TrainingPanel::pull() {
  std::vector<std::pair<QString, QString>> finished;
  bool changed_any = false;
  for (auto& run : runs_) {
    if (!run->active) continue;
    // The state first: whatever was pushed before a final state is then in the inbox.
    const auto state = run->trainer->state();
    std::vector<models::TrainingProgress> progress;
    std::vector<std::pair<std::int64_t, models::EvaluationResult>> evaluations;
    {
      std::lock_guard lock(run->inbox_mutex);
      progress.swap(run->inbox);
      evaluations.swap(run->inbox_evaluations);
    }
    auto& columns = run->metrics.columns;
    for (const auto& p : progress) {
      const auto step = static_cast<double>(p.step);
      append(columns["loss"], step, p.loss);
      append(columns["learning_rate"], step, p.learning_rate);
      append(columns["steps_per_second"], step, p.steps_per_second);
      run->last = p;
    }
    for (const auto& [step, result] : evaluations)
      for (const auto& [key, value] : result) append(columns[key], static_cast<double>(step), value);

    const QString name = state_name(state);
    bool changed = !progress.empty() || !evaluations.empty() || name != run->state;
    run->state = name;
    if (is_final(state)) {
      run->trainer->wait();
      run->active = false;
      run->pause_requested = false;
      if (state == models::TrainingState::Failed) {
        run->note = QString::fromStdString(run->trainer->error());
      } else if (state == models::TrainingState::Cancelled) {
        // As the command line does on Ctrl-C: keep what was learnt, resumable.
        try {
          const auto saved = run->trainer->save_checkpoint();
          run->note = tr("stopped at step %1; %2 keeps it (dstudio train --resume)")
                          .arg(run->trainer->step())
                          .arg(QString::fromStdString(saved.filename().string()));
        } catch (const std::exception& e) {
          run->note = tr("stopped at step %1; no checkpoint: %2").arg(run->trainer->step()).arg(QString::fromStdString(e.what()));
        }
      }
      finished.emplace_back(run->dir, name);
      changed = true;
    }
    if (changed) {
      changed_any = true;
      updateItem(*run);
      if (run.get() == selectedRun()) showRun(run.get());
    }
  }
  if (changed_any) updateComparison();
  updateButtons();
  if (!isTraining()) timer_->stop();
  for (const auto& [dir, state] : finished) emit runFinished(dir, state);
}

void TrainingPanel::updateItem(Run& run) {
  const QSignalBlocker block(runs_list_);  // text changes are not check changes
  auto* item = run.item;
  item->setText(ColumnRun, run.name);
  item->setText(ColumnVariant, run.label);
  item->setText(ColumnSeed, run.seed);
  item->setText(ColumnState, run.state == QLatin1String("Failed") && !run.note.isEmpty() ? tr("Failed: %1").arg(run.note) : run.state);
  const auto loss = run.metrics.columns.find("loss");
  const bool has_loss = loss != run.metrics.columns.end() && !loss->second.y.empty();
  const auto step = has_loss ? static_cast<std::int64_t>(loss->second.x.back()) : run.last.step;
  item->setText(ColumnStep, run.total > 0 ? tr("%1 / %2").arg(step).arg(run.total) : QString::number(step));
  item->setText(ColumnLoss, has_loss ? QString::number(loss->second.y.back(), 'g', 4) : QString());
  QString tip = run.dir;
  if (!run.note.isEmpty()) {
    tip += '\n';
    tip += run.note;
  }
  for (int c = 0; c < ColumnCount; ++c) item->setToolTip(c, tip);
  item->setForeground(ColumnState, run.state == QLatin1String("Failed") ? QColor(213, 94, 0) : runs_list_->palette().text().color());
}

void TrainingPanel::showRun(Run* run) {
  if (!run) {
    live_->clear();
    progress_->setRange(0, 1);
    progress_->setValue(0);
    progress_->setFormat(tr("no run"));
    status_->clear();
    return;
  }
  const auto loss = run->metrics.columns.find("loss");
  const bool has_loss = loss != run->metrics.columns.end() && !loss->second.y.empty();
  const std::int64_t step = run->active || !has_loss ? run->last.step : static_cast<std::int64_t>(loss->second.x.back());
  live_->setRun({}, run->metrics);  // the status line above names the run

  if (run->total > 0 && run->total <= INT_MAX) {
    progress_->setRange(0, static_cast<int>(run->total));
    progress_->setValue(static_cast<int>(std::min<std::int64_t>(step, run->total)));
  } else {
    progress_->setRange(0, 1);
    progress_->setValue(run->active ? 0 : 1);
  }
  QString format = run->total > 0 ? tr("step %1 / %2").arg(step).arg(run->total) : tr("step %1").arg(step);
  if (run->state == QLatin1String("Running") && run->last.step > 0) {
    format += tr("  ·  ETA %1").arg(duration(run->last.eta_seconds));
  } else if (!run->active) {
    format += tr("  ·  %1").arg(run->state.toLower());
  }
  progress_->setFormat(format);

  QString status;
  const QString loss_text = has_loss ? QString::number(loss->second.y.back(), 'g', 4) : tr("—");
  if (run->state == QLatin1String("Running") || run->state == QLatin1String("Starting"))
    status = run->last.step > 0 ? tr("%1: running, loss %2, learning rate %3, %4 steps/s")
                                      .arg(run->name, loss_text, QString::number(run->last.learning_rate, 'g', 3))
                                      .arg(run->last.steps_per_second, 0, 'f', 1)
                                : tr("%1: starting…").arg(run->name);
  else if (run->state == QLatin1String("Paused")) status = tr("%1: paused at step %2").arg(run->name).arg(step);
  else if (run->state == QLatin1String("Finished")) status = tr("%1: finished, final loss %2; checkpoint.pt in %3").arg(run->name, loss_text, run->dir);
  else if (run->state == QLatin1String("Cancelled")) status = tr("%1: cancelled, %2").arg(run->name, run->note);
  else if (run->state == QLatin1String("Failed")) status = tr("%1 failed: %2").arg(run->name, run->note);
  else status = tr("%1: %2, final loss %3 (%4)").arg(run->name, run->state, loss_text, run->dir);
  status_->setText(status);
  status_->setStyleSheet(run->state == QLatin1String("Failed") ? QStringLiteral("color: #d55e00;") : QString());
}

void TrainingPanel::updateButtons() {
  start_->setEnabled(dataset_ != nullptr);
  const Run* run = selectedRun();
  const bool active = run && run->active;
  const bool paused = active && (run->pause_requested || run->state == QLatin1String("Paused"));
  pause_->setEnabled(active && !paused);
  resume_->setEnabled(paused);
  cancel_->setEnabled(active && !run->cancel_requested);
}

// ---------------------------------------------------------------------------------------------
// Comparison and run folders

void TrainingPanel::updateComparison() {
  const std::string key = metric_->currentData().toString().toStdString();
  const double smoothing = smoothing_->value() / 100.0;
  smoothing_label_->setText(QString::number(smoothing, 'f', 2));
  // Checked runs with this metric, grouped by variant in the order they appear.
  std::vector<std::pair<QString, std::vector<const analysis::Curve*>>> groups;
  for (const auto& run : runs_) {
    if (!run->item || run->item->checkState(ColumnRun) != Qt::Checked) continue;
    const auto it = run->metrics.columns.find(key);
    if (it == run->metrics.columns.end() || it->second.x.empty()) continue;
    auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& p) { return p.first == run->label; });
    if (g == groups.end()) {
      groups.emplace_back(run->label, std::vector<const analysis::Curve*>{});
      g = std::prev(groups.end());
    }
    g->second.push_back(&it->second);
  }
  std::vector<viz::CurveGroup> drawn;
  for (const auto& [label, curves] : groups) {
    std::vector<analysis::Curve> raw, smooth;
    for (const auto* c : curves) {
      raw.push_back(*c);
      smooth.push_back({c->x, analysis::ema_smooth(c->y, smoothing)});
    }
    const auto r = analysis::curve_spread(raw);
    const auto s = analysis::curve_spread(smooth);
    viz::CurveGroup g;
    g.name = curves.size() == 1 ? label : tr("%1 (%2 runs)").arg(label).arg(curves.size());
    g.x = s.x;
    g.mean = s.mean;
    if (band_->currentIndex() == 0) {
      g.low = s.min;
      g.high = s.max;
    } else {
      for (std::size_t i = 0; i < s.x.size(); ++i) {
        g.low.push_back(s.mean[i] - s.std[i]);
        g.high.push_back(s.mean[i] + s.std[i]);
      }
    }
    g.raw_x = r.x;
    g.raw_mean = r.mean;
    drawn.push_back(std::move(g));
  }
  compare_->setGroups(std::move(drawn), metric_->currentText(), key == "loss",
                      runs_.empty() ? tr("Start runs or add run folders to compare them.")
                                    : tr("No checked run has %1 yet.").arg(metric_->currentText()));
}

bool TrainingPanel::addRunFolder(const QString& dir) {
  analysis::RunMetrics metrics;
  try {
    metrics = analysis::read_run_metrics(dir.toStdString());
  } catch (const std::exception& e) {
    last_error_ = tr("Cannot add the run: %1").arg(QString::fromStdString(e.what()));
    status_->setText(last_error_);
    status_->setStyleSheet(QStringLiteral("color: #d55e00;"));
    return false;
  }
  const QString path = QDir(dir).absolutePath();
  for (auto& run : runs_)
    if (run->dir == path && !run->active) {  // read it again
      run->metrics = std::move(metrics);
      updateItem(*run);
      updateComparison();
      runs_list_->setCurrentItem(run->item);
      last_error_.clear();
      return true;
    }

  auto run = std::make_unique<Run>();
  run->dir = path;
  run->name = QDir(path).dirName();
  run->metrics = std::move(metrics);
  // What produced it: run.json (written by this panel), else the checkpoint, else the folder name.
  const QDir folder(path);
  bool described = false;
  if (QFile::exists(folder.filePath("run.json"))) {
    std::ifstream in(folder.filePath("run.json").toStdString());
    const auto j = ordered_json::parse(in, nullptr, false);
    if (!j.is_discarded() && j.is_object() && j.contains("label") && j["label"].is_string()) {
      run->label = QString::fromStdString(j["label"].get<std::string>());
      if (j.contains("training") && j["training"].is_object()) {
        run->seed = QString::number(j["training"].value("seed", 0ULL));
        run->total = j["training"].value("steps", 0LL);
      }
      described = true;
    }
  }
  if (!described && QFile::exists(folder.filePath("checkpoint.pt"))) {
    try {
      const auto info = models::read_checkpoint_info(folder.filePath("checkpoint.pt").toStdString());
      run->label = QString::fromStdString(info.variant.variant);
      run->seed = QString::number(info.training.seed);
      run->total = info.training.steps;
      described = true;
    } catch (const std::exception&) {
      // Named by its folder below.
    }
  }
  if (!described) {
    static const QRegularExpression pattern(QStringLiteral(R"(^(.+)-seed(\d+)(-.*)?$)"));
    const auto m = pattern.match(run->name);
    run->label = m.hasMatch() ? m.captured(1) : run->name;
    run->seed = m.hasMatch() ? m.captured(2) : tr("—");
  }
  run->state = QFile::exists(folder.filePath("checkpoint.pt")) ? tr("Finished") : tr("Incomplete");
  run->note = tr("added from disk (%1)").arg(QString::fromStdString(run->metrics.source));
  run->item = new QTreeWidgetItem;
  run->item->setFlags(run->item->flags() | Qt::ItemIsUserCheckable);
  {
    const QSignalBlocker block(runs_list_);
    run->item->setCheckState(ColumnRun, Qt::Checked);
    runs_list_->addTopLevelItem(run->item);
  }
  Run* r = run.get();
  runs_.push_back(std::move(run));
  updateItem(*r);
  runs_list_->setCurrentItem(r->item);
  updateComparison();
  last_error_.clear();
  return true;
}

void TrainingPanel::chooseRunFolder() {
  const QString dir = QFileDialog::getExistingDirectory(this, tr("Add run folder"), runs_dir_);
  if (!dir.isEmpty()) addRunFolder(dir);
}

std::vector<std::string> TrainingPanel::exportComparison(const QString& base) {
  const auto& groups = compare_->groups();
  if (groups.empty()) {
    last_error_ = tr("Nothing to export: check runs that have %1.").arg(metric_->currentText());
    status_->setText(last_error_);
    return {};
  }
  std::vector<viz::Series> series;
  for (const auto& g : groups) {
    viz::Series s;
    s.name = g.name;
    s.x = g.x;
    s.y = g.mean;
    s.low = g.low;
    s.high = g.high;
    series.push_back(std::move(s));
  }
  std::vector<std::string> written;
  try {
    written = viz::save_lines(base.toStdString(), series, tr("step"), compare_->yLabel());
    // The numbers behind the figure, next to it.
    const bool min_max = band_->currentIndex() == 0;
    QFile csv(base + ".csv");
    if (!csv.open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text))
      throw std::runtime_error(csv.fileName().toStdString() + ": cannot be written");
    QTextStream out(&csv);
    out << "group,smoothing,step,mean," << (min_max ? "min,max" : "mean_minus_std,mean_plus_std") << ",raw_mean\n";
    for (const auto& g : groups)
      for (std::size_t i = 0; i < g.x.size(); ++i) {
        QString name = g.name;
        name.replace('"', "\"\"");
        const auto raw = std::lower_bound(g.raw_x.begin(), g.raw_x.end(), g.x[i]);
        const bool has_raw = raw != g.raw_x.end() && *raw == g.x[i];
        out << '"' << name << "\"," << smoothing_->value() / 100.0 << ',' << QString::number(g.x[i], 'g', 12) << ','
            << QString::number(g.mean[i], 'g', 10) << ',' << QString::number(g.low[i], 'g', 10) << ','
            << QString::number(g.high[i], 'g', 10) << ','
            << (has_raw ? QString::number(g.raw_mean[static_cast<std::size_t>(raw - g.raw_x.begin())], 'g', 10) : QString())
            << '\n';
      }
    written.push_back(csv.fileName().toStdString());
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
  QString suggested = QDir(runs_dir_).filePath("compare-");
  suggested += metric_->currentData().toString();
  const QString chosen = QFileDialog::getSaveFileName(this, tr("Export comparison"), suggested,
                                                      tr("Figures (PDF, SVG, PNG and CSV) (*.pdf)"));
  if (chosen.isEmpty()) return;
  const QFileInfo info(chosen);
  exportComparison(info.dir().filePath(info.completeBaseName()));
}

}  // namespace dstudio::studio

// The panel of a registered analysis. See analysis_view.h.

#include "dstudio/viz/analysis_view.h"

#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFormLayout>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <climits>
#include <cmath>
#include <filesystem>

#include "dstudio/common/atomic_file.h"
#include "dstudio/viz/export_dialog.h"
#include "dstudio/viz/number_text.h"

namespace dstudio::viz {
namespace {

using Type = analysis::AnalysisOption::Type;

// A JSON value as one line of text: numbers with 4 significant digits, arrays of numbers inline.
QString value_text(const QJsonValue& v) {
  if (v.isDouble()) return QString::number(v.toDouble(), 'g', 5);
  if (v.isBool()) return v.toBool() ? QStringLiteral("true") : QStringLiteral("false");
  if (v.isNull()) return missing_text();
  if (v.isString()) return v.toString();
  return {};
}

void add_json(QTreeWidgetItem* parent, QTreeWidget* tree, const QString& key, const QJsonValue& v) {
  auto* item = parent ? new QTreeWidgetItem(parent) : new QTreeWidgetItem(tree);
  item->setText(0, key);
  item->setText(1, value_text(v));
  if (v.isObject()) {
    const auto o = v.toObject();
    for (auto it = o.begin(); it != o.end(); ++it) add_json(item, tree, it.key(), it.value());
  } else if (v.isArray()) {
    const auto a = v.toArray();
    const bool numbers =
        std::all_of(a.begin(), a.end(), [](const QJsonValue& e) { return e.isDouble(); });
    if (numbers) {
      QStringList parts;
      for (const auto& e : a) parts << value_text(e);
      item->setText(1, "[" + parts.join(", ") + "]");
    } else {
      for (int i = 0; i < a.size(); ++i) add_json(item, tree, QString::number(i + 1), a[i]);
    }
  }
}

}  // namespace

AnalysisView::AnalysisView(std::shared_ptr<const analysis::AnalysisDefinition> definition,
                           QWidget* parent)
    : QWidget(parent),
      definition_(std::move(definition)),
      note_(new QLabel),
      run_(new QPushButton(tr("Run"))),
      cancel_(new QPushButton(tr("Cancel"))),
      progress_(new QProgressBar),
      status_(new QLabel),
      summary_(new QTreeWidget),
      tables_(new QTabWidget),
      figure_choice_(new QComboBox),
      figure_(new QLabel),
      copy_recipe_(new QPushButton(tr("Copy Figure Recipe"))),
      export_(new QPushButton(tr("Export figure…"))) {
  const auto& d = *definition_;
  auto* heading = new QLabel(
      QStringLiteral("<b>%1</b> <span style='color:gray'>%2</span>")
          .arg(QString::fromStdString(d.title.empty() ? d.name : d.title).toHtmlEscaped(),
               QString::fromStdString(d.origin.label()).toHtmlEscaped()));
  auto* description = new QLabel(QString::fromStdString(d.description));
  description->setWordWrap(true);
  note_->setWordWrap(true);

  QWidget* form_box = buildOptionsForm();

  QHBoxLayout* buttons = buildRunRow();

  summary_->setColumnCount(2);
  summary_->setHeaderLabels({tr("Summary"), tr("Value")});
  summary_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);

  auto* left = new QWidget;
  auto* left_layout = new QVBoxLayout(left);
  left_layout->addWidget(heading);
  left_layout->addWidget(description);
  left_layout->addWidget(form_box);
  left_layout->addLayout(buttons);
  left_layout->addWidget(note_);
  left_layout->addWidget(status_);
  left_layout->addWidget(summary_, 1);

  QSplitter* right = buildFigureSide();

  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(left);
  split->addWidget(right);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 3);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(split);
  setReady(false);
}

QWidget* AnalysisView::buildOptionsForm() {
  const auto& d = *definition_;
  // The form: one field an option, typed as its schema says, holding its default.
  auto* form_box = new QWidget;
  auto* form = new QFormLayout(form_box);
  form->setFieldGrowthPolicy(QFormLayout::ExpandingFieldsGrow);
  for (const auto& o : d.options) {
    QWidget* field = optionField(o);
    field->setToolTip(QString::fromStdString(o.description));
    field->setObjectName(QString::fromStdString(o.key));
    auto* label = new QLabel(QString::fromStdString(o.key));
    label->setToolTip(QString::fromStdString(o.description));
    form->addRow(label, field);
    fields_[o.key] = field;
  }
  if (d.options.empty()) form->addRow(new QLabel(tr("This analysis has no options.")));
  return form_box;
}

QWidget* AnalysisView::optionField(const analysis::AnalysisOption& o) {
  QWidget* field = nullptr;
  switch (o.type) {
    case Type::Integer: {
      auto* box = new QSpinBox;
      const int low = static_cast<int>(std::max<double>(o.minimum, INT_MIN + 1));
      // An option without a default may be left out: one below the range, shown as "default".
      const bool optional = o.default_value.empty();
      box->setRange(optional ? low - 1 : low,
                    static_cast<int>(std::min<double>(o.maximum, INT_MAX)));
      if (optional) box->setSpecialValueText(tr("default"));
      box->setValue(optional ? box->minimum() : QString::fromStdString(o.default_value).toInt());
      field = box;
      break;
    }
    case Type::Number: {
      auto* box = new QDoubleSpinBox;
      box->setDecimals(4);
      const double low = std::isfinite(o.minimum) ? o.minimum : -1e12;
      const bool optional = o.default_value.empty();
      box->setRange(optional ? low - 1 : low, std::isfinite(o.maximum) ? o.maximum : 1e12);
      if (optional) box->setSpecialValueText(tr("default"));
      box->setValue(optional ? box->minimum() : QString::fromStdString(o.default_value).toDouble());
      field = box;
      break;
    }
    case Type::Text:
    case Type::NumberList: {
      auto* edit = new QLineEdit(QString::fromStdString(o.default_value));
      if (o.type == Type::NumberList) edit->setPlaceholderText(tr("numbers separated by commas"));
      field = edit;
      break;
    }
    case Type::Choice: {
      auto* combo = new QComboBox;
      for (const auto& c : o.choices) combo->addItem(QString::fromStdString(c));
      combo->setCurrentText(QString::fromStdString(o.default_value));
      field = combo;
      break;
    }
    case Type::Flag: {
      auto* check = new QCheckBox;
      check->setChecked(o.default_value == "true" || o.default_value == "1");
      field = check;
      break;
    }
  }
  return field;
}

QHBoxLayout* AnalysisView::buildRunRow() {
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(run_);
  buttons->addWidget(cancel_);
  buttons->addWidget(progress_, 1);
  progress_->setRange(0, 1000);
  progress_->setTextVisible(false);
  progress_->hide();
  cancel_->setEnabled(false);
  run_->setEnabled(false);
  status_->setWordWrap(true);
  connect(run_, &QPushButton::clicked, this, &AnalysisView::runRequested);
  connect(cancel_, &QPushButton::clicked, this, &AnalysisView::cancelRequested);
  return buttons;
}

QSplitter* AnalysisView::buildFigureSide() {
  figure_->setAlignment(Qt::AlignCenter);
  figure_->setMinimumSize(320, 200);
  figure_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Ignored);
  figure_->setStyleSheet("background: white");
  figure_->installEventFilter(this);
  connect(figure_choice_, &QComboBox::currentIndexChanged, this, [this](int) { redrawFigure(); });
  auto* right = new QSplitter(Qt::Vertical);
  auto* figure_box = new QWidget;
  auto* figure_layout = new QVBoxLayout(figure_box);
  figure_layout->setContentsMargins(0, 0, 0, 0);
  auto* figure_row = new QHBoxLayout;
  figure_row->addWidget(figure_choice_, 1);
  figure_row->addWidget(copy_recipe_);
  figure_row->addWidget(export_);
  figure_layout->addLayout(figure_row);
  figure_layout->addWidget(figure_, 1);
  copy_recipe_->setObjectName(QStringLiteral("copyFigureRecipe"));
  export_->setObjectName(QStringLiteral("exportFigure"));
  ExportDialog::attach(export_, this, *this, status_);
  copy_recipe_->setEnabled(false);
  copy_recipe_->setToolTip(tr(
      "The figure's recipe (the analysis, its options, the checkpoint's and dataset's hashes) "
      "as JSON on the clipboard: `dstudio figure render RECIPE.json --out FILE` draws it again"));
  connect(copy_recipe_, &QPushButton::clicked, this, [this] {
    try {
      QGuiApplication::clipboard()->setText(QString::fromStdString(figureRecipeText()));
      status_->setText(tr("The figure's recipe is on the clipboard."));
    } catch (const std::exception& e) {
      status_->setText(tr("No recipe: %1").arg(QString::fromStdString(e.what())));
    }
  });
  right->addWidget(figure_box);
  right->addWidget(tables_);
  right->setStretchFactor(0, 3);
  right->setStretchFactor(1, 2);
  return right;
}

std::map<std::string, std::string> AnalysisView::options() const {
  std::map<std::string, std::string> out;
  for (const auto& o : definition_->options) {
    QWidget* field = fields_.at(o.key);
    switch (o.type) {
      case Type::Integer: {
        const auto* box = static_cast<QSpinBox*>(field);
        // At the "default" place below the range: not given.
        if (box->specialValueText().isEmpty() || box->value() != box->minimum())
          out[o.key] = std::to_string(box->value());
        break;
      }
      case Type::Number: {
        const auto* box = static_cast<QDoubleSpinBox*>(field);
        if (box->specialValueText().isEmpty() || box->value() != box->minimum())
          out[o.key] = exact_number(box->value());
        break;
      }
      case Type::Text:
      case Type::NumberList:
        out[o.key] = static_cast<QLineEdit*>(field)->text().toStdString();
        break;
      case Type::Choice:
        out[o.key] = static_cast<QComboBox*>(field)->currentText().toStdString();
        break;
      case Type::Flag:
        out[o.key] = static_cast<QCheckBox*>(field)->isChecked() ? "true" : "false";
        break;
    }
  }
  return out;
}

bool AnalysisView::setOption(const std::string& key, const std::string& value) {
  auto it = fields_.find(key);
  if (it == fields_.end()) return false;
  const QString text = QString::fromStdString(value);
  // An empty value puts an optional number back to "default".
  if (auto* box = qobject_cast<QSpinBox*>(it->second))
    box->setValue(text.isEmpty() ? box->minimum() : text.toInt());
  else if (auto* dbox = qobject_cast<QDoubleSpinBox*>(it->second))
    dbox->setValue(text.isEmpty() ? dbox->minimum() : text.toDouble());
  else if (auto* edit = qobject_cast<QLineEdit*>(it->second))
    edit->setText(text);
  else if (auto* combo = qobject_cast<QComboBox*>(it->second))
    combo->setCurrentText(text);
  else if (auto* check = qobject_cast<QCheckBox*>(it->second))
    check->setChecked(value == "true" || value == "1");
  return true;
}

void AnalysisView::setReady(bool ready, const QString& note) {
  ready_ = ready;
  run_->setEnabled(ready && !cancel_->isEnabled());
  note_->setText(ready ? note
                 : definition_->needs_checkpoint
                     ? tr("Open a checkpoint (File ▸ Open Checkpoint) to run this analysis on it.")
                     : note);
}

void AnalysisView::setRunning(bool running) {
  run_->setEnabled(ready_ && !running);
  cancel_->setEnabled(running);
  progress_->setVisible(running);
  if (running) {
    progress_->setValue(0);
    status_->setText(tr("Running…"));
  }
}

void AnalysisView::setProgress(double fraction, const QString& stage) {
  if (!cancel_->isEnabled()) return;  // not running: the last report came after the result
  progress_->setValue(static_cast<int>(1000 * std::clamp(fraction, 0.0, 1.0)));
  if (!stage.isEmpty()) status_->setText(tr("Running: %1").arg(stage));
}

void AnalysisView::setResult(const analysis::AnalysisResult& result, const QString& model) {
  result_ = std::make_shared<const analysis::AnalysisResult>(result);
  model_ = model;
  copy_recipe_->setEnabled(recipe_maker_ && !result.figures.empty());
  export_->setEnabled(!result.figures.empty());
  setRunning(false);
  summary_->clear();
  const auto summary =
      QJsonDocument::fromJson(QByteArray::fromStdString(result.summary_json)).object();
  for (auto it = summary.begin(); it != summary.end(); ++it)
    add_json(nullptr, summary_, it.key(), it.value());
  summary_->expandToDepth(0);
  while (tables_->count() > 0) {
    QWidget* page = tables_->widget(0);
    tables_->removeTab(0);
    delete page;
  }
  for (const auto& t : result.tables) {
    auto* table =
        new QTableWidget(static_cast<int>(t.rows.size()), static_cast<int>(t.columns.size()));
    QStringList headers;
    for (const auto& c : t.columns) headers << QString::fromStdString(c);
    table->setHorizontalHeaderLabels(headers);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    for (int r = 0; r < table->rowCount(); ++r)
      for (int c = 0; c < table->columnCount(); ++c) {
        const auto& row = t.rows[static_cast<std::size_t>(r)];
        QString text = missing_text();
        if (static_cast<std::size_t>(c) < row.size()) {
          const auto& cell = row[static_cast<std::size_t>(c)];
          if (const auto* word = std::get_if<std::string>(&cell))
            text = QString::fromStdString(*word);
          else if (std::isfinite(std::get<double>(cell)))
            text = QString::number(std::get<double>(cell), 'g', 5);
        }
        table->setItem(r, c, new QTableWidgetItem(text));
      }
    table->resizeColumnsToContents();
    tables_->addTab(table, QString::fromStdString(t.name));
  }
  {
    const QSignalBlocker block(figure_choice_);
    figure_choice_->clear();
    for (const auto& f : result.figures)
      figure_choice_->addItem(QString::fromStdString(f.title.empty() ? f.name : f.title)
                                  .replace('\n', QStringLiteral(" — ")));
  }
  figure_choice_->setVisible(result.figures.size() > 1);
  redrawFigure();
  const auto tables = static_cast<int>(result.tables.size()),
             figures = static_cast<int>(result.figures.size());
  status_->setText(tr("Done: %1 %2, %3 %4.")
                       .arg(tables)
                       .arg(tables == 1 ? tr("table") : tr("tables"))
                       .arg(figures)
                       .arg(figures == 1 ? tr("figure") : tr("figures")));
}

void AnalysisView::appendStatus(const QString& sentence) {
  status_->setText(status_->text() + QLatin1Char(' ') + sentence);
}

void AnalysisView::clearResult() {
  result_.reset();
  recipe_maker_ = nullptr;
  copy_recipe_->setEnabled(false);
  export_->setEnabled(false);
  summary_->clear();
  while (tables_->count() > 0) {
    QWidget* page = tables_->widget(0);
    tables_->removeTab(0);
    delete page;
  }
  {
    const QSignalBlocker block(figure_choice_);
    figure_choice_->clear();
  }
  figure_choice_->hide();
  redrawFigure();
  status_->clear();
}

void AnalysisView::stop(const QString& why) {
  setRunning(false);
  status_->setText(tr("Stopped: %1").arg(why));
}

QString AnalysisView::status() const {
  return status_->text();
}

void AnalysisView::showFigure(int index) {
  figure_choice_->setCurrentIndex(index);
}

bool AnalysisView::eventFilter(QObject* watched, QEvent* event) {
  // The figure is drawn for the label's size, known only once the layout has placed it.
  if (watched == figure_ && event->type() == QEvent::Resize) redrawFigure();
  return QWidget::eventFilter(watched, event);
}

void AnalysisView::redrawFigure() {
  const int index = figure_choice_->currentIndex();
  if (!result_ || index < 0 || index >= static_cast<int>(result_->figures.size())) {
    figure_->setPixmap({});
    figure_->setText(result_ ? tr("This analysis draws no figure.") : QString());
    return;
  }
  // Drawn by the exporter at the label's size, so the screen shows what a file will hold.
  FigureStyle style;
  const double ratio = devicePixelRatioF();
  style.dpi = static_cast<int>(std::lround(96 * ratio));
  style.width = std::max(2.0, figure_->width() / 96.0);
  style.height = std::max(1.5, figure_->height() / 96.0);
  style.png = style.pdf = style.svg = false;
  QPixmap pixmap = QPixmap::fromImage(
      render_analysis_figure(result_->figures[static_cast<std::size_t>(index)], style));
  pixmap.setDevicePixelRatio(ratio);
  figure_->setPixmap(pixmap);
}

QString AnalysisView::figureName() const {
  return QString::fromStdString(definition_->name);
}
QString AnalysisView::figureTitle() const {
  return tr("Analyses: %1")
      .arg(QString::fromStdString(definition_->title.empty() ? definition_->name
                                                             : definition_->title));
}

bool AnalysisView::hasFigure() const {
  return result_ && !result_->figures.empty();
}

FigureText AnalysisView::figureText() const {
  if (!hasFigure()) return {};
  const auto& f = result_->figures.front();
  return {QString::fromStdString(f.title), QString::fromStdString(f.x_label),
          QString::fromStdString(f.y_label)};
}

// An analysis's name has hyphens ("action-lens") where its figures' have underscores.
std::string AnalysisView::figure_file_base(const std::string& base, const std::string& name) {
  const std::filesystem::path path(base);
  std::string stem = path.filename().string();
  std::replace(stem.begin(), stem.end(), '-', '_');
  if (name == stem || name.rfind(stem + "_", 0) == 0) return (path.parent_path() / name).string();
  return base + "_" + name;
}

QString AnalysisView::exportFolder() const {
  return QString::fromLatin1(kAnalysesExportFolder);
}

std::vector<std::string> AnalysisView::exportFigure(const std::string& base,
                                                    const FigureStyle& style) const {
  std::vector<std::string> written;
  if (!hasFigure()) return written;
  const bool one = result_->figures.size() == 1;
  for (const auto& f : result_->figures) {
    // Each figure its own title: the style's applies only where it was set for this one.
    FigureStyle s = style;
    if (!one) s.title.clear(), s.x_title.clear(), s.y_title.clear();
    const std::string figure_base = figure_file_base(base, f.name);
    // Its numbers as `dstudio analyze` and `figure render` write them: the table of the figure's
    // name where there is one, else the figure's own.
    const auto table = std::find_if(result_->tables.begin(), result_->tables.end(),
                                    [&](const auto& t) { return t.name == f.name; });
    const bool tabled = table != result_->tables.end();
    std::vector<std::string> outputs;
    auto files = save_analysis_figure(figure_base, f, s, !tabled);
    if (tabled && !files.empty()) {
      write_text_atomically(figure_base + ".csv", analysis::table_csv(*table));
      files.push_back(figure_base + ".csv");
    }
    for (auto& path : files) {
      outputs.push_back(std::filesystem::path(path).filename().string());
      written.push_back(std::move(path));
    }
    if (!recipe_maker_) continue;
    FigureRecipe recipe = recipe_maker_(s);
    recipe.figure.name = f.name;
    recipe.outputs = outputs;
    recipe.created = recipe_time_now();
    write_figure_recipe(figure_base + ".recipe.json", recipe);
    written.push_back(figure_base + ".recipe.json");
  }
  return written;
}

std::string AnalysisView::figureRecipeText() const {
  if (!result_ || !recipe_maker_ || result_->figures.empty()) return {};
  const int shown =
      std::clamp(figure_choice_->currentIndex(), 0, static_cast<int>(result_->figures.size()) - 1);
  FigureRecipe recipe = recipe_maker_(FigureStyle{});
  recipe.figure.name = result_->figures[static_cast<std::size_t>(shown)].name;
  recipe.created = recipe_time_now();
  return to_json(recipe);
}

}  // namespace dstudio::viz

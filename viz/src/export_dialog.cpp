// The figure export dialog. See export_dialog.h.

// Index of this file:
//   [SECTION] Construction
//   [SECTION] Presets and style
//   [SECTION] The views exported
//   [SECTION] The preview
//   [SECTION] The folder and remembered settings
//   [SECTION] Earlier figures
//   [SECTION] Exporting

#include "dstudio/viz/export_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>
#include <QUrl>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <set>

#include "dstudio/viz/analysis_view.h"
#include "figure_style_fields.h"

namespace dstudio::viz {
namespace {

constexpr double kGolden = 1.618034;

QDoubleSpinBox* points_box(double lo, double hi, double step) {
  auto* box = new QDoubleSpinBox;
  box->setRange(lo, hi);
  box->setSingleStep(step);
  box->setDecimals(step < 0.5 ? 2 : 1);
  box->setSuffix(QStringLiteral(" pt"));
  return box;
}

bool near(double a, double b) {
  return std::abs(a - b) < 1e-3;
}

// Whether `s` has a preset's size, fonts, line width and resolution.
bool matches(const FigureStyle& s, const FigureStyle& p) {
  return near(s.width, p.width) && near(s.height, p.height) && near(s.font, p.font) &&
         near(s.axisFont(), p.axisFont()) && near(s.tickFont(), p.tickFont()) &&
         near(s.line_width, p.line_width) && s.font_family == p.font_family && s.dpi == p.dpi;
}

// A model's label without the variant a caption may add ("dt-seed0 (dt)" is "dt-seed0"), so
// that views titled either way are known to show the same model.
QString model_identity(const QString& model) {
  const QString m = model.trimmed();
  if (m.endsWith(')')) {
    const auto open = m.lastIndexOf(QStringLiteral(" ("));
    if (open > 0) return m.left(open);
  }
  return m;
}

// The preview's resolution: a figure at about the size it has on a screen.
constexpr int kPreviewDpi = 110;

QString default_folder() {
  const QString pictures = QStandardPaths::writableLocation(QStandardPaths::PicturesLocation);
  return pictures.isEmpty() ? QDir::homePath() : pictures;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] Construction

ExportDialog::ExportDialog(QWidget* parent, bool folder)
    : QDialog(parent),
      folder_(folder),
      preset_(new QComboBox),
      width_(new QDoubleSpinBox),
      height_(new QDoubleSpinBox),
      family_(new QComboBox),
      font_(points_box(4, 24, 0.5)),
      axis_font_(points_box(4, 24, 0.5)),
      tick_font_(points_box(4, 24, 0.5)),
      line_width_(points_box(0.25, 4, 0.25)),
      show_title_(new QCheckBox(tr("Title"))),
      title_(new QLineEdit),
      x_title_(new QLineEdit),
      y_title_(new QLineEdit),
      dpi_(new QComboBox),
      pdf_(new QCheckBox(QStringLiteral("PDF"))),
      svg_(new QCheckBox(QStringLiteral("SVG"))),
      png_(new QCheckBox(QStringLiteral("PNG"))),
      output_(new QLineEdit),
      browse_(new QPushButton(tr("Browse…"))),
      summary_(new QLabel),
      buttons_(new QDialogButtonBox(QDialogButtonBox::Save | QDialogButtonBox::Cancel)),
      warning_(new QLabel),
      preview_(new QLabel),
      preview_timer_(new QTimer(this)) {
  setWindowTitle(folder ? tr("Export all figures") : tr("Export figure"));
  setObjectName(QStringLiteral("exportDialog"));
  setUpFields();

  QGroupBox* size = buildSizeBox();
  QGroupBox* text = buildTextBox();
  QGroupBox* files = buildFilesBox();
  layOut(size, text, files);
  connectFields();

  setStyle(venue_presets().front().style);  // ICML's column until a choice is remembered
  restore();
}

void ExportDialog::setUpFields() {
  for (const auto& p : venue_presets()) preset_->addItem(p.name);
  preset_->addItem(tr("Custom"));
  preset_->setToolTip(
      tr("The size and fonts a venue asks for; the height is left to each figure (a line plot the "
         "width over the golden ratio, maps and embeddings squarer) unless the venue fixes it"));
  for (auto* box : {width_, height_}) {
    box->setDecimals(3);
    box->setSingleStep(0.05);
    box->setSuffix(QStringLiteral(" in"));
  }
  width_->setRange(1.0, 20.0);
  height_->setRange(0.0, 20.0);
  height_->setSpecialValueText(tr("auto (width / golden ratio)"));
  family_->addItem(tr("Sans-serif (DejaVu Sans)"), QString(kSansFamily));
  family_->addItem(tr("Serif (DejaVu Serif)"), QString(kSerifFamily));
  family_->setToolTip(tr("Fonts that ship with Debian; PDFs embed them as TrueType, never Type 3"));
  dpi_->addItem(tr("300 dpi"), 300);
  dpi_->addItem(tr("600 dpi"), 600);
  font_->setToolTip(tr("Title, legend and annotations"));
  line_width_->setToolTip(tr("Data lines; axes and grid are drawn thinner, in proportion"));
  x_title_->setClearButtonEnabled(true);
  y_title_->setClearButtonEnabled(true);
  title_->setClearButtonEnabled(true);
}

QGroupBox* ExportDialog::buildSizeBox() {
  auto* size = new QGroupBox(tr("Size"));
  auto* size_form = new QFormLayout(size);
  size_form->addRow(tr("Preset"), preset_);
  size_form->addRow(tr("Width"), width_);
  size_form->addRow(tr("Height"), height_);
  return size;
}

QGroupBox* ExportDialog::buildTextBox() {
  auto* text = new QGroupBox(tr("Text and lines"));
  auto* text_form = new QFormLayout(text);
  text_form->addRow(tr("Font"), family_);
  text_form->addRow(tr("Text size"), font_);
  text_form->addRow(tr("Axis titles"), axis_font_);
  text_form->addRow(tr("Tick labels"), tick_font_);
  text_form->addRow(tr("Line width"), line_width_);
  text_form->addRow(show_title_, title_);
  text_form->addRow(tr("x axis title"), x_title_);
  text_form->addRow(tr("y axis title"), y_title_);
  if (folder_) {
    // Every view keeps its own titles; only whether to draw them is common.
    text_form->setRowVisible(x_title_, false);
    text_form->setRowVisible(y_title_, false);
    title_->hide();
    show_title_->setText(tr("Titles"));
  }
  return text;
}

QGroupBox* ExportDialog::buildFilesBox() {
  auto* files = new QGroupBox(tr("Files"));
  auto* files_form = new QFormLayout(files);
  auto* formats = new QHBoxLayout;
  formats->addWidget(pdf_);
  formats->addWidget(svg_);
  formats->addWidget(png_);
  formats->addWidget(dpi_);
  formats->addStretch(1);
  files_form->addRow(tr("Formats"), formats);
  auto* where = new QHBoxLayout;
  where->addWidget(output_, 1);
  where->addWidget(browse_);
  files_form->addRow(folder_ ? tr("Folder") : tr("Save as"), where);
  output_->setToolTip(
      folder_ ? tr("Each view is written as <name>.pdf, .svg, .png and .csv in this folder")
              : tr("Without extension: each format and the CSV of the numbers are written next to "
                   "each other"));
  output_->setMinimumWidth(320);
  summary_->setWordWrap(true);
  summary_->setStyleSheet(QStringLiteral("color: palette(mid);"));
  return files;
}

void ExportDialog::layOut(QGroupBox* size, QGroupBox* text, QGroupBox* files) {
  auto* layout = new QVBoxLayout(this);
  auto* columns = new QHBoxLayout;
  auto* left = new QVBoxLayout;
  if (folder_) {
    auto* chosen = new QGroupBox(tr("Views"));
    auto* chosen_layout = new QVBoxLayout(chosen);
    views_ = new QListWidget;
    views_->setToolTip(
        tr("The views to write, each with the model it shows; select one to preview it"));
    views_->setMinimumHeight(120);
    chosen_layout->addWidget(views_);
    left->addWidget(chosen);
    connect(views_, &QListWidget::itemChanged, this, [this] {
      updateWarning();
      updatePresetName();
    });
    connect(views_, &QListWidget::currentRowChanged, this, [this] { preview_timer_->start(); });
  }
  left->addWidget(size);
  left->addWidget(files);
  left->addStretch(1);
  columns->addLayout(left);
  columns->addWidget(text);
  auto* shown = new QGroupBox(tr("Preview"));
  auto* shown_layout = new QVBoxLayout(shown);
  preview_->setAlignment(Qt::AlignCenter);
  preview_->setMinimumSize(360, 280);
  // The label's size comes from the dialog, not from the picture: the picture is scaled to it
  // (a picture larger than its label would show only its middle, titles and labels cut).
  preview_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Ignored);
  preview_->installEventFilter(this);
  preview_->setStyleSheet(QStringLiteral("background: white; border: 1px solid palette(mid);"));
  preview_->setToolTip(tr("The figure as it will be written, at screen resolution"));
  shown_layout->addWidget(preview_, 1);
  columns->addWidget(shown, 1);
  layout->addLayout(columns);
  warning_->setWordWrap(true);
  warning_->setStyleSheet(QStringLiteral("color: #d55e00;"));
  warning_->hide();
  layout->addWidget(warning_);
  layout->addWidget(summary_);
  layout->addWidget(buttons_);
}

void ExportDialog::connectFields() {
  // The preview follows the fields after a pause, so typing a title does not redraw per key.
  preview_timer_->setSingleShot(true);
  preview_timer_->setInterval(250);
  connect(preview_timer_, &QTimer::timeout, this, &ExportDialog::updatePreview);
  for (auto* edit : {title_, x_title_, y_title_})
    connect(edit, &QLineEdit::textChanged, preview_timer_, qOverload<>(&QTimer::start));
  connect(show_title_, &QCheckBox::toggled, preview_timer_, qOverload<>(&QTimer::start));

  connect(preset_, &QComboBox::activated, this, &ExportDialog::applyPreset);
  for (auto* box : {width_, height_, font_, axis_font_, tick_font_, line_width_})
    connect(box, &QDoubleSpinBox::valueChanged, this, &ExportDialog::updatePresetName);
  for (auto* box : {family_, dpi_})
    connect(box, &QComboBox::currentIndexChanged, this, &ExportDialog::updatePresetName);
  for (auto* box : {pdf_, svg_, png_})
    connect(box, &QCheckBox::toggled, this, &ExportDialog::updatePresetName);
  connect(output_, &QLineEdit::textChanged, this, &ExportDialog::updatePresetName);
  connect(show_title_, &QCheckBox::toggled, title_, &QWidget::setEnabled);
  connect(browse_, &QPushButton::clicked, this, &ExportDialog::browse);
  connect(buttons_, &QDialogButtonBox::accepted, this, [this] {
    // Exporting every view into a folder an earlier export filled would leave that export's
    // figures (another model's, perhaps) beside the new ones: asked, never silently.
    if (folder_) {
      const QStringList earlier = earlierFigures(output());
      if (!earlier.isEmpty()) {
        QMessageBox box(QMessageBox::Question, tr("Replace the earlier figures?"),
                        earlier.size() == 1
                            ? tr("%1 holds a file of an earlier export.").arg(output())
                            : tr("%1 holds %2 files of an earlier export.")
                                  .arg(output(), QString::number(earlier.size())),
                        QMessageBox::Cancel, this);
        box.setObjectName(QStringLiteral("replaceFiguresDialog"));
        box.setInformativeText(
            tr("Replace removes them (%1) and writes this export's figures; other files in the "
               "folder stay. Cancel goes back to choose another folder.")
                .arg(earlier.mid(0, 4).join(QStringLiteral(", ")) +
                     (earlier.size() > 4 ? QStringLiteral(", …") : QString())));
        auto* replace = box.addButton(tr("Replace"), QMessageBox::DestructiveRole);
        box.setDefaultButton(QMessageBox::Cancel);
        box.exec();
        if (box.clickedButton() != replace) return;
        QString error;
        if (!removeEarlierFigures(output(), &error)) {
          QMessageBox::warning(this, tr("Cannot replace the earlier figures"), error);
          return;
        }
      }
    }
    remember();
    accept();
  });
  connect(buttons_, &QDialogButtonBox::rejected, this, &QDialog::reject);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Presets and style

void ExportDialog::setDefaultText(const FigureText& text) {
  title_->setPlaceholderText(
      text.title.isEmpty() ? tr("none") : QString(text.title).replace('\n', QStringLiteral(" / ")));
  x_title_->setPlaceholderText(text.x_title.isEmpty() ? tr("none") : text.x_title);
  y_title_->setPlaceholderText(text.y_title.isEmpty() ? tr("none") : text.y_title);
}

bool ExportDialog::selectPreset(const QString& name) {
  // The same lookup as `dstudio analyze --preset`: full name or slug, in any case.
  const int index = venue_preset_index(name.toStdString());
  if (index < 0) return false;
  applyPreset(index);
  return true;
}

QString ExportDialog::presetName() const {
  return preset_->currentText();
}

std::string ExportDialog::presetSlug() const {
  const auto presets = venue_presets();
  const int index = preset_->currentIndex();
  return index >= 0 && index < static_cast<int>(presets.size())
             ? presets[static_cast<std::size_t>(index)].slug.toStdString()
             : std::string();
}

void ExportDialog::applyPreset(int index) {
  const auto presets = venue_presets();
  if (index < 0 || index >= static_cast<int>(presets.size())) {
    updatePresetName();
    return;
  }
  // A preset sets size, fonts, line width and resolution; titles, formats and output stay.
  FigureStyle s = style();
  const auto& p = presets[static_cast<std::size_t>(index)].style;
  copy_size_and_fonts(s, p);
  s.font_family = p.font_family;
  setStyle(s);
}

void ExportDialog::setStyle(const FigureStyle& s) {
  applying_ = true;
  width_->setValue(s.width);
  height_->setValue(s.height);
  int family = family_->findData(s.font_family);
  if (family < 0) {
    family_->addItem(s.font_family, s.font_family);
    family = family_->count() - 1;
  }
  family_->setCurrentIndex(family);
  font_->setValue(s.font);
  axis_font_->setValue(s.axisFont());
  tick_font_->setValue(s.tickFont());
  line_width_->setValue(s.line_width);
  show_title_->setChecked(s.show_title);
  title_->setEnabled(s.show_title);
  title_->setText(s.title);
  x_title_->setText(s.x_title);
  y_title_->setText(s.y_title);
  int dpi = dpi_->findData(s.dpi);
  if (dpi < 0) {
    dpi_->addItem(tr("%1 dpi").arg(s.dpi), s.dpi);
    dpi = dpi_->count() - 1;
  }
  dpi_->setCurrentIndex(dpi);
  pdf_->setChecked(s.pdf);
  svg_->setChecked(s.svg);
  png_->setChecked(s.png);
  applying_ = false;
  updatePresetName();
}

FigureStyle ExportDialog::style() const {
  FigureStyle s;
  s.width = width_->value();
  s.height = height_->value();
  s.font_family = family_->currentData().toString();
  s.font = font_->value();
  s.axis_font = axis_font_->value();
  s.tick_font = tick_font_->value();
  s.line_width = line_width_->value();
  s.show_title = show_title_->isChecked();
  s.title = title_->text();
  s.x_title = x_title_->text();
  s.y_title = y_title_->text();
  s.dpi = dpi_->currentData().toInt();
  s.pdf = pdf_->isChecked();
  s.svg = svg_->isChecked();
  s.png = png_->isChecked();
  return s;
}

void ExportDialog::setOutput(const QString& path) {
  output_->setText(path);
}
QString ExportDialog::output() const {
  return output_->text().trimmed();
}

void ExportDialog::updatePresetName() {
  if (applying_) return;
  const FigureStyle s = style();
  const auto presets = venue_presets();
  int index = static_cast<int>(presets.size());  // Custom
  for (std::size_t k = 0; k < presets.size(); ++k)
    if (matches(s, presets[k].style)) {
      index = static_cast<int>(k);
      break;
    }
  {
    const QSignalBlocker block(preset_);
    preset_->setCurrentIndex(index);
  }
  // What the files will be, so the numbers a venue checks are visible before writing.
  const double h = s.height > 0 ? s.height : s.width / kGolden;
  QString line = tr("%1 × %2 in").arg(s.width, 0, 'g', 4).arg(h, 0, 'g', 3);
  if (s.height <= 0) line += tr(" (maps and embeddings squarer)");
  if (s.pdf || s.svg)
    line += tr("; PDF/SVG %1 × %2 pt").arg(std::lround(s.width * 72)).arg(std::lround(h * 72));
  if (s.png)
    line += tr("; PNG %1 × %2 px").arg(std::lround(s.width * s.dpi)).arg(std::lround(h * s.dpi));
  line += tr("; and the numbers as CSV.");
  summary_->setText(line);
  buttons_->button(QDialogButtonBox::Save)
      ->setEnabled((s.pdf || s.svg || s.png) && !output().isEmpty() &&
                   (!views_ || !chosenSources().empty()));
  preview_timer_->start();
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The views exported

ExportDialog::~ExportDialog() = default;

void ExportDialog::setSource(const FigureSource* source) {
  source_ = source;
  updatePreview();
}

void ExportDialog::setSources(const std::vector<const FigureSource*>& sources) {
  sources_ = sources;
  if (!views_) return;
  const QSignalBlocker block(views_);
  views_->clear();
  int first = -1;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const auto* s = sources[i];
    const bool drawable = s && s->hasFigure();
    const QString model = drawable ? s->figureModel() : QString();
    auto* item = new QListWidgetItem(
        s ? (model.isEmpty() ? s->figureTitle() : tr("%1 — %2").arg(s->figureTitle(), model))
          : QString());
    item->setFlags(drawable ? (Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsUserCheckable)
                            : Qt::ItemFlags());
    item->setCheckState(drawable ? Qt::Checked : Qt::Unchecked);
    if (s)
      item->setToolTip(drawable ? tr("Written as %1.*").arg(s->figureName())
                                : tr("Nothing to draw yet"));
    item->setData(Qt::UserRole, static_cast<int>(i));
    views_->addItem(item);
    if (drawable && first < 0) first = views_->count() - 1;
  }
  views_->setCurrentRow(first);
  updateWarning();
  updatePresetName();
  updatePreview();
}

const FigureSource* ExportDialog::sourceAt(int row) const {
  return sources_[static_cast<std::size_t>(views_->item(row)->data(Qt::UserRole).toInt())];
}

std::vector<const FigureSource*> ExportDialog::chosenSources() const {
  if (!views_) return source_ ? std::vector<const FigureSource*>{source_} : sources_;
  std::vector<const FigureSource*> out;
  for (int r = 0; r < views_->count(); ++r)
    if (views_->item(r)->checkState() == Qt::Checked) out.push_back(sourceAt(r));
  return out;
}

bool ExportDialog::setSourceChosen(const QString& name, bool on) {
  if (!views_) return false;
  for (int r = 0; r < views_->count(); ++r) {
    const auto* s = sourceAt(r);
    if (!s || s->figureName() != name || !(views_->item(r)->flags() & Qt::ItemIsUserCheckable))
      continue;
    views_->item(r)->setCheckState(on ? Qt::Checked : Qt::Unchecked);
    return true;
  }
  return false;
}

void ExportDialog::selectSource(const QString& name) {
  if (!views_) return;
  for (int r = 0; r < views_->count(); ++r) {
    const auto* s = sourceAt(r);
    if (s && s->figureName() == name) views_->setCurrentRow(r);
  }
  updatePreview();
}

QString ExportDialog::mixedModelsWarning() const {
  // Views by the model they show; those showing none in particular (training curves) mix with any.
  std::vector<std::pair<QString, QStringList>> models;
  for (const auto* s : chosenSources()) {
    if (!s || !s->hasFigure() || s->figureModel().isEmpty()) continue;
    const QString id = model_identity(s->figureModel());
    auto at =
        std::find_if(models.begin(), models.end(), [&](const auto& m) { return m.first == id; });
    if (at == models.end()) models.push_back({id, {}}), at = models.end() - 1;
    at->second << s->figureTitle();
  }
  if (models.size() < 2) return {};
  QStringList parts;
  for (const auto& [model, views] : models)
    parts << tr("%1 from %2").arg(views.join(QStringLiteral(", ")), model);
  return tr("These views show different models: %1. Re-run the views of the model you mean, or "
            "leave the others out.")
      .arg(parts.join(QStringLiteral("; ")));
}

void ExportDialog::updateWarning() {
  const QString warning = mixedModelsWarning();
  warning_->setText(warning);
  warning_->setVisible(!warning.isEmpty());
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The preview

const FigureSource* ExportDialog::previewed() const {
  if (source_) return source_;
  if (!views_ || views_->currentRow() < 0) return nullptr;
  return sourceAt(views_->currentRow());
}

void ExportDialog::updatePreview() {
  preview_timer_->stop();
  const FigureSource* source = previewed();
  preview_image_ = {};
  if (source && source->hasFigure()) {
    // The figure written as the dialog would write it, as PNG at screen resolution, into a
    // folder of the dialog's own: what is previewed is what the files will hold.
    if (!preview_dir_) preview_dir_ = std::make_unique<QTemporaryDir>();
    FigureStyle s = style();
    s.pdf = s.svg = false;
    s.png = true;
    s.dpi = kPreviewDpi;
    try {
      for (const auto& path : source->exportFigure(
               QDir(preview_dir_->path()).filePath(QStringLiteral("preview")).toStdString(), s))
        if (QString::fromStdString(path).endsWith(QStringLiteral(".png"))) {
          preview_image_.load(QString::fromStdString(path));
          break;
        }
    } catch (const std::exception& e) {
      preview_->setText(tr("No preview: %1").arg(QString::fromStdString(e.what())));
      return;
    }
  }
  if (preview_image_.isNull()) {
    preview_->setPixmap({});
    preview_->setText(source ? tr("Nothing to draw yet") : tr("No view chosen"));
    return;
  }
  showPreview();
}

void ExportDialog::showPreview() {
  if (preview_image_.isNull()) return;
  // Inside the label's border, never enlarged past the figure's own pixels.
  const QSize room =
      preview_->contentsRect().adjusted(2, 2, -2, -2).size().boundedTo(preview_image_.size());
  if (room.isEmpty()) return;
  preview_->setPixmap(QPixmap::fromImage(
      preview_image_.scaled(room, Qt::KeepAspectRatio, Qt::SmoothTransformation)));
}

bool ExportDialog::eventFilter(QObject* watched, QEvent* event) {
  if (watched == preview_ && event->type() == QEvent::Resize) showPreview();
  return QDialog::eventFilter(watched, event);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The folder and remembered settings

QString ExportDialog::writtenReport(const std::vector<std::string>& written) {
  if (written.empty()) return tr("Nothing was written.");
  const QString folder = QFileInfo(QString::fromStdString(written.front())).absolutePath();
  return tr("Wrote %1 files in <a href=\"%2\">%3</a>")
      .arg(written.size())
      .arg(QUrl::fromLocalFile(folder).toString(), folder.toHtmlEscaped());
}

void ExportDialog::browse() {
  const QString current = output().isEmpty() ? default_folder() : output();
  if (folder_) {
    const QString dir =
        QFileDialog::getExistingDirectory(this, tr("Folder for the figures"), current);
    if (!dir.isEmpty()) setOutput(dir);
    return;
  }
  const QString file =
      QFileDialog::getSaveFileName(this, tr("Export figure"), current + QStringLiteral(".pdf"),
                                   tr("Figures (*.pdf *.svg *.png)"));
  if (file.isEmpty()) return;
  const QFileInfo info(file);
  setOutput(info.dir().filePath(info.completeBaseName()));
}

void ExportDialog::restore() {
  QSettings settings;
  settings.beginGroup(QStringLiteral("export"));
  FigureStyle s = style();
  s.width = settings.value(QStringLiteral("width"), s.width).toDouble();
  s.height = settings.value(QStringLiteral("height"), s.height).toDouble();
  s.font_family = settings.value(QStringLiteral("font_family"), s.font_family).toString();
  s.font = settings.value(QStringLiteral("font"), s.font).toDouble();
  s.axis_font = settings.value(QStringLiteral("axis_font"), s.axisFont()).toDouble();
  s.tick_font = settings.value(QStringLiteral("tick_font"), s.tickFont()).toDouble();
  s.line_width = settings.value(QStringLiteral("line_width"), s.line_width).toDouble();
  s.show_title = settings.value(QStringLiteral("show_title"), s.show_title).toBool();
  s.dpi = settings.value(QStringLiteral("dpi"), s.dpi).toInt();
  s.pdf = settings.value(QStringLiteral("pdf"), s.pdf).toBool();
  s.svg = settings.value(QStringLiteral("svg"), s.svg).toBool();
  s.png = settings.value(QStringLiteral("png"), s.png).toBool();
  setStyle(s);
  const QString folder = settings.value(QStringLiteral("folder")).toString();
  if (!folder.isEmpty() && output().isEmpty() && folder_) setOutput(folder);
}

void ExportDialog::remember() const {
  // Titles belong to one figure and are not carried over to the next.
  const FigureStyle s = style();
  QSettings settings;
  settings.beginGroup(QStringLiteral("export"));
  settings.setValue(QStringLiteral("width"), s.width);
  settings.setValue(QStringLiteral("height"), s.height);
  settings.setValue(QStringLiteral("font_family"), s.font_family);
  settings.setValue(QStringLiteral("font"), s.font);
  settings.setValue(QStringLiteral("axis_font"), s.axis_font);
  settings.setValue(QStringLiteral("tick_font"), s.tick_font);
  settings.setValue(QStringLiteral("line_width"), s.line_width);
  settings.setValue(QStringLiteral("show_title"), s.show_title);
  settings.setValue(QStringLiteral("dpi"), s.dpi);
  settings.setValue(QStringLiteral("pdf"), s.pdf);
  settings.setValue(QStringLiteral("svg"), s.svg);
  settings.setValue(QStringLiteral("png"), s.png);
  if (!output().isEmpty())
    settings.setValue(QStringLiteral("folder"),
                      folder_ ? output() : QFileInfo(output()).absolutePath());
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Earlier figures

QStringList ExportDialog::earlierFigures(const QString& folder) {
  QStringList out;
  if (folder.isEmpty() || !QDir(folder).exists()) return out;
  // The folder's own files, then those of the Analyses tab's folder within it.
  for (const QString& within : {QString(), QString::fromLatin1(kAnalysesExportFolder)}) {
    const QDir dir(within.isEmpty() ? folder : QDir(folder).filePath(within));
    for (const QFileInfo& f : dir.entryInfoList(QDir::Files | QDir::Hidden, QDir::Name)) {
      const QString name = f.fileName();
      for (const char* ending : {".pdf", ".svg", ".png", ".csv", ".recipe.json"})
        if (name.endsWith(QLatin1String(ending), Qt::CaseInsensitive)) {
          out << (within.isEmpty() ? name : within + QLatin1Char('/') + name);
          break;
        }
    }
  }
  return out;
}

bool ExportDialog::removeEarlierFigures(const QString& folder, QString* error) {
  const QDir dir(folder);
  for (const QString& name : earlierFigures(folder))
    if (!QFile::remove(dir.filePath(name))) {
      if (error) *error = tr("%1 cannot be removed").arg(dir.filePath(name));
      return false;
    }
  return true;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Exporting

std::vector<std::string> ExportDialog::exportSource(QWidget* parent, const FigureSource& source) {
  ExportDialog dialog(parent);
  dialog.setDefaultText(source.figureText());
  dialog.setSource(&source);
  QString folder = QSettings().value(QStringLiteral("export/folder")).toString();
  if (folder.isEmpty()) folder = default_folder();
  dialog.setOutput(QDir(folder).filePath(source.figureName()));
  if (dialog.exec() != QDialog::Accepted) return {};
  return reportingFailure(parent, [&] {
    return export_with_recipes(source, dialog.output().toStdString(), dialog.style(),
                               dialog.presetSlug());
  });
}

std::vector<std::string> ExportDialog::reportingFailure(
    QWidget* parent, const std::function<std::vector<std::string>()>& write) {
  try {
    return write();
  } catch (const std::exception& e) {
    // A full disk or a folder that cannot be written: said, and the window carries on.
    auto* box =
        new QMessageBox(QMessageBox::Warning, tr("Export failed"),
                        tr("The figures could not all be written."), QMessageBox::Ok, parent);
    box->setInformativeText(QString::fromStdString(e.what()));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setObjectName(QStringLiteral("exportErrorDialog"));
    box->open();
    return {};
  }
}

void ExportDialog::attach(QPushButton* button, QWidget* owner, const FigureSource& source,
                          QLabel* report) {
  button->setToolTip(tr("PDF, SVG and PNG in a venue's size and fonts, with the numbers as CSV"));
  button->setEnabled(false);
  QObject::connect(button, &QPushButton::clicked, owner, [owner, &source, report] {
    const auto written = exportSource(owner, source);
    if (!written.empty() && report) {
      report->setOpenExternalLinks(true);
      report->setText(writtenReport(written));
    }
  });
}

std::vector<std::string> ExportDialog::exportSources(
    QWidget* parent, const std::vector<const FigureSource*>& sources) {
  ExportDialog dialog(parent, true);
  if (dialog.output().isEmpty())
    dialog.setOutput(QDir(default_folder()).filePath(QStringLiteral("figures")));
  dialog.setSources(sources);
  if (dialog.exec() != QDialog::Accepted) return {};
  return reportingFailure(parent, [&] {
    return export_all(dialog.chosenSources(), dialog.output().toStdString(), dialog.style(),
                      dialog.presetSlug());
  });
}

}  // namespace dstudio::viz

#pragma once
/// \file
/// The dialog that asks how to export a figure before writing it: a venue preset (figures.h's
/// venue_presets), width and height, font family and sizes, line width, title and axis titles,
/// PNG resolution, which formats to write and where, with a preview of the figure as it will be
/// written. Exporting several views, it lists them to choose from, each with the model it shows,
/// and warns when the chosen ones show different models. It remembers the last choices
/// (QSettings, group "export") and is fully usable without being shown: setters and getters for
/// everything, so tests and scripts drive it as a user would.

#include <QDialog>
#include <QImage>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dstudio/viz/figures.h"

class QCheckBox;
class QComboBox;
class QDialogButtonBox;
class QDoubleSpinBox;
class QGroupBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QTemporaryDir;
class QTimer;

namespace dstudio::viz {

class ExportDialog : public QDialog {
  Q_OBJECT
 public:
  /// `folder`: the output is a folder (export every view at once) rather than a base path.
  explicit ExportDialog(QWidget* parent = nullptr, bool folder = false);
  ~ExportDialog() override;

  /// The one figure this dialog exports, for its preview.
  void setSource(const FigureSource* source);
  /// The views an export of several may write, listed with the model each shows; those with a
  /// figure are checked, those with nothing to draw yet are greyed out. The dialog previews the
  /// view selected in the list.
  void setSources(const std::vector<const FigureSource*>& sources);
  /// The checked views, in the order given.
  [[nodiscard]] std::vector<const FigureSource*> chosenSources() const;
  /// Checks or unchecks the listed view named `name` (figureName); false when none is, or it has
  /// nothing to draw.
  bool setSourceChosen(const QString& name, bool on);
  /// Selects the listed view to preview.
  void selectSource(const QString& name);
  /// What the dialog warns of: the checked views show different models (which views, which
  /// models); empty when they show one model, or none in particular.
  [[nodiscard]] QString mixedModelsWarning() const;
  /// Draws the preview now: the previewed view exported as PNG at the dialog's style, at screen
  /// resolution (it otherwise follows every change after a short pause).
  void updatePreview();
  /// The preview as last drawn; null when there is nothing to preview.
  [[nodiscard]] QImage preview() const { return preview_image_; }
  /// The preview's label: it shows the whole figure, scaled down to fit it.
  [[nodiscard]] QLabel* previewLabel() const { return preview_; }

  /// What was written, for a status line: how many files, and the folder as a link to open it.
  [[nodiscard]] static QString writtenReport(const std::vector<std::string>& written);
  /// The files an earlier export left in `folder` and its Analyses folder ("analyses/<file>"):
  /// figures, their CSVs and recipes (.pdf, .svg, .png, .csv, .recipe.json), sorted; other files
  /// are not an export's. Before the export-all
  /// dialog writes into a folder that holds some, it asks whether to replace them, so another
  /// model's figures are not left beside the new ones.
  [[nodiscard]] static QStringList earlierFigures(const QString& folder);
  /// Removes earlierFigures(folder); false, naming the first that stayed, when one cannot be.
  static bool removeEarlierFigures(const QString& folder, QString* error = nullptr);

  /// The figure's own title and axis titles, shown greyed out in the empty fields.
  void setDefaultText(const FigureText& text);
  /// Picks a venue preset by its name or slug (venue_preset_index()); false when there is none.
  bool selectPreset(const QString& name);
  /// The preset the fields match, or "Custom".
  [[nodiscard]] QString presetName() const;
  /// The slug of the preset the fields match ("icml"), "" for Custom: what a recipe records.
  [[nodiscard]] std::string presetSlug() const;

  void setStyle(const FigureStyle& style);
  /// Everything the fields say.
  [[nodiscard]] FigureStyle style() const;
  /// The output: a base path without extension ("…/attention"), or a folder.
  void setOutput(const QString& path);
  [[nodiscard]] QString output() const;

  /// Reads the last choices from QSettings (group "export"); the dialog does it when made.
  void restore();
  /// Writes the choices to QSettings (group "export"); accepting the dialog does it.
  void remember() const;

  /// Asks how to export `source`, then writes it; returns the paths written (none if cancelled).
  static std::vector<std::string> exportSource(QWidget* parent, const FigureSource& source);
  /// Makes `button` a view's "Export figure…": disabled until the view has a figure, opening this
  /// dialog for `source` when clicked, and reporting what was written in `report`.
  static void attach(QPushButton* button, QWidget* owner, const FigureSource& source,
                     QLabel* report);
  /// Asks for a style and a folder, then writes every source that has a figure (export_all).
  static std::vector<std::string> exportSources(QWidget* parent,
                                                const std::vector<const FigureSource*>& sources);
  /// Runs `write`; when it throws (a folder that cannot be written, a full disk), a window-modal
  /// message says why, and nothing is returned.
  static std::vector<std::string> reportingFailure(
      QWidget* parent, const std::function<std::vector<std::string>()>& write);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  // The dialog's parts, built in this order by the constructor: the fields' ranges, items and
  // tips; the Size, Text and lines, and Files boxes; the columns they are laid out in (with the
  // views to write when exporting every view, and the preview); then the fields' signals (the
  // preview's pause, the preset's name, Save).
  void setUpFields();
  QGroupBox* buildSizeBox();
  QGroupBox* buildTextBox();
  QGroupBox* buildFilesBox();
  void layOut(QGroupBox* size, QGroupBox* text, QGroupBox* files);
  void connectFields();
  /// The preview image scaled to the label as it is now, all of it in view.
  void showPreview();
  void applyPreset(int index);
  void updatePresetName();
  void browse();
  void updateWarning();
  [[nodiscard]] const FigureSource* previewed() const;
  // The source listed in row `row` of the views.
  [[nodiscard]] const FigureSource* sourceAt(int row) const;

  bool folder_;
  bool applying_ = false;
  QComboBox* preset_;
  QDoubleSpinBox* width_;
  QDoubleSpinBox* height_;
  QComboBox* family_;
  QDoubleSpinBox* font_;
  QDoubleSpinBox* axis_font_;
  QDoubleSpinBox* tick_font_;
  QDoubleSpinBox* line_width_;
  QCheckBox* show_title_;
  QLineEdit* title_;
  QLineEdit* x_title_;
  QLineEdit* y_title_;
  QComboBox* dpi_;
  QCheckBox* pdf_;
  QCheckBox* svg_;
  QCheckBox* png_;
  QLineEdit* output_;
  QPushButton* browse_;
  QLabel* summary_;
  QDialogButtonBox* buttons_;
  std::vector<const FigureSource*> sources_;
  const FigureSource* source_ = nullptr;
  QListWidget* views_ = nullptr;
  QLabel* warning_;
  QLabel* preview_;
  QTimer* preview_timer_;
  QImage preview_image_;
  std::unique_ptr<QTemporaryDir> preview_dir_;
};

}  // namespace dstudio::viz

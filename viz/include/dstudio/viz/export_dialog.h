#pragma once
/// \file
/// The dialog that asks how to export a figure before writing it: a venue preset (figures.h's
/// venue_presets), width and height, font family and sizes, line width, title and axis titles,
/// PNG resolution, which formats to write and where. It remembers the last choices (QSettings,
/// group "export") and is fully usable without being shown: setters and getters for everything,
/// so tests and scripts drive it as a user would.

#include <QDialog>
#include <string>
#include <vector>

#include "dstudio/viz/figures.h"

class QCheckBox;
class QComboBox;
class QDialogButtonBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace dstudio::viz {

class ExportDialog : public QDialog {
  Q_OBJECT
 public:
  /// `folder`: the output is a folder (export every view at once) rather than a base path.
  explicit ExportDialog(QWidget* parent = nullptr, bool folder = false);

  /// The figure's own title and axis titles, shown greyed out in the empty fields.
  void setDefaultText(const FigureText& text);
  /// Picks a venue preset by its name or slug (venue_preset_index()); false when there is none.
  bool selectPreset(const QString& name);
  /// The preset the fields match, or "Custom".
  [[nodiscard]] QString presetName() const;

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
  static void attach(QPushButton* button, QWidget* owner, const FigureSource& source, QLabel* report);
  /// Asks for a style and a folder, then writes every source that has a figure (export_all).
  static std::vector<std::string> exportSources(QWidget* parent, const std::vector<const FigureSource*>& sources);

 private:
  void applyPreset(int index);
  void updatePresetName();
  void browse();

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
};

}  // namespace dstudio::viz

#pragma once
/// \file
/// A form made from a configuration's JSON (core's to_json of a variant or a training
/// configuration): one editor a key, chosen by the value's type and the field's metadata
/// (config_fields.h: its choices, its minimum, what it means in the papers' words). Numbers that
/// span decades (learning rates, scales) are shown with significant digits. Read back as JSON
/// for core to parse and validate; a field core names in an error can be outlined.

#include <QString>
#include <QStringList>
#include <QVariant>
#include <QWidget>
#include <string>
#include <utility>
#include <vector>

class QFormLayout;

namespace dstudio::viz {

class ConfigForm : public QWidget {
  Q_OBJECT
 public:
  explicit ConfigForm(QWidget* parent = nullptr);

  /// Rebuilds the form from `json`, a JSON object, leaving out the keys in `skip`.
  void setConfig(const std::string& json, const std::vector<std::string>& skip = {});
  /// Adds a number field. A key "a.b" is read back nested, {"a": {"b": value}} (a plugin
  /// mixer's options).
  void addNumber(const std::string& key, const QString& label, double value, double minimum,
                 bool integer, const QString& tooltip);
  /// The form's values as a JSON object.
  [[nodiscard]] std::string json() const;
  /// The editor of `key` (QSpinBox, QDoubleSpinBox, QCheckBox, QComboBox or QLineEdit), or null.
  [[nodiscard]] QWidget* field(const QString& key) const;
  /// Sets `key`'s editor; false when there is no such field or the choice is not offered.
  bool setField(const QString& key, const QVariant& value);
  [[nodiscard]] QStringList keys() const;
  /// Outlines every field `message` names (none for an empty message).
  void markInvalid(const QString& message);
  /// Shows or hides the row of `key` (a field the configuration does not use); its value is
  /// still read back.
  void setFieldVisible(const QString& key, bool visible);
  [[nodiscard]] bool isFieldVisible(const QString& key) const;

 signals:
  /// The user changed the field `key`.
  void edited(const QString& key);

 private:
  void announceEdits(const QString& key, QWidget* editor);

  QFormLayout* form_;
  std::vector<std::pair<QString, QWidget*>> fields_;
};

}  // namespace dstudio::viz

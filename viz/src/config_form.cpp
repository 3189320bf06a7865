// A form made from a configuration's JSON. See config_form.h.

#include "dstudio/viz/config_form.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLineEdit>
#include <QRegularExpression>
#include <QSpinBox>
#include <algorithm>
#include <climits>
#include <cmath>
#include <nlohmann/json.hpp>

#include "dstudio/models/config_fields.h"

namespace dstudio::viz {
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
    if (ok)
      return v >= minimum() && v <= maximum() ? QValidator::Acceptable : QValidator::Intermediate;
    static const QRegularExpression partial(
        QStringLiteral(R"(^\s*[-+]?[0-9]*\.?[0-9]*([eE][-+]?[0-9]*)?\s*$)"));
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

QWidget* number_editor(double value, double minimum, bool integer) {
  if (integer) {
    auto* spin = new QSpinBox;
    spin->setRange(minimum < -INT_MAX ? -INT_MAX : static_cast<int>(std::ceil(minimum)), INT_MAX);
    spin->setValue(static_cast<int>(std::clamp<double>(value, -INT_MAX, INT_MAX)));
    spin->setKeyboardTracking(false);
    return spin;
  }
  auto* spin = new ScientificSpinBox;
  spin->setRange(minimum, 1e300);
  spin->setValue(value);
  return spin;
}

// An editor for one JSON value, chosen by the value's type.
QWidget* make_editor(const std::string& key, const ordered_json& value) {
  if (value.is_boolean()) {
    auto* box = new QCheckBox;
    box->setChecked(value.get<bool>());
    return box;
  }
  if (value.is_number_integer()) {
    const auto v =
        value.is_number_unsigned()
            ? static_cast<long long>(std::min<std::uint64_t>(value.get<std::uint64_t>(), INT_MAX))
            : value.get<long long>();
    return number_editor(static_cast<double>(v), minimum_for(key, static_cast<double>(v)), true);
  }
  if (value.is_number())
    return number_editor(value.get<double>(), minimum_for(key, value.get<double>()), false);
  if (value.is_string()) {
    const auto options = choices_for(key);
    const QString text = QString::fromStdString(value.get<std::string>());
    if (options.isEmpty()) return new QLineEdit(text);
    auto* combo = new QComboBox;
    combo->addItems(options);
    combo->setCurrentText(text);
    return combo;
  }
  return new QLineEdit(QString::fromStdString(value.dump()));
}

ordered_json read_editor(const QWidget* w) {
  if (const auto* box = qobject_cast<const QCheckBox*>(w)) return box->isChecked();
  if (const auto* spin = qobject_cast<const QSpinBox*>(w))
    return static_cast<long long>(spin->value());
  if (const auto* spin = qobject_cast<const QDoubleSpinBox*>(w)) return spin->value();
  if (const auto* combo = qobject_cast<const QComboBox*>(w))
    return combo->currentText().toStdString();
  if (const auto* line = qobject_cast<const QLineEdit*>(w)) return line->text().toStdString();
  return nullptr;
}

}  // namespace

ConfigForm::ConfigForm(QWidget* parent) : QWidget(parent), form_(new QFormLayout(this)) {
  form_->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  form_->setLabelAlignment(Qt::AlignRight);
  // A field goes under its name when the two do not fit side by side (large type, a narrow
  // column), instead of the form scrolling sideways.
  form_->setRowWrapPolicy(QFormLayout::WrapLongRows);
  form_->setContentsMargins(0, 0, 0, 0);
}

void ConfigForm::setConfig(const std::string& json, const std::vector<std::string>& skip) {
  while (form_->rowCount() > 0) form_->removeRow(0);
  fields_.clear();
  const auto j = ordered_json::parse(json);
  for (const auto& [key, value] : j.items()) {
    if (std::find(skip.begin(), skip.end(), key) != skip.end()) continue;
    QWidget* editor = make_editor(key, value);
    editor->setObjectName(QString::fromStdString(key));
    editor->setToolTip(tooltip_for(key));
    form_->addRow(QString::fromStdString(key), editor);
    fields_.emplace_back(QString::fromStdString(key), editor);
    announceEdits(QString::fromStdString(key), editor);
  }
}

void ConfigForm::announceEdits(const QString& key, QWidget* editor) {
  const auto edited = [this, key] { emit this->edited(key); };
  if (auto* box = qobject_cast<QCheckBox*>(editor))
    connect(box, &QCheckBox::toggled, this, edited);
  else if (auto* spin = qobject_cast<QSpinBox*>(editor))
    connect(spin, &QSpinBox::valueChanged, this, edited);
  else if (auto* number = qobject_cast<QDoubleSpinBox*>(editor))
    connect(number, &QDoubleSpinBox::valueChanged, this, edited);
  else if (auto* combo = qobject_cast<QComboBox*>(editor))
    connect(combo, &QComboBox::currentTextChanged, this, edited);
  else if (auto* line = qobject_cast<QLineEdit*>(editor))
    connect(line, &QLineEdit::textEdited, this, edited);
}

void ConfigForm::setFieldVisible(const QString& key, bool visible) {
  if (QWidget* editor = field(key)) form_->setRowVisible(editor, visible);
}

bool ConfigForm::isFieldVisible(const QString& key) const {
  const QWidget* editor = field(key);
  return editor && !editor->isHidden();
}

void ConfigForm::addNumber(const std::string& key, const QString& label, double value,
                           double minimum, bool integer, const QString& tooltip) {
  QWidget* editor = number_editor(value, std::isfinite(minimum) ? minimum : -1e300, integer);
  editor->setObjectName(QString::fromStdString(key));
  editor->setToolTip(tooltip);
  form_->addRow(label, editor);
  fields_.emplace_back(QString::fromStdString(key), editor);
  announceEdits(QString::fromStdString(key), editor);
}

std::string ConfigForm::json() const {
  ordered_json j = ordered_json::object();
  for (const auto& [key, w] : fields_) {
    const std::string k = key.toStdString();
    const auto dot = k.find('.');
    if (dot == std::string::npos)
      j[k] = read_editor(w);
    else
      j[k.substr(0, dot)][k.substr(dot + 1)] = read_editor(w);
  }
  return j.dump();
}

QWidget* ConfigForm::field(const QString& key) const {
  for (const auto& [k, w] : fields_)
    if (k == key) return w;
  return nullptr;
}

bool ConfigForm::setField(const QString& key, const QVariant& value) {
  QWidget* w = field(key);
  if (!w) return false;
  if (auto* box = qobject_cast<QCheckBox*>(w))
    box->setChecked(value.toBool());
  else if (auto* spin = qobject_cast<QSpinBox*>(w))
    spin->setValue(value.toInt());
  else if (auto* dspin = qobject_cast<QDoubleSpinBox*>(w))
    dspin->setValue(value.toDouble());
  else if (auto* combo = qobject_cast<QComboBox*>(w)) {
    const int i = combo->findText(value.toString());
    if (i < 0) return false;
    combo->setCurrentIndex(i);
  } else if (auto* line = qobject_cast<QLineEdit*>(w))
    line->setText(value.toString());
  return true;
}

QStringList ConfigForm::keys() const {
  QStringList out;
  for (const auto& [k, w] : fields_) out << k;
  return out;
}

void ConfigForm::markInvalid(const QString& message) {
  for (const auto& [key, w] : fields_) {
    const QRegularExpression named(QStringLiteral("\\b%1\\b").arg(QRegularExpression::escape(key)));
    w->setStyleSheet(!message.isEmpty() && named.match(message).hasMatch()
                         ? QStringLiteral("border: 1px solid #d55e00;")
                         : QString());
  }
}

}  // namespace dstudio::viz

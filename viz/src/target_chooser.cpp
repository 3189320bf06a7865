// Target returns on offer. See target_chooser.h.

#include "dstudio/viz/target_chooser.h"

#include <QDoubleSpinBox>
#include <QSignalBlocker>
#include <cmath>

namespace dstudio::viz {

TargetChooser::TargetChooser(QDoubleSpinBox* field, QWidget* parent)
    : QComboBox(parent), field_(field) {
  setToolTip(
      tr("Where the target return comes from: the task's reference targets (the papers') or the "
         "returns the "
         "model's data reached"));
  setSizeAdjustPolicy(QComboBox::AdjustToContents);
  connect(this, &QComboBox::activated, this, [this](int index) {
    if (index >= 0 && index < static_cast<int>(choices_.size()))
      field_->setValue(choices_[static_cast<std::size_t>(index)].value);
  });
  connect(field_, &QDoubleSpinBox::valueChanged, this, &TargetChooser::follow);
}

void TargetChooser::setChoices(const std::vector<models::TargetChoice>& choices) {
  choices_ = choices;
  {
    const QSignalBlocker block(this);
    clear();
    for (const auto& c : choices_) addItem(QString::fromStdString(c.label));
    addItem(tr("own value"));
  }
  if (!choices_.empty()) field_->setValue(choices_.front().value);
  follow(field_->value());
}

QString TargetChooser::inUse() const {
  return currentText();
}

void TargetChooser::follow(double value) {
  const QSignalBlocker block(this);
  for (std::size_t i = 0; i < choices_.size(); ++i)
    if (std::abs(choices_[i].value - value) < 0.5) {
      setCurrentIndex(static_cast<int>(i));
      return;
    }
  setCurrentIndex(count() - 1);  // "own value"
}

}  // namespace dstudio::viz

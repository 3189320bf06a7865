#pragma once
/// \file
/// A list of target returns to start a policy from (models::target_choices: the task's reference
/// targets and the data's own returns), next to the field that holds the target. Choosing one
/// sets that field; typing another value shows "own value", so the list always says which target
/// is in use.

#include <QComboBox>
#include <vector>

#include "dstudio/models/targets.h"

class QDoubleSpinBox;

namespace dstudio::viz {

class TargetChooser : public QComboBox {
  Q_OBJECT
 public:
  /// Follows and sets `field`.
  explicit TargetChooser(QDoubleSpinBox* field, QWidget* parent = nullptr);
  /// The targets on offer; the first is chosen and put in the field.
  void setChoices(const std::vector<models::TargetChoice>& choices);
  /// What the field's value is: a choice's label, or "own value".
  [[nodiscard]] QString inUse() const;
  [[nodiscard]] const std::vector<models::TargetChoice>& choices() const { return choices_; }
  /// Shows which choice `value` is (the field's value, set with its signals blocked).
  void follow(double value);

 private:
  QDoubleSpinBox* field_;
  std::vector<models::TargetChoice> choices_;
};

}  // namespace dstudio::viz

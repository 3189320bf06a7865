#pragma once
/// \file
/// The Training tab's figures for export (File ▸ Export All Views and its own Export button): the
/// selected run's curves and the comparison of the checked runs. Internal to the panel.

#include <QObject>
#include <string>
#include <vector>

#include "dstudio/analysis/curves.h"
#include "dstudio/viz/figures.h"
#include "dstudio/viz/run_curves_view.h"
#include "training_panel.h"
#include "training_run.h"

namespace dstudio::studio {

// The comparison of the checked runs as a figure, with the groups' numbers.
class TrainingPanel::ComparisonFigure : public viz::FigureSource {
 public:
  explicit ComparisonFigure(const TrainingPanel& panel) : panel_(panel) {}
  [[nodiscard]] QString figureName() const override { return QStringLiteral("run_comparison"); }
  [[nodiscard]] QString figureTitle() const override {
    return QObject::tr("Training: runs compared");
  }
  [[nodiscard]] bool hasFigure() const override { return !panel_.compare_->groups().empty(); }
  [[nodiscard]] viz::FigureText figureText() const override {
    return {{}, tr("step"), panel_.compare_->yLabel()};
  }
  std::vector<std::string> exportFigure(const std::string& base,
                                        const viz::FigureStyle& style) const override {
    return hasFigure() ? panel_.writeComparison(base, viz::with_defaults(style, figureText()))
                       : std::vector<std::string>{};
  }

 private:
  const TrainingPanel& panel_;
};

}  // namespace dstudio::studio

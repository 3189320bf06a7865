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

// The selected run's curves as figures: its loss, and its evaluations (score, with the attention
// entropy on a second axis), with every metric as CSV.
class TrainingPanel::CurvesFigure : public viz::FigureSource {
 public:
  explicit CurvesFigure(const TrainingPanel& panel) : panel_(panel) {}
  [[nodiscard]] QString figureName() const override { return QStringLiteral("training_curves"); }
  [[nodiscard]] QString figureTitle() const override {
    return QObject::tr("Training: the run's curves");
  }
  [[nodiscard]] bool hasFigure() const override {
    const auto* run = panel_.currentRun();
    return run && run->last("loss").has_value();
  }
  [[nodiscard]] viz::FigureText figureText() const override {
    const auto* run = panel_.currentRun();
    return {run ? run->name() : QString(), tr("step"), {}};
  }
  std::vector<std::string> exportFigure(const std::string& base,
                                        const viz::FigureStyle& style) const override {
    const auto* run = panel_.currentRun();
    if (!hasFigure()) return {};
    const auto& columns = run->metrics().columns;
    const auto series = [&](const char* key, const QString& name, bool right) {
      const auto& c = columns.at(key);
      return viz::Series{name, c.x, c.y, {}, {}, right};
    };
    const QString name = figureText().title;
    std::vector<std::string> written = viz::save_lines(
        base + "_loss", {series("loss", tr("loss"), false)}, tr("step"), tr("loss (action MSE)"),
        viz::with_defaults(
            style, {tr("%1: training loss").arg(name), tr("step"), tr("loss (action MSE)")}));
    if (columns.count("eval_score")) {
      std::vector<viz::Series> eval = {series("eval_score", tr("normalised score"), false)};
      const bool entropy = columns.count("entropy_layer1") > 0;
      if (entropy) eval.push_back(series("entropy_layer1", tr("attention entropy, layer 1"), true));
      for (auto& f : viz::save_lines(
               base + "_evaluation", eval, tr("step"), tr("normalised score"),
               viz::with_defaults(
                   style, {tr("%1: evaluation").arg(name), tr("step"), tr("normalised score")}),
               entropy ? tr("attention entropy, layer 1") : QString()))
        written.push_back(std::move(f));
    }
    analysis::write_run_metrics_csv(base + ".csv", run->metrics());
    written.push_back(base + ".csv");
    return written;
  }

 private:
  const TrainingPanel& panel_;
};

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

// The figures of `dstudio sweep collect`. See sweep_figures.h.

#include "sweep_figures.h"

#include <algorithm>
#include <cmath>

#include "dstudio/viz/figures.h"
#include "dstudio/viz/sweep_results_view.h"
#include "figure_options.h"

namespace dstudio::cli {

std::shared_ptr<FigureOptions> add_sweep_figure_options(CLI::App* cmd) {
  auto f = std::make_shared<FigureOptions>();
  add_figure_options(cmd, *f, "scores.csv and the tables");
  return f;
}

std::vector<std::string> write_sweep_figures(const std::vector<sweep::GroupResult>& groups,
                                             const std::filesystem::path& out,
                                             const FigureOptions& options) {
  const viz::FigureStyle style = options.resolve();
  const viz::FigureContext context;
  auto written =
      viz::save_sweep_scores((out / "scores").string(), groups, viz::SweepMeasure::Final, style);
  const bool evaluated = std::any_of(groups.begin(), groups.end(), [](const sweep::GroupResult& g) {
    return std::isfinite(g.best_mean);
  });
  if (evaluated)
    for (auto& f : viz::save_sweep_scores((out / "best_scores").string(), groups,
                                          viz::SweepMeasure::Best, style))
      written.push_back(std::move(f));
  return written;
}

}  // namespace dstudio::cli

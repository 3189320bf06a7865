// The figures of `dstudio sweep collect`. See sweep_figures.h.

#include "sweep_figures.h"

#include <algorithm>
#include <cmath>

#include "analysis_recipes.h"
#include "dstudio/common/error.h"
#include "dstudio/common/figure_recipe.h"
#include "dstudio/viz/figures.h"
#include "dstudio/viz/sweep_results_view.h"
#include "figure_options.h"
#include "view_recipes.h"

namespace dstudio::cli {

std::shared_ptr<FigureOptions> add_sweep_figure_options(CLI::App* cmd) {
  auto f = std::make_shared<FigureOptions>();
  add_figure_options(cmd, *f, "scores.csv and the tables");
  return f;
}

namespace {

std::vector<std::string> save_profiles(const std::string& base,
                                       const std::vector<sweep::SettingProfile>& profiles,
                                       bool best, const viz::FigureStyle& style) {
  std::vector<viz::Series> series;
  for (const auto& p : profiles) {
    viz::Series s;
    s.name = QString::fromStdString(p.setting);
    for (const auto& point : p.points) {
      s.x.push_back(point.tau);
      s.y.push_back(point.fraction);
      s.low.push_back(point.low);
      s.high.push_back(point.high);
    }
    series.push_back(std::move(s));
  }
  if (series.empty()) return {};
  viz::FigureStyle s = style;
  if (s.title.isEmpty())
    s.title = best ? QStringLiteral("Best evaluation: performance profiles")
                   : QStringLiteral("Final score: performance profiles");
  return viz::save_lines(base, series, QStringLiteral("normalised score τ"),
                         QStringLiteral("fraction of runs with score > τ"), s);
}

}  // namespace

const std::vector<std::string>& sweep_figure_names() {
  static const std::vector<std::string> names = {"scores",          "best_scores", "aggregates",
                                                 "aggregates_best", "profiles",    "profiles_best",
                                                 "improvement"};
  return names;
}

std::vector<std::string> write_sweep_figure(const std::string& name,
                                            const std::vector<sweep::GroupResult>& groups,
                                            const sweep::SweepStatistics& statistics,
                                            const std::string& base,
                                            const viz::FigureStyle& style) {
  const viz::FigureContext context;
  if (name == "scores")
    return viz::save_sweep_scores(base, groups, viz::SweepMeasure::Final, style);
  if (name == "best_scores") {
    const bool evaluated = std::any_of(groups.begin(), groups.end(),
                                       [](const auto& g) { return std::isfinite(g.best_mean); });
    return evaluated ? viz::save_sweep_scores(base, groups, viz::SweepMeasure::Best, style)
                     : std::vector<std::string>{};
  }
  if (name == "aggregates")
    return viz::save_sweep_aggregates(base, statistics.aggregates, false, style);
  if (name == "aggregates_best")
    return viz::save_sweep_aggregates(base, statistics.aggregates, true, style);
  if (name == "profiles") return save_profiles(base, statistics.profiles, false, style);
  if (name == "profiles_best") return save_profiles(base, statistics.best_profiles, true, style);
  if (name == "improvement")
    return viz::save_sweep_improvement(base, statistics.improvements, style);
  throw UsageError("sweep collect draws no figure '" + name + "'");
}

std::vector<std::string> write_sweep_figures(const std::vector<sweep::GroupResult>& groups,
                                             const sweep::SweepStatistics& statistics,
                                             const std::filesystem::path& out,
                                             const FigureOptions& options) {
  const viz::FigureStyle style = options.resolve();
  std::vector<std::string> written;
  for (const auto& name : sweep_figure_names())
    for (auto& f : write_sweep_figure(name, groups, statistics, (out / name).string(), style))
      written.push_back(std::move(f));
  return written;
}

void write_sweep_recipes(const sweep::Sweep& s, int resamples, std::uint64_t seed,
                         const FigureOptions& figures, const std::vector<std::string>& files,
                         const std::filesystem::path& out) {
  namespace fs = std::filesystem;
  FigureRecipe base = recipes::sweep_inputs_recipe(s);
  base.analysis = kSweepCollectRecipe;
  base.options["resamples"] = std::to_string(resamples);
  base.options["bootstrap-seed"] = std::to_string(seed);
  base.figure = viz::recipe_figure(figures.preset, figures.resolve());
  for (const auto& name : sweep_figure_names()) {
    FigureRecipe r = base;
    r.figure.name = name;
    for (const auto& f : files)
      if (fs::path(f).stem() == name) r.outputs.push_back(fs::path(f).filename().string());
    if (r.outputs.empty()) continue;
    r.created = recipe_time_now();
    write_figure_recipe(out / (name + ".recipe.json"), r);
  }
}

}  // namespace dstudio::cli

// The figures of `dstudio sweep collect`. See sweep_figures.h.

#include "sweep_figures.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "dstudio/viz/figures.h"
#include "dstudio/viz/sweep_results_view.h"
#include "figure_options.h"

namespace dstudio::cli {

std::shared_ptr<FigureOptions> add_sweep_figure_options(CLI::App* cmd) {
  auto f = std::make_shared<FigureOptions>();
  add_figure_options(cmd, *f, "scores.csv and the tables");
  return f;
}

namespace {

const QString kStatistics[] = {QStringLiteral("IQM"), QStringLiteral("Median"),
                               QStringLiteral("Mean"), QStringLiteral("Optimality gap")};

viz::Bar interval_bar(const analysis::Interval& i) {
  viz::Bar b;
  b.mean = i.estimate;
  b.low = i.low;
  b.high = i.high;
  return b;
}

// The four aggregates as clusters, one bar a setting with its interval.
std::vector<std::string> save_aggregates(const std::string& base,
                                         const std::vector<sweep::SettingAggregate>& aggregates,
                                         bool best, const viz::FigureStyle& style) {
  std::vector<viz::BarSeries> series;
  for (const auto& a : aggregates) {
    const auto& summary = best ? a.best : a.last;
    if (!summary) continue;
    viz::BarSeries s;
    s.name = QString::fromStdString(a.setting);
    for (const auto* i :
         {&summary->iqm, &summary->median, &summary->mean, &summary->optimality_gap})
      s.bars.push_back(interval_bar(*i));
    s.notes.assign(4, QString());
    s.notes[0] = QStringLiteral("n=%1").arg(summary->runs);
    series.push_back(std::move(s));
  }
  if (series.empty()) return {};
  viz::FigureStyle s = style;
  if (s.title.isEmpty())
    s.title = best ? QStringLiteral("Best evaluation: aggregates with 95% intervals")
                   : QStringLiteral("Final score: aggregates with 95% intervals");
  return viz::save_clustered_bars(
      base, std::vector<QString>(std::begin(kStatistics), std::end(kStatistics)), series,
      QStringLiteral("normalised score"), s);
}

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

std::vector<std::string> save_improvement(const std::string& base,
                                          const std::vector<sweep::SettingImprovement>& pairs,
                                          const viz::FigureStyle& style) {
  std::vector<QString> clusters;
  viz::BarSeries last, best;
  last.name = QStringLiteral("final score");
  best.name = QStringLiteral("best evaluation");
  for (const auto& p : pairs) {
    if (!p.last && !p.best) continue;
    clusters.push_back(QString::fromStdString(p.x + " > " + p.y));
    const double nan = std::numeric_limits<double>::quiet_NaN();
    last.bars.push_back(p.last ? interval_bar(*p.last) : viz::Bar{{}, nan, 0.0});
    best.bars.push_back(p.best ? interval_bar(*p.best) : viz::Bar{{}, nan, 0.0});
  }
  if (clusters.empty()) return {};
  std::vector<viz::BarSeries> series{last};
  if (std::any_of(best.bars.begin(), best.bars.end(),
                  [](const viz::Bar& b) { return std::isfinite(b.mean); }))
    series.push_back(best);
  viz::FigureStyle s = style;
  if (s.title.isEmpty()) s.title = QStringLiteral("Probability of improvement, 95% intervals");
  return viz::save_clustered_bars(base, clusters, series, QStringLiteral("P(X > Y)"), s);
}

}  // namespace

std::vector<std::string> write_sweep_figures(const std::vector<sweep::GroupResult>& groups,
                                             const sweep::SweepStatistics& statistics,
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
  const auto add = [&](std::vector<std::string> files) {
    for (auto& f : files) written.push_back(std::move(f));
  };
  add(save_aggregates((out / "aggregates").string(), statistics.aggregates, false, style));
  add(save_aggregates((out / "aggregates_best").string(), statistics.aggregates, true, style));
  add(save_profiles((out / "profiles").string(), statistics.profiles, false, style));
  add(save_profiles((out / "profiles_best").string(), statistics.best_profiles, true, style));
  add(save_improvement((out / "improvement").string(), statistics.improvements, style));
  return written;
}

}  // namespace dstudio::cli

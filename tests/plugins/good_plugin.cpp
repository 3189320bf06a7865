// A plugin for the tests, without LibTorch: a variant (a small DT), an analysis that needs no
// checkpoint (the returns of a dataset's episodes) and a dataset format (transitions as CSV text).

#include <dstudio/data/dataset_io.h>
#include <dstudio/plugins/plugin.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

namespace {
using namespace dstudio;

// "<name>.transitions.csv": a first line "obs_dim,act_dim", then one line a transition:
// observation..., action..., reward, terminal, timeout.
data::Dataset load_csv(const std::filesystem::path& path, const data::LoadOptions&,
                       const Progress& progress) {
  std::ifstream in(path);
  if (!in) throw data::DatasetError(path.string(), "", "cannot be opened");
  data::Dataset ds;
  ds.path = path.string();
  char comma = 0;
  auto& d = ds.data;
  if (!(in >> d.obs_dim >> comma >> d.act_dim) || d.obs_dim < 1 || d.act_dim < 1)
    throw data::DatasetError(path.string(), "", "the first line must be obs_dim,act_dim");
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    progress.check();
    if (line.empty()) continue;
    std::istringstream row(line);
    std::vector<double> v;
    for (std::string cell; std::getline(row, cell, ',');) v.push_back(std::stod(cell));
    if (static_cast<std::int64_t>(v.size()) != d.obs_dim + d.act_dim + 3)
      throw data::DatasetError(path.string(), "",
                               "a line has " + std::to_string(v.size()) + " values");
    std::size_t k = 0;
    for (std::int64_t i = 0; i < d.obs_dim; ++i)
      d.observations.push_back(static_cast<float>(v[k++]));
    for (std::int64_t i = 0; i < d.act_dim; ++i) d.actions.push_back(static_cast<float>(v[k++]));
    d.rewards.push_back(static_cast<float>(v[k++]));
    d.terminals.push_back(v[k++] != 0.0);
    d.timeouts.push_back(v[k++] != 0.0);
  }
  ds.episodes = data::segment_episodes(d.rewards, d.terminals, d.timeouts);
  ds.metadata["source"] = "csv";
  return ds;
}

bool is_csv(const std::filesystem::path& path) {
  const auto name = path.filename().string();
  const std::string suffix = ".transitions.csv";
  return name.size() > suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

analysis::AnalysisResult episode_returns(const analysis::AnalysisInputs& in,
                                         const Progress& progress) {
  const auto ds = data::load_dataset(in.dataset, {}, progress);
  const auto top = static_cast<std::size_t>(in.options.integer("top"));
  std::vector<double> returns;
  for (const auto& e : ds.episodes) returns.push_back(e.ret);
  std::sort(returns.begin(), returns.end(), std::greater<>());
  if (returns.size() > top) returns.resize(top);
  analysis::AnalysisResult r;
  r.summary_json = nlohmann::json{{"episodes", ds.episodes.size()},
                                  {"best", returns.empty() ? 0.0 : returns.front()}}
                       .dump();
  analysis::AnalysisTable t{"returns", {"rank", "return"}, {}};
  analysis::AnalysisFigure f{"returns",
                             "Best episodes",
                             "rank",
                             "return",
                             analysis::AnalysisFigure::Kind::Lines,
                             {{"return", {}, {}, {}}},
                             {}};
  for (std::size_t i = 0; i < returns.size(); ++i) {
    t.rows.push_back({static_cast<double>(i + 1), returns[i]});
    f.series.front().x.push_back(static_cast<double>(i + 1));
    f.series.front().y.push_back(returns[i]);
  }
  r.tables.push_back(t);
  r.figures.push_back(f);
  return r;
}

}  // namespace

DSTUDIO_PLUGIN("test-good", "0.1.0", "Test plugin: a small DT, episode returns, CSV transitions") {
  models::VariantDefinition v;
  v.name = "dt-small";
  v.description = "DT with one layer of width 64";
  v.defaults = [] {
    auto c = models::make_variant("dt");
    c.hidden = 64;
    c.layers = 1;
    return c;
  };
  registrar.add_variant(v);

  using Type = analysis::AnalysisOption::Type;
  analysis::AnalysisDefinition a;
  a.name = "episode-returns";
  a.title = "Episode returns";
  a.description = "The best episode returns of a dataset";
  a.needs_checkpoint = false;
  a.options = {{"top", "episodes listed", Type::Integer, "5", {}, 1, 1000}};
  a.run = episode_returns;
  registrar.add_analysis(a);

  registrar.add_dataset_format(
      {"csv-transitions", "transitions as CSV text (*.transitions.csv)", is_csv, load_csv, {}});
}

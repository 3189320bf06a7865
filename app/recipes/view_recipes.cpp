// The recipes of the studio's own views, both directions side by side (view_recipes.h): what the
// window records of a view, and the view built again from it as the window built it (the same
// core calls, the same setters, in the same order).

// Index of this file:
//   [SECTION] Options and checkpoints
//   [SECTION] Attention
//   [SECTION] Rollouts: Entropy and reward
//   [SECTION] Rollouts: Zeroing and target sweep
//   [SECTION] Markov lab
//   [SECTION] Token t-SNE
//   [SECTION] Training curves
//   [SECTION] Training runs compared
//   [SECTION] The Sweep tab's scores
//   [SECTION] What a viewer's recipe records beyond its options
//   [SECTION] The Viewer tab's timeline
//   [SECTION] The recipes the window records
//   [SECTION] Viewer clips
//   [SECTION] Computing any view

#include "view_recipes.h"

#include <QString>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis_recipes.h"
#include "dstudio/analysis/curves.h"
#include "dstudio/analysis/tsne.h"
#include "dstudio/common/enum_names.h"
#include "dstudio/common/error.h"
#include "dstudio/common/json_fields.h"
#include "dstudio/common/system_info.h"
#include "dstudio/common/text.h"
#include "dstudio/env/environment.h"
#include "dstudio/models/checkpoint.h"
#include "dstudio/models/checkpoint_info.h"
#include "dstudio/models/episode_player.h"
#include "dstudio/models/evaluation.h"
#include "dstudio/models/interventions.h"
#include "dstudio/models/markov_lab.h"
#include "dstudio/models/playback.h"
#include "dstudio/models/targets.h"
#include "dstudio/models/variant_config.h"
#include "dstudio/models/windows.h"
#include "dstudio/viz/attention_map_view.h"
#include "dstudio/viz/entropy_reward_view.h"
#include "dstudio/viz/episode_timeline.h"
#include "dstudio/viz/markov_lab_view.h"
#include "dstudio/viz/return_analysis_view.h"
#include "dstudio/viz/run_curves_view.h"
#include "dstudio/viz/sweep_results_view.h"
#include "dstudio/viz/tsne_view.h"

namespace dstudio::recipes {

namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] Options and checkpoints

std::string numbers(const std::vector<double>& values) {
  std::string text;
  for (double v : values) {
    if (!text.empty()) text += ',';
    text += exact_number(v);
  }
  return text;
}

// The recipe's options read back, each refusal naming the recipe and the key.
class Options {
 public:
  Options(const FigureRecipe& recipe, std::string where)
      : options_(recipe.options), where_(std::move(where)) {}
  [[nodiscard]] bool has(const std::string& key) const { return options_.count(key) > 0; }
  [[nodiscard]] std::string text(const std::string& key) const {
    const auto it = options_.find(key);
    if (it == options_.end()) fail(key, "missing");
    return it->second;
  }
  // As the command line reads its options: the whole text one finite number, nothing before or
  // after it ("12abc", " 3", "inf" and "nan" are not numbers).
  [[nodiscard]] double real(const std::string& key) const {
    const std::string t = text(key);
    double v = 0.0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.empty() || ec != std::errc() || end != t.data() + t.size() || !std::isfinite(v))
      fail(key, "\"" + t + "\" is not a number");
    return v;
  }
  [[nodiscard]] long long integer(const std::string& key, long long low, long long high) const {
    const std::string t = text(key);
    long long v = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.empty() || ec != std::errc() || end != t.data() + t.size() || v < low || v > high)
      fail(key, "\"" + t + "\" is not a whole number in [" + std::to_string(low) + ", " +
                    std::to_string(high) + "]");
    return v;
  }
  [[nodiscard]] std::vector<double> reals(const std::string& key) const {
    std::vector<double> out;
    std::stringstream in(text(key));
    for (std::string item; std::getline(in, item, ',');) {
      double v = 0.0;
      const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
      if (item.empty() || ec != std::errc() || end != item.data() + item.size() ||
          !std::isfinite(v))
        fail(key, "\"" + item + "\" is not a number");
      out.push_back(v);
    }
    return out;
  }
  [[noreturn]] void fail(const std::string& key, const std::string& problem) const {
    throw FigureRecipeError(where_ + ": 'options." + key + "': " + problem);
  }

 private:
  const std::map<std::string, std::string>& options_;
  std::string where_;
};

// The checkpoint a view showed, its hash, its dataset and that dataset's fingerprint.
FigureRecipe checkpoint_recipe(const char* analysis, const std::string& checkpoint) {
  FigureRecipe r;
  r.analysis = analysis;
  r.checkpoint = absolute_path(checkpoint);
  r.checkpoint_hash = file_content_hash(r.checkpoint);
  r.dataset = own_dataset(r.checkpoint);
  if (!r.dataset.empty()) {
    try {
      r.dataset_fingerprint = dataset_fingerprint(r.dataset);
    } catch (const Error&) {
      // Unreadable now, as a re-render must find it.
    }
  }
  r.studio_version = studio_version();
  return r;
}

void need_checkpoint(const FigureRecipe& r, const std::string& where) {
  if (r.checkpoint.empty())
    throw FigureRecipeError(where + ": 'checkpoint': missing; the view '" + r.analysis +
                            "' shows a checkpoint");
}

QString label(const std::string& checkpoint) {
  return QString::fromStdString(models::checkpoint_label(checkpoint));
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Attention

using AttentionMode = viz::AttentionMapView::Mode;
using AttentionComparison = viz::AttentionMapView::Comparison;
const EnumNames<AttentionMode> kModes{{AttentionMode::Layer, "layer"},
                                      {AttentionMode::MeanOverLayers, "mean-over-layers"},
                                      {AttentionMode::Rollout, "rollout"}};
const EnumNames<AttentionComparison> kComparisons{{AttentionComparison::Alone, "alone"},
                                                  {AttentionComparison::SideBySide, "side-by-side"},
                                                  {AttentionComparison::Difference, "difference"}};

// The value `key` names in `names`; the message lists the names.
template <class E>
E named(const EnumNames<E>& names, const Options& o, const std::string& key) {
  const std::string t = o.text(key);
  if (const auto found = names.parse(t)) return *found;
  o.fail(key, "\"" + t + "\" is none of " + names.joined());
}

ViewBuilder compute_attention(const FigureRecipe& r, const std::string& where,
                              const Progress& progress) {
  need_checkpoint(r, where);
  const Options o(r, where);
  const int windows = static_cast<int>(o.integer("windows", 1, 100000));
  const auto mode = named(kModes, o, "mode");
  const int layer = static_cast<int>(o.integer("layer", 0, 1000));
  const int head = static_cast<int>(o.integer("head", -1, 1000));
  const auto comparison = named(kComparisons, o, "comparison");
  auto inspected = std::make_shared<models::DatasetInspection>(models::inspect_on_dataset(
      r.checkpoint, windows, {}, progress.part(0.0, r.compare.empty() ? 1.0 : 0.5)));
  auto compared = std::make_shared<std::vector<models::WindowInspection>>();
  models::CheckpointInfo compared_info;
  if (!r.compare.empty()) {
    compared_info = models::read_checkpoint_info(r.compare);
    *compared = models::inspect_windows(r.compare, inspected->windows,
                                        models::ModalityZeroing::None, progress.part(0.5, 1.0));
  }
  const std::string checkpoint = r.checkpoint, other = r.compare;
  return [=]() -> std::unique_ptr<viz::FigureSource> {
    auto view = std::make_unique<viz::AttentionMapView>();
    view->setInspections(model_title(checkpoint, inspected->info), inspected->inspections);
    if (!other.empty()) view->setComparison(model_title(other, compared_info), *compared);
    view->setMode(mode);
    view->setLayer(layer);
    view->setHead(head);
    view->setComparisonMode(comparison);
    return view;
  };
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Rollouts: Entropy and reward

void put_rollout(FigureRecipe& r, const models::RolloutConfig& c) {
  r.options["targets"] = numbers(c.targets);
  r.options["episodes"] = std::to_string(c.episodes);
  r.seeds = {static_cast<std::int64_t>(c.seed)};
  r.zeroing = c.zeroing == models::ModalityZeroing::None ? "" : models::to_string(c.zeroing);
  r.options["max-steps"] = std::to_string(c.max_steps);
  r.options["threads"] = std::to_string(c.threads);
  r.options["entropy"] = c.entropy ? "true" : "false";
  if (!c.env_id.empty()) r.options["env"] = c.env_id;
}

models::RolloutConfig rollout_of(const FigureRecipe& r, const Options& o,
                                 const std::string& where) {
  models::RolloutConfig c;
  c.targets = o.reals("targets");
  c.episodes = static_cast<int>(o.integer("episodes", 1, 100000));
  if (r.seeds.size() != 1)
    throw FigureRecipeError(where + ": 'seeds': a rollout has one seed, the recipe names " +
                            std::to_string(r.seeds.size()));
  c.seed = static_cast<std::uint64_t>(r.seeds.front());
  try {
    c.zeroing =
        r.zeroing.empty() ? models::ModalityZeroing::None : models::zeroing_from_string(r.zeroing);
  } catch (const Error& e) {
    throw FigureRecipeError(where + ": 'zeroing': " + e.what());
  }
  c.max_steps = static_cast<int>(o.integer("max-steps", 0, 100000000));
  c.threads = static_cast<int>(o.integer("threads", 1, 1024));
  c.entropy = o.text("entropy") == "true";
  if (o.has("env")) c.env_id = o.text("env");
  return c;
}

ViewBuilder compute_entropy_reward(const FigureRecipe& r, const std::string& where,
                                   const Progress& progress) {
  need_checkpoint(r, where);
  const Options o(r, where);
  const auto config = rollout_of(r, o, where);
  if (!r.episode || *r.episode < 0)
    throw FigureRecipeError(where + ": 'episode': the view shows one episode, from 0");
  const int episode = static_cast<int>(*r.episode);
  const auto info = models::read_checkpoint_info(r.checkpoint);
  auto result =
      std::make_shared<models::RolloutResult>(models::rollout(r.checkpoint, config, progress));
  const QString title = label(r.checkpoint);
  const int skip = info.variant.context_length - 1;
  return [=]() -> std::unique_ptr<viz::FigureSource> {
    auto view = std::make_unique<viz::EntropyRewardView>();
    view->setRollout(title, *result, skip);
    view->showEpisode(episode);
    return view;
  };
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Rollouts: Zeroing and target sweep

ViewBuilder compute_returns(const FigureRecipe& r, const std::string& where,
                            const Progress& progress) {
  need_checkpoint(r, where);
  const Options o(r, where);
  // Each panel is drawn from its own runs alone: only those of the recipe's figure are made.
  const std::string& figure = r.figure.name;
  const bool only_zeroing = figure == "returns_zeroing", only_sweep = figure == "returns_sweep";
  const bool ablation = o.has("ablation-episodes") && !only_sweep;
  const bool sweep = o.has("sweep-episodes") && !only_zeroing;
  if (!ablation && !sweep)
    o.fail(only_sweep ? "sweep-episodes" : "ablation-episodes",
           "missing: the figure " + figure + " is drawn from it");
  auto zeroings = std::make_shared<std::vector<models::TargetSummary>>();
  auto mine = std::make_shared<std::vector<models::TargetSummary>>();
  auto theirs = std::make_shared<std::vector<models::TargetSummary>>();
  const std::string compared = sweep ? r.compare : std::string();
  double best = 0.0;
  const double parts = (ablation ? 1.0 : 0.0) + (sweep ? (compared.empty() ? 1.0 : 2.0) : 0.0);
  double done = 0.0;
  // As the window's jobs run them (return_jobs.cpp).
  if (ablation) {
    models::AblationConfig config;
    config.episodes = static_cast<int>(o.integer("ablation-episodes", 1, 100000));
    config.target = o.real("ablation-target");
    for (const auto& z :
         models::zeroing_ablation(r.checkpoint, config, progress.part(0.0, 1.0 / parts)).zeroings)
      zeroings->push_back(z.summary);
    done = 1.0;
  }
  if (sweep) {
    models::RolloutConfig config;
    config.episodes = static_cast<int>(o.integer("sweep-episodes", 1, 100000));
    config.traces = false;
    config.targets = o.reals("sweep-targets");
    best = o.real("sweep-best-score");
    const auto a =
        models::rollout(r.checkpoint, config, progress.part(done / parts, (done + 1.0) / parts));
    mine->assign(a.summary.begin(), a.summary.end());
    if (!compared.empty()) {
      const auto b = models::rollout(compared, config, progress.part((done + 1.0) / parts, 1.0));
      theirs->assign(b.summary.begin(), b.summary.end());
    }
  }
  const QString title = label(r.checkpoint);
  const QString compared_title = compared.empty() ? QString() : label(compared);
  return [=]() -> std::unique_ptr<viz::FigureSource> {
    auto view = std::make_unique<viz::ReturnAnalysisView>();
    if (ablation) view->setAblation(title, *zeroings);
    if (sweep) {
      view->setSweep(title, *mine, best);
      if (!theirs->empty()) view->addSweep(compared_title, *theirs);
    }
    return view;
  };
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Markov lab

void put_lab(FigureRecipe& r, const std::string& prefix, const models::MarkovLabOptions& l) {
  auto& o = r.options;
  o[prefix + "states"] = std::to_string(l.chain.states);
  o[prefix + "order"] = std::to_string(l.chain.order);
  o[prefix + "p"] = exact_number(l.chain.p);
  o[prefix + "q"] = exact_number(l.chain.q);
  o[prefix + "mixer"] = models::to_string(l.mixer);
  o[prefix + "window"] = std::to_string(l.window);
  o[prefix + "steps"] = std::to_string(l.steps);
  o[prefix + "batch"] = std::to_string(l.batch);
  o[prefix + "length"] = std::to_string(l.length);
  o[prefix + "embedding"] = std::to_string(l.embedding);
  o[prefix + "ffn"] = std::to_string(l.ffn);
  o[prefix + "learning-rate"] = exact_number(l.learning_rate);
  o[prefix + "seed"] = std::to_string(l.seed);
  o[prefix + "eval-every"] = std::to_string(l.eval_every);
}

models::MarkovLabOptions lab_of(const Options& o, const std::string& prefix) {
  models::MarkovLabOptions l;
  try {
    // Read in this order, so that a refusal names the first key missing.
    const double p = o.real(prefix + "p"), q = o.real(prefix + "q");
    const auto order = static_cast<int>(o.integer(prefix + "order", 1, 4));
    const auto states = static_cast<int>(o.integer(prefix + "states", 2, 8));
    l.chain = analysis::MarkovChain::make(p, q, order, states);
    l.mixer = models::lab_mixer_from_string(o.text(prefix + "mixer"));
    l.window = static_cast<int>(o.integer(prefix + "window", 1, 256));
    l.steps = static_cast<int>(o.integer(prefix + "steps", 1, 100000));
    l.batch = static_cast<int>(o.integer(prefix + "batch", 1, 1024));
    l.length = static_cast<int>(o.integer(prefix + "length", 1, 256));
    l.embedding = static_cast<int>(o.integer(prefix + "embedding", 2, 128));
    l.ffn = static_cast<int>(o.integer(prefix + "ffn", 1, 512));
    l.learning_rate = o.real(prefix + "learning-rate");
    l.seed = static_cast<std::uint64_t>(
        o.integer(prefix + "seed", 0, std::numeric_limits<long long>::max()));
    l.eval_every = static_cast<int>(o.integer(prefix + "eval-every", 1, 100000));
    l.check();
  } catch (const FigureRecipeError&) {
    throw;
  } catch (const Error& e) {
    o.fail(prefix + "p", std::string("the lab's run cannot be made: ") + e.what());
  }
  return l;
}

ViewBuilder compute_markov_lab(const FigureRecipe& r, const std::string& where,
                               const Progress& progress) {
  if (!r.checkpoint.empty())
    throw FigureRecipeError(where + ": 'checkpoint': the Markov lab trains its own model");
  const Options o(r, where);
  const auto run = lab_of(o, "");
  std::optional<models::MarkovLabOptions> previous;
  int previous_points = 0;
  auto before = std::make_shared<models::MarkovLabResult>();
  if (o.has("previous-mixer")) {
    previous = lab_of(o, "previous-");
    previous_points = static_cast<int>(o.integer("previous-points", 1, 100000));
    *before = models::run_markov_lab(*previous, progress.part(0.0, 0.5));
    if (previous_points > static_cast<int>(before->curve.size()))
      o.fail("previous-points", "the previous run drew " + std::to_string(before->curve.size()) +
                                    " points, not " + std::to_string(previous_points));
  }
  auto result = std::make_shared<models::MarkovLabResult>(
      models::run_markov_lab(run, progress.part(previous ? 0.5 : 0.0, 1.0)));
  return [=]() -> std::unique_ptr<viz::FigureSource> {
    // As the lab's job feeds it (markov_lab_job.cpp): a run begun, its points, its result.
    auto view = std::make_unique<viz::MarkovLabView>();
    if (previous) {
      view->setOptions(*previous);
      view->beginRun();
      view->addPoints({before->curve.begin(), before->curve.begin() + previous_points});
      if (previous_points == static_cast<int>(before->curve.size())) view->showResult(*before);
    }
    view->setOptions(run);
    view->beginRun();
    view->addPoints(result->curve);
    view->showResult(*result);
    return view;
  };
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Token t-SNE

using TokenKind = models::TokenSource::Kind;
using ColourBy = viz::TsneView::ColourBy;
const EnumNames<TokenKind> kSources{{TokenKind::Windows, "windows"},
                                    {TokenKind::Episodes, "episodes"},
                                    {TokenKind::Rollouts, "rollouts"}};
const EnumNames<ColourBy> kColours{{ColourBy::Modality, "modality"},
                                   {ColourBy::Timestep, "timestep"},
                                   {ColourBy::ReturnToGo, "return-to-go"},
                                   {ColourBy::GoalDistance, "goal-distance"}};

ViewBuilder compute_tsne(const FigureRecipe& r, const std::string& where,
                         const Progress& progress) {
  need_checkpoint(r, where);
  const Options o(r, where);
  models::TokenSource source;
  source.kind = named(kSources, o, "tokens-from");
  source.count = static_cast<int>(o.integer("count", 1, 100000000));
  source.max_tokens = static_cast<int>(o.integer("max-tokens", 0, 1000000000));
  source.target = o.real("target-return");
  source.threads = static_cast<int>(o.integer("rollout-threads", 1, 1024));
  if (r.seeds.size() != 1)
    throw FigureRecipeError(where + ": 'seeds': the tokens have one seed, the recipe names " +
                            std::to_string(r.seeds.size()));
  source.seed = static_cast<std::uint64_t>(r.seeds.front());
  analysis::TsneConfig config;
  config.perplexity = o.real("perplexity");
  config.iterations = static_cast<int>(o.integer("iterations", 1, 100000000));
  config.snapshot_every = static_cast<int>(o.integer("snapshot-every", 1, 100000000));
  config.threads = static_cast<int>(o.integer("threads", 1, 1024));
  const auto colour = named(kColours, o, "colour-by");
  const int snapshot = static_cast<int>(o.integer("snapshot", 0, 100000000));
  // As the window's job runs it (tsne_job.cpp): the tokens, then the layouts as they come.
  const auto info = models::read_checkpoint_info(r.checkpoint);
  auto tokens = std::make_shared<models::TokenCloud>(
      models::gather_tokens(r.checkpoint, source, {}, progress.part(0.0, 0.2)).cloud);
  struct Layout {
    int iteration;
    std::vector<double> xy;
  };
  auto layouts = std::make_shared<std::vector<Layout>>();
  config.on_snapshot = [&](int iteration, const std::vector<double>& y) {
    layouts->push_back({iteration, y});
  };
  config.keep_snapshots = false;
  const auto result = analysis::tsne(tokens->points, tokens->count(), tokens->dims, config,
                                     progress.part(0.2, 1.0));
  tokens->points.clear();  // the view keeps only what colours them
  tokens->points.shrink_to_fit();
  const QString title = model_title(r.checkpoint, info);
  const double perplexity = config.perplexity, kl = result.kl, seconds = result.seconds;
  const int iterations = config.iterations;
  return [=]() -> std::unique_ptr<viz::FigureSource> {
    auto view = std::make_unique<viz::TsneView>();
    view->setParameters(perplexity, iterations);
    view->setRunning(true);
    view->setTokens(title, *tokens);
    for (const auto& l : *layouts) view->showLayout(l.iteration, l.xy);
    view->finish(kl, seconds);
    view->setColourBy(colour);
    view->showSnapshot(snapshot);
    return view;
  };
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Training curves

// A figure of its own data: the run's curves read from its log (RunCurvesFigure reads through
// functions, for a run that grows; these are fixed).
class ReadCurves : public viz::RunCurvesFigure {
 public:
  ReadCurves(QString name, analysis::RunMetrics metrics)
      : RunCurvesFigure([this] { return name_; }, [this] { return &metrics_; }),
        name_(std::move(name)),
        metrics_(std::move(metrics)) {}

 private:
  QString name_;
  analysis::RunMetrics metrics_;
};

ViewBuilder compute_training_curves(const FigureRecipe& r, const std::string& where,
                                    const Progress&) {
  const Options o(r, where);
  const std::string folder = o.text("run");
  auto metrics = std::make_shared<analysis::RunMetrics>(analysis::read_run_metrics(folder));
  const auto log = std::find_if(r.inputs.begin(), r.inputs.end(),
                                [](const RecipeInput& i) { return i.option == "run"; });
  if (log == r.inputs.end() || log->path != metrics->source)
    throw FigureRecipeError(where + ": 'inputs': the run's log " + metrics->source +
                            " is not among the recipe's inputs");
  const QString name = QString::fromStdString(o.text("name"));
  return [=]() -> std::unique_ptr<viz::FigureSource> {
    return std::make_unique<ReadCurves>(name, *metrics);
  };
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Training runs compared

class ReadComparison : public viz::FigureSource {
 public:
  ReadComparison(std::vector<analysis::CurveGroup> groups, QString y_label, double smoothing,
                 analysis::Band band)
      : groups_(std::move(groups)),
        y_label_(std::move(y_label)),
        smoothing_(smoothing),
        band_(band) {}
  [[nodiscard]] QString figureName() const override { return QStringLiteral("run_comparison"); }
  [[nodiscard]] bool hasFigure() const override { return !groups_.empty(); }
  [[nodiscard]] viz::FigureText figureText() const override {
    return {{}, QObject::tr("step"), y_label_};
  }
  std::vector<std::string> exportFigure(const std::string& base,
                                        const viz::FigureStyle& style) const override {
    return viz::save_run_comparison(base, groups_, y_label_, smoothing_, band_,
                                    viz::with_defaults(style, figureText()));
  }

 private:
  std::vector<analysis::CurveGroup> groups_;
  QString y_label_;
  double smoothing_;
  analysis::Band band_;
};

const EnumNames<analysis::Band> kBands{{analysis::Band::MinMax, "min-max"},
                                       {analysis::Band::MeanStd, "mean-std"}};

ViewBuilder compute_run_comparison(const FigureRecipe& r, const std::string& where,
                                   const Progress&) {
  const Options o(r, where);
  const std::string metric = o.text("metric");
  const double smoothing = o.real("smoothing");
  const auto band = named(kBands, o, "band");
  const int runs = static_cast<int>(o.integer("runs", 1, 100000));
  // As the tab groups them (training_panel_comparison.cpp): the checked runs with the metric.
  std::vector<analysis::RunMetrics> metrics;
  std::vector<std::string> groups;
  metrics.reserve(static_cast<std::size_t>(runs));
  for (int i = 1; i <= runs; ++i) {
    const std::string key = "run-" + std::to_string(i);
    metrics.push_back(analysis::read_run_metrics(o.text(key)));
    if (std::none_of(r.inputs.begin(), r.inputs.end(), [&](const RecipeInput& in) {
          return in.option == key && in.path == metrics.back().source;
        }))
      throw FigureRecipeError(where + ": 'inputs': the log " + metrics.back().source + " of " +
                              key + " is not among the recipe's inputs");
    groups.push_back(o.text("group-" + std::to_string(i)));
  }
  std::vector<std::pair<std::string, const analysis::Curve*>> curves;
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    const auto it = metrics[i].columns.find(metric);
    if (it != metrics[i].columns.end() && !it->second.x.empty())
      curves.emplace_back(groups[i], &it->second);
  }
  auto grouped = analysis::group_curves(curves, smoothing, band);
  const QString label = QString::fromStdString(o.text("metric-label"));
  return [=]() -> std::unique_ptr<viz::FigureSource> {
    return std::make_unique<ReadComparison>(grouped, label, smoothing, band);
  };
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The Sweep tab's scores

const EnumNames<viz::SweepMeasure> kMeasures{{viz::SweepMeasure::Final, "final"},
                                             {viz::SweepMeasure::Best, "best"}};

ViewBuilder compute_sweep_scores(const FigureRecipe& r, const std::string& where,
                                 const Progress& progress) {
  const Options o(r, where);
  const auto measure = named(kMeasures, o, "measure");
  const QString title = QString::fromStdString(o.text("title"));
  progress.update(0.0, "reading the sweep");
  // As the tab reads it (sweep_panel.cpp).
  const auto s = sweep::read_sweep(o.text("sweep"));
  auto groups = std::make_shared<std::vector<sweep::GroupResult>>(sweep::collect_groups(s));
  return [=]() -> std::unique_ptr<viz::FigureSource> {
    auto view = std::make_unique<viz::SweepResultsView>();
    view->setGroups(*groups, title);
    view->setMeasure(measure);
    return view;
  };
}

// ---------------------------------------------------------------------------------------------
// [SECTION] What a viewer's recipe records beyond its options

using nlohmann::ordered_json;

// A step or a count of frames, as the options "first" and "frames" are read.
constexpr int kMaxStep = 100'000'000;
constexpr NumberRange kTargetRange{-models::kMaxTargetReturn, models::kMaxTargetReturn};

// What the timeline's and a clip's recipes record under "view": the run's changes and forks, and
// a clip's targets, camera and look. Recipes written before "view" held each as JSON text in the
// option of its key, read with the same tables (read_view).
struct ViewRecord {
  std::vector<models::StepConditions> changes;
  std::vector<TimelineShown::Fork> forks;  // each fork's checkpoint is an input, not written here
  std::vector<models::TargetChoice> targets;
  render::CameraView camera;
  ClipLook look;  // its camera is `camera`, its divergence the run's
};

[[noreturn]] void refuse(const std::string& message) {
  JsonFields<ViewRecord>::refuse(message);
}

const JsonFields<models::StepConditions>& change_fields() {
  static const auto fields = [] {
    using C = models::StepConditions;
    JsonFields<C> t;
    t.field("step", &C::step, {0, kMaxStep})
        .required()
        .field("target", &C::target, kTargetRange)
        .required()
        .named("zeroing", &C::zeroing, models::modality_zeroing_names())
        .field("interventions", &C::interventions)
        .text({.one_line = true});
    return t;
  }();
  return fields;
}

const JsonFields<TimelineShown::Fork>& fork_fields() {
  static const auto fields = [] {
    using F = TimelineShown::Fork;
    JsonFields<F> t;
    t.field("step", &F::step, {0, kMaxStep})
        .required()
        .field("change", &F::change)
        .required()
        .checked([](const F& f, const std::string& where) {
          try {
            (void)models::parse_branch_change(f.change);
          } catch (const Error& e) {
            refuse(where + ": " + e.what());
          }
        })
        // A clip's forks are played for as long as it records: their frames are unused (0).
        .field("frames", &F::frames, {0, kMaxStep})
        .required();
    return t;
  }();
  return fields;
}

const JsonFields<models::TargetChoice>& target_fields() {
  static const auto fields = [] {
    using T = models::TargetChoice;
    JsonFields<T> t;
    t.field("value", &T::value, kTargetRange).required().field("label", &T::label);
    return t;
  }();
  return fields;
}

const JsonFields<render::CameraView>& camera_fields() {
  static const auto fields = [] {
    using C = render::CameraView;
    JsonFields<C> t;
    t.field("track", &C::track_body, {-1})
        .field("distance", &C::distance, {0, 1e6, /*above=*/true})
        .field("azimuth", &C::azimuth)
        .field("elevation", &C::elevation)
        .computed(
            "lookat",
            [](const C& c) {
              return ordered_json::array({c.lookat_x, c.lookat_y, c.lookat_z});
            },
            [](C& c, const ordered_json& v, const std::string& where) {
              if (!v.is_array()) refuse(where + " is not a list");
              if (v.size() != 3)
                refuse(where + " has " + std::to_string(v.size()) + " items, not 3 (x, y, z)");
              double* xyz[] = {&c.lookat_x, &c.lookat_y, &c.lookat_z};
              for (std::size_t i = 0; i < 3; ++i) {
                if (!v[i].is_number() || !std::isfinite(v[i].get<double>()))
                  refuse(where + "[" + std::to_string(i) + "] is not a finite number");
                *xyz[i] = v[i].get<double>();
              }
            });
    return t;
  }();
  return fields;
}

// The panel's controls, in the ranges the panel's widgets take.
const JsonFields<ClipLook>& look_fields() {
  static const auto fields = [] {
    using L = ClipLook;
    JsonFields<L> t;
    t.field("effects", &L::effects)
        .field("tab", &L::tab, {0, 2})
        .field("target", &L::target_field, kTargetRange)
        .named("zeroing", &L::zeroing, models::modality_zeroing_names())
        .field("seed", &L::seed_field, {0, 1'000'000})
        .field("attention-mode", &L::attention_mode, {0, 2})
        .field("attention-layer", &L::attention_layer, {0, 1000})
        .field("attention-head", &L::attention_head, {-1, 1000})
        .field("fork-target", &L::fork_target, kTargetRange)
        .field("click", &L::click_mode, {0, 1})
        .field("patch-target", &L::patch_target, kTargetRange)
        .field("font", &L::font)
        .text({.one_line = true});
    return t;
  }();
  return fields;
}

// A run's record (the timeline's) or a clip's, which adds how the panel looked.
JsonFields<ViewRecord> make_view_fields(bool clip) {
  using V = ViewRecord;
  JsonFields<V> t;
  t.objects("changes", &V::changes, change_fields())
      .required()
      .checked([](const V& v, const std::string& where) {
        if (v.changes.empty() || v.changes.front().step != 0)
          refuse(where + ": the conditioning of the first step is missing");
      })
      .objects("forks", &V::forks, fork_fields());
  if (clip)
    t.objects("targets", &V::targets, target_fields())
        .object("camera", &V::camera, camera_fields())
        .required()
        .object("look", &V::look, look_fields())
        .required();
  t.errors_as<FigureRecipeError>();
  return t;
}

const JsonFields<ViewRecord>& view_fields(bool clip) {
  static const auto run = make_view_fields(false), clip_fields = make_view_fields(true);
  return clip ? clip_fields : run;
}

// The record of `r` (a clip's when it is a clip's recipe) under "view", or in a recipe written
// before "view", each part from the option of its key. Throws FigureRecipeError naming `where`
// and the path of the value at fault ("<where>: view: camera: lookat has 2 items, not 3 ...").
ViewRecord read_view(const FigureRecipe& r, const Options& o, const std::string& where) {
  const auto& fields = view_fields(r.analysis == kClipView);
  if (!r.view.empty()) {
    ordered_json j;
    try {
      j = ordered_json::parse(r.view);
    } catch (const nlohmann::json::exception& e) {
      throw FigureRecipeError(where + ": view: not JSON (" + e.what() + ")");
    }
    return fields.read(j, where + ": view");
  }
  // Every part was written, each a JSON text: one missing is named as the option it was.
  ordered_json j = ordered_json::object();
  for (const auto& key : fields.keys()) {
    try {
      j[key] = ordered_json::parse(o.text(key));
    } catch (const nlohmann::json::exception& e) {
      o.fail(key, std::string("not JSON: ") + e.what());
    }
  }
  return fields.read(j, where + ": options");
}

// `record` as the recipe's "view": its changes and forks, and a clip's parts when `clip`.
void put_view(FigureRecipe& r, const ViewRecord& record, bool clip) {
  r.view = view_fields(clip).write(record).dump();
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The Viewer tab's timeline

// The steering directions a run's changes and forks read (steer:L=ALPHA*FILE), each once, in the
// order they first appear: the recipe's inputs "steer-1", "steer-2", ... hash them.
std::vector<std::string> steering_files(const std::vector<models::StepConditions>& changes,
                                        const std::vector<TimelineShown::Fork>& forks) {
  std::vector<std::string> out;
  const auto add = [&](const std::vector<std::string>& specs) {
    for (const auto& spec : specs) {
      models::Intervention iv;
      try {
        iv = models::parse_intervention(spec);
      } catch (const Error&) {
        continue;  // refused where the run is played, naming the spec
      }
      if (iv.site == models::InterventionSite::Steer &&
          std::find(out.begin(), out.end(), iv.direction) == out.end())
        out.push_back(iv.direction);
    }
  };
  for (const auto& c : changes) add(c.interventions);
  for (const auto& f : forks) {
    try {
      add(models::parse_branch_change(f.change).interventions);
    } catch (const Error&) {
      // refused where the fork is played
    }
  }
  return out;
}

// `text` with every "*<from>" (a steer spec's file) read as "*<to>".
std::string with_direction_at(std::string text, const std::string& from, const std::string& to) {
  const std::string old_file = "*" + from, new_file = "*" + to;
  for (std::size_t at = text.find(old_file); at != std::string::npos;
       at = text.find(old_file, at + new_file.size()))
    text.replace(at, old_file.size(), new_file);
  return text;
}

// A policy's run in the viewer (the timeline's and a clip's): the checkpoint, seed, conditioning
// from each step it changed and the forks, written into the recipe (the changes and forks into
// the record returned, which the caller writes as "view") and read back.
ViewRecord put_run(FigureRecipe& r, const TimelineShown& shown) {
  r.seeds = {static_cast<std::int64_t>(shown.seed)};
  ViewRecord record;
  record.changes = shown.changes;
  record.forks = shown.forks;
  // The first conditioning in the recipe's own fields too, where a reader looks for it.
  if (!shown.changes.empty()) {
    const auto& first = shown.changes.front();
    r.target = first.target;
    if (first.zeroing != models::ModalityZeroing::None)
      r.zeroing = models::to_string(first.zeroing);
    r.interventions = first.interventions;
  }
  for (std::size_t k = 0; k < shown.forks.size(); ++k) {
    const auto& f = shown.forks[k];
    // Another checkpoint taking a fork over is read too: hashed as an input.
    const std::string other =
        f.checkpoint.empty() ? models::parse_branch_change(f.change).checkpoint : f.checkpoint;
    if (!other.empty())
      r.inputs.push_back(
          {"fork-" + std::to_string(k + 1), absolute_path(other), file_content_hash(other)});
  }
  // Each steering direction read is hashed as an input, as a fork's checkpoint is.
  const auto directions = steering_files(shown.changes, shown.forks);
  for (std::size_t k = 0; k < directions.size(); ++k)
    r.inputs.push_back({"steer-" + std::to_string(k + 1), absolute_path(directions[k]),
                        file_content_hash(directions[k])});
  r.options["divergence"] = std::to_string(shown.divergence);
  if (shown.divergence >= 0) r.options["divergence-label"] = shown.divergence_label;
  r.bookmarks = shown.bookmarks;
  return record;
}

// The run of `r`; `record` receives what the recipe records beyond its options.
TimelineShown read_run(const FigureRecipe& r, const Options& o, const std::string& where,
                       ViewRecord& record) {
  need_checkpoint(r, where);
  if (r.seeds.size() != 1)
    throw FigureRecipeError(where + ": 'seeds': an episode has one seed, the recipe names " +
                            std::to_string(r.seeds.size()));
  TimelineShown run;
  run.checkpoint = r.checkpoint;
  run.seed = static_cast<std::uint64_t>(r.seeds.front());
  run.divergence = static_cast<int>(o.integer("divergence", -1, 100000));
  if (o.has("divergence-label")) run.divergence_label = o.text("divergence-label");
  run.bookmarks = r.bookmarks;
  record = read_view(r, o, where);
  auto& changes = run.changes = record.changes;
  auto& forks = run.forks = record.forks;
  // Another checkpoint's fork plays the file the recipe checked, wherever it was found; a fork
  // whose checkpoint the recipe does not list with its hash plays nothing, since whatever file
  // is at that path now may not be the one recorded.
  for (std::size_t k = 0; k < forks.size(); ++k) {
    const std::string option = "fork-" + std::to_string(k + 1);
    for (const auto& in : r.inputs)
      if (in.option == option) forks[k].checkpoint = in.path;
    const std::string named = models::parse_branch_change(forks[k].change).checkpoint;
    if (!named.empty() && forks[k].checkpoint.empty())
      throw FigureRecipeError(
          where + ": 'inputs': fork " + std::to_string(k + 1) + " plays the checkpoint " + named +
          ", which the recipe does not list with its hash (an input \"fork-" +
          std::to_string(k + 1) + "\"); it cannot tell that file from the one recorded");
  }
  // Each steering direction the run reads is the file the recipe hashed ("steer-<k>"), wherever
  // it was found; one the recipe does not list is not read.
  const auto directions = steering_files(changes, forks);
  for (std::size_t k = 0; k < directions.size(); ++k) {
    const std::string option = "steer-" + std::to_string(k + 1);
    const auto in = std::find_if(r.inputs.begin(), r.inputs.end(),
                                 [&](const auto& i) { return i.option == option; });
    if (in == r.inputs.end())
      throw FigureRecipeError(where + ": 'inputs': the run steers with " + directions[k] +
                              ", which the recipe does not list with its hash (an input \"" +
                              option + "\"); it cannot tell that file from the one recorded");
    if (in->path == directions[k]) continue;
    for (auto& c : changes)
      for (auto& spec : c.interventions) spec = with_direction_at(spec, directions[k], in->path);
    for (auto& f : forks) f.change = with_direction_at(f.change, directions[k], in->path);
  }
  return run;
}

ViewBuilder compute_timeline(const FigureRecipe& r, const std::string& where,
                             const Progress& progress) {
  const Options o(r, where);
  const TimelineShown run = timeline_shown(r, where);
  const int frames = run.frames;
  const int divergence = run.divergence;
  const auto& changes = run.changes;
  const auto& forks = run.forks;
  // The main run as the viewer played it, re-conditioned where its user changed it.
  models::EpisodePlayer main(r.checkpoint);
  models::replay_conditions(main, static_cast<std::uint64_t>(r.seeds.front()), changes, frames,
                            progress.part(0.0, forks.empty() ? 1.0 : 0.5));
  auto main_frames = std::make_shared<std::vector<models::FramePtr>>(main.frames());
  if (static_cast<int>(main_frames->size()) < frames)
    o.fail("frames", "the episode ends after " + std::to_string(main_frames->size()) +
                         " frames, the timeline drew " + std::to_string(frames));
  main_frames->resize(static_cast<std::size_t>(frames));
  // Each fork as LivePlayer made it, played to the frames drawn.
  auto fork_frames = std::make_shared<std::vector<std::vector<models::FramePtr>>>();
  for (std::size_t k = 0; k < forks.size(); ++k) {
    progress.update(0.5 + 0.5 * static_cast<double>(k) / static_cast<double>(forks.size()),
                    "playing the forks");
    auto change = models::parse_branch_change(forks[k].change);
    if (!forks[k].checkpoint.empty()) change.checkpoint = forks[k].checkpoint;
    std::shared_ptr<models::EpisodePlayer> other;
    if (!change.checkpoint.empty())
      other = std::make_shared<models::EpisodePlayer>(change.checkpoint);
    auto branch = models::make_fork(main, forks[k].step, change, std::move(other));
    while (static_cast<int>(branch->frames().size()) < forks[k].frames && branch->step()) {
      progress.check();
    }
    auto f = branch->frames();
    if (static_cast<int>(f.size()) > forks[k].frames)
      f.resize(static_cast<std::size_t>(forks[k].frames));
    fork_frames->push_back(std::move(f));
  }
  const QString label = QString::fromStdString(run.divergence_label);
  return [=]() -> std::unique_ptr<viz::FigureSource> {
    // As the Viewer tab feeds it (viewer_panel.cpp's showFrame and forkCurves).
    auto timeline = std::make_unique<viz::EpisodeTimeline>();
    for (const auto& f : *main_frames)
      timeline->addStep(f->step, f->return_to_go, f->return_so_far, f->entropy);
    if (!fork_frames->empty()) {
      std::vector<viz::EpisodeTimeline::Fork> curves;
      for (std::size_t b = 0; b < fork_frames->size(); ++b) {
        const auto& frames_b = (*fork_frames)[b];
        viz::EpisodeTimeline::Fork f;
        f.name = QObject::tr("fork %1").arg(b + 1);
        f.return_so_far.resize(frames_b.size());
        for (std::size_t t = 0; t < frames_b.size(); ++t)
          f.return_so_far[t] = frames_b[t]->return_so_far;
        f.divergence = divergence < 0 ? models::action_difference(frames_b, *main_frames)
                                      : models::joint_trace(frames_b, divergence);
        curves.push_back(std::move(f));
      }
      timeline->setForks(std::move(curves));
      if (divergence >= 0)
        timeline->setDivergence(label, models::joint_trace(*main_frames, divergence));
    }
    return timeline;
  };
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] The recipes the window records

QString model_title(const std::string& checkpoint, const models::CheckpointInfo& info) {
  return label(checkpoint) + " (" + QString::fromStdString(info.variant.variant) + ")";
}

bool is_view_recipe(const FigureRecipe& recipe) {
  return recipe.analysis.rfind("studio-", 0) == 0;
}

FigureRecipe attention_recipe(const std::string& checkpoint, const std::string& compared,
                              int windows, const viz::AttentionMapView& view) {
  FigureRecipe r = checkpoint_recipe(kAttentionView, checkpoint);
  if (!compared.empty() && view.hasComparison()) {
    r.compare = absolute_path(compared);
    r.compare_hash = file_content_hash(r.compare);
  }
  r.options["windows"] = std::to_string(windows);
  r.options["mode"] = kModes.name(view.mode());
  r.options["layer"] = std::to_string(view.layer());
  r.options["head"] = std::to_string(view.head());
  r.options["comparison"] = kComparisons.name(view.comparisonMode());
  return r;
}

FigureRecipe entropy_reward_recipe(const std::string& checkpoint,
                                   const models::RolloutConfig& config,
                                   const viz::EntropyRewardView& view) {
  FigureRecipe r = checkpoint_recipe(kEntropyRewardView, checkpoint);
  put_rollout(r, config);
  r.episode = view.shownEpisode();
  return r;
}

FigureRecipe returns_recipe(const std::string& checkpoint, const ReturnsShown& shown) {
  FigureRecipe r = checkpoint_recipe(kReturnsView, checkpoint);
  if (shown.ablation) {
    r.options["ablation-episodes"] = std::to_string(shown.ablation->episodes);
    r.options["ablation-target"] = exact_number(shown.ablation->target);
  }
  if (shown.sweep) {
    r.options["sweep-episodes"] = std::to_string(shown.sweep->episodes);
    r.options["sweep-targets"] = numbers(shown.sweep->targets);
    r.options["sweep-best-score"] = exact_number(shown.sweep->best_score);
    if (!shown.sweep->compared.empty()) {
      r.compare = absolute_path(shown.sweep->compared);
      r.compare_hash = file_content_hash(r.compare);
    }
  }
  return r;
}

FigureRecipe markov_lab_recipe(const models::MarkovLabOptions& run,
                               const std::optional<models::MarkovLabOptions>& previous,
                               int previous_points) {
  FigureRecipe r;
  r.analysis = kMarkovLabView;
  put_lab(r, "", run);
  if (previous) {
    put_lab(r, "previous-", *previous);
    r.options["previous-points"] = std::to_string(previous_points);
  }
  r.studio_version = studio_version();
  return r;
}

FigureRecipe markov_lab_recipe(const viz::MarkovLabView& view) {
  return markov_lab_recipe(view.runOptions(), view.previousOptions(), view.previousPoints());
}

FigureRecipe tsne_recipe(const TsneShown& shown, const viz::TsneView& view) {
  FigureRecipe r = checkpoint_recipe(kTsneView, shown.checkpoint);
  const auto& s = shown.source;
  r.options["tokens-from"] = kSources.name(s.kind);
  r.options["count"] = std::to_string(s.count);
  r.options["max-tokens"] = std::to_string(s.max_tokens);
  r.options["target-return"] = exact_number(s.target);
  r.options["rollout-threads"] = std::to_string(s.threads);
  r.seeds = {static_cast<std::int64_t>(s.seed)};
  r.options["perplexity"] = exact_number(shown.perplexity);
  r.options["iterations"] = std::to_string(shown.iterations);
  r.options["snapshot-every"] = std::to_string(shown.snapshot_every);
  r.options["threads"] = std::to_string(shown.threads);
  r.options["colour-by"] = kColours.name(view.colourBy());
  r.options["snapshot"] = std::to_string(view.shownSnapshot());
  return r;
}

FigureRecipe training_curves_recipe(const std::string& folder, const std::string& name) {
  FigureRecipe r;
  r.analysis = kTrainingCurvesView;
  r.options["run"] = absolute_path(folder);
  r.options["name"] = name;
  const std::string log = training_log(r.options["run"]);
  if (log.empty())
    throw FigureRecipeError(folder + ": the run folder has no log (metrics.jsonl or metrics.csv)");
  r.inputs.push_back({"run", log, file_content_hash(log)});
  r.studio_version = studio_version();
  return r;
}

FigureRecipe run_comparison_recipe(const std::vector<ComparedRun>& runs, const std::string& metric,
                                   const std::string& metric_label, double smoothing,
                                   analysis::Band band) {
  FigureRecipe r;
  r.analysis = kRunComparisonView;
  r.options["metric"] = metric;
  r.options["metric-label"] = metric_label;
  r.options["smoothing"] = exact_number(smoothing);
  r.options["band"] = kBands.name(band);
  r.options["runs"] = std::to_string(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::string n = std::to_string(i + 1), folder = absolute_path(runs[i].folder);
    r.options["run-" + n] = folder;
    r.options["group-" + n] = runs[i].group;
    const std::string log = training_log(folder);
    if (log.empty())
      throw FigureRecipeError(folder +
                              ": the run folder has no log (metrics.jsonl or metrics.csv)");
    r.inputs.push_back({"run-" + n, log, file_content_hash(log)});
  }
  r.studio_version = studio_version();
  return r;
}

FigureRecipe sweep_inputs_recipe(const sweep::Sweep& s) {
  namespace fs = std::filesystem;
  FigureRecipe r;
  r.options["sweep"] = absolute_path(s.dir.string());
  const auto input = [&](const char* option, const fs::path& path) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) return;
    const auto absolute = absolute_path(path.string());
    r.inputs.push_back({option, absolute, file_content_hash(absolute)});
  };
  input("sweep", s.dir / "sweep.json");
  for (const auto& cell : s.cells) {
    input("task", sweep::cell_dir(s, cell) / "task.json");
    input("checkpoint", sweep::cell_dir(s, cell) / "checkpoint.pt");
  }
  r.studio_version = studio_version();
  return r;
}

FigureRecipe sweep_scores_recipe(const sweep::Sweep& s, const std::string& title,
                                 viz::SweepMeasure measure) {
  FigureRecipe r = sweep_inputs_recipe(s);
  r.analysis = kSweepScoresView;
  r.options["title"] = title;
  r.options["measure"] = kMeasures.name(measure);
  return r;
}

FigureRecipe timeline_recipe(const TimelineShown& shown) {
  FigureRecipe r = checkpoint_recipe(kTimelineView, shown.checkpoint);
  r.options["frames"] = std::to_string(shown.frames);
  put_view(r, put_run(r, shown), false);
  r.step = shown.frames - 1;
  return r;
}

TimelineShown timeline_shown(const FigureRecipe& r, const std::string& where) {
  if (r.analysis != kTimelineView)
    throw FigureRecipeError(where + ": 'analysis': " + r.analysis + " is not a viewer timeline's");
  const Options o(r, where);
  ViewRecord record;
  TimelineShown run = read_run(r, o, where, record);
  run.frames = static_cast<int>(o.integer("frames", 1, kMaxStep));
  return run;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Viewer clips

// A recording of the Viewer tab: the run, and how it was recorded and looked.
FigureRecipe clip_recipe(const ClipShown& shown) {
  FigureRecipe r = checkpoint_recipe(kClipView, shown.run.checkpoint);
  ViewRecord record = put_run(r, shown.run);
  r.step = shown.first;
  r.options["title"] = shown.title;
  r.options["first"] = std::to_string(shown.first);
  r.options["frames"] = std::to_string(shown.frames);
  r.options["fps"] = std::to_string(shown.fps);
  r.options["speed"] = exact_number(shown.speed);
  r.options["area"] = shown.scene_only ? "scene" : "panel";
  r.options["width"] = std::to_string(shown.width);
  r.options["height"] = std::to_string(shown.height);
  r.options["panel-width"] = std::to_string(shown.panel_width);
  r.options["panel-height"] = std::to_string(shown.panel_height);
  record.targets = shown.targets;
  record.camera = shown.look.camera;
  record.look = shown.look;
  put_view(r, record, true);
  r.figure.name = "clip";
  r.figure.formats = {"mp4"};
  return r;
}

void check_clip_within_episode(const ClipShown& clip, const std::string& where) {
  const auto info = models::read_checkpoint_info(clip.run.checkpoint);
  const env::Environment environment(info.env_id.empty() ? "hopper" : info.env_id);
  const int horizon = environment.spec().max_episode_steps;
  const auto within = [&](const std::string& key, int step, const std::string& what) {
    if (step > horizon)
      throw FigureRecipeError(where + ": '" + key + "': " + what + " is step " +
                              std::to_string(step) + ", past the end of the episode: " +
                              environment.spec().name + " ends by step " + std::to_string(horizon));
  };
  within("options.first", clip.first, "the first frame");
  within("options.frames",
         models::recorded_step(clip.first, clip.frames - 1, clip.fps, clip.speed, environment.dt()),
         "the last frame");
  for (std::size_t k = 0; k < clip.run.forks.size(); ++k)
    within("forks[" + std::to_string(k) + "]", clip.run.forks[k].step, "a fork");
}

ClipShown clip_shown(const FigureRecipe& r, const std::string& where) {
  if (r.analysis != kClipView)
    throw FigureRecipeError(where + ": 'analysis': " + r.analysis + " is not a viewer clip's");
  const Options o(r, where);
  ClipShown shown;
  ViewRecord record;
  shown.run = read_run(r, o, where, record);
  shown.title = o.text("title");
  shown.first = static_cast<int>(o.integer("first", 0, 100000000));
  shown.frames = static_cast<int>(o.integer("frames", 1, 100000000));
  shown.fps = static_cast<int>(o.integer("fps", 1, 120));
  shown.speed = o.real("speed");
  if (!(shown.speed >= 0.0 && shown.speed <= 1000.0)) o.fail("speed", "not a speed in [0, 1000]");
  const std::string area = o.text("area");
  if (area != "scene" && area != "panel") o.fail("area", "\"" + area + "\" is not scene or panel");
  shown.scene_only = area == "scene";
  shown.width = static_cast<int>(o.integer("width", 2, 16384));
  shown.height = static_cast<int>(o.integer("height", 2, 16384));
  shown.panel_width = static_cast<int>(o.integer("panel-width", 2, 16384));
  shown.panel_height = static_cast<int>(o.integer("panel-height", 2, 16384));
  shown.targets = record.targets;
  shown.look = record.look;
  shown.look.camera = record.camera;
  shown.look.divergence = shown.run.divergence;
  if (r.figure.name != "clip")
    throw FigureRecipeError(where + ": 'figure.name': a viewer clip's is clip, not " +
                            r.figure.name);
  return shown;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Computing any view

ViewBuilder compute_view(const FigureRecipe& recipe, const std::string& where,
                         const Progress& progress) {
  using Compute = ViewBuilder (*)(const FigureRecipe&, const std::string&, const Progress&);
  // Each view's recipe, the figures its export writes (<name> or <name>_<panel>) and what
  // computes what it shows.
  struct View {
    const char* analysis;
    std::vector<std::string> figures;
    Compute compute;
  };
  static const View views[] = {
      {kAttentionView, {"attention"}, compute_attention},
      {kEntropyRewardView, {"entropy_reward"}, compute_entropy_reward},
      {kReturnsView, {"returns"}, compute_returns},
      {kTsneView, {"tsne"}, compute_tsne},
      {kTimelineView, {"episode", "divergence"}, compute_timeline},
      {kTrainingCurvesView, {"training_curves"}, compute_training_curves},
      {kRunComparisonView, {"run_comparison"}, compute_run_comparison},
      {kSweepScoresView, {"scores"}, compute_sweep_scores},
      {kMarkovLabView, {"markov_lab"}, compute_markov_lab},
  };
  std::string known;
  for (const auto& v : views) {
    known += (known.empty() ? "" : ", ") + std::string(v.analysis);
    if (recipe.analysis != v.analysis) continue;
    // A figure the view does not draw is refused before anything is computed.
    const auto& name = recipe.figure.name;
    const bool drawn = std::any_of(v.figures.begin(), v.figures.end(), [&](const std::string& f) {
      return name == f || name.rfind(f + "_", 0) == 0;
    });
    if (!drawn) {
      std::string figures;
      for (const auto& f : v.figures) figures += (figures.empty() ? "" : " or ") + f + "*";
      throw FigureRecipeError(where + ": 'figure.name': the view '" + recipe.analysis + "' draws " +
                              figures + ", not " + name);
    }
    return v.compute(recipe, where, progress);
  }
  throw FigureRecipeError(where + ": 'analysis': this studio has no view '" + recipe.analysis +
                          "' (it has " + known + ")");
}

}  // namespace dstudio::recipes

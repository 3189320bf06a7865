// dstudio analyze attention | entropy | tsne | ablation | rtg-sweep | training: the papers' analyses
// from the command line. Each writes summary.json, CSV files with every number behind its figures,
// and the figures as PDF, SVG and PNG; with --json it also prints the summary on stdout. The
// figures take the studio export dialog's choices: a venue preset (viz::venue_presets()), then
// size, fonts, line width, dpi, formats and titles.

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.h"
#include "dstudio/analysis/analysis_registry.h"
#include "dstudio/analysis/attention_maps.h"
#include "dstudio/analysis/window_maps.h"
#include "dstudio/analysis/curves.h"
#include "dstudio/analysis/entropy.h"
#include "dstudio/analysis/tsne.h"
#include "dstudio/common/error.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/env/environment.h"
#include "dstudio/models/evaluation.h"
#include "dstudio/models/token_cloud.h"
#include "dstudio/models/windows.h"
#include "dstudio/viz/figures.h"
#include "rollouts.h"
#include "terminal_progress.h"

namespace dstudio::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

// The figure options as given; resolve() turns them into a style. Options given explicitly
// override the preset, so the option pointers record what was given.
struct FigureOptions {
  std::string preset, font_family = "sans";
  double width = 3.25, height = 0.0, font = 8.0, line_width = 1.2;
  int dpi = 300;
  std::vector<std::string> formats = {"pdf", "svg", "png"};
  bool no_title = false;
  CLI::Option *width_given = nullptr, *height_given = nullptr, *font_given = nullptr, *line_width_given = nullptr,
              *family_given = nullptr, *dpi_given = nullptr;

  [[nodiscard]] viz::FigureStyle resolve() const;
};

bool given(const CLI::Option* o) { return o && o->count() > 0; }

viz::FigureStyle FigureOptions::resolve() const {
  viz::FigureStyle s;
  if (!preset.empty()) {
    const auto p = viz::venue_preset(preset);
    if (!p) throw UsageError("unknown figure preset: " + preset);
    s = *p;
  }
  if (preset.empty() || given(width_given)) {
    // A preset's height follows a new width, so the venue's proportions stay.
    if (given(width_given) && s.height > 0 && !given(height_given)) s.height *= width / s.width;
    s.width = width;
  }
  if (given(height_given)) s.height = height;
  if (preset.empty() || given(font_given)) {
    // Axis and tick fonts keep the preset's proportions to the main font.
    const double ratio = font / s.font;
    if (s.axis_font > 0) s.axis_font *= ratio;
    if (s.tick_font > 0) s.tick_font *= ratio;
    s.font = font;
  }
  if (preset.empty() || given(line_width_given)) s.line_width = line_width;
  if (preset.empty() || given(family_given)) {
    const QString family = QString::fromStdString(font_family).trimmed();
    if (family.compare(QStringLiteral("sans"), Qt::CaseInsensitive) == 0) s.font_family = QString::fromLatin1(viz::kSansFamily);
    else if (family.compare(QStringLiteral("serif"), Qt::CaseInsensitive) == 0) s.font_family = QString::fromLatin1(viz::kSerifFamily);
    else s.font_family = family;
  }
  if (preset.empty() || given(dpi_given)) s.dpi = dpi;
  s.pdf = std::find(formats.begin(), formats.end(), "pdf") != formats.end();
  s.svg = std::find(formats.begin(), formats.end(), "svg") != formats.end();
  s.png = std::find(formats.begin(), formats.end(), "png") != formats.end();
  s.show_title = !no_title;
  return s;
}

// "icml, icml-page, ...": for the help and the message about an unknown preset.
std::string preset_list(bool with_names) {
  std::string list;
  for (const auto& p : viz::venue_presets()) {
    if (!list.empty()) list += ", ";
    list += p.slug.toStdString();
    if (with_names) {
      list += " (";
      list += p.name.toStdString();
      list += ')';
    }
  }
  return list;
}

void add_figure_options(CLI::App* cmd, FigureOptions& f) {
  std::string preset_help = "Figure size, fonts, line width and dpi of a venue, as in the studio's export dialog: ";
  preset_help += preset_list(false);
  preset_help += " (or the dialog's full name; any case). Options given explicitly override it";
  const CLI::Validator known_preset(
      [](std::string& name) {
        if (viz::venue_preset_index(name) >= 0) return std::string();
        std::string message = "unknown preset '";
        message += name;
        message += "'; known presets: ";
        message += preset_list(true);
        return message;
      },
      "PRESET");
  cmd->add_option("--preset", f.preset, preset_help)->check(known_preset)->group("Figures");
  f.width_given = cmd->add_option("--width", f.width, "Figure width in inches (ICML column 3.25, page 6.75; NeurIPS 5.5); "
                                                      "with --preset, the height keeps the venue's proportions")
                      ->capture_default_str()
                      ->check(CLI::PositiveNumber)
                      ->group("Figures");
  f.height_given = cmd->add_option("--height", f.height, "Figure height in inches; 0: width over the golden ratio (maps and "
                                                         "embeddings a little squarer)")
                       ->capture_default_str()
                       ->check(CLI::NonNegativeNumber)
                       ->group("Figures");
  f.font_given = cmd->add_option("--font", f.font, "Font size in points of titles and legends; axis and tick labels follow in "
                                                   "proportion")
                     ->capture_default_str()
                     ->check(CLI::PositiveNumber)
                     ->group("Figures");
  f.line_width_given = cmd->add_option("--line-width", f.line_width, "Data line width in points (axes and grid thinner, in proportion)")
                           ->capture_default_str()
                           ->check(CLI::PositiveNumber)
                           ->group("Figures");
  f.family_given = cmd->add_option("--font-family", f.font_family, "sans (DejaVu Sans), serif (DejaVu Serif) or an installed family's name")
                       ->capture_default_str()
                       ->group("Figures");
  // The choices of the export dialog: journals ask for 300 or 600 dpi.
  f.dpi_given = cmd->add_option("--dpi", f.dpi, "Resolution of the PNG: 300 or 600")
                    ->capture_default_str()
                    ->check(CLI::IsMember({300, 600}))
                    ->group("Figures");
  cmd->add_option("--formats", f.formats, "Figure files to write, a subset of pdf,svg,png (default all three; CSV and summary.json always)")
      ->delimiter(',')
      ->check(CLI::IsMember({"pdf", "svg", "png"}, CLI::ignore_case))
      ->group("Figures");
  cmd->add_flag("--no-title", f.no_title, "Figures without a title (a caption says it)")->group("Figures");
}

struct Common {
  std::string checkpoint, compare, out, dataset;
  bool json = false;
  int threads = 2;
  std::uint64_t seed = 0;
  FigureOptions figure;
  viz::FigureStyle style;  ///< figure resolved when the command runs
};

void add_common(CLI::App* cmd, Common& c) {
  cmd->add_option("--checkpoint", c.checkpoint, "A Decision Studio checkpoint")->required()->check(CLI::ExistingFile);
  cmd->add_option("--out", c.out, "Folder for summary.json, the CSV files and the figures (PDF, SVG, PNG; see --formats)")->required();
  cmd->add_flag("--json", c.json, "Also print the summary as one JSON object on stdout");
  cmd->add_option("--threads", c.threads, "Cores to use")->capture_default_str()->check(CLI::Range(1, 64));
  cmd->add_option("--seed", c.seed, "Episode e resets with seed + e")->capture_default_str();
  add_figure_options(cmd, c.figure);
}

viz::FigureStyle style_of(const Common& c, const std::string& title = {}) {
  viz::FigureStyle s = c.style;
  s.title = QString::fromStdString(title);
  return s;
}

// A short name for titles and legends: the file's stem, or its folder's name for a run's
// checkpoint.pt.
std::string name_of(const std::string& checkpoint) {
  const fs::path p(checkpoint);
  const auto stem = p.stem().string();
  if (stem.rfind("checkpoint", 0) == 0 && p.has_parent_path()) return fs::absolute(p).parent_path().filename().string();
  return stem;
}

data::Dataset dataset_for(const Common& c, const models::CheckpointInfo& info) {
  return data::load_dataset(c.dataset.empty() ? models::checkpoint_dataset(info).string() : c.dataset);
}

void write_csv(const fs::path& path, const analysis::TokenMatrix& m, const std::vector<std::string>& labels) {
  if (!analysis::write_map_csv(path, m, labels)) throw Error("cannot write " + path.string());
}

// NaN (e.g. the correlation of a constant series) as JSON null.
ordered_json finite_or_null(double v) { return std::isfinite(v) ? ordered_json(v) : ordered_json(nullptr); }

void finish(const Common& c, ordered_json summary, const std::vector<std::string>& files) {
  summary["files"] = files;
  std::ofstream(fs::path(c.out) / "summary.json") << summary.dump(2) << '\n';
  if (c.json) std::cout << summary.dump(2) << std::endl;
  else std::fprintf(stderr, "wrote %zu files to %s\n", files.size() + 1, c.out.c_str());
}

// ---------------------------------------------------------------------------------------------

struct AttentionArgs : Common {
  int windows = 16, layer = 0, head = 0, step = -1;  // layer, head: from 1; 0 all layers, the mean over heads
  std::string source = "dataset";
};

void run_attention(const AttentionArgs& a) {
  std::vector<std::string> files;
  const auto info = models::read_checkpoint_info(a.checkpoint);
  const auto& cfg = info.variant;
  const int K = cfg.context_length, per_step = cfg.tokenizer == models::Tokenizer::Triplet ? 3 : 1;
  std::vector<models::Window> windows;
  std::vector<models::WindowInspection> inspections;
  if (a.source == "rollout") {
    models::RolloutConfig rc;
    rc.episodes = 1;
    rc.seed = a.seed;
    const int step = a.step >= 0 ? a.step : 2 * K;
    rc.max_steps = step + 1;
    const auto r = run_rollout(a.checkpoint, rc, "rollout");
    const auto& e = r.episodes.front();
    windows.push_back(models::window_from_trace(e, std::min(step, e.length - 1), K, cfg.state_dim, cfg.act_dim));
    inspections = models::inspect_windows(a.checkpoint, windows);
  } else {
    auto inspected = models::inspect_on_dataset(a.checkpoint, a.windows, a.dataset);
    windows = std::move(inspected.windows);
    inspections = std::move(inspected.inspections);
  }
  const auto labels = analysis::window_labels(inspections);
  const int layers = static_cast<int>(inspections.front().layers.size());
  if (a.layer > layers) throw UsageError("--layer " + std::to_string(a.layer) + ": the model has layers 1 to " + std::to_string(layers));
  const auto map_of = [&](int layer) {
    std::string note;
    auto m = analysis::select_map(inspections, {analysis::MapKind::Layer, layer, a.head}, &note);
    if (!note.empty()) std::fprintf(stderr, "layer %d: %s\n", layer, note.c_str());
    return m;
  };
  const auto summary_of = [](const std::vector<models::WindowInspection>& ins) {
    return std::pair{analysis::select_map(ins, {analysis::MapKind::MeanOverLayers}), analysis::select_map(ins, {analysis::MapKind::Rollout})};
  };
  const std::string who = name_of(a.checkpoint), head_text = a.head > 0 ? "head " + std::to_string(a.head) : "mean over heads";
  ordered_json layer_json = ordered_json::array();
  viz::FigureContext figures;
  for (int l = 0; l < layers; ++l) {
    if (a.layer > 0 && l + 1 != a.layer) continue;
    const auto m = map_of(l + 1);
    const auto& mixer = inspections.front().layers[static_cast<std::size_t>(l)].mixer;
    const auto base = (fs::path(a.out) / ("attention_layer" + std::to_string(l + 1))).string();
    write_csv(base + ".csv", m, labels);
    files.push_back(base + ".csv");
    for (auto& f : viz::save_heatmap(base, m, labels, false, "weight",
                                     style_of(a, who + "\nlayer " + std::to_string(l + 1) + ": " + mixer + (a.head > 0 ? ", " + head_text : ""))))
      files.push_back(f);
    double entropy = 0.0;
    for (const auto& w : inspections) {
      const auto& lm = w.layers[static_cast<std::size_t>(l)];
      entropy += analysis::mean_head_entropy(lm.values, lm.heads, lm.tokens, w.valid) / static_cast<double>(inspections.size());
    }
    layer_json.push_back({{"layer", l + 1}, {"mixer", mixer}, {"heads", inspections.front().layers[static_cast<std::size_t>(l)].heads},
                          {"derivation", analysis::mixing_derivation(mixer)}, {"mean_entropy", entropy}});
  }
  const auto [mean, rollout] = summary_of(inspections);
  for (const auto& [name, m, title] : {std::tuple{"attention_mean_layers", mean, "mean over layers"},
                                       std::tuple{"attention_rollout", rollout, "attention rollout"}}) {
    const auto base = (fs::path(a.out) / name).string();
    write_csv(base + ".csv", m, labels);
    files.push_back(base + ".csv");
    for (auto& f : viz::save_heatmap(base, m, labels, false, "weight", style_of(a, who + "\n" + title))) files.push_back(f);
  }
  ordered_json summary = {{"analysis", "attention"}, {"checkpoint", a.checkpoint}, {"variant", cfg.variant},
                          {"source", a.source}, {"windows", windows.size()}, {"tokens", labels.size()}, {"layers", layer_json}};
  if (!a.compare.empty()) {
    const auto other = models::read_checkpoint_info(a.compare);
    if (other.variant.context_length != K || (other.variant.tokenizer == models::Tokenizer::Triplet) != (per_step == 3))
      throw Error("the two checkpoints see windows of different sizes (" + std::to_string(cfg.tokens()) + " and " +
                                  std::to_string(other.variant.tokens()) + " tokens); their maps cannot be subtracted");
    const auto theirs = models::inspect_windows(a.compare, windows);
    const auto [other_mean, other_rollout] = summary_of(theirs);
    const auto diff = analysis::difference(mean, other_mean);
    const auto base = (fs::path(a.out) / "attention_difference").string();
    write_csv(base + ".csv", diff, labels);
    files.push_back(base + ".csv");
    for (auto& f : viz::save_heatmap(base, diff, labels, true, "difference",
                                     style_of(a, who + " - " + name_of(a.compare) + "\nmean over layers")))
      files.push_back(f);
    double largest = 0.0;
    for (double v : diff.values) largest = std::max(largest, std::abs(v));
    summary["compare"] = {{"checkpoint", a.compare}, {"variant", other.variant.variant}, {"max_abs_difference", largest}};
  }
  finish(a, summary, files);
}

// ---------------------------------------------------------------------------------------------

struct EntropyArgs : Common {
  int episodes = 5, windows = 16, skip = -1;
  double target = 0.0;
};

void run_entropy(const EntropyArgs& a) {
  std::vector<std::string> files;
  const auto info = models::read_checkpoint_info(a.checkpoint);
  const auto& cfg = info.variant;
  const int K = cfg.context_length;
  models::RolloutConfig rc;
  if (a.target > 0) rc.targets = {a.target};
  else rc.targets = {env::task(info.env_id.empty() ? "hopper" : info.env_id).default_targets.front()};
  rc.episodes = a.episodes;
  rc.seed = a.seed;
  rc.entropy = true;
  rc.threads = a.threads;
  const auto r = run_rollout(a.checkpoint, rc, "rollout with entropy");
  // Only full windows: a younger window has fewer tokens, so less entropy by construction.
  const int skip = a.skip >= 0 ? a.skip : K - 1;
  std::vector<double> entropies, rewards;
  std::ofstream csv(fs::path(a.out) / "entropy_reward.csv");
  csv << "episode,step,entropy,reward\n";
  for (std::size_t e = 0; e < r.episodes.size(); ++e) {
    const auto& ep = r.episodes[e];
    for (int t = 0; t < ep.length; ++t) {
      csv << e << ',' << t << ',' << ep.entropy[static_cast<std::size_t>(t)] << ',' << ep.rewards[static_cast<std::size_t>(t)] << '\n';
      if (t >= skip) {
        entropies.push_back(ep.entropy[static_cast<std::size_t>(t)]);
        rewards.push_back(ep.rewards[static_cast<std::size_t>(t)]);
      }
    }
  }
  csv.close();
  files.push_back((fs::path(a.out) / "entropy_reward.csv").string());
  const auto mean = analysis::mean_std(entropies);
  const double p = analysis::pearson(entropies, rewards), s = analysis::spearman(entropies, rewards);

  // Per layer and head, on dataset windows: entropy, intra-step and inter-step.
  ordered_json heads = ordered_json::array();
  std::ofstream hcsv(fs::path(a.out) / "entropy_heads.csv");
  hcsv << "layer,head,mixer,entropy,intra_step,inter_step\n";
  for (const auto& h : analysis::head_entropies(models::inspect_on_dataset(a.checkpoint, a.windows, a.dataset).inspections)) {
    hcsv << h.layer << ',' << h.head << ',' << h.mixer << ',' << h.entropy << ',';
    if (std::isfinite(h.intra_step)) hcsv << h.intra_step;  // empty: one token a step
    hcsv << ',' << h.inter_step << '\n';
    heads.push_back({{"layer", h.layer}, {"head", h.head}, {"mixer", h.mixer}, {"entropy", h.entropy},
                     {"intra_step", finite_or_null(h.intra_step)}, {"inter_step", h.inter_step}});
  }
  hcsv.close();
  files.push_back((fs::path(a.out) / "entropy_heads.csv").string());

  viz::FigureContext figures;
  const auto& ep = r.episodes.front();
  viz::Series ent{"entropy (layer 1)", {}, {}, {}, {}, false}, rew{"reward", {}, {}, {}, {}, true};
  for (int t = 0; t < ep.length; ++t) {
    ent.x.push_back(t);
    ent.y.push_back(ep.entropy[static_cast<std::size_t>(t)]);
    rew.x.push_back(t);
    rew.y.push_back(ep.rewards[static_cast<std::size_t>(t)]);
  }
  char title[200];
  std::snprintf(title, sizeof title, "%s, episode 1\nPearson %.2f, Spearman %.2f over %zu steps", name_of(a.checkpoint).c_str(), p, s,
                entropies.size());
  auto style = style_of(a, title);
  for (auto& f : viz::save_lines((fs::path(a.out) / "entropy_reward").string(), {ent, rew}, "step", "attention entropy", style, "reward"))
    files.push_back(f);
  ordered_json episodes = ordered_json::array();
  for (const auto& e : r.episodes) episodes.push_back({{"return", e.episode_return}, {"score", e.score}, {"length", e.length}});
  finish(a,
         {{"analysis", "entropy"}, {"checkpoint", a.checkpoint}, {"variant", cfg.variant}, {"target", rc.targets.front()},
          {"skipped_steps", skip}, {"mean_entropy", mean.mean}, {"std_entropy", mean.std}, {"entropy_reward_pearson", finite_or_null(p)},
          {"entropy_reward_spearman", finite_or_null(s)}, {"pairs", entropies.size()}, {"episodes", episodes}, {"heads", heads}},
         files);
}

// ---------------------------------------------------------------------------------------------

struct TsneArgs : Common {
  int windows = 40, iterations = 1000, snapshot_every = 50;
  double perplexity = 30.0;
};

void run_tsne(const TsneArgs& a) {
  std::vector<std::string> files;
  const auto inspected = models::inspect_on_dataset(a.checkpoint, a.windows, a.dataset);
  const auto& cfg = inspected.info.variant;
  const auto& windows = inspected.windows;
  const auto& ins = inspected.inspections;
  // The same token cloud the studio's t-SNE view shows.
  const auto cloud = models::token_cloud(windows, ins);
  const int H = cloud.dims;
  const auto& points = cloud.points;
  const int n = cloud.count();
  struct Meta {
    std::string modality;
    int window, step;
    double rtg;
  };
  std::vector<Meta> meta;
  for (int i = 0; i < n; ++i) {
    const auto at = static_cast<std::size_t>(i);
    meta.push_back({cloud.modality[at], cloud.window[at], cloud.timestep[at], cloud.return_to_go[at]});
  }
  analysis::TsneConfig tc;
  tc.perplexity = a.perplexity;
  tc.iterations = a.iterations;
  tc.snapshot_every = a.snapshot_every;
  tc.threads = a.threads;
  TerminalProgress bar("t-SNE of " + std::to_string(n) + " tokens");
  const auto r = analysis::tsne(points, n, H, tc, bar.progress());
  std::ofstream csv(fs::path(a.out) / "tsne.csv");
  csv << "x,y,modality,window,timestep,return_to_go\n";
  for (int i = 0; i < n; ++i) {
    const auto& m = meta[static_cast<std::size_t>(i)];
    csv << r.embedding[static_cast<std::size_t>(i) * 2] << ',' << r.embedding[static_cast<std::size_t>(i) * 2 + 1] << ',' << m.modality
        << ',' << m.window << ',' << m.step << ',' << m.rtg << '\n';
  }
  csv.close();
  files.push_back((fs::path(a.out) / "tsne.csv").string());
  std::ofstream snaps(fs::path(a.out) / "tsne_snapshots.csv");
  snaps << "iteration,index,x,y\n";
  for (std::size_t k = 0; k < r.snapshots.size(); ++k)
    for (int i = 0; i < n; ++i)
      snaps << r.snapshot_iterations[k] << ',' << i << ',' << r.snapshots[k][static_cast<std::size_t>(i) * 2] << ','
            << r.snapshots[k][static_cast<std::size_t>(i) * 2 + 1] << '\n';
  snaps.close();
  files.push_back((fs::path(a.out) / "tsne_snapshots.csv").string());

  viz::FigureContext figures;
  std::vector<viz::ScatterGroup> groups;
  for (int i = 0; i < n; ++i) {
    const auto& name = QString::fromStdString(meta[static_cast<std::size_t>(i)].modality);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.name == name; });
    if (it == groups.end()) it = groups.insert(groups.end(), viz::ScatterGroup{name, {}, {}});
    it->x.push_back(r.embedding[static_cast<std::size_t>(i) * 2]);
    it->y.push_back(r.embedding[static_cast<std::size_t>(i) * 2 + 1]);
  }
  for (auto& f : viz::save_scatter((fs::path(a.out) / "tsne_modality").string(), groups, style_of(a, name_of(a.checkpoint) + ": tokens by modality")))
    files.push_back(f);
  // By timestep: four groups of equal width over the steps seen.
  int max_step = 1;
  for (const auto& m : meta) max_step = std::max(max_step, m.step + 1);
  std::vector<viz::ScatterGroup> by_time(4);
  for (int q = 0; q < 4; ++q)
    by_time[static_cast<std::size_t>(q)].name = QString("steps %1-%2").arg(q * max_step / 4).arg((q + 1) * max_step / 4 - 1);
  for (int i = 0; i < n; ++i) {
    auto& g = by_time[static_cast<std::size_t>(std::min(3, meta[static_cast<std::size_t>(i)].step * 4 / max_step))];
    g.x.push_back(r.embedding[static_cast<std::size_t>(i) * 2]);
    g.y.push_back(r.embedding[static_cast<std::size_t>(i) * 2 + 1]);
  }
  for (auto& f : viz::save_scatter((fs::path(a.out) / "tsne_timestep").string(), by_time, style_of(a, name_of(a.checkpoint) + ": tokens by timestep")))
    files.push_back(f);
  // By return-to-go: quartiles of the values seen.
  std::vector<double> rtgs;
  for (const auto& m : meta) rtgs.push_back(m.rtg);
  std::sort(rtgs.begin(), rtgs.end());
  const double q[5] = {rtgs.front(), rtgs[rtgs.size() / 4], rtgs[rtgs.size() / 2], rtgs[rtgs.size() * 3 / 4], rtgs.back()};
  std::vector<viz::ScatterGroup> by_rtg(4);
  for (int k = 0; k < 4; ++k) by_rtg[static_cast<std::size_t>(k)].name = QString("RTG %1-%2").arg(q[k], 0, 'f', 0).arg(q[k + 1], 0, 'f', 0);
  for (int i = 0; i < n; ++i) {
    const double v = meta[static_cast<std::size_t>(i)].rtg;
    const int k = v < q[1] ? 0 : v < q[2] ? 1 : v < q[3] ? 2 : 3;
    by_rtg[static_cast<std::size_t>(k)].x.push_back(r.embedding[static_cast<std::size_t>(i) * 2]);
    by_rtg[static_cast<std::size_t>(k)].y.push_back(r.embedding[static_cast<std::size_t>(i) * 2 + 1]);
  }
  for (auto& f : viz::save_scatter((fs::path(a.out) / "tsne_rtg").string(), by_rtg, style_of(a, name_of(a.checkpoint) + ": tokens by return-to-go")))
    files.push_back(f);
  finish(a,
         {{"analysis", "tsne"}, {"checkpoint", a.checkpoint}, {"variant", cfg.variant}, {"windows", windows.size()}, {"points", n},
          {"dims", H}, {"perplexity", a.perplexity}, {"iterations", a.iterations}, {"seconds", r.seconds}, {"kl", r.kl},
          {"snapshots", r.snapshots.size()}},
         files);
}

// ---------------------------------------------------------------------------------------------

struct AblationArgs : Common {
  int episodes = 10, seeds = 3;
  double target = 0.0;
};

void run_ablation(const AblationArgs& a) {
  std::vector<std::string> files;
  models::AblationConfig config;
  config.target = a.target;
  config.episodes = a.episodes;
  config.seeds = a.seeds;
  config.seed = a.seed;
  config.threads = a.threads;
  const auto result = run_zeroing_ablation(a.checkpoint, config, "ablation " + name_of(a.checkpoint));
  ordered_json summary = {{"analysis", "ablation"}, {"checkpoint", a.checkpoint}, {"variant", models::read_checkpoint_info(a.checkpoint).variant.variant},
                          {"target", result.target}, {"episodes", a.episodes}, {"seeds", a.seeds}};
  std::ofstream csv(fs::path(a.out) / "ablation.csv");
  csv << "zeroing,seed,episode,return,score\n";
  std::vector<viz::Bar> bars;
  for (const auto& z : result.zeroings) {
    const std::string key = models::to_string(z.zeroing);
    for (std::size_t e = 0; e < z.episodes.size(); ++e) {
      const auto seed = e / static_cast<std::size_t>(a.episodes), episode = e % static_cast<std::size_t>(a.episodes);
      csv << key << ',' << seed << ',' << episode << ',' << z.episodes[e].episode_return << ',' << z.episodes[e].score << '\n';
    }
    summary[key] = {{"mean", z.summary.mean_score}, {"std", z.summary.std_score}, {"std_over_seeds", z.std_over_seeds}, {"episodes", z.summary.episodes}};
    bars.push_back({models::zeroing_label(z.zeroing), z.summary.mean_score, z.summary.std_score});
  }
  csv.close();
  files.push_back((fs::path(a.out) / "ablation.csv").string());
  viz::FigureContext figures;
  for (auto& f : viz::save_bars((fs::path(a.out) / "ablation").string(), bars, "normalised score",
                                style_of(a, name_of(a.checkpoint) + ": modality zeroed at inference")))
    files.push_back(f);
  finish(a, summary, files);
}

// ---------------------------------------------------------------------------------------------

struct SweepArgs : Common {
  std::vector<double> targets, multiples = {0.5, 1, 2, 5, 10, 20};
  double base = 0.0;
  int episodes = 10;
};

void run_sweep(const SweepArgs& a) {
  std::vector<std::string> files;
  const auto info = models::read_checkpoint_info(a.checkpoint);
  const auto& spec = env::task(info.env_id.empty() ? "hopper" : info.env_id);
  std::vector<double> targets = a.targets;
  const double base = a.base > 0 ? a.base : spec.default_targets.front();
  if (targets.empty())
    for (double m : a.multiples) targets.push_back(base * m);
  ordered_json summary = {{"analysis", "rtg-sweep"}, {"checkpoint", a.checkpoint}, {"variant", info.variant.variant},
                          {"env", spec.name}, {"base_target", base}, {"episodes", a.episodes}};
  std::vector<viz::Series> series;
  std::ofstream csv(fs::path(a.out) / "rtg_sweep.csv");
  csv << "checkpoint,target,mean,std,mean_return\n";
  for (const auto& ckpt : {a.checkpoint, a.compare}) {
    if (ckpt.empty()) continue;
    models::RolloutConfig rc;
    rc.targets = targets;
    rc.episodes = a.episodes;
    rc.seed = a.seed;
    rc.threads = a.threads;
    rc.traces = false;
    const auto r = run_rollout(ckpt, rc, "sweep " + name_of(ckpt));
    ordered_json points = ordered_json::array();
    viz::Series sr{QString::fromStdString(name_of(ckpt)), {}, {}, {}, {}, false};
    for (const auto& s : r.summary) {
      points.push_back({{"target", s.target}, {"mean", s.mean_score}, {"std", s.std_score}, {"mean_return", s.mean_return}});
      csv << name_of(ckpt) << ',' << s.target << ',' << s.mean_score << ',' << s.std_score << ',' << s.mean_return << '\n';
      sr.x.push_back(s.target);
      sr.y.push_back(s.mean_score);
      sr.low.push_back(s.mean_score - s.std_score);
      sr.high.push_back(s.mean_score + s.std_score);
    }
    if (ckpt == a.checkpoint) summary["points"] = points;
    else summary["compare"] = {{"checkpoint", ckpt}, {"points", points}};
    series.push_back(sr);
  }
  csv.close();
  files.push_back((fs::path(a.out) / "rtg_sweep.csv").string());
  std::vector<std::pair<QString, double>> refs;
  try {
    const auto ds = dataset_for(a, info);
    double best = -1e300;
    for (const auto& e : ds.episodes) best = std::max(best, e.ret);
    summary["dataset_best_return"] = best;
    summary["dataset_best_score"] = env::normalized_score(spec, best);
    refs.push_back({"best episode in the data", env::normalized_score(spec, best)});
  } catch (const std::exception& e) {
    summary["dataset_best_return"] = nullptr;
    std::fprintf(stderr, "dstudio: note: no dataset reference line (%s)\n", e.what());
  }
  viz::FigureContext figures;
  for (auto& f : viz::save_lines((fs::path(a.out) / "rtg_sweep").string(), series, "target return", "normalised score",
                                 style_of(a, "Returns as the target leaves the data"), {}, refs, true))
    files.push_back(f);
  finish(a, summary, files);
}

// ---------------------------------------------------------------------------------------------

struct TrainingArgs : Common {
  std::string run, compare_run;
};

void run_training_curves(const TrainingArgs& a) {
  std::vector<std::string> files;
  ordered_json summary = {{"analysis", "training"}, {"run", a.run}};
  std::vector<std::pair<std::string, analysis::RunMetrics>> runs = {{fs::path(a.run).filename().string(), analysis::read_run_metrics(a.run)}};
  if (!a.compare_run.empty()) runs.push_back({fs::path(a.compare_run).filename().string(), analysis::read_run_metrics(a.compare_run)});
  viz::FigureContext figures;
  for (const auto& [key, label] : {std::pair{"loss", "training loss"}, std::pair{"entropy_layer1", "attention entropy, layer 1"},
                                   std::pair{"eval_score", "normalised score"}}) {
    std::vector<viz::Series> series;
    ordered_json last = ordered_json::object();
    for (const auto& [name, metrics] : runs) {
      auto it = metrics.columns.find(key);
      if (it == metrics.columns.end() || it->second.x.empty()) continue;
      series.push_back({QString::fromStdString(name), it->second.x, it->second.y, {}, {}, false});
      last[name] = it->second.y.back();
    }
    if (series.empty()) continue;
    summary[key] = {{"last", last}, {"points", series.front().x.size()}};
    for (auto& f : viz::save_lines((fs::path(a.out) / ("training_" + std::string(key))).string(), series, "training step",
                                   QString::fromUtf8(label), style_of(a, label)))
      files.push_back(f);
  }
  finish(a, summary, files);
}

// ---------------------------------------------------------------------------------------------
// Analyses from the registry (plugins): options, --help and output files from their definitions.

struct RegisteredArgs : Common {
  std::map<std::string, std::string> given;
};

void run_registered(const analysis::AnalysisDefinition& definition, const RegisteredArgs& a) {
  TerminalProgress bar(definition.name);
  const auto result = analysis::run_analysis(definition, {a.checkpoint, a.dataset, analysis::AnalysisOptions(a.given)}, bar.progress());
  auto files = analysis::write_result_files(result, a.out);
  files.erase(files.begin());  // summary.json: rewritten below with the list of files
  viz::FigureContext figures;
  for (const auto& figure : result.figures)
    for (auto& f : viz::save_analysis_figure((fs::path(a.out) / figure.name).string(), figure, style_of(a)))
      files.push_back(f);
  ordered_json summary = {{"analysis", definition.name}, {"from", definition.origin.label()}};
  if (!a.checkpoint.empty()) summary["checkpoint"] = a.checkpoint;
  summary["options"] = analysis::resolve_options(definition, a.given).values();
  const auto computed = ordered_json::parse(result.summary_json);
  for (const auto& [key, value] : computed.items()) summary[key] = value;
  finish(a, summary, files);
}

void add_registered_analyses(CLI::App* analyze, int& exit_code) {
  using Type = analysis::AnalysisOption::Type;
  for (const auto& definition : analysis::analysis_registry().all()) {
    auto* cmd = analyze->add_subcommand(definition->name, definition->description + " [" + definition->origin.label() + "]");
    auto a = std::make_shared<RegisteredArgs>();
    if (definition->needs_checkpoint)
      cmd->add_option("--checkpoint", a->checkpoint, "A Decision Studio checkpoint")->required()->check(CLI::ExistingFile);
    cmd->add_option("--dataset", a->dataset, "Windows from this dataset (default: the checkpoint's)");
    cmd->add_option("--out", a->out, "Folder for summary.json, the CSV files and the figures (PDF, SVG, PNG; see --formats)")->required();
    cmd->add_flag("--json", a->json, "Also print the summary as one JSON object on stdout");
    for (const auto& o : definition->options) {
      const std::string key = o.key;
      std::string help = o.description;
      if (o.type == Type::Choice) {
        help += " (";
        for (std::size_t i = 0; i < o.choices.size(); ++i) help += (i ? ", " : "") + o.choices[i];
        help += ")";
      }
      if (o.type == Type::Flag) {
        cmd->add_flag_function("--" + key, [a, key](std::int64_t) { a->given[key] = "true"; }, help);
        continue;
      }
      if (!o.default_value.empty()) help += " [default: " + o.default_value + "]";
      auto* option = cmd->add_option_function<std::string>("--" + key, [a, key](const std::string& v) { a->given[key] = v; }, help);
      option->type_name(o.type == Type::Integer ? "INT" : o.type == Type::Number ? "FLOAT" : o.type == Type::Choice ? "CHOICE" : "TEXT");
    }
    add_figure_options(cmd, a->figure);
    const auto def = definition;
    cmd->callback([&exit_code, a, def] {
      exit_code = run_guarded([&] {
        a->style = a->figure.resolve();
        // Options are checked before any folder is made or anything is computed.
        (void)analysis::resolve_options(*def, a->given);
        std::filesystem::create_directories(a->out);
        run_registered(*def, *a);
      });
    });
  }
}

template <typename Args>
void wire(CLI::App* cmd, std::shared_ptr<Args> a, int& exit_code, std::function<void(const Args&)> body) {
  cmd->callback([&exit_code, a, body] {
    exit_code = run_guarded([&] {
      a->style = a->figure.resolve();
      std::filesystem::create_directories(a->out);
      body(*a);
    });
  });
}

}  // namespace

void add_analyze_commands(CLI::App& app, int& exit_code) {
  auto* analyze = app.add_subcommand("analyze", "The papers' analyses: numbers (JSON, CSV) and figures (PDF, SVG, PNG)");
  analyze->require_subcommand(1);

  auto att = std::make_shared<AttentionArgs>();
  auto* attention = analyze->add_subcommand("attention", "Attention maps: per layer, mean over layers, rollout; --compare for a difference");
  add_common(attention, *att);
  attention->add_option("--compare", att->compare, "A second checkpoint: the difference of the maps on identical windows")->check(CLI::ExistingFile);
  attention->add_option("--dataset", att->dataset, "Windows from this dataset (default: the checkpoint's)");
  attention->add_option("--source", att->source, "dataset: windows spread over the dataset; rollout: the window of one step of a rollout")
      ->check(CLI::IsMember({"dataset", "rollout"}))
      ->capture_default_str();
  attention->add_option("--windows", att->windows, "Dataset windows averaged")->capture_default_str()->check(CLI::Range(1, 10000));
  attention->add_option("--step", att->step, "Rollout step (default 2K)");
  attention->add_option("--layer", att->layer, "Only this layer (from 1; default all)")->check(CLI::PositiveNumber);
  attention->add_option("--head", att->head, "This head (from 1) instead of the mean over heads")->check(CLI::PositiveNumber);
  wire<AttentionArgs>(attention, att, exit_code, run_attention);

  auto ent = std::make_shared<EntropyArgs>();
  auto* entropy = analyze->add_subcommand("entropy", "Attention entropy over a rollout next to the reward; per head, intra- and inter-step");
  add_common(entropy, *ent);
  entropy->add_option("--dataset", ent->dataset, "Windows for the per-head entropies (default: the checkpoint's dataset)");
  entropy->add_option("--episodes", ent->episodes, "Rollout episodes")->capture_default_str()->check(CLI::Range(1, 1000));
  entropy->add_option("--target", ent->target, "Target return (default: the task's first)");
  entropy->add_option("--windows", ent->windows, "Dataset windows for the per-head entropies")->capture_default_str();
  entropy->add_option("--skip", ent->skip, "Steps left out of the correlation (default K - 1: only full windows)");
  wire<EntropyArgs>(entropy, ent, exit_code, run_entropy);

  auto ts = std::make_shared<TsneArgs>();
  auto* tsne = analyze->add_subcommand("tsne", "t-SNE of token embeddings before and after merging");
  add_common(tsne, *ts);
  tsne->add_option("--dataset", ts->dataset, "Windows from this dataset (default: the checkpoint's)");
  tsne->add_option("--windows", ts->windows, "Dataset windows")->capture_default_str()->check(CLI::Range(1, 100000));
  tsne->add_option("--perplexity", ts->perplexity, "Perplexity")->capture_default_str();
  tsne->add_option("--iterations", ts->iterations, "Iterations")->capture_default_str()->check(CLI::Range(250, 100000));
  tsne->add_option("--snapshot-every", ts->snapshot_every, "Keep the layout every N iterations (tsne_snapshots.csv); 0: never")->capture_default_str();
  wire<TsneArgs>(tsne, ts, exit_code, run_tsne);

  auto ab = std::make_shared<AblationArgs>();
  auto* ablation = analyze->add_subcommand("ablation", "Normalised score with RTG, past states or actions zeroed at inference");
  add_common(ablation, *ab);
  ablation->add_option("--episodes", ab->episodes, "Episodes per seed")->capture_default_str()->check(CLI::Range(1, 1000));
  ablation->add_option("--seeds", ab->seeds, "Seeds")->capture_default_str()->check(CLI::Range(1, 100));
  ablation->add_option("--target", ab->target, "Target return (default: the task's first)");
  wire<AblationArgs>(ablation, ab, exit_code, run_ablation);

  auto tr = std::make_shared<TrainingArgs>();
  auto* training = analyze->add_subcommand("training", "Loss, attention entropy and score over the course of training (metrics.jsonl)");
  training->add_option("--run", tr->run, "A training run's folder (dstudio train --out; --eval-every records entropy and score)")
      ->required()
      ->check(CLI::ExistingDirectory);
  training->add_option("--compare", tr->compare_run, "A second run's folder")->check(CLI::ExistingDirectory);
  training->add_option("--out", tr->out, "Folder for summary.json and the figures")->required();
  training->add_flag("--json", tr->json, "Also print the summary as one JSON object on stdout");
  add_figure_options(training, tr->figure);
  wire<TrainingArgs>(training, tr, exit_code, run_training_curves);

  auto sw = std::make_shared<SweepArgs>();
  auto* sweep = analyze->add_subcommand("rtg-sweep", "Normalised score as the target return leaves the dataset");
  add_common(sweep, *sw);
  sweep->add_option("--compare", sw->compare, "A second checkpoint: a second curve")->check(CLI::ExistingFile);
  sweep->add_option("--dataset", sw->dataset, "Dataset for the best-episode reference line (default: the checkpoint's)");
  sweep->add_option("--targets", sw->targets, "Target returns")->delimiter(',');
  sweep->add_option("--multiples", sw->multiples, "Multiples of --base (default 0.5,1,2,5,10,20)")->delimiter(',');
  sweep->add_option("--base", sw->base, "Base target (default: the task's first)");
  sweep->add_option("--episodes", sw->episodes, "Episodes per target")->capture_default_str()->check(CLI::Range(1, 1000));
  wire<SweepArgs>(sweep, sw, exit_code, run_sweep);

  add_registered_analyses(analyze, exit_code);
}

}  // namespace dstudio::cli

// dstudio lab: experiments whose answer is known exactly, for teaching.

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "dstudio/analysis/analysis_registry.h"
#include "dstudio/common/atomic_file.h"
#include "dstudio/models/markov_lab.h"
#include "rollouts.h"
#ifdef DSTUDIO_HAVE_FIGURES
#include "figure_options.h"
#endif

namespace dstudio::cli {
namespace {

// The lab's numbers as the analyses write theirs: loss.csv and mixing.csv, and the figures the
// Markov lab tab draws (the loss against the entropy rate, the mixing matrix).
analysis::AnalysisResult lab_result(const models::MarkovLabResult& r,
                                    const std::string& summary_json) {
  analysis::AnalysisResult result;
  result.summary_json = summary_json;
  analysis::AnalysisTable loss{"loss", {"step", "loss", "training_loss", "entropy_rate"}, {}};
  analysis::AnalysisFigure curve;
  curve.name = "loss";
  curve.title = "Loss against the entropy rate";
  curve.x_label = "step";
  curve.y_label = "cross-entropy (nats)";
  curve.series.push_back({"held-out loss", {}, {}, {}, false});
  for (const auto& p : r.curve) {
    loss.rows.push_back({static_cast<double>(p.step), p.loss,
                         p.step > 0 ? p.training_loss : std::nan(""), r.entropy_rate});
    curve.series[0].x.push_back(static_cast<double>(p.step));
    curve.series[0].y.push_back(p.loss);
  }
  curve.references.emplace_back("entropy rate", r.entropy_rate);
  result.tables.push_back(std::move(loss));
  analysis::AnalysisFigure mixing;
  mixing.name = "mixing";
  mixing.title = "Mixing matrix";
  mixing.x_label = "key";
  mixing.y_label = "query";
  mixing.kind = analysis::AnalysisFigure::Kind::Heatmap;
  mixing.matrix = {r.length, r.mixing_matrix};
  for (int t = 0; t < r.length; ++t) mixing.labels.push_back("t" + std::to_string(t));
  mixing.colour_label = "weight";
  result.figures.push_back(std::move(curve));
  result.figures.push_back(std::move(mixing));
  return result;
}

// What `dstudio lab markov` is given.
struct MarkovLabArgs {
  double p = 0.2, q = 0.3;
  int order = 1, states = 2;
  std::string mixer = "pooling";
  models::MarkovLabOptions options;
  bool json = false;
  std::string out;
#ifdef DSTUDIO_HAVE_FIGURES
  FigureOptions figure;
#endif
};

// Trains the lab's mixer on the chain and reports its loss against the chain's entropy rate.
void run_markov_lab_command(const MarkovLabArgs& a) {
  auto options = a.options;
  options.chain = analysis::MarkovChain::make(a.p, a.q, a.order, a.states);
  options.mixer = models::lab_mixer_from_string(a.mixer);
  options.check();
#ifdef DSTUDIO_HAVE_FIGURES
  const auto style = a.figure.resolve();  // a bad preset is refused before the work
#endif
  models::MarkovLabResult r;
  run_interruptible("lab", [&](const Progress& p) { r = models::run_markov_lab(options, p); });
  {
    nlohmann::ordered_json curve = nlohmann::ordered_json::array();
    for (const auto& point : r.curve) {
      nlohmann::ordered_json j{{"step", point.step}, {"loss", point.loss}};
      if (point.step > 0) j["training_loss"] = point.training_loss;
      curve.push_back(j);
    }
    nlohmann::ordered_json matrix = nlohmann::ordered_json::array();
    for (int n = 0; n < r.length; ++n)
      matrix.push_back(std::vector<double>(r.mixing_matrix.begin() + n * r.length,
                                           r.mixing_matrix.begin() + (n + 1) * r.length));
    const nlohmann::ordered_json out{{"chain",
                                      {{"p", options.chain.p},
                                       {"q", options.chain.q},
                                       {"order", options.chain.order},
                                       {"states", options.chain.states}}},
                                     {"mixer", models::to_string(options.mixer)},
                                     {"window", options.window},
                                     {"steps", options.steps},
                                     {"entropy_rate", r.entropy_rate},
                                     {"final_loss", r.final_loss},
                                     {"gap", r.gap},
                                     {"relative_gap", r.gap / r.entropy_rate},
                                     {"seconds", r.seconds},
                                     {"mixing_by_lag", r.mixing_by_lag},
                                     {"mixing_matrix", matrix},
                                     {"curve", curve}};
    if (!a.out.empty()) {
      OutputFolder folder(a.out);
      const auto result = lab_result(r, out.dump());
      auto files = analysis::write_result_files(result, a.out);
#ifdef DSTUDIO_HAVE_FIGURES
      viz::FigureContext figures;
      for (const auto& figure : result.figures)
        for (auto& f :
             viz::save_analysis_figure((std::filesystem::path(a.out) / figure.name).string(),
                                       figure, style, figure.name != "loss"))
          files.push_back(f);
#endif
      folder.commit();
      if (!a.json) std::fprintf(stderr, "wrote %zu files to %s\n", files.size(), a.out.c_str());
    }
    if (a.json) std::cout << out.dump(2) << std::endl;
  }
  if (!a.json) {
    std::printf("%s mixer, window %d, %d steps in %.1f s\n",
                models::to_string(options.mixer).c_str(), options.window, options.steps, r.seconds);
    std::printf(
        "entropy rate  %.5f nats\nfinal loss    %.5f nats\ngap           %.5f nats (%.2f%% of "
        "the floor)\n",
        r.entropy_rate, r.final_loss, r.gap, 100.0 * r.gap / r.entropy_rate);
    std::printf("mixing by lag");
    for (double w : r.mixing_by_lag) std::printf(" %.3f", w);
    std::printf("\n");
  }
}

}  // namespace

void add_lab_commands(CLI::App& app, int& exit_code) {
  auto* lab = app.add_subcommand(
                     "lab", "Experiments with a known answer: a Markov chain and the loss floor")
                  ->require_subcommand(1);
  auto* markov = lab->add_subcommand("markov",
                                     "Train a one-layer mixer on a Markov chain and compare its "
                                     "loss with the chain's entropy rate");
  auto a = std::make_shared<MarkovLabArgs>();
  auto& o = a->options;
  markov
      ->add_option("--p", a->p,
                   "Switching probability 0 -> 1 (S > 2: to any other symbol), in [0.001, 0.999]")
      ->capture_default_str()
      ->check(real_number(0.001, 0.999));
  markov->add_option("--q", a->q, "Switching probability 1 -> 0 (binary chains), in [0.001, 0.999]")
      ->capture_default_str()
      ->check(real_number(0.001, 0.999));
  markov
      ->add_option("--order", a->order,
                   "m: the next symbol depends on the last m (through their counts), in [1, 3]")
      ->capture_default_str()
      ->check(whole_number(1, 3));
  markov->add_option("--states", a->states, "S: symbols, in [2, 8]")
      ->capture_default_str()
      ->check(whole_number(2, 8));
  markov->add_option("--mixer", a->mixer, "pooling (the appendix's), attention or conv")
      ->capture_default_str();
  markov
      ->add_option("--window", o.window,
                   "k: positions mixed, the current one included, in [1, length]")
      ->capture_default_str()
      ->check(whole_number(1, 256));
  markov->add_option("--steps", o.steps, "Optimiser steps, in [1, 100000]")
      ->capture_default_str()
      ->check(whole_number(1, 100000));
  markov->add_option("--batch", o.batch, "Sequences per step, in [1, 1024]")
      ->capture_default_str()
      ->check(whole_number(1, 1024));
  markov->add_option("--length", o.length, "N: symbols per sequence, in [8, 256]")
      ->capture_default_str()
      ->check(whole_number(8, 256));
  markov->add_option("--embedding", o.embedding, "d: embedding width, in [2, 128]")
      ->capture_default_str()
      ->check(whole_number(2, 128));
  markov->add_option("--learning-rate", o.learning_rate, "Adam's learning rate, in (0, 1]")
      ->capture_default_str()
      ->check(real_number(0, 1, true));
  markov
      ->add_option("--eval-every", o.eval_every,
                   "Steps between points of the loss curve, in [1, 100000]")
      ->capture_default_str()
      ->check(whole_number(1, 100000));
  markov->add_option("--seed", o.seed, "Initialisation and data")
      ->capture_default_str()
      ->check(seed_number());
  markov->add_flag("--json", a->json,
                   "Print one JSON object (with the loss curve and the mixing matrix)");
  markov->add_option(
      "--out", a->out,
      "Write summary.json, loss.csv, mixing.csv and the figures (loss, mixing) into this folder");
#ifdef DSTUDIO_HAVE_FIGURES
  add_figure_options(markov, a->figure);
#endif
  markov->callback(
      [&exit_code, a] { exit_code = run_guarded([&] { run_markov_lab_command(*a); }); });
}

}  // namespace dstudio::cli

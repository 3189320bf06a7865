// dstudio lab: experiments whose answer is known exactly, for teaching.

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <memory>

#include "commands.h"
#include "dstudio/models/markov_lab.h"
#include "rollouts.h"

namespace dstudio::cli {

void add_lab_commands(CLI::App& app, int& exit_code) {
  auto* lab = app.add_subcommand("lab", "Experiments with a known answer: a Markov chain and the loss floor")->require_subcommand(1);
  auto* markov = lab->add_subcommand(
      "markov", "Train a one-layer mixer on a Markov chain and compare its loss with the chain's entropy rate");
  struct Args {
    double p = 0.2, q = 0.3;
    int order = 1, states = 2;
    std::string mixer = "pooling";
    models::MarkovLabOptions options;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  auto& o = a->options;
  markov->add_option("--p", a->p, "Switching probability 0 -> 1 (S > 2: to any other symbol), in [0.001, 0.999]")
      ->capture_default_str()
      ->check(real_number(0.001, 0.999));
  markov->add_option("--q", a->q, "Switching probability 1 -> 0 (binary chains), in [0.001, 0.999]")->capture_default_str()->check(real_number(0.001, 0.999));
  markov->add_option("--order", a->order, "m: the next symbol depends on the last m (through their counts), in [1, 3]")
      ->capture_default_str()
      ->check(whole_number(1, 3));
  markov->add_option("--states", a->states, "S: symbols, in [2, 8]")->capture_default_str()->check(whole_number(2, 8));
  markov->add_option("--mixer", a->mixer, "pooling (the appendix's), attention or conv")->capture_default_str();
  markov->add_option("--window", o.window, "k: positions mixed, the current one included, in [1, length]")->capture_default_str()->check(whole_number(1, 256));
  markov->add_option("--steps", o.steps, "Optimiser steps, in [1, 100000]")->capture_default_str()->check(whole_number(1, 100000));
  markov->add_option("--batch", o.batch, "Sequences per step, in [1, 1024]")->capture_default_str()->check(whole_number(1, 1024));
  markov->add_option("--length", o.length, "N: symbols per sequence, in [8, 256]")->capture_default_str()->check(whole_number(8, 256));
  markov->add_option("--embedding", o.embedding, "d: embedding width, in [2, 128]")->capture_default_str()->check(whole_number(2, 128));
  markov->add_option("--learning-rate", o.learning_rate, "Adam's learning rate, in (0, 1]")->capture_default_str()->check(real_number(0, 1, true));
  markov->add_option("--eval-every", o.eval_every, "Steps between points of the loss curve, in [1, 100000]")->capture_default_str()->check(whole_number(1, 100000));
  markov->add_option("--seed", o.seed, "Initialisation and data")->capture_default_str()->check(seed_number());
  markov->add_flag("--json", a->json, "Print one JSON object (with the loss curve and the mixing matrix)");
  markov->callback([&exit_code, a] {
    exit_code = run_guarded([&] {
      auto options = a->options;
      options.chain = analysis::MarkovChain::make(a->p, a->q, a->order, a->states);
      options.mixer = models::lab_mixer_from_string(a->mixer);
      options.check();
      models::MarkovLabResult r;
      run_interruptible("lab", [&](const Progress& p) { r = models::run_markov_lab(options, p); });
      if (a->json) {
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
        const nlohmann::ordered_json out{
            {"chain", {{"p", options.chain.p}, {"q", options.chain.q}, {"order", options.chain.order},
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
        std::cout << out.dump(2) << std::endl;
      } else {
        std::printf("%s mixer, window %d, %d steps in %.1f s\n", models::to_string(options.mixer).c_str(),
                    options.window, options.steps, r.seconds);
        std::printf("entropy rate  %.5f nats\nfinal loss    %.5f nats\ngap           %.5f nats (%.2f%% of the floor)\n",
                    r.entropy_rate, r.final_loss, r.gap, 100.0 * r.gap / r.entropy_rate);
        std::printf("mixing by lag");
        for (double w : r.mixing_by_lag) std::printf(" %.3f", w);
        std::printf("\n");
      }
    });
  });
}

}  // namespace dstudio::cli

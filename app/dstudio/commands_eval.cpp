// dstudio eval: roll a checkpoint out in its environment for a list of target returns.

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.h"
#include "dstudio/common/atomic_file.h"
#include "dstudio/common/csv.h"
#include "dstudio/common/error.h"
#include "dstudio/models/device.h"
#include "dstudio/models/evaluation.h"
#include "dstudio/models/targets.h"
#include "rollouts.h"
#include "terminal_progress.h"

namespace dstudio::cli {
namespace {

CancelToken* g_cancel = nullptr;  // Ctrl-C cancels the rollout at its next step
void on_interrupt(int) {
  if (g_cancel) g_cancel->cancel();
}

}  // namespace

models::ModalityZeroing parse_zeroing(const std::string& name) {
  try {
    return models::zeroing_from_string(name);
  } catch (const UsageError& e) {
    throw UsageError(std::string("--") + e.what());
  }
}

nlohmann::ordered_json rollout_summary_json(const models::RolloutResult& r) {
  nlohmann::ordered_json targets = nlohmann::ordered_json::array();
  for (const auto& s : r.summary)
    targets.push_back({{"target", s.target},
                       {"episodes", s.episodes},
                       {"mean_return", s.mean_return},
                       {"std_return", s.std_return},
                       {"mean", s.mean_score},
                       {"std", s.std_score},
                       {"iqm",
                        {{"estimate", s.iqm_score.estimate},
                         {"low", s.iqm_score.low},
                         {"high", s.iqm_score.high}}}});
  if (r.reports_success)
    for (std::size_t k = 0; k < r.summary.size(); ++k) {
      targets[k]["successes"] = r.summary[k].successes;
      targets[k]["success_rate"] = r.summary[k].success_rate();
    }
  nlohmann::ordered_json episodes = nlohmann::ordered_json::array();
  for (const auto& e : r.episodes)
    episodes.push_back({{"target", e.target},
                        {"seed", e.seed},
                        {"return", e.episode_return},
                        {"score", e.score},
                        {"length", e.length},
                        {"terminated", e.terminated},
                        {"success", e.success}});
  nlohmann::ordered_json out = {{"env", r.env_id},
                                {"targets", targets},
                                {"episodes", episodes},
                                {"seconds", r.seconds},
                                {"env_steps", r.env_steps}};
  // Only a shifted model's targets are in other units than its returns.
  if (r.reward_shift != 0.0) out["reward_shift"] = r.reward_shift;
  return out;
}

void run_interruptible(const std::string& label, const std::function<void(const Progress&)>& work) {
  TerminalProgress bar(label);
  CancelToken cancel = bar.progress().cancel;
  g_cancel = &cancel;
  auto previous = std::signal(SIGINT, on_interrupt);
  try {
    work(bar.progress());
  } catch (...) {
    std::signal(SIGINT, previous);
    g_cancel = nullptr;
    throw;
  }
  std::signal(SIGINT, previous);
  g_cancel = nullptr;
}

models::RolloutResult run_rollout(const std::string& checkpoint,
                                  const models::RolloutConfig& config, const std::string& label) {
  models::RolloutResult result;
  run_interruptible(label,
                    [&](const Progress& p) { result = models::rollout(checkpoint, config, p); });
  return result;
}

void add_eval_commands(CLI::App& app, int& exit_code) {
  auto* eval = app.add_subcommand(
      "eval", "Roll a checkpoint out in its environment: returns and normalised scores per target");
  struct Args {
    std::string checkpoint, env, zeroing = "none", out, device = "cpu";
    std::vector<double> targets;
    int episodes = 10, threads = 2, max_steps = 0;
    std::uint64_t seed = 0;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  eval->add_option("--checkpoint", a->checkpoint, "A Decision Studio checkpoint")
      ->required()
      ->check(CLI::ExistingFile);
  eval->add_option("--targets", a->targets,
                   "Target returns (default: the task's, e.g. hopper 3600 1800)")
      ->delimiter(',')
      ->check(real_number(-1e9, 1e9));
  eval->add_option("--episodes", a->episodes, "Episodes per target")
      ->capture_default_str()
      ->check(whole_number(1, 10000));
  eval->add_option("--seed", a->seed, "Episode e resets with seed + e")
      ->capture_default_str()
      ->check(seed_number());
  eval->add_option("--env", a->env, "Environment (default: the checkpoint's)")
      ->check(known_environment());
  eval->add_option("--zeroing", a->zeroing,
                   "Zero a modality at inference: none, rtg, states (all but the current), actions")
      ->capture_default_str();
  eval->add_option("--max-steps", a->max_steps, "Steps per episode (default: the task's limit)")
      ->check(whole_number(1, 100000));
  eval->add_option("--threads", a->threads, "Parts of the batch computed on their own cores")
      ->capture_default_str()
      ->check(whole_number(1, 64));
  eval->add_option(
          "--device", a->device,
          "Where the policy runs: cpu, or cuda (needs a LibTorch built with CUDA and a GPU)")
      ->capture_default_str()
      ->check(CLI::IsMember({"cpu", "cuda"}));
  eval->add_option("--out", a->out,
                   "Folder for summary.json and episodes.csv (every step of every episode)");
  eval->add_flag("--json", a->json, "Print one JSON object");
  eval->callback([&exit_code, a] {
    exit_code = run_guarded([&] {
      models::require_device(a->device);
      models::RolloutConfig config;
      config.targets = a->targets;
      config.episodes = a->episodes;
      config.seed = a->seed;
      config.env_id = a->env;
      config.zeroing = parse_zeroing(a->zeroing);
      config.max_steps = a->max_steps;
      config.threads = a->threads;
      config.traces = !a->out.empty();
      const auto r = run_rollout(a->checkpoint, config, "rollout");
      const auto summary = rollout_summary_json(r);
      if (!a->out.empty()) {
        OutputFolder out(a->out);
        write_text_atomically(std::filesystem::path(a->out) / "summary.json",
                              summary.dump(2) + "\n");
        CsvWriter csv({"target", "seed", "step", "reward", "return_to_go"}, 6);
        for (const auto& e : r.episodes)
          for (int t = 0; t < e.length; ++t) {
            csv << e.target << e.seed << t << e.rewards[static_cast<std::size_t>(t)]
                << e.returns_to_go[static_cast<std::size_t>(t)];
            csv.end_row();
          }
        csv.write(std::filesystem::path(a->out) / "episodes.csv");
        out.commit();
      }
      if (a->json) {
        std::cout << summary.dump(2) << std::endl;
      } else {
        std::printf("%s, %zu episodes, %lld env steps in %.1f s\n", r.env_id.c_str(),
                    r.episodes.size(), static_cast<long long>(r.env_steps), r.seconds);
        if (r.reward_shift != 0.0)
          std::printf("%s\n", models::reward_shift_note(r.reward_shift).c_str());
        std::printf("%10s %10s %10s %12s %10s  %s%s\n", "target", "return", "std", "normalised",
                    "std", "IQM [95% CI]", r.reports_success ? "  success" : "");
        for (const auto& s : r.summary) {
          std::printf("%10.0f %10.1f %10.1f %12.1f %10.1f  %s", s.target, s.mean_return,
                      s.std_return, s.mean_score, s.std_score,
                      analysis::interval_text(s.iqm_score).c_str());
          if (r.reports_success)
            std::printf("  %d of %d (%.0f%%)", s.successes, s.episodes, 100.0 * s.success_rate());
          std::printf("\n");
        }
      }
    });
  });
}

}  // namespace dstudio::cli

// dstudio train: train any variant on a dataset, or resume a run from its checkpoint.

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "dstudio/common/error.h"
#include "dstudio/common/folder_lock.h"
#include "dstudio/common/system_info.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/models/checkpoint.h"
#include "dstudio/models/config_fields.h"
#include "dstudio/models/device.h"
#include "dstudio/models/evaluation.h"
#include "dstudio/models/targets.h"
#include "dstudio/models/training.h"
#include "dstudio/models/variant_registry.h"
#include "terminal_progress.h"

namespace dstudio::cli {
namespace {

models::Trainer* g_running =
    nullptr;  // for Ctrl-C and SIGTERM: stop at the next step, keep a checkpoint

void on_interrupt(int) {
  if (g_running) g_running->cancel();
}

int run_training(models::Trainer& trainer) {
  TerminalProgress bar("training " + trainer.variant().variant);
  trainer.on_progress([&bar](const models::TrainingProgress& p) {
    char stage[160];
    std::snprintf(stage, sizeof stage,
                  "step %lld/%lld  loss %.4f  lr %.2e  %.1f steps/s  ETA %.0f s",
                  static_cast<long long>(p.step), static_cast<long long>(p.total), p.loss,
                  p.learning_rate, p.steps_per_second, p.eta_seconds);
    bar.progress().report(static_cast<double>(p.step) / static_cast<double>(p.total), stage);
  });
  g_running = &trainer;
  // SIGTERM as Ctrl-C: a batch system's time limit or a session's end keeps its checkpoint too.
  auto previous = std::signal(SIGINT, on_interrupt);
  auto previous_term = std::signal(SIGTERM, on_interrupt);
  trainer.run();
  std::signal(SIGINT, previous);
  std::signal(SIGTERM, previous_term);
  g_running = nullptr;
  switch (trainer.state()) {
    case models::TrainingState::Finished:
      std::printf("finished %lld steps; checkpoint %s\n", static_cast<long long>(trainer.step()),
                  trainer.last_checkpoint().c_str());
      return kOk;
    case models::TrainingState::Cancelled: {
      const auto saved = trainer.save_checkpoint();
      std::printf("stopped at step %lld; resume with: dstudio train --resume %s\n",
                  static_cast<long long>(trainer.step()), saved.c_str());
      return 130;
    }
    default:
      std::fprintf(stderr, "dstudio: error: %s\n", trainer.error().c_str());
      return kFailed;
  }
}

// What `dstudio train` is given.
struct TrainArgs {
  std::string variant, dataset, config, training, out, resume, merger = "conv", mixer = "pooling",
                                                               device = "cpu";
  std::int64_t steps = 0;
  std::uint64_t seed = 0;
  double reward_shift = 0.0;
  int threads = 0, eval_every = 0, eval_episodes = 5;
  bool seed_given = false, overwrite = false;
};

// Continues the run of `a.resume`: what run_training says (finished, stopped: 130, or failed).
int resume_training(const TrainArgs& a, const CLI::App& train) {
  if (a.overwrite)
    throw UsageError("--overwrite starts a run again; --resume continues one: give one of them");
  if (train.count("--reward-shift"))
    throw UsageError("--reward-shift is the run's from its start; --resume keeps it");
  const auto info = models::read_checkpoint_info(a.resume);
  // Claimed before the dataset loads: a second writer is refused at once.
  const FolderLock claim(a.out.empty() ? std::filesystem::path(a.resume).parent_path()
                                       : std::filesystem::path(a.out));
  const std::string path = a.dataset.empty() ? info.dataset_path : a.dataset;
  const auto dataset = load_user_dataset(path);
  auto trainer = models::Trainer::resume(dataset, a.resume, a.out, a.steps);
  if (trainer->training().eval_every > 0)
    trainer->on_evaluation(models::evaluation_hook(dataset, trainer->training(), a.eval_episodes));
  return run_training(*trainer);
}

// Starts a run of `a.variant` on `a.dataset` in `a.out`, with the papers' dataset-dependent
// settings unless given: what run_training says.
int start_training(const TrainArgs& a, const CLI::App& train) {
  if (a.variant.empty() || a.dataset.empty() || a.out.empty())
    throw CLI::ValidationError("--variant, --dataset and --out are required (or --resume CKPT)");
  auto variant = models::make_variant(a.variant, a.merger, a.mixer);
  if (!a.config.empty()) variant = models::with_overrides(variant, a.config);
  models::TrainingConfig training;
  if (!a.training.empty()) training = models::training_from_json(a.training);
  if (a.steps > 0) training.steps = a.steps;
  if (train.count("--seed")) training.seed = a.seed;
  if (train.count("--reward-shift")) training.reward_shift = a.reward_shift;
  if (a.threads > 0)
    training.threads = a.threads;
  else if (a.training.empty() || !nlohmann::json::parse(a.training).contains("threads"))
    training.threads = std::clamp(hardware_threads(), 1, 4);
  const FolderLock claim(a.out);
  const auto dataset = load_user_dataset(a.dataset);
  // The papers' dataset-dependent settings, unless given explicitly.
  const auto given = [](const std::string& json, const char* key) {
    return !json.empty() && nlohmann::json::parse(json).contains(key);
  };
  const auto defaults = models::dataset_defaults(variant.variant, data::dataset_name(dataset));
  if (defaults.hidden > 0 && !given(a.config, "hidden")) variant.hidden = defaults.hidden;
  if (defaults.learning_rate > 0 && !given(a.training, "learning_rate"))
    training.learning_rate = defaults.learning_rate;
  if (!defaults.source.empty())
    std::printf("%s: hidden %d, learning rate %g (--config / --training override)\n",
                defaults.source.c_str(), variant.hidden, training.learning_rate);
  if (models::apply_task_rtg_scale(training, dataset.env_id, a.training))
    std::printf("%s: returns-to-go scaled by %g, the task's (--training override)\n",
                dataset.env_id.c_str(), training.rtg_scale);
  if (a.eval_every > 0) training.eval_every = a.eval_every;
  if (training.reward_shift != 0.0)
    std::printf("%s\n", models::reward_shift_note(training.reward_shift).c_str());
  models::Trainer trainer(
      dataset, variant, training, a.out,
      a.overwrite ? models::ExistingRun::Overwrite : models::ExistingRun::Refuse);
  if (training.eval_every > 0)
    trainer.on_evaluation(models::evaluation_hook(dataset, training, a.eval_episodes));
  return run_training(trainer);
}

}  // namespace

void add_train_commands(CLI::App& app, int& exit_code) {
  auto* train = app.add_subcommand("train", "Train a model variant on a dataset, or resume a run");
  auto a = std::make_shared<TrainArgs>();
  train->add_option(
      "--variant", a->variant,
      "The variant: " + models::variant_registry().joined_names() + " (dstudio variants)");
  std::string mergers;
  for (const auto& m : models::hier_mergers()) mergers += (mergers.empty() ? "" : ", ") + m;
  train->add_option("--merger", a->merger, "hier: " + mergers)->capture_default_str();
  std::string mixers;
  for (const auto& m : models::hier_mixers()) mixers += (mixers.empty() ? "" : ", ") + m;
  train->add_option("--mixer", a->mixer, "hier: " + mixers)->capture_default_str();
  train->add_option("--dataset", a->dataset,
                    "D4RL or Minari dataset (with --resume: default, the checkpoint's)");
  train
      ->add_option("--config", a->config,
                   "JSON object overriding variant fields, e.g. '{\"hidden\": 256}'")
      ->check(json_object());
  train
      ->add_option("--training", a->training,
                   "JSON object overriding training fields, e.g. '{\"learning_rate\": 1e-3}'")
      ->check(json_object());
  train
      ->add_option("--steps", a->steps,
                   "Training steps (default 100000; with --resume, the run's new end)")
      ->check(whole_number(1, models::kMaxTrainingSteps));
  train->add_option("--seed", a->seed, "Seed")->check(seed_number());
  train
      ->add_option("--reward-shift", a->reward_shift,
                   "Add this to every reward before returns-to-go are counted: -1 on AntMaze as "
                   "IQL and CORL train (recorded in the checkpoint; targets are then in its units)")
      ->check(CLI::Range(-1e6, 1e6));
  train
      ->add_option("--threads", a->threads,
                   "Workers, each computing its part of every batch on its own core (default: the "
                   "machine's cores, at most 4; "
                   "results are reproducible for a seed and a thread count)")
      ->check(whole_number(1, 64));
  train
      ->add_option("--device", a->device,
                   "Where to train: cpu, or cuda (needs a LibTorch built with CUDA and a GPU; "
                   "docs/sweeps.md)")
      ->capture_default_str()
      ->check(CLI::IsMember({"cpu", "cuda"}));
  train->add_option("--out", a->out, "Output folder (checkpoint.pt, metrics.csv, metrics.jsonl)");
  train->add_option("--resume", a->resume, "Continue the run saved in this checkpoint");
  train->add_flag("--overwrite", a->overwrite,
                  "Start again in an --out folder that holds a run (its checkpoints and metrics "
                  "are removed); without it, such a "
                  "folder is refused");
  train
      ->add_option("--eval-every", a->eval_every,
                   "Every N steps, roll the policy out and measure the first layer's attention "
                   "entropy (metrics.jsonl)")
      ->check(whole_number(0, models::kMaxTrainingSteps));
  train->add_option("--eval-episodes", a->eval_episodes, "Episodes of each evaluation")
      ->capture_default_str()
      ->check(whole_number(1, 1000));
  train->callback([&exit_code, a, train] {
    int trained = kOk;  // what run_training says: finished, stopped (130) or failed
    exit_code = run_guarded([&] {
      models::require_device(a->device);
      trained = a->resume.empty() ? start_training(*a, *train) : resume_training(*a, *train);
    });
    if (exit_code == kOk) exit_code = trained;
  });
}

}  // namespace dstudio::cli

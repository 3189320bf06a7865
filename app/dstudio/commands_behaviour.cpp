// dstudio behaviour train | sac | ship | eval: the behaviour policies behind the project's own
// datasets.

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <sstream>

#include "commands.h"
#include "dstudio/behaviour/adroit_data.h"
#include "dstudio/behaviour/antmaze_data.h"
#include "dstudio/behaviour/ars.h"
#include "dstudio/behaviour/generate.h"
#include "dstudio/behaviour/policy_set.h"
#include "dstudio/behaviour/sac.h"
#include "dstudio/common/atomic_file.h"
#include "dstudio/common/error.h"
#include "dstudio/common/read_file.h"
#include "dstudio/env/environment.h"
#include "terminal_progress.h"

namespace dstudio::cli {
namespace {

const CancelToken* g_cancel = nullptr;  // Ctrl-C or a termination request: checkpoint, then stop

void on_interrupt(int) {
  if (g_cancel) g_cancel->cancel();
}

std::string join_args(int argc, char** argv) {
  std::string s = "dstudio";
  for (int i = 1; i < argc; ++i) s += std::string(" ") + argv[i];
  return s;
}

behaviour::PolicySet load_set(const std::string& env, const std::string& algorithm,
                              const std::string& file, double noise) {
  if (file.empty()) {
    auto set = behaviour::shipped_policy_set(env, behaviour::parse_algorithm(algorithm));
    if (set.algorithm == behaviour::PolicyAlgorithm::Ars) set.action_noise = noise;
    return set;
  }
  const auto set = behaviour::read_policy_set(file, noise);
  if (set.env != env)
    throw dstudio::Error(file + ": holds policies for " + set.env + ", not " + env);
  return set;
}

int pick_snapshot(const behaviour::PolicySet& set, const std::string& which) {
  if (which == "expert") return set.expert;
  if (which == "medium") return set.medium;
  int i = -1;
  try {
    i = std::stoi(which);
  } catch (const std::exception&) {
  }
  if (i < 0 || i >= static_cast<int>(set.snapshots.size()))
    throw CLI::ValidationError("--snapshot",
                               "'" + which + "' is not expert, medium or a snapshot index below " +
                                   std::to_string(set.snapshots.size()));
  return i;
}

}  // namespace

namespace {

// dstudio behaviour train.
void add_behaviour_train(CLI::App* behaviour, int& exit_code, int argc, char** argv) {
  auto* train = behaviour->add_subcommand(
      "train", "Train linear behaviour policies with Augmented Random Search");
  struct TrainArgs {
    std::string env, out;
    int iterations = 0, threads = 2, directions = 0, top = 0, eval_episodes = 0;
    double target = -1, step_size = 0, exploration = 0;
    std::uint64_t seed = 1;
  };
  auto t = std::make_shared<TrainArgs>();
  train->add_option("--env", t->env, "hopper, walker2d or halfcheetah")
      ->required()
      ->check(known_environment());
  train->add_option("--out", t->out, "Output JSON with every snapshot and the medium/expert choice")
      ->required();
  train->add_option("--seed", t->seed, "Random seed")->capture_default_str()->check(seed_number());
  train->add_option("--threads", t->threads, "Rollout threads (the result does not depend on it)")
      ->check(whole_number(1, 64))
      ->capture_default_str();
  train->add_option("--iterations", t->iterations, "Maximum iterations (default: the task's)")
      ->check(whole_number(1, 1'000'000));
  train->add_option("--target", t->target, "Stop at this evaluated return (default: the task's)")
      ->check(real_number(-1e9, 1e9));
  train->add_option("--directions", t->directions, "ARS directions N (default: the task's)")
      ->check(whole_number(1, 10'000));
  train
      ->add_option("--eval-episodes", t->eval_episodes,
                   "Episodes per evaluation (default: the task's)")
      ->check(whole_number(1, 1000));
  train->add_option("--top", t->top, "ARS top directions b (default: the task's)")
      ->check(whole_number(1, 10'000));
  train->add_option("--step-size", t->step_size, "ARS step size alpha (default: the task's)")
      ->check(real_number(0, 10, true));
  train
      ->add_option("--exploration", t->exploration,
                   "ARS exploration noise nu (default: the task's)")
      ->check(real_number(0, 10, true));
  const std::string command = join_args(argc, argv);
  train->callback([&exit_code, t, command] {
    auto config = behaviour::ars_defaults(t->env);
    config.seed = t->seed;
    config.threads = t->threads;
    if (t->iterations > 0) config.max_iterations = t->iterations;
    if (t->target >= 0) config.target_return = t->target;
    if (t->directions > 0) config.directions = t->directions;
    if (t->eval_episodes > 0) config.eval_episodes = t->eval_episodes;
    if (t->top > 0) config.top_directions = t->top;
    if (t->step_size > 0) config.step_size = t->step_size;
    if (t->exploration > 0) config.exploration = t->exploration;
    TerminalProgress bar("training " + config.env);
    auto run = behaviour::train_ars(config, bar.progress());
    run.command = command;
    write_text_atomically(t->out, behaviour::to_json(run) + "\n");
    const auto& e = run.snapshots[run.expert];
    const auto& m = run.snapshots[run.medium];
    std::printf(
        "%s: expert return %.1f at iteration %d (%lld env steps); medium return %.1f at iteration "
        "%d\n",
        config.env.c_str(), e.eval_return, e.iteration, static_cast<long long>(e.env_steps),
        m.eval_return, m.iteration);
    std::printf("wrote %s (%zu snapshots)\n", t->out.c_str(), run.snapshots.size());
    exit_code = kOk;
  });
}

// dstudio behaviour sac.
void add_behaviour_sac(CLI::App* behaviour, int& exit_code, int argc, char** argv) {
  auto* sac = behaviour->add_subcommand(
      "sac", "Train stochastic behaviour policies with Soft Actor-Critic, as D4RL did");
  struct SacArgs {
    behaviour::SacConfig config;
    std::string out;
    std::int64_t chunk = 0;
  };
  auto sa = std::make_shared<SacArgs>();
  sac->add_option("--env", sa->config.env,
                  "hopper, walker2d, halfcheetah, or ant-goal-reaching (the AntMaze goal-reacher)")
      ->required()
      ->check(known_training_environment());
  sac->add_option("--out", sa->out,
                  "Run folder; an existing run there continues exactly where it stopped")
      ->required();
  sac->add_option("--steps", sa->config.total_steps, "Environment steps of the whole run")
      ->check(whole_number(1, 100'000'000))
      ->capture_default_str();
  sac->add_option("--chunk", sa->chunk,
                  "Stop after this many steps in this call (0: run to the end)")
      ->check(whole_number(0, 100'000'000));
  sac->add_option("--seed", sa->config.seed, "Random seed")
      ->capture_default_str()
      ->check(seed_number());
  sac->add_option("--threads", sa->config.threads,
                  "LibTorch threads (results are reproducible for a thread count)")
      ->check(whole_number(1, 64))
      ->capture_default_str();
  sac->add_option("--eval-every", sa->config.eval_every,
                  "Environment steps between evaluated snapshots")
      ->check(whole_number(1, 100'000'000))
      ->capture_default_str();
  sac->add_option("--eval-episodes", sa->config.eval_episodes, "Episodes per evaluation")
      ->check(whole_number(1, 1000))
      ->capture_default_str();
  sac->add_option("--checkpoint-every", sa->config.checkpoint_every,
                  "Environment steps between checkpoints")
      ->check(whole_number(1, 100'000'000))
      ->capture_default_str();
  sac->add_option("--random-steps", sa->config.random_steps,
                  "Uniformly random actions before the actor acts")
      ->check(whole_number(0, 100'000'000))
      ->capture_default_str();
  sac->add_option("--batch", sa->config.batch, "Minibatch size")
      ->check(whole_number(1, 65536))
      ->capture_default_str();
  sac->add_option("--hidden", sa->config.hidden, "Units in each of the two hidden layers")
      ->check(whole_number(1, 4096))
      ->capture_default_str();
  sac->add_option("--replay-size", sa->config.replay_size, "Replay buffer capacity")
      ->check(whole_number(1, 100'000'000))
      ->capture_default_str();
  sac->add_option("--upturn-penalty", sa->config.upturn_penalty,
                  "Subtracted from the reward on each step the ant lies on its back (antmaze "
                  "goal-reacher only; 0: the task's own reward, -distance)")
      ->check(CLI::Range(0.0, 1000.0))
      ->capture_default_str();
  sac->add_flag("--upturn-ends", sa->config.upturn_ends,
                "Turning over ends the episode, its last step paying what lying there would "
                "(antmaze goal-reacher only)");
  sac->add_option("--start-from", sa->config.start_from,
                  "A SAC run folder whose networks, optimisers, temperature and replay buffer (if "
                  "it has one) a new run starts from (same observation and action sizes)");
  const std::string sac_command = join_args(argc, argv);
  sac->callback([&exit_code, sa, sac_command] {
    sa->config.env = behaviour::training_task(sa->config.env).name;
    TerminalProgress bar("SAC " + sa->config.env);
    g_cancel = &bar.progress().cancel;
    auto previous_int = std::signal(SIGINT, on_interrupt);
    auto previous_term = std::signal(SIGTERM, on_interrupt);
    // Said once the handlers are in place, so a script (or a test) knows an interrupt is heard.
    std::fprintf(
        stderr,
        "SAC on %s: running; Ctrl+C stops it with a checkpoint the same command continues from\n",
        sa->config.env.c_str());
    behaviour::SacRun run;
    try {
      run = behaviour::train_sac(sa->config, sa->out, sa->chunk, bar.progress(), sac_command);
    } catch (const Cancelled&) {
      std::signal(SIGINT, previous_int);
      std::signal(SIGTERM, previous_term);
      g_cancel = nullptr;
      std::printf("stopped at step %lld with a checkpoint; the same command continues it\n",
                  static_cast<long long>(behaviour::read_sac_run(sa->out).steps));
      exit_code = 130;
      return;
    }
    std::signal(SIGINT, previous_int);
    std::signal(SIGTERM, previous_term);
    g_cancel = nullptr;
    const auto& snaps = run.policies.snapshots;
    std::printf("%s: %lld of %lld steps, %zu snapshots", sa->config.env.c_str(),
                static_cast<long long>(run.steps), static_cast<long long>(run.config.total_steps),
                snaps.size());
    if (!snaps.empty()) {
      const auto best = std::max_element(
          snaps.begin(), snaps.end(),
          [](const auto& a, const auto& b) { return a.behaviour_return < b.behaviour_return; });
      std::printf("; last sampled return %.0f, best %.0f at step %lld",
                  snaps.back().behaviour_return, best->behaviour_return,
                  static_cast<long long>(best->env_steps));
    }
    std::printf("\n");
    exit_code = kOk;
  });
}

// dstudio behaviour ship.
void add_behaviour_ship(CLI::App* behaviour, int& exit_code) {
  auto* ship = behaviour->add_subcommand(
      "ship",
      "Choose the expert, medium and replay policies of a SAC run and write them as one file");
  struct ShipArgs {
    std::string run, out;
    int episodes = 20, candidates = 8, replay = 4, threads = 2, navigation_episodes = 50;
    double fraction = 1.0 / 3.0;
    std::int64_t medium_after = 0;
    std::string expert_by;
  };
  auto sh = std::make_shared<ShipArgs>();
  ship->add_option("--run", sh->run, "A SAC run folder")->required()->check(CLI::ExistingDirectory);
  ship->add_option("--out", sh->out, "Policy file, e.g. resources/policies/hopper-sac.json")
      ->required();
  ship->add_option("--episodes", sh->episodes, "Fresh episodes to confirm each candidate")
      ->check(whole_number(1, 1000))
      ->capture_default_str();
  ship->add_option("--candidates", sh->candidates,
                   "Best snapshots of the curve considered for the expert")
      ->check(whole_number(1, 1000))
      ->capture_default_str();
  ship->add_option("--replay", sh->replay, "Snapshots before medium kept for medium-replay")
      ->check(whole_number(0, 100))
      ->capture_default_str();
  ship->add_option("--medium-fraction", sh->fraction,
                   "Medium: the first snapshot reaching this share of the expert's return")
      ->check(real_number(0.05, 1))
      ->capture_default_str();
  ship->add_option("--medium-after", sh->medium_after,
                   "Medium: only snapshots from this many steps on (skip an early gait that "
                   "reaches the return another way)")
      ->check(whole_number(0, 100'000'000))
      ->capture_default_str();
  ship->add_option("--threads", sh->threads,
                   "Evaluation threads (the result does not depend on it)")
      ->check(whole_number(1, 64))
      ->capture_default_str();
  ship->add_option("--expert-by", sh->expert_by,
                   "What ranks the expert's candidates: return (their fresh sampled return), or "
                   "navigation (a goal-reacher's: how often D4RL's navigator driving its mean "
                   "action reaches the goal of antmaze-umaze-v2, -medium-play-v2 and "
                   "-large-play-v2, each rate over its target of 90, 80 and 70%, the lowest "
                   "counting); default navigation for a goal-reacher's run, else return")
      ->check(CLI::IsMember({"return", "navigation"}));
  ship->add_option("--navigation-episodes", sh->navigation_episodes,
                   "Episodes of each maze per candidate with --expert-by navigation")
      ->check(whole_number(1, 10000))
      ->capture_default_str();
  ship->callback([&exit_code, sh] {
    const auto run = behaviour::read_sac_run(sh->run);
    const bool goal_reacher = behaviour::is_goal_reacher_task(run.config.env);
    const std::string by =
        sh->expert_by.empty() ? (goal_reacher ? "navigation" : "return") : sh->expert_by;
    if (by == "navigation" && !goal_reacher)
      throw UsageError("--expert-by navigation ranks a goal-reacher's snapshots; " + sh->run +
                       " trains " + run.config.env);
    std::function<double(const behaviour::PolicySet&, int)> navigation;
    if (by == "navigation")
      navigation = [sh](const behaviour::PolicySet& all, int k) {
        const auto& snapshot = all.snapshots[static_cast<std::size_t>(k)];
        double score = std::numeric_limits<double>::infinity();
        for (const auto& [task, target] : behaviour::kControllerTargets) {
          const auto r = behaviour::navigation_success(
              task, std::get<behaviour::GaussianPolicy>(snapshot.policy), sh->navigation_episodes,
              1, sh->threads, {}, false);
          std::fprintf(stderr, "candidate after %lld steps, %s: %s\n",
                       static_cast<long long>(snapshot.env_steps), task,
                       behaviour::controller_success_text(task, r).c_str());
          score = std::min(score, r.rate() / target);
        }
        return score;
      };
    TerminalProgress bar("choosing policies");
    const auto set = behaviour::choose_shipped_policies(
        run, sh->episodes, sh->candidates, sh->fraction, sh->replay, sh->threads, bar.progress(),
        sh->medium_after, navigation);
    write_text_atomically(sh->out, behaviour::to_json(set) + "\n");
    for (std::size_t i = 0; i < set.snapshots.size(); ++i) {
      const int k = static_cast<int>(i);
      const char* role = k == set.expert ? "expert" : k == set.medium ? "medium" : "replay";
      std::printf("%-7s %s\n", role, set.describe(k).c_str());
    }
    std::printf("wrote %s\n", sh->out.c_str());
    exit_code = kOk;
  });
}

// dstudio behaviour eval.
void add_behaviour_eval(CLI::App* behaviour, int& exit_code) {
  auto* eval = behaviour->add_subcommand("eval",
                                         "Evaluate a behaviour policy: mean return and normalised "
                                         "score, sampled and with its mean action");
  struct EvalArgs {
    std::string env, file, snapshot = "expert", algorithm = "sac";
    int episodes = 10, threads = 2;
    double noise = behaviour::kBehaviourNoise;
    std::uint64_t seed = 0;
  };
  auto e = std::make_shared<EvalArgs>();
  eval->add_option("--env", e->env, "hopper, walker2d or halfcheetah")
      ->required()
      ->check(known_training_environment());
  eval->add_option("--algorithm", e->algorithm, "The shipped policies to evaluate: sac or ars")
      ->check(CLI::IsMember({"sac", "ars"}))
      ->capture_default_str();
  eval->add_option("--policies", e->file,
                   "A behaviour-policy JSON or shipped-policy file (default: the shipped one)");
  eval->add_option("--snapshot", e->snapshot, "expert, medium, or a snapshot index")
      ->capture_default_str();
  eval->add_option("--episodes", e->episodes, "Episodes")
      ->check(whole_number(1, 100000))
      ->capture_default_str();
  eval->add_option("--noise", e->noise, "Std of the Gaussian action noise of ARS policies")
      ->check(real_number(0, 10))
      ->capture_default_str();
  eval->add_option("--seed", e->seed, "Seed of the episodes")
      ->capture_default_str()
      ->check(seed_number());
  eval->add_option("--threads", e->threads, "Threads (the result does not depend on it)")
      ->check(whole_number(1, 64))
      ->capture_default_str();
  eval->callback([&exit_code, e] {
    const auto set =
        load_set(behaviour::training_task(e->env).name, e->algorithm, e->file, e->noise);
    const int i = pick_snapshot(set, e->snapshot);
    const auto& spec = behaviour::training_task(set.env);
    const double sampled =
        behaviour::evaluate_snapshot(set, i, e->episodes, e->seed, true, e->threads);
    const double mean_action =
        behaviour::evaluate_snapshot(set, i, e->episodes, e->seed, false, e->threads);
    std::printf("%s snapshot %d: %s\n", spec.name.c_str(), i, set.describe(i).c_str());
    std::printf(
        "  as the behaviour policy (sampled): mean return %.1f over %d episodes, normalised score "
        "%.1f\n",
        sampled, e->episodes, env::normalized_score(spec, sampled));
    std::printf("  with its mean action:              mean return %.1f, normalised score %.1f\n",
                mean_action, env::normalized_score(spec, mean_action));
    exit_code = kOk;
  });
}

// dstudio behaviour navigate.
void add_behaviour_navigate(CLI::App* behaviour, int& exit_code) {
  // behaviour navigate: the AntMaze controller's success rate, as datasets record it.
  auto* navigate =
      behaviour->add_subcommand("navigate",
                                "How often D4RL's navigator driving the goal-reacher (without the "
                                "collection's noise: sampled, then mean actions) reaches an "
                                "antmaze task's evaluation goal within its horizon");
  struct NavigateArgs {
    std::string env, file;
    int episodes = 100, threads = 2;
    std::uint64_t seed = 1;
  };
  auto n = std::make_shared<NavigateArgs>();
  navigate->add_option("--env", n->env, "An antmaze task, e.g. antmaze-umaze-v2")
      ->required()
      ->check(known_environment());
  navigate->add_option("--policies", n->file,
                       "The goal-reacher's policies (behaviour ship of an ant-goal-reaching run; "
                       "default: the shipped one)");
  navigate->add_option("--episodes", n->episodes, "Episodes")
      ->check(whole_number(1, 100000))
      ->capture_default_str();
  navigate->add_option("--seed", n->seed, "Seed of the episodes")
      ->capture_default_str()
      ->check(seed_number());
  navigate->add_option("--threads", n->threads, "Threads (the result does not depend on it)")
      ->check(whole_number(1, 64))
      ->capture_default_str();
  navigate->callback([&exit_code, n] {
    exit_code = run_guarded([&] {
      const auto& spec = env::task(n->env);
      if (spec.family != "antmaze") throw UsageError(n->env + " is not an antmaze task");
      const auto policy = behaviour::load_goal_reacher(n->file);
      TerminalProgress bar("navigating");
      // As the data is made (sampled actions), and with the mean action.
      const auto sampled = behaviour::navigation_success(
          spec.name, policy, n->episodes, n->seed, n->threads, bar.progress().part(0, 0.5), true);
      const auto mean = behaviour::navigation_success(
          spec.name, policy, n->episodes, n->seed, n->threads, bar.progress().part(0.5, 1), false);
      for (const auto& r : {sampled, mean})
        std::printf("%s: %s\n", spec.name.c_str(),
                    behaviour::controller_success_text(spec.name, r).c_str());
    });
  });
}

// dstudio behaviour expert.
void add_behaviour_expert(CLI::App* behaviour, int& exit_code) {
  // behaviour expert: D4RL's DAPG expert on an Adroit task, as its expert data plays it.
  auto* expert = behaviour->add_subcommand(
      "expert",
      "Score D4RL's DAPG expert policy on an Adroit task: sampled actions (as D4RL's expert data "
      "was made), then the mean action; the normalised score is D4RL's (100: its expert data)");
  struct ExpertArgs {
    std::string env, file;
    int episodes = 100, threads = 2;
    std::uint64_t seed = 0;
  };
  auto x = std::make_shared<ExpertArgs>();
  expert->add_option("--env", x->env, "pen, door, hammer or relocate")
      ->required()
      ->check(known_environment());
  expert->add_option("--policy", x->file,
                     "A dstudio-mlp-policy-1 file (default: the shipped DAPG expert)");
  expert->add_option("--episodes", x->episodes, "Episodes")
      ->check(whole_number(1, 100000))
      ->capture_default_str();
  expert->add_option("--seed", x->seed, "Seed of the episodes")
      ->capture_default_str()
      ->check(seed_number());
  expert->add_option("--threads", x->threads, "Threads (the result does not depend on it)")
      ->check(whole_number(1, 64))
      ->capture_default_str();
  expert->callback([&exit_code, x] {
    exit_code = run_guarded([&] {
      const auto& spec = env::task(x->env);
      if (spec.family != "adroit")
        throw UsageError(x->env + " is not an Adroit task (pen, door, hammer, relocate)");
      const auto policy = x->file.empty() ? behaviour::shipped_dapg_policy(spec.name)
                                          : behaviour::mlp_policy_from_json_text(
                                                read_regular_file(x->file, 64U << 20U), x->file);
      TerminalProgress bar("scoring");
      for (const bool sampled : {true, false}) {
        const auto s = behaviour::score_adroit_expert(
            spec.name, policy, x->episodes, sampled, x->seed, x->threads,
            bar.progress().part(sampled ? 0.0 : 0.5, sampled ? 0.5 : 1.0));
        std::printf(
            "%s: DAPG expert, %s: mean return %.1f (sd %.1f), normalised score %.1f +/- %.1f "
            "(95%%), %d of %d episodes succeed\n",
            spec.name.c_str(), sampled ? "sampled actions (as D4RL's data)" : "mean action",
            s.mean_return, s.std_return, s.mean_score, s.score_ci95, s.successes, s.episodes);
      }
    });
  });
}

}  // namespace

void add_behaviour_commands(CLI::App& app, int& exit_code, int argc, char** argv) {
  auto* behaviour = app.add_subcommand(
      "behaviour", "Train and evaluate the behaviour policies that generate datasets");
  behaviour->require_subcommand(1);
  add_behaviour_train(behaviour, exit_code, argc, argv);
  add_behaviour_sac(behaviour, exit_code, argc, argv);
  add_behaviour_ship(behaviour, exit_code);
  add_behaviour_eval(behaviour, exit_code);
  add_behaviour_navigate(behaviour, exit_code);
  add_behaviour_expert(behaviour, exit_code);
}

}  // namespace dstudio::cli

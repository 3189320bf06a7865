// dstudio dataset info | validate | generate | default | hide-velocities | synth

// Index of this file:
//   [SECTION] What a dataset says
//   [SECTION] Making datasets
//   [SECTION] Reading what the user names
//   [SECTION] The subcommands
//   [SECTION] Registering them

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.h"
#include "dstudio/behaviour/adroit_data.h"
#include "dstudio/behaviour/antmaze_data.h"
#include "dstudio/behaviour/d4rl_policy.h"
#include "dstudio/behaviour/default_datasets.h"
#include "dstudio/behaviour/demonstrations.h"
#include "dstudio/behaviour/generate.h"
#include "dstudio/behaviour/kitchen_demos.h"
#include "dstudio/behaviour/policy_set.h"
#include "dstudio/common/read_file.h"
#include "dstudio/common/resources.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/data/synthetic.h"
#include "dstudio/env/compatibility.h"
#include "dstudio/env/environment.h"
#include "terminal_progress.h"

namespace dstudio::cli {
namespace {

using data::Dataset;
using data::DatasetSummary;

// ---------------------------------------------------------------------------------------------
// [SECTION] What a dataset says

// Normalised by D4RL's reference returns when the environment is known, else NaN.
double normalised(const Dataset& ds, double ret) {
  try {
    return ds.env_id.empty() ? std::nan("") : env::normalized_score(env::task(ds.env_id), ret);
  } catch (const env::EnvError&) {
    return std::nan("");
  }
}

// Complete episodes whose return is above 0: of a goal-reaching task, those that reached the goal.
std::int64_t goal_episodes(const Dataset& ds) {
  std::int64_t n = 0;
  for (const auto& e : ds.episodes) n += e.complete() && e.ret > 0.0;
  return n;
}

nlohmann::ordered_json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

// The behaviour policy the file carries in metadata/policy (D4RL's expert files), or null.
nlohmann::ordered_json policy_json(const Dataset& ds) {
  const auto p = behaviour::summarize_d4rl_policy(ds);
  if (!p.present) return nullptr;
  return {{"usable", p.usable}, {"sizes", p.sizes}, {"quirk", p.quirk}, {"refusal", p.refusal}};
}

nlohmann::ordered_json to_json(const Dataset& ds, const DatasetSummary& s, double r2) {
  nlohmann::ordered_json arrays = nlohmann::ordered_json::array();
  for (const auto& a : ds.arrays)
    arrays.push_back({{"key", a.key}, {"dtype", a.dtype}, {"shape", a.shape}});
  return {
      {"path", ds.path},
      {"format", ds.format},
      {"env_id", ds.env_id},
      {"transitions", s.transitions},
      {"episodes", s.episodes},
      {"terminated", s.terminated},
      {"timed_out", s.timed_out},
      {"unterminated_episodes", s.unterminated_episodes},
      {"tail_steps", s.tail_steps},
      {"timeouts_synthesized", ds.timeouts_synthesized},
      {"obs_dim", s.obs_dim},
      {"act_dim", s.act_dim},
      {"qpos_dim", ds.data.qpos_dim},
      {"qvel_dim", ds.data.qvel_dim},
      {"return_min", s.return_min},
      {"return_mean", s.return_mean},
      {"return_max", s.return_max},
      {"return_std", s.return_std},
      {"return_quantiles",
       {{"p10", s.return_p10},
        {"p25", s.return_p25},
        {"median", s.return_median},
        {"p75", s.return_p75},
        {"p90", s.return_p90}}},
      {"normalized_return_mean", number_or_null(normalised(ds, s.return_mean))},
      {"linear_action_r2", number_or_null(r2)},
      {"length_min", s.length_min},
      {"length_mean", s.length_mean},
      {"length_max", s.length_max},
      {"state_mean", ds.state_mean},
      {"state_std", ds.state_std},
      {"arrays", arrays},
      {"metadata", ds.metadata},
      {"fingerprint", ds.fingerprint},
      {"warnings", ds.warnings},
      {"notes", ds.notes},
      {"task_caveat", ds.task_caveat},
      {"episodes_reaching_goal", goal_episodes(ds)},
      {"behaviour_policy", policy_json(ds)},
  };
}

void print_text(const Dataset& ds, const DatasetSummary& s, double r2) {
  std::printf("File          %s\n", ds.path.c_str());
  std::printf("Format        %s%s\n", ds.format.c_str(),
              ds.env_id.empty() ? "" : ("  (environment " + ds.env_id + ")").c_str());
  if (!ds.task_caveat.empty()) std::printf("Task          %s\n", ds.task_caveat.c_str());
  // AntMaze data made by the studio: how well its controller reaches the evaluation goal.
  if (const auto it = ds.metadata.find("controller_success"); it != ds.metadata.end())
    std::printf("Controller    %s\n", it->second.c_str());
  std::printf("Transitions   %lld\n", static_cast<long long>(s.transitions));
  std::printf("Episodes      %lld complete: %lld terminal, %lld timeout%s\n",
              static_cast<long long>(s.episodes), static_cast<long long>(s.terminated),
              static_cast<long long>(s.timed_out),
              ds.timeouts_synthesized ? " (cut every 1000 steps: no 'timeouts' in the file)" : "");
  std::printf("Tail          %lld step%s in %lld unterminated episode%s\n",
              static_cast<long long>(s.tail_steps), s.tail_steps == 1 ? "" : "s",
              static_cast<long long>(s.unterminated_episodes),
              s.unterminated_episodes == 1 ? "" : "s");
  std::printf("Dims          obs %lld, act %lld, qpos %lld, qvel %lld\n",
              static_cast<long long>(s.obs_dim), static_cast<long long>(s.act_dim),
              static_cast<long long>(ds.data.qpos_dim), static_cast<long long>(ds.data.qvel_dim));
  std::printf("Returns       min %.3f  mean %.3f  max %.3f  (std %.3f)\n", s.return_min,
              s.return_mean, s.return_max, s.return_std);
  std::printf("              p10 %.1f  p25 %.1f  median %.1f  p75 %.1f  p90 %.1f", s.return_p10,
              s.return_p25, s.return_median, s.return_p75, s.return_p90);
  const auto task = ds.env_id.empty() ? nullptr : env::find_task(ds.env_id);
  if (task && task->goal_reaching) {
    std::printf("\n");
    std::printf("Goal          %lld of %lld complete episodes reach the goal (return above 0)",
                static_cast<long long>(goal_episodes(ds)), static_cast<long long>(s.episodes));
  } else if (const double n = normalised(ds, s.return_mean); std::isfinite(n)) {
    std::printf("  (normalised mean %.1f)", n);
  }
  std::printf("\n");
  std::printf(
      "State->action linear R^2 %.3f (share of the action variance a linear function of the state "
      "explains)\n",
      r2);
  std::printf("Lengths       min %lld  mean %.1f  max %lld\n", static_cast<long long>(s.length_min),
              s.length_mean, static_cast<long long>(s.length_max));
  std::printf("Arrays\n");
  for (const auto& a : ds.arrays) {
    std::string shape;
    for (std::size_t i = 0; i < a.shape.size(); ++i)
      shape += (i ? ", " : "") + std::to_string(a.shape[i]);
    std::printf("  %-24s %-8s (%s)\n", a.key.c_str(), a.dtype.c_str(), shape.c_str());
  }
  if (!ds.metadata.empty()) {
    std::printf("Metadata\n");
    for (const auto& [k, v] : ds.metadata) {
      const std::string shown = v.size() > 70 ? v.substr(0, 67) + "..." : v;
      std::printf("  %-24s %s\n", k.c_str(), shown.c_str());
    }
  }
  if (const auto p = behaviour::summarize_d4rl_policy(ds); p.present) {
    if (p.usable)
      std::printf(
          "Policy        metadata/policy: a behaviour policy, %s; it plays in the "
          "viewers (decision-viewer --behaviour FILE)\n",
          p.sizes.c_str());
    else
      std::printf("Policy        metadata/policy cannot play: %s\n", p.refusal.c_str());
    if (!p.quirk.empty()) std::printf("Note          %s\n", p.quirk.c_str());
  }
  std::printf("Fingerprint   %s\n", ds.fingerprint.c_str());
  for (const auto& w : ds.warnings) std::printf("Warning       %s\n", w.c_str());
  for (const auto& n : ds.notes) std::printf("Note          %s\n", n.c_str());
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Making datasets

// Loads with a progress bar; prints the error and returns nullptr when the file is unusable.
std::unique_ptr<Dataset> load_or_report(const std::string& path) {
  try {
    TerminalProgress bar("loading");
    return std::make_unique<Dataset>(data::load_dataset(path, {.isolate = true}, bar.progress()));
  } catch (const data::DatasetError& e) {
    std::fprintf(stderr, "dstudio: error: %s\n", e.what());
    return nullptr;
  }
}

struct GenerateArgs {
  std::string env, kind, out, policies, algorithm = "sac";
  double noise = behaviour::kBehaviourNoise;
  bool mean_actions = false;
  std::int64_t episodes = 0;
  behaviour::GenerateConfig config;
};

// Whether the studio can make an Adroit task's human data: it ships the door's demonstrations
// alone (demonstrations.h).
bool human_demonstrations_ship(const std::string& task) {
  return embedded_resource("demonstrations/" + task + "-human.json").has_value();
}

// The kinds of an Adroit task the studio makes: expert (D4RL's DAPG expert policy) and, where the
// demonstrations ship, human. The cloned data come from a policy trained on the demonstrations,
// and the others' demonstrations are not shipped: a user brings D4RL's files for those.
void refuse_adroit_kind(const std::string& task, const std::string& kind) {
  if (kind.empty() || kind == "expert") return;
  if (kind == "human" && human_demonstrations_ship(task)) return;
  const std::string makes = human_demonstrations_ship(task)
                                ? "the expert data (D4RL's DAPG expert policy) and the human "
                                  "data (DAPG's demonstrations replayed)"
                                : "the expert data (D4RL's DAPG expert policy)";
  throw UsageError(
      "--kind " + kind + ": of " + task + " the studio makes " + makes + "; " +
      (kind == "human" || kind == "cloned"
           ? "the " + kind + " data come from people's demonstrations" +
                 (kind == "human" ? std::string(", not shipped with the studio for ") + task
                                  : std::string()) +
                 ": open D4RL's " + task + "-" + kind + "-v1.hdf5"
           : std::string("leave --kind out or say expert or human")));
}

// dataset generate --kind human: the demonstrations replayed as D4RL's hand_dapg_demos.py does.
void generate_adroit_human(const GenerateArgs& g) {
  const std::string task = env::task(g.env).name;
  if (g.episodes > 0 || g.config.transitions > 0 || g.mean_actions || !g.policies.empty())
    throw UsageError(
        "--kind human replays the demonstrations as they are: leave out --episodes, "
        "--transitions, --mean-actions and --policies");
  TerminalProgress bar("replaying");
  behaviour::ReplayAgreement agreement;
  auto made = behaviour::replay_demonstrations(behaviour::shipped_demonstrations(task),
                                               bar.progress(), &agreement);
  data::write_d4rl(g.out, made.arrays, made.metadata);
  std::printf("wrote %s (%s transitions in %s demonstrations; %s)\n", g.out.c_str(),
              made.metadata["transitions"].c_str(), made.metadata["episodes"].c_str(),
              made.metadata["replay_agreement"].c_str());
}

// dataset generate for an Adroit task: D4RL's DAPG expert played as D4RL's script plays it.
void generate_adroit(const GenerateArgs& g) {
  const std::string task = env::task(g.env).name;
  refuse_adroit_kind(task, g.kind);
  if (g.kind == "human") {
    generate_adroit_human(g);
    return;
  }
  if (g.config.transitions > 0)
    throw UsageError("--transitions: an Adroit expert dataset is counted in episodes (--episodes)");
  behaviour::AdroitExpertConfig config;
  config.task = task;
  if (g.episodes > 0) config.episodes = g.episodes;
  config.sampled = !g.mean_actions;
  config.seed = g.config.seed;
  config.threads = g.config.threads;
  const auto expert = g.policies.empty()
                          ? behaviour::shipped_dapg_policy(task)
                          : behaviour::mlp_policy_from_json_text(
                                read_regular_file(g.policies, 64U << 20U), g.policies);
  TerminalProgress bar("generating");
  auto made = behaviour::generate_adroit_expert_dataset(config, expert, bar.progress());
  data::write_d4rl(g.out, made.arrays, made.metadata);
  std::printf("wrote %s (%s transitions in %lld episodes)\n", g.out.c_str(),
              made.metadata["transitions"].c_str(), static_cast<long long>(config.episodes));
}

// dataset generate for an antmaze task: D4RL's navigator and the goal-reacher (antmaze_data.h).
void generate_antmaze(const GenerateArgs& g, bool noise_given) {
  if (!g.kind.empty() && g.kind != "antmaze")
    throw UsageError("--kind " + g.kind +
                     ": an antmaze task's data has one kind, D4RL's; leave --kind out");
  behaviour::AntMazeDataConfig config;
  config.task = env::task(g.env).name;
  if (g.config.transitions > 0) config.transitions = g.config.transitions;
  if (noise_given) config.action_noise = g.noise;
  config.sampled = !g.mean_actions;
  config.seed = g.config.seed;
  config.threads = g.config.threads;
  const auto goal_reacher = behaviour::load_goal_reacher(g.policies);
  TerminalProgress bar("generating");
  auto made =
      behaviour::generate_antmaze_dataset(config, goal_reacher, bar.progress().part(0, 0.9));
  const auto rate = behaviour::navigation_success(config.task, goal_reacher, 100, 1, config.threads,
                                                  bar.progress().part(0.9, 1.0));
  made.metadata["controller_success"] = behaviour::controller_success_text(config.task, rate);
  data::write_d4rl(g.out, made.arrays, made.metadata);
  std::printf("wrote %s\n%s: %s\n", g.out.c_str(), config.task.c_str(),
              made.metadata["controller_success"].c_str());
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] Reading what the user names

data::Dataset load_user_dataset(const std::string& path, data::LoadOptions options,
                                const Progress& progress) {
  options.isolate = true;
  data::Dataset ds = data::load_dataset(path, options, progress);
  for (const auto& w : ds.warnings)
    std::fprintf(stderr, "dstudio: warning: %s: %s\n", ds.path.c_str(), w.c_str());
  return ds;
}

namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] The subcommands

// dstudio dataset info.
void add_dataset_info(CLI::App* dataset, int& exit_code) {
  // dataset info
  auto* info = dataset->add_subcommand("info", "Summarise a D4RL or Minari dataset");
  auto info_path = std::make_shared<std::string>();
  auto info_json = std::make_shared<bool>(false);
  info->add_option("path", *info_path,
                   "D4RL .hdf5 file, Minari main_data.hdf5, or Minari dataset folder")
      ->required();
  info->add_flag("--json", *info_json, "Print one JSON object on stdout");
  info->callback([&exit_code, info_path, info_json] {
    auto ds = load_or_report(*info_path);
    if (!ds) {
      exit_code = kFailed;
      return;
    }
    const auto summary = data::summarize(*ds);
    const double r2 = data::linear_action_r2(ds->data);
    if (*info_json)
      std::cout << to_json(*ds, summary, r2).dump(2) << std::endl;
    else
      print_text(*ds, summary, r2);
  });
}

// dstudio dataset validate.
void add_dataset_validate(CLI::App* dataset, int& exit_code) {
  // dataset validate
  auto* validate = dataset->add_subcommand(
      "validate", "Exit 0 when a dataset is usable for training, else print why and exit 1");
  auto validate_path = std::make_shared<std::string>();
  validate->add_option("path", *validate_path, "Dataset file or Minari folder")->required();
  validate->callback([&exit_code, validate_path] {
    auto ds = load_or_report(*validate_path);
    if (!ds) {
      exit_code = kFailed;
      return;
    }
    const auto s = data::summarize(*ds);
    for (const auto& w : ds->warnings) std::fprintf(stderr, "dstudio: warning: %s\n", w.c_str());
    for (const auto& n : ds->notes)
      std::fprintf(stderr, "dstudio: note: %s: %s\n", ds->path.c_str(), n.c_str());
    if (s.episodes == 0) {
      std::fprintf(stderr, "dstudio: error: %s: no complete episode (terminal or timeout)\n",
                   ds->path.c_str());
      exit_code = kFailed;
      return;
    }
    // The fingerprint lets a user compare with what a checkpoint says it was trained on.
    std::printf("ok: %s: %lld transitions, %lld complete episodes, %s\n", ds->path.c_str(),
                static_cast<long long>(s.transitions), static_cast<long long>(s.episodes),
                ds->fingerprint.c_str());
  });
}

// dstudio dataset generate.
void add_dataset_generate(CLI::App* dataset, int& exit_code) {
  // dataset generate
  auto* generate = dataset->add_subcommand(
      "generate",
      "Make a dataset in the D4RL layout with the project's behaviour policies (D4RL's recipe)");
  auto g = std::make_shared<GenerateArgs>();
  generate
      ->add_option("--env", g->env,
                   "hopper, walker2d, halfcheetah, an antmaze task (antmaze-umaze-v2, ...) or an "
                   "Adroit task (pen, door, hammer, relocate: their expert data; the door's human "
                   "data too)")
      ->required()
      ->check(known_environment());
  generate->add_option(
      "--kind", g->kind,
      "random, medium, medium-replay, expert or medium-expert (locomotion; an "
      "antmaze task's data has one kind, D4RL's; an Adroit task's, expert, and door's "
      "also human: DAPG's demonstrations replayed)");
  generate
      ->add_option("--transitions", g->config.transitions,
                   "Number of transitions (default: D4RL's: 1M, medium-expert 2M, medium-replay "
                   "the steps to reach medium)")
      ->check(whole_number(1, 100'000'000));
  generate
      ->add_option(
          "--algorithm", g->algorithm,
          "Behaviour policies: sac (D4RL's, stochastic) or ars (linear with Gaussian noise)")
      ->check(CLI::IsMember({"sac", "ars"}))
      ->capture_default_str();
  generate->add_option("--seed", g->config.seed, "Random seed (same seed, same bytes)")
      ->capture_default_str()
      ->check(seed_number());
  auto* noise_option =
      generate
          ->add_option("--noise", g->noise,
                       "Std of the Gaussian action noise of ARS policies (antmaze: of the "
                       "goal-reacher's actions, default 0.2 as D4RL's)")
          ->check(real_number(0, 10))
          ->capture_default_str();
  generate->add_flag("--mean-actions", g->mean_actions,
                     "antmaze and Adroit: the policy's mean action instead of a sample (D4RL "
                     "samples)");
  generate
      ->add_option("--episodes", g->episodes,
                   "Adroit: episodes of the expert (default D4RL's 5,000)")
      ->check(whole_number(1, 1'000'000));
  generate
      ->add_option("--threads", g->config.threads,
                   "Rollout threads (the output does not depend on it)")
      ->check(whole_number(1, 64))
      ->capture_default_str();
  generate->add_option("--policies", g->policies,
                       "Behaviour-policy JSON (default: the shipped one)");
  generate->add_option("--out", g->out, "Output .hdf5 file")->required();
  generate->callback([&exit_code, g, noise_option] {
    exit_code = run_guarded([&] {
      if (env::task(g->env).family == "antmaze") {
        generate_antmaze(*g, noise_option->count() > 0);
        return;
      }
      if (env::task(g->env).family == "adroit") {
        generate_adroit(*g);
        return;
      }
      if (g->episodes > 0) throw UsageError("--episodes is for an Adroit task's expert data");
      if (g->kind.empty()) throw UsageError("--kind is required for " + g->env);
      g->config.env = env::task(g->env).name;
      g->config.kind = behaviour::parse_kind(g->kind);
      behaviour::PolicySet policies;
      if (g->config.kind != behaviour::DatasetKind::Random) {
        if (g->policies.empty()) {
          policies = behaviour::shipped_policy_set(g->config.env,
                                                   behaviour::parse_algorithm(g->algorithm));
          if (policies.algorithm == behaviour::PolicyAlgorithm::Ars)
            policies.action_noise = g->noise;
        } else {
          policies = behaviour::read_policy_set(g->policies, g->noise);
        }
      }
      TerminalProgress bar("generating");
      auto made = behaviour::generate_dataset(g->config, policies, bar.progress());
      data::write_d4rl(g->out, made.arrays, made.metadata);
      std::printf("wrote %s\n", g->out.c_str());
    });
  });
}

// dstudio dataset default.
void add_dataset_fallback(CLI::App* dataset, int& exit_code) {
  // dataset default
  auto* fallback = dataset->add_subcommand(
      "default",
      "Print the path of a default dataset, making it on first use (cached in "
      "~/.cache/decision-studio); without options the "
      "studio's own default: hopper medium-expert, the data of the shipped checkpoints");
  struct DefaultArgs {
    std::string env = behaviour::kStoryDataset.env,
                kind = behaviour::to_string(behaviour::kStoryDataset.kind), algorithm = "sac";
    bool story = false;
  };
  auto d = std::make_shared<DefaultArgs>();
  fallback->add_option("--env", d->env, "Environment")
      ->capture_default_str()
      ->check(known_environment());
  fallback->add_option("--kind", d->kind, "Dataset kind")->capture_default_str();
  fallback
      ->add_option("--algorithm", d->algorithm,
                   "Behaviour policies: sac (D4RL's sizes) or ars (100,000 transitions)")
      ->check(CLI::IsMember({"sac", "ars"}))
      ->capture_default_str();
  fallback->add_flag("--story", d->story,
                     "The dataset of the shipped checkpoints and the studio's default view");
  auto* kind_option = fallback->get_option("--kind");
  fallback->callback([&exit_code, d, kind_option] {
    try {
      if (!d->story && env::task(d->env).family == "adroit")
        refuse_adroit_kind(env::task(d->env).name, kind_option->count() > 0 ? d->kind : "");
      TerminalProgress bar("making the default dataset");
      const bool human = !d->story && kind_option->count() > 0 && d->kind == "human";
      const auto path = d->story ? behaviour::ensure_story_dataset(bar.progress())
                        : human  ? behaviour::ensure_adroit_human_dataset(d->env, bar.progress())
                                 : behaviour::ensure_default_dataset(
                                       d->env, behaviour::parse_kind(d->kind), bar.progress(),
                                       behaviour::parse_algorithm(d->algorithm));
      // Which dataset this is, on stderr so that $(dstudio dataset default) stays a path.
      if (const auto known = behaviour::identify_default_dataset(path))
        std::fprintf(
            stderr, "%s%s\n", known->label.c_str(),
            known->story
                ? ": the studio's default dataset, on which the shipped checkpoints were trained"
                : "");
      std::puts(path.c_str());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "dstudio: error: %s\n", e.what());
      exit_code = kFailed;
    }
  });
}

// dstudio dataset hide-velocities.
void add_dataset_hide_velocities(CLI::App* dataset, int& exit_code) {
  // dataset hide-velocities
  auto* hide =
      dataset->add_subcommand("hide-velocities",
                              "Write the partially observed copy of a dataset: observations cut to "
                              "the positions, for the task's -po variant");
  struct HideArgs {
    std::string in, out;
  };
  auto h = std::make_shared<HideArgs>();
  hide->add_option("dataset", h->in, "A D4RL or Minari dataset that names its environment")
      ->required()
      ->check(CLI::ExistingPath);
  hide->add_option("--out", h->out, "Output .hdf5 file")->required();
  hide->callback([&exit_code, h] {
    exit_code = run_guarded([&] {
      data::LoadOptions options;
      options.next_observations = true;
      const auto full = load_user_dataset(h->in, options);
      const auto view = env::hide_velocities(full);
      data::write_d4rl(h->out, view.data, view.metadata);
      std::printf("wrote %s: %s, observations of %lld values (%lld before)\n", h->out.c_str(),
                  view.task->name.c_str(), static_cast<long long>(view.data.obs_dim),
                  static_cast<long long>(full.data.obs_dim));
    });
  });
}

// dstudio dataset import-mjl.
void add_dataset_import_mjl(CLI::App* dataset, int& exit_code) {
  // dataset import-mjl
  auto* import_mjl = dataset->add_subcommand(
      "import-mjl",
      "Make D4RL's kitchen dataset from relay-policy-learning's demonstration logs (.mjl), "
      "replayed in the studio's kitchen as D4RL's script replayed them");
  struct ImportArgs {
    std::vector<std::string> inputs;
    std::string task = "kitchen-complete", out;
    behaviour::KitchenImportConfig config;
  };
  auto imp = std::make_shared<ImportArgs>();
  import_mjl
      ->add_option("logs", imp->inputs,
                   ".mjl files or folders of them (kitchen_demos_multitask or its sub-folders)")
      ->required()
      ->check(CLI::ExistingPath);
  import_mjl
      ->add_option("--task", imp->task,
                   "kitchen-complete (only the *microwave_kettle_switch_slide folders of a folder "
                   "of folders), kitchen-partial or kitchen-mixed")
      ->capture_default_str();
  import_mjl->add_option("--out", imp->out, "Output .hdf5 file")->required();
  import_mjl->add_option("--seed", imp->config.seed, "Seed of the observation noise")
      ->capture_default_str()
      ->check(seed_number());
  import_mjl->callback([&exit_code, imp] {
    exit_code = run_guarded([&] {
      imp->config.task = env::task(imp->task).name;
      for (const auto& input : imp->inputs) imp->config.inputs.emplace_back(input);
      TerminalProgress bar("replaying");
      const auto made = behaviour::import_kitchen_demos(imp->config, bar.progress());
      data::WriteOptions options;
      options.write_timeouts = false;  // D4RL's kitchen files have none
      data::write_d4rl(imp->out, made.arrays, made.metadata, options);
      std::printf("wrote %s: %s, %zu demonstrations, %lld transitions\n", imp->out.c_str(),
                  imp->config.task.c_str(), made.logs.size(),
                  static_cast<long long>(made.arrays.size()));
    });
  });
}

// dstudio dataset synth.
void add_dataset_synth(CLI::App* dataset, int& exit_code) {
  // dataset synth
  auto* synth = dataset->add_subcommand(
      "synth",
      "Write a deterministic synthetic dataset (hopper's shapes, not physics) in the D4RL layout");
  struct SynthArgs {
    std::string out;
    data::SyntheticSpec spec;
    bool float64 = false, no_timeouts = false;
  };
  auto args = std::make_shared<SynthArgs>();
  synth->add_option("--out", args->out, "Output .hdf5 file")->required();
  synth->add_option("--transitions", args->spec.transitions, "Number of transitions")
      ->check(whole_number(1, 100'000'000))
      ->capture_default_str();
  synth->add_option("--seed", args->spec.seed, "Random seed")
      ->capture_default_str()
      ->check(seed_number());
  synth->add_flag("--float64", args->float64, "Store floats as float64 (as D4RL replay files do)");
  synth->add_flag("--no-timeouts", args->no_timeouts, "Omit 'timeouts' (as old D4RL files do)");
  synth->callback([&exit_code, args] {
    args->spec.tail_steps =
        std::min<std::int64_t>(args->spec.tail_steps, args->spec.transitions / 10);
    data::WriteOptions options;
    options.float64 = args->float64;
    options.write_timeouts = !args->no_timeouts;
    try {
      data::write_d4rl(args->out, data::make_synthetic(args->spec),
                       data::synthetic_metadata(args->spec), options);
    } catch (const data::DatasetError& e) {
      std::fprintf(stderr, "dstudio: error: %s\n", e.what());
      exit_code = kFailed;
      return;
    }
    std::printf("wrote %s\n", args->out.c_str());
  });
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] Registering them

void add_dataset_commands(CLI::App& app, int& exit_code) {
  auto* dataset = app.add_subcommand("dataset", "Inspect, check and make offline-RL datasets");
  dataset->require_subcommand(1);
  add_dataset_info(dataset, exit_code);
  add_dataset_validate(dataset, exit_code);
  add_dataset_generate(dataset, exit_code);
  add_dataset_fallback(dataset, exit_code);
  add_dataset_hide_velocities(dataset, exit_code);
  add_dataset_import_mjl(dataset, exit_code);
  add_dataset_synth(dataset, exit_code);
}

}  // namespace dstudio::cli

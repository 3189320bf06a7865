// dstudio variants | import | export | predict: the model variants, importing checkpoints from
// other code, and predictions of a checkpoint on windows from a file.

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "dstudio/common/atomic_file.h"
#include "dstudio/models/checkpoint.h"
#include "dstudio/models/checkpoint_integrity.h"
#include "dstudio/models/config_fields.h"
#include "dstudio/models/export.h"
#include "dstudio/models/import.h"
#include "dstudio/models/predict.h"
#include "dstudio/models/targets.h"
#include "dstudio/models/variant_config.h"
#include "dstudio/models/variant_registry.h"
#include "rollouts.h"

namespace dstudio::cli {
namespace {

// Each command reports bad input as "dstudio: error: <file>: <problem>" (run_guarded), and
// writes nothing then.

// ---------------------------------------------------------------------------------------------
// dstudio variants

// Every field of --config and --training with its range or choices: the ranges they (and the
// studio's forms) check, from the one table.
void list_variant_fields() {
  for (const auto& [title, list] : {std::pair{"--config (variant)", &models::variant_fields()},
                                    std::pair{"--training", &models::training_fields()}}) {
    std::printf("%s\n", title);
    for (const auto& f : *list) {
      std::string range;
      for (const auto& c : f.choices) range += (range.empty() ? "" : "|") + c;
      if (range.empty()) range = std::isfinite(f.minimum) ? models::range_text(f) : "true|false";
      if (range.size() > 22)
        std::printf("  %-18s %s\n  %-18s %-22s %s\n", f.key.c_str(), range.c_str(), "", "",
                    f.description.c_str());
      else
        std::printf("  %-18s %-22s %s\n", f.key.c_str(), range.c_str(), f.description.c_str());
    }
  }
}

// The variants as a table (tokens, mixer, K, size), hier's choices, and those plugins added.
void list_variants() {
  std::printf("%-17s %-12s %-19s %-7s %s\n", "variant", "tokens", "mixer", "K",
              "layers x hidden, heads");
  std::string from_plugins;
  for (const auto& definition : models::variant_registry().all()) {
    const auto& name = definition->name;
    const auto c = models::make_variant(name);
    if (!definition->origin.builtin())
      from_plugins +=
          "\n  " + name + ": " + definition->description + " [" + definition->origin.label() + "]";
    std::string mixer = c.mixer;
    if (c.hybrid) mixer += " + attention";
    if (c.single_filter && c.tokenizer == models::Tokenizer::Triplet) mixer += " (1 filter)";
    std::string tokens = models::to_string(c.tokenizer);
    if (c.tokenizer == models::Tokenizer::Merged)
      tokens += "/" + std::string(models::to_string(c.merger));
    std::printf("%-17s %-12s %-19s %-7d %d x %d, %d\n", name.c_str(), tokens.c_str(), mixer.c_str(),
                c.context_length, c.layers, c.hidden, c.heads);
  }
  std::string mergers, mixers;
  for (const auto& m : models::hier_mergers()) mergers += (mergers.empty() ? "" : "|") + m;
  for (const auto& m : models::hier_mixers()) mixers += (mixers.empty() ? "" : "|") + m;
  std::printf("\nhier takes --merger %s and --mixer %s (DHi = conv + pooling).\n", mergers.c_str(),
              mixers.c_str());
  if (!from_plugins.empty()) std::printf("\nFrom plugins:%s\n", from_plugins.c_str());
}

void add_variants_command(CLI::App& app, int& exit_code) {
  auto* variants =
      app.add_subcommand("variants", "List the model variants with their default configurations");
  auto json = std::make_shared<bool>(false);
  auto fields = std::make_shared<bool>(false);
  variants->add_flag("--json", *json,
                     "Print one JSON object: variant name -> default configuration");
  variants->add_flag("--fields", *fields,
                     "Print every field of --config and --training with its range or choices");
  variants->callback([&exit_code, json, fields] {
    if (*fields) {
      list_variant_fields();
      exit_code = kOk;
      return;
    }
    if (*json) {
      nlohmann::ordered_json all;
      for (const auto& name : models::variant_names())
        all[name] = nlohmann::ordered_json::parse(models::to_json(models::make_variant(name)));
      std::cout << all.dump(2) << std::endl;
    } else {
      list_variants();
    }
    exit_code = kOk;
  });
}

// ---------------------------------------------------------------------------------------------
// dstudio import | export

// What `dstudio import` is given.
struct ImportArgs {
  std::string format, file, out;
  models::CorlImportOptions options;
  int heads = 1;
  double rtg_scale = 1000;
};

// Writes the checkpoint `ia.out` from the state_dict `ia.file` and says what it holds.
void import_checkpoint(const ImportArgs& ia) {
  const auto info = ia.format == "state-dict" ? models::import_state_dict(ia.file, ia.out)
                                              : models::import_corl_dt(ia.file, ia.out, ia.options);
  const auto& c = info.variant;
  std::printf(
      "imported %s -> %s\n  %s: state %d, action %d, K %d, %d layers x %d hidden, heads %d, "
      "timesteps < %d\n",
      ia.file.c_str(), ia.out.c_str(), c.variant.c_str(), c.state_dim, c.act_dim, c.context_length,
      c.layers, c.hidden, c.heads, c.max_ep_len);
  bool stats = false;
  for (float v : info.state_std) stats |= v != 1.0f;
  for (float v : info.state_mean) stats |= v != 0.0f;
  std::printf("  state statistics: %s; rtg scale %g\n",
              stats ? "from the file or the .json beside it" : "none in the file (mean 0, std 1)",
              info.rtg_scale);
}

void add_import_command(CLI::App& app, int& exit_code) {
  auto* importer = app.add_subcommand(
      "import", "Import a checkpoint saved by other code as a Decision Studio checkpoint");
  auto ia = std::make_shared<ImportArgs>();
  importer
      ->add_option(
          "--format", ia->format,
          "corl-dt: a state_dict of CORL's Decision Transformer (algorithms/offline/dt.py); "
          "state-dict: a state_dict `dstudio export --format state-dict` wrote, its description "
          "in the .json beside it")
      ->required()
      ->check(CLI::IsMember({"corl-dt", "state-dict"}));
  importer
      ->add_option("file", ia->file,
                   "The .pt file (torch.save of model.state_dict(), or CORL's checkpoint dict)")
      ->required()
      ->check(CLI::ExistingFile);
  importer->add_option("--out", ia->out, "The checkpoint to write")->required();
  auto* heads = importer
                    ->add_option("--heads", ia->heads,
                                 "Attention heads the model was trained with (default: the "
                                 ".json beside the file, else CORL's 1)")
                    ->check(whole_number(1, 64));
  importer
      ->add_option("--seq-len", ia->options.seq_len,
                   "Steps per window K (default: read from the causal mask)")
      ->check(whole_number(1, 10000));
  auto* rtg_scale = importer
                        ->add_option("--rtg-scale", ia->rtg_scale,
                                     "Returns-to-go are divided by this (1 / CORL's reward_scale; "
                                     "default: the .json beside the file, else 1000)")
                        ->check(real_number(0, 1e9, true));
  importer
      ->add_option("--env", ia->options.env_id,
                   "Environment the model acts in (hopper, walker2d, halfcheetah)")
      ->check(known_environment());
  importer->callback([&exit_code, ia, heads, rtg_scale] {
    if (heads->count()) ia->options.heads = ia->heads;
    if (rtg_scale->count()) ia->options.rtg_scale = ia->rtg_scale;
    exit_code = run_guarded([&] { import_checkpoint(*ia); });
  });
}

// What `dstudio export` is given.
struct ExportArgs {
  std::string format, checkpoint, out;
};

// Writes the model of `ea.checkpoint` as the state_dict `ea.out`, with its description beside it.
void export_checkpoint(const ExportArgs& ea) {
  if (ea.format == "corl-dt")
    models::export_corl_dt(ea.checkpoint, ea.out);
  else
    models::export_state_dict(ea.checkpoint, ea.out);
  std::printf("exported %s -> %s (%s), %s\n", ea.checkpoint.c_str(), ea.out.c_str(),
              ea.format.c_str(), models::export_sidecar(ea.out).c_str());
}

void add_export_command(CLI::App& app, int& exit_code) {
  auto* exporter = app.add_subcommand(
      "export", "Write a checkpoint's model as a state_dict that PyTorch code loads (torch.load)");
  auto ea = std::make_shared<ExportArgs>();
  exporter
      ->add_option("--format", ea->format,
                   "corl-dt: CORL's DecisionTransformer (algorithms/offline/dt.py) loads it with "
                   "load_state_dict(strict=True), its constructor's arguments in the .json beside "
                   "it; state-dict: any variant in the studio's names, its description beside it")
      ->required()
      ->check(CLI::IsMember({"corl-dt", "state-dict"}));
  exporter->add_option("--checkpoint", ea->checkpoint, "A Decision Studio checkpoint")
      ->required()
      ->check(CLI::ExistingFile);
  exporter->add_option("--out", ea->out, "The .pt file to write (and the .json beside it)")
      ->required();
  exporter->callback(
      [&exit_code, ea] { exit_code = run_guarded([&] { export_checkpoint(*ea); }); });
}

// ---------------------------------------------------------------------------------------------
// dstudio predict

// What `dstudio predict` is given.
struct PredictArgs {
  std::string checkpoint, input, output, patch_from, dataset;
  std::vector<std::string> interventions, patches;
  bool no_normalize = false, action_lens = false;
  int threads = 1;
  std::uint64_t seed = 0;
};

// Writes the checkpoint's actions (and its action lens) on the windows of `pa.input` to
// `pa.output`, with a progress bar; Ctrl-C stops it.
void predict_windows(const PredictArgs& pa) {
  models::PredictOptions options;
  options.normalize = !pa.no_normalize;
  options.threads = pa.threads;
  options.interventions = pa.interventions;
  options.patch_from = pa.patch_from;
  options.patches = pa.patches;
  options.action_lens = pa.action_lens;
  options.dataset = pa.dataset;
  options.seed = pa.seed;
  models::PredictSummary s;
  run_interruptible("predicting", [&](const Progress& progress) {
    s = models::predict_file(pa.checkpoint, pa.input, pa.output, options, progress);
  });
  for (const auto& w : s.warnings)
    std::fprintf(stderr, "dstudio predict: warning: %s\n", w.c_str());
  std::printf("wrote %s: actions (%lld, %lld, %lld)", pa.output.c_str(),
              static_cast<long long>(s.batch), static_cast<long long>(s.steps),
              static_cast<long long>(s.act_dim));
  if (pa.action_lens)
    std::printf(", lens (%lld, %lld, %d, %lld)", static_cast<long long>(s.batch),
                static_cast<long long>(s.steps), s.layers, static_cast<long long>(s.act_dim));
  std::printf("\n");
}

void add_predict_command(CLI::App& app, int& exit_code) {
  auto* predict = app.add_subcommand(
      "predict", "Predict the actions of a checkpoint on windows from an HDF5 file");
  auto pa = std::make_shared<PredictArgs>();
  predict->add_option("--checkpoint", pa->checkpoint, "A Decision Studio checkpoint")
      ->required()
      ->check(CLI::ExistingFile);
  predict
      ->add_option("--input", pa->input,
                   "HDF5 with states (B,K,S), actions (B,K,A), returns_to_go (B,K) or (B,K,1), "
                   "timesteps (B,K), optional mask (B,K)")
      ->required()
      ->check(CLI::ExistingFile);
  predict
      ->add_option("--output", pa->output,
                   "HDF5 to write: actions (B,K,A), the prediction at every position")
      ->required();
  predict->add_flag(
      "--no-normalize", pa->no_normalize,
      "Feed the inputs exactly as given (default: states by the checkpoint's mean/std, "
      "returns-to-go by its rtg scale)");
  predict->add_option("--threads", pa->threads, "LibTorch threads")
      ->capture_default_str()
      ->check(whole_number(1, 64));
  predict->add_option(
      "--intervene", pa->interventions,
      "An intervention inside the forward pass (repeatable): head:L.H=zero|mean|resample, "
      "mixer:L=..., mlp:L=..., context:C, modality:R|s|a=zero, steer:L=ALPHA*FILE; each may end "
      "in @T (a token) or @step:K. Layers, heads, tokens and steps count from 1");
  predict
      ->add_option("--patch-from", pa->patch_from,
                   "A second input of the same shape whose values --patch puts in")
      ->check(CLI::ExistingFile);
  predict->add_option("--patch", pa->patches,
                      "What to patch from --patch-from (repeatable): resid:L.T (the stream after "
                      "block L at token T), head:L.H, mixer:L or mlp:L, optionally @T or @step:K");
  predict->add_flag("--action-lens", pa->action_lens,
                    "Also write lens (B,K,layers,A): the final norm and action head applied to the "
                    "stream after each block");
  predict
      ->add_option("--dataset", pa->dataset,
                   "Where mean and resample ablations draw windows (default: the checkpoint's "
                   "dataset)")
      ->check(CLI::ExistingFile);
  predict->add_option("--seed", pa->seed, "Draws the windows of resample ablations")
      ->capture_default_str()
      ->check(seed_number());
  predict->callback([&exit_code, pa] { exit_code = run_guarded([&] { predict_windows(*pa); }); });
}

// ---------------------------------------------------------------------------------------------
// dstudio checkpoint info | verify | seal | slim

// What produced the checkpoint `path`: its description, as text or (`json`) one JSON object.
void describe_checkpoint(const std::string& path, bool json) {
  const auto info = models::read_checkpoint_info(path);
  nlohmann::ordered_json j = {
      {"path", info.path},
      {"variant", nlohmann::ordered_json::parse(models::to_json(info.variant))},
      {"training", nlohmann::ordered_json::parse(models::to_json(info.training))},
      {"dataset", info.dataset_path},
      {"dataset_fingerprint", info.dataset_fingerprint},
      {"env_id", info.env_id},
      {"rtg_scale", info.rtg_scale},
      {"step", info.step},
      {"parameters", models::checkpoint_parameter_count(path)},
      {"file_bytes", std::filesystem::file_size(path)},
      {"metrics", nlohmann::ordered_json::parse(info.metrics.empty() ? "{}" : info.metrics)},
      {"software", info.software}};
  if (json) {
    std::cout << j.dump(2) << std::endl;
    return;
  }
  const auto& c = info.variant;
  std::printf(
      "%s\n  variant   %s: K %d, %d layers x %d hidden, %d heads, mixer %s, state %d, action "
      "%d\n",
      info.path.c_str(), c.variant.c_str(), c.context_length, c.layers, c.hidden, c.heads,
      c.mixer.c_str(), c.state_dim, c.act_dim);
  std::printf(
      "  data      %s (%s), env %s, rtg scale %g\n",
      info.dataset_path.empty() ? "(none)" : info.dataset_path.c_str(),
      info.dataset_fingerprint.empty() ? "no fingerprint" : info.dataset_fingerprint.c_str(),
      info.env_id.empty() ? "(none)" : info.env_id.c_str(), info.rtg_scale);
  if (info.training.reward_shift != 0.0)
    std::printf("            %s\n", models::reward_shift_note(info.training.reward_shift).c_str());
  std::printf("  size      %s parameters, file %s bytes\n", j["parameters"].dump().c_str(),
              j["file_bytes"].dump().c_str());
  std::printf("  training  step %lld of %lld, metrics %s\n  software  %s\n",
              static_cast<long long>(info.step), static_cast<long long>(info.training.steps),
              j["metrics"].dump().c_str(), info.software.c_str());
}

// Checks each of `files` whole and says what it found: the last failure's exit code, else kOk.
int verify_checkpoints(const std::vector<std::string>& files) {
  int failed = 0;
  for (const auto& file : files) {
    const int code = run_guarded([&] {
      const auto found = models::verify_checkpoint_file(file);
      const auto parameters =
          models::checkpoint_parameter_count(file);  // the description and weights load
      std::printf("%s: ok, %s, %llu records, %llu bytes, %lld parameters\n", file.c_str(),
                  found.sealed ? ("sealed (xxh3-128 " + found.digest + ")").c_str()
                               : "not sealed (each record's CRC-32 checked; "
                                 "'dstudio checkpoint seal' adds a seal)",
                  static_cast<unsigned long long>(found.records),
                  static_cast<unsigned long long>(found.bytes), static_cast<long long>(parameters));
    });
    if (code != kOk) failed = code;
  }
  return failed;
}

// Seals each of `files` not sealed yet, in place: the last failure's exit code, else kOk.
int seal_checkpoints(const std::vector<std::string>& files) {
  int failed = 0;
  for (const auto& file : files) {
    const int code = run_guarded([&] {
      models::CheckpointIntegrity found;
      std::string bytes = models::read_verified_checkpoint(file, &found);
      if (found.sealed) {
        std::printf("%s: sealed already\n", file.c_str());
        return;
      }
      models::seal_checkpoint(bytes);
      write_bytes_atomically(file, bytes);
      std::printf("%s: sealed (xxh3-128 %s)\n", file.c_str(),
                  models::verify_checkpoint_file(file).digest.c_str());
    });
    if (code != kOk) failed = code;
  }
  return failed;
}

// Writes the weights and the description of `checkpoint` alone to `out`.
void slim_checkpoint(const std::string& checkpoint, const std::string& out) {
  models::write_weights_only(checkpoint, out);
  std::printf("wrote %s (%lld bytes)\n", out.c_str(),
              static_cast<long long>(std::filesystem::file_size(out)));
}

void add_checkpoint_commands(CLI::App& app, int& exit_code) {
  auto* checkpoint = app.add_subcommand(
      "checkpoint", "Describe, verify or seal a checkpoint, or write its weights-only copy");
  checkpoint->require_subcommand(1);
  auto* info_cmd = checkpoint->add_subcommand(
      "info", "What produced a checkpoint: variant, data, training, step, versions");
  auto info_args = std::make_shared<std::pair<std::string, bool>>();
  info_cmd->add_option("checkpoint", info_args->first, "A Decision Studio checkpoint")
      ->required()
      ->check(CLI::ExistingFile);
  info_cmd->add_flag("--json", info_args->second, "Print one JSON object");
  info_cmd->callback([&exit_code, info_args] {
    exit_code = run_guarded([&] { describe_checkpoint(info_args->first, info_args->second); });
  });
  auto* verify =
      checkpoint->add_subcommand("verify",
                                 "Check checkpoints whole: the seal (a digest of every byte), each "
                                 "record's CRC-32, the description and the weights");
  auto verify_files = std::make_shared<std::vector<std::string>>();
  verify->add_option("checkpoints", *verify_files, "Checkpoints to check")->required();
  verify->callback([&exit_code, verify_files] { exit_code = verify_checkpoints(*verify_files); });
  auto* seal =
      checkpoint->add_subcommand("seal",
                                 "Add the seal (a digest of every byte) to checkpoints written "
                                 "without one, in place, after checking each record's CRC-32");
  auto seal_files = std::make_shared<std::vector<std::string>>();
  seal->add_option("checkpoints", *seal_files, "Checkpoints to seal")->required();
  seal->callback([&exit_code, seal_files] { exit_code = seal_checkpoints(*seal_files); });
  auto* slim = checkpoint->add_subcommand(
      "slim", "Write a copy with the weights and the description only (no optimiser state)");
  auto slim_args = std::make_shared<std::pair<std::string, std::string>>();
  slim->add_option("checkpoint", slim_args->first, "A Decision Studio checkpoint")
      ->required()
      ->check(CLI::ExistingFile);
  slim->add_option("--out", slim_args->second, "The copy to write")->required();
  slim->callback([&exit_code, slim_args] {
    exit_code = run_guarded([&] { slim_checkpoint(slim_args->first, slim_args->second); });
  });
}

}  // namespace

void add_model_commands(CLI::App& app, int& exit_code) {
  add_variants_command(app, exit_code);
  add_import_command(app, exit_code);
  add_export_command(app, exit_code);
  add_predict_command(app, exit_code);
  add_checkpoint_commands(app, exit_code);
}

}  // namespace dstudio::cli

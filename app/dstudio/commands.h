#pragma once
// The subcommands of `dstudio`. Each registers itself on the CLI11 app and returns the exit code
// through `exit_code` when it runs.

#include <CLI/CLI.hpp>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <set>
#include <string>

#include "dstudio/common/exit_code.h"
#include "dstudio/data/dataset_io.h"
#include "number_options.h"

namespace dstudio::cli {

/// The studio's exit codes (dstudio/common/exit_code.h), by their short names here.
inline constexpr int kOk = kExitOk;
inline constexpr int kFailed = kExitFailed;
inline constexpr int kUsage = kExitUsage;

/// A task the studio simulates: hopper, walker2d, halfcheetah (and their -po forms, version
/// suffixes allowed).
CLI::Validator known_environment();
/// A registered environment or the goal-reaching ant's open plane (behaviour::training_task).
CLI::Validator known_training_environment();
/// Text that parses as a JSON object (a --config or --training override).
CLI::Validator json_object();

/// An output folder that a failing command leaves as it found it: created if missing; unless
/// commit() is called, its destructor removes what appeared since (the folder itself if it made
/// it). A command that fails leaves no partial output.
class OutputFolder {
 public:
  explicit OutputFolder(std::filesystem::path folder);
  OutputFolder(const OutputFolder&) = delete;
  OutputFolder& operator=(const OutputFolder&) = delete;
  ~OutputFolder();
  void commit() { committed_ = true; }

 private:
  std::filesystem::path folder_;
  bool created_ = false, committed_ = false;
  std::set<std::filesystem::path> before_;
};

/// Runs a command's body and turns what it throws into an exit code with a message on stderr:
/// UsageError and CLI::ValidationError are usage errors (2), Cancelled is 130 (as for Ctrl-C),
/// anything else (dstudio::Error above all: a file, a dataset or a checkpoint that is wrong; a
/// standard exception from reading one) means the work failed (1).
int run_guarded(const std::function<void()>& body);

/// Loads a dataset a user named, in the reader process (`LoadOptions::isolate`: a file that
/// crashes or hangs libhdf5 is a DatasetError here), and prints each of its warnings on stderr:
/// what a damaged file cost (a name taken for absent, metadata left out) must never pass unseen.
data::Dataset load_user_dataset(const std::string& path, data::LoadOptions options = {},
                                const Progress& progress = {});

void add_dataset_commands(CLI::App& app, int& exit_code);
/// `plugins`: what plugins/loader.h found.
void add_plugin_commands(CLI::App& app, int& exit_code);
/// dstudio env list.
void add_env_commands(CLI::App& app, int& exit_code);
void add_bench_commands(CLI::App& app, int& exit_code);
void add_render_commands(CLI::App& app, int& exit_code);
void add_model_commands(CLI::App& app, int& exit_code);
void add_train_commands(CLI::App& app, int& exit_code);
void add_eval_commands(CLI::App& app, int& exit_code);
/// `sweep`: grids of training runs as folders (core/sweep), run here or on Slurm.
void add_sweep_commands(CLI::App& app, int& exit_code);
/// `lab markov`: the Markov lab (models/markov_lab.h).
void add_lab_commands(CLI::App& app, int& exit_code);
/// `analyze`: only in builds with the GUI libraries, which draw its figures.
void add_analyze_commands(CLI::App& app, int& exit_code);
/// `figure render`: a figure `analyze` exported, drawn again from its recipe; GUI builds only too.
void add_figure_commands(CLI::App& app, int& exit_code);
/// Adds `train` and `act` to the existing `bench` subcommand.
void add_model_bench_commands(CLI::App& app, int& exit_code);
/// `argc`/`argv` are recorded in what `behaviour train` writes, so its output says what made it.
void add_behaviour_commands(CLI::App& app, int& exit_code, int argc, char** argv);

}  // namespace dstudio::cli

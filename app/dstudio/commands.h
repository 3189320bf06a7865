#pragma once
// The subcommands of `dstudio`. Each registers itself on the CLI11 app and returns the exit code
// through `exit_code` when it runs.

#include <CLI/CLI.hpp>

#include <functional>

namespace dstudio::cli {

/// Exit codes scripts can rely on.
enum ExitCode : int {
  kOk = 0,
  kFailed = 1,  ///< the work could not be done: bad input data, I/O error
  kUsage = 2,   ///< the command line itself is wrong
};

/// Runs a command's body and turns what it throws into an exit code with a message on stderr:
/// UsageError and CLI::ValidationError are usage errors (2), Cancelled is 130 (as for Ctrl-C),
/// anything else (dstudio::Error above all: a file, a dataset or a checkpoint that is wrong; a
/// standard exception from reading one) means the work failed (1).
int run_guarded(const std::function<void()>& body);

void add_dataset_commands(CLI::App& app, int& exit_code);
/// `plugins`: what plugins/loader.h found.
void add_plugin_commands(CLI::App& app, int& exit_code);
void add_bench_commands(CLI::App& app, int& exit_code);
void add_render_commands(CLI::App& app, int& exit_code);
void add_model_commands(CLI::App& app, int& exit_code);
void add_train_commands(CLI::App& app, int& exit_code);
void add_eval_commands(CLI::App& app, int& exit_code);
/// `lab markov`: the Markov lab (models/markov_lab.h).
void add_lab_commands(CLI::App& app, int& exit_code);
/// `analyze`: only in builds with the GUI libraries, which draw its figures.
void add_analyze_commands(CLI::App& app, int& exit_code);
/// Adds `train` and `act` to the existing `bench` subcommand.
void add_model_bench_commands(CLI::App& app, int& exit_code);
/// `argc`/`argv` are recorded in what `behaviour train` writes, so its output says what made it.
void add_behaviour_commands(CLI::App& app, int& exit_code, int argc, char** argv);

}  // namespace dstudio::cli

// dstudio analyze <name>: every registered analysis (the papers' attention, entropy, tsne,
// ablation, rtg-sweep and training, and those plugins add) from the command line, made from its
// definition. Each writes summary.json, CSV files with every number behind its figures, and the
// figures as PDF, SVG and PNG, each with <figure>.recipe.json beside it (what made it, for
// `dstudio figure render`); with --json it also prints the summary on stdout; Ctrl-C cancels.
// The figures take the studio export dialog's choices: a venue preset (viz::venue_presets()), then
// size, fonts, line width, dpi, formats and titles.

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis_recipes.h"
#include "commands.h"
#include "dstudio/analysis/analysis_registry.h"
#include "dstudio/common/atomic_file.h"
#include "dstudio/common/error.h"
#include "dstudio/common/figure_recipe.h"
#include "dstudio/models/device.h"
#include "dstudio/viz/figures.h"
#include "figure_options.h"
#include "rollouts.h"

namespace dstudio::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

struct Common {
  std::string checkpoint, out, dataset;
  bool json = false;
  FigureOptions figure;
  viz::FigureStyle style;  ///< figure resolved when the command runs
};

void finish(const Common& c, ordered_json summary, const std::vector<std::string>& files) {
  summary["files"] = files;
  write_text_atomically(fs::path(c.out) / "summary.json", summary.dump(2) + "\n");
  if (c.json)
    std::cout << summary.dump(2) << std::endl;
  else
    std::fprintf(stderr, "wrote %zu files to %s\n", files.size() + 1, c.out.c_str());
}

struct RegisteredArgs : Common {
  std::map<std::string, std::string> given;
};

void run_registered(const analysis::AnalysisDefinition& definition, const RegisteredArgs& a) {
  // The paths absolute, as the figures' recipes name them: a re-render sees the same names.
  const auto call = recipes::absolute_call(definition, a.checkpoint, a.dataset, a.given);
  const auto options = analysis::resolve_options(definition, call.given);
  // As the window and `figure render` compute: the same numbers whatever the machine's cores.
  models::compute_on_one_thread();
  analysis::AnalysisResult result;
  run_interruptible(
      definition.title.empty() ? definition.name : definition.title, [&](const Progress& progress) {
        result =
            analysis::run_analysis(definition, {call.checkpoint, call.dataset, options}, progress);
      });
  // What every figure's recipe shares; the inputs are hashed once for all of them.
  const FigureRecipe recipe =
      result.figures.empty() ? FigureRecipe{}
                             : recipes::analysis_recipe(definition, call, a.figure.preset, a.style);
  // The folder appears only once there is something to put in it, and goes again on a failure.
  OutputFolder out(a.out);
  auto files = analysis::write_result_files(result, a.out);
  files.erase(files.begin());  // summary.json: rewritten below with the list of files
  viz::FigureContext figures;
  for (const auto& figure : result.figures) {
    // A table of the figure's name holds its numbers already (entropy_reward.csv, ablation.csv).
    const bool tabled = std::any_of(result.tables.begin(), result.tables.end(),
                                    [&](const auto& t) { return t.name == figure.name; });
    FigureRecipe figure_recipe = recipe;
    figure_recipe.figure.name = figure.name;
    for (auto& f : viz::save_analysis_figure((fs::path(a.out) / figure.name).string(), figure,
                                             a.style, !tabled)) {
      figure_recipe.outputs.push_back(fs::path(f).filename().string());
      files.push_back(f);
    }
    if (tabled) figure_recipe.outputs.push_back(figure.name + ".csv");
    // Beside the figure: <figure>.recipe.json, what `dstudio figure render` draws it again from.
    figure_recipe.created = recipe_time_now();
    const auto recipe_path = fs::path(a.out) / (figure.name + ".recipe.json");
    write_figure_recipe(recipe_path, figure_recipe);
    files.push_back(recipe_path.string());
  }
  ordered_json summary = {{"analysis", definition.name}, {"from", definition.origin.label()}};
  if (!a.checkpoint.empty()) summary["checkpoint"] = a.checkpoint;
  ordered_json given = ordered_json::object();
  for (const auto& [key, value] : options.values())
    if (!value.empty()) given[key] = value;
  summary["options"] = given;
  const auto computed = ordered_json::parse(result.summary_json);
  for (const auto& [key, value] : computed.items()) summary[key] = value;
  // What loading the dataset warned of, and what the analysis warns of its own numbers (intervals
  // over too few episodes).
  for (const char* key : {"dataset_warnings", "warnings"})
    if (const auto w = computed.find(key); w != computed.end() && w->is_array())
      for (const auto& text : *w)
        if (text.is_string())
          std::fprintf(stderr, "dstudio: warning: %s\n", text.get<std::string>().c_str());
  finish(a, summary, files);
  out.commit();
}

std::string type_name(analysis::AnalysisOption::Type type) {
  using Type = analysis::AnalysisOption::Type;
  switch (type) {
    case Type::Integer:
      return "INT";
    case Type::Number:
      return "FLOAT";
    case Type::Choice:
      return "CHOICE";
    case Type::NumberList:
      return "FLOAT,...";
    case Type::Flag:
    case Type::Text:
      break;
  }
  return "TEXT";
}

}  // namespace

void add_analyze_commands(CLI::App& app, int& exit_code) {
  auto* analyze = app.add_subcommand("analyze",
                                     "The papers' analyses and those plugins add: numbers (JSON, "
                                     "CSV) and figures (PDF, SVG, PNG)");
  analyze->require_subcommand(1);
  using Type = analysis::AnalysisOption::Type;
  // One subcommand an analysis, its options and --help from its definition.
  for (const auto& definition : analysis::analysis_registry().all()) {
    std::string description = definition->description;
    if (!definition->origin.builtin()) description += " [" + definition->origin.label() + "]";
    auto* cmd = analyze->add_subcommand(definition->name, description);
    auto a = std::make_shared<RegisteredArgs>();
    if (definition->needs_checkpoint) {
      cmd->add_option("--checkpoint", a->checkpoint, "A Decision Studio checkpoint")
          ->required()
          ->check(CLI::ExistingFile);
      cmd->add_option("--dataset", a->dataset,
                      "Windows from this dataset (default: the checkpoint's)");
    } else {
      cmd->add_option("--dataset", a->dataset, "The dataset to analyse");
    }
    cmd->add_option(
           "--out", a->out,
           "Folder for summary.json, the CSV files and the figures (PDF, SVG, PNG; see --formats)")
        ->required();
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
        cmd->add_flag_function(
            "--" + key, [a, key](std::int64_t) { a->given[key] = "true"; }, help);
        continue;
      }
      if (!o.default_value.empty()) help += " [default: " + o.default_value + "]";
      auto* option = cmd->add_option_function<std::string>(
          "--" + key, [a, key](const std::string& v) { a->given[key] = v; }, help);
      option->type_name(type_name(o.type));
      if (o.required) option->required();
    }
    add_figure_options(cmd, a->figure);
    const auto def = definition;
    cmd->callback([&exit_code, a, def] {
      exit_code = run_guarded([&] {
        a->style = a->figure.resolve();
        // Options are checked before any folder is made or anything is computed.
        (void)analysis::resolve_options(*def, a->given);
        run_registered(*def, *a);
      });
    });
  }
}

}  // namespace dstudio::cli

// dstudio analyze <name>: every registered analysis (the papers' attention, entropy, tsne, ablation,
// rtg-sweep and training, and those plugins add) from the command line, made from its definition.
// Each writes summary.json, CSV files with every number behind its figures, and the figures as
// PDF, SVG and PNG; with --json it also prints the summary on stdout; Ctrl-C cancels. The figures
// take the studio export dialog's choices: a venue preset (viz::venue_presets()), then size,
// fonts, line width, dpi, formats and titles.

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.h"
#include "dstudio/analysis/analysis_registry.h"
#include "dstudio/common/atomic_file.h"
#include "dstudio/common/error.h"
#include "dstudio/viz/figures.h"
#include "rollouts.h"

namespace dstudio::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

// The figure options as given; resolve() turns them into a style. Options given explicitly
// override the preset, so the option pointers record what was given.
struct FigureOptions {
  std::string preset, font_family = "sans";
  double width = 3.25, height = 0.0, font = 8.0, line_width = 1.2;
  int dpi = 300;
  std::vector<std::string> formats = {"pdf", "svg", "png"};
  bool no_title = false;
  CLI::Option *width_given = nullptr, *height_given = nullptr, *font_given = nullptr, *line_width_given = nullptr,
              *family_given = nullptr, *dpi_given = nullptr;

  [[nodiscard]] viz::FigureStyle resolve() const;
};

bool given(const CLI::Option* o) { return o && o->count() > 0; }

viz::FigureStyle FigureOptions::resolve() const {
  viz::FigureStyle s;
  if (!preset.empty()) {
    const auto p = viz::venue_preset(preset);
    if (!p) throw UsageError("unknown figure preset: " + preset);
    s = *p;
  }
  if (preset.empty() || given(width_given)) {
    // A preset's height follows a new width, so the venue's proportions stay.
    if (given(width_given) && s.height > 0 && !given(height_given)) s.height *= width / s.width;
    s.width = width;
  }
  if (given(height_given)) s.height = height;
  if (preset.empty() || given(font_given)) {
    // Axis and tick fonts keep the preset's proportions to the main font.
    const double ratio = font / s.font;
    if (s.axis_font > 0) s.axis_font *= ratio;
    if (s.tick_font > 0) s.tick_font *= ratio;
    s.font = font;
  }
  if (preset.empty() || given(line_width_given)) s.line_width = line_width;
  if (preset.empty() || given(family_given)) {
    const QString family = QString::fromStdString(font_family).trimmed();
    if (family.compare(QStringLiteral("sans"), Qt::CaseInsensitive) == 0) s.font_family = QString::fromLatin1(viz::kSansFamily);
    else if (family.compare(QStringLiteral("serif"), Qt::CaseInsensitive) == 0) s.font_family = QString::fromLatin1(viz::kSerifFamily);
    else s.font_family = family;
  }
  if (preset.empty() || given(dpi_given)) s.dpi = dpi;
  s.pdf = std::find(formats.begin(), formats.end(), "pdf") != formats.end();
  s.svg = std::find(formats.begin(), formats.end(), "svg") != formats.end();
  s.png = std::find(formats.begin(), formats.end(), "png") != formats.end();
  s.show_title = !no_title;
  return s;
}

// "icml, icml-page, ...": for the help and the message about an unknown preset.
std::string preset_list(bool with_names) {
  std::string list;
  for (const auto& p : viz::venue_presets()) {
    if (!list.empty()) list += ", ";
    list += p.slug.toStdString();
    if (with_names) {
      list += " (";
      list += p.name.toStdString();
      list += ')';
    }
  }
  return list;
}

void add_figure_options(CLI::App* cmd, FigureOptions& f) {
  std::string preset_help = "Figure size, fonts, line width and dpi of a venue, as in the studio's export dialog: ";
  preset_help += preset_list(false);
  preset_help += " (or the dialog's full name; any case). Options given explicitly override it";
  const CLI::Validator known_preset(
      [](std::string& name) {
        if (viz::venue_preset_index(name) >= 0) return std::string();
        std::string message = "unknown preset '";
        message += name;
        message += "'; known presets: ";
        message += preset_list(true);
        return message;
      },
      "PRESET");
  cmd->add_option("--preset", f.preset, preset_help)->check(known_preset)->group("Figures");
  f.width_given = cmd->add_option("--width", f.width, "Figure width in inches (ICML column 3.25, page 6.75; NeurIPS 5.5); "
                                                      "with --preset, the height keeps the venue's proportions")
                      ->capture_default_str()
                      ->check(real_number(0, 40, true))
                      ->group("Figures");
  f.height_given = cmd->add_option("--height", f.height, "Figure height in inches; 0: width over the golden ratio (maps and "
                                                         "embeddings a little squarer)")
                       ->capture_default_str()
                       ->check(real_number(0, 40))
                       ->group("Figures");
  f.font_given = cmd->add_option("--font", f.font, "Font size in points of titles and legends; axis and tick labels follow in "
                                                   "proportion")
                     ->capture_default_str()
                     ->check(real_number(0, 72, true))
                     ->group("Figures");
  f.line_width_given = cmd->add_option("--line-width", f.line_width, "Data line width in points (axes and grid thinner, in proportion)")
                           ->capture_default_str()
                           ->check(real_number(0, 20, true))
                           ->group("Figures");
  f.family_given = cmd->add_option("--font-family", f.font_family, "sans (DejaVu Sans), serif (DejaVu Serif) or an installed family's name")
                       ->capture_default_str()
                       ->group("Figures");
  // The choices of the export dialog: journals ask for 300 or 600 dpi.
  f.dpi_given = cmd->add_option("--dpi", f.dpi, "Resolution of the PNG: 300 or 600")
                    ->capture_default_str()
                    ->check(CLI::IsMember({300, 600}))
                    ->group("Figures");
  cmd->add_option("--formats", f.formats, "Figure files to write, a subset of pdf,svg,png (default all three; CSV and summary.json always)")
      ->delimiter(',')
      ->check(CLI::IsMember({"pdf", "svg", "png"}, CLI::ignore_case))
      ->group("Figures");
  cmd->add_flag("--no-title", f.no_title, "Figures without a title (a caption says it)")->group("Figures");
}

struct Common {
  std::string checkpoint, out, dataset;
  bool json = false;
  FigureOptions figure;
  viz::FigureStyle style;  ///< figure resolved when the command runs
};

void finish(const Common& c, ordered_json summary, const std::vector<std::string>& files) {
  summary["files"] = files;
  write_text_atomically(fs::path(c.out) / "summary.json", summary.dump(2) + "\n");
  if (c.json) std::cout << summary.dump(2) << std::endl;
  else std::fprintf(stderr, "wrote %zu files to %s\n", files.size() + 1, c.out.c_str());
}

struct RegisteredArgs : Common {
  std::map<std::string, std::string> given;
};

void run_registered(const analysis::AnalysisDefinition& definition, const RegisteredArgs& a) {
  const auto options = analysis::resolve_options(definition, a.given);
  analysis::AnalysisResult result;
  run_interruptible(definition.title.empty() ? definition.name : definition.title, [&](const Progress& progress) {
    result = analysis::run_analysis(definition, {a.checkpoint, a.dataset, options}, progress);
  });
  // The folder appears only once there is something to put in it, and goes again on a failure.
  OutputFolder out(a.out);
  auto files = analysis::write_result_files(result, a.out);
  files.erase(files.begin());  // summary.json: rewritten below with the list of files
  viz::FigureContext figures;
  for (const auto& figure : result.figures) {
    // A table of the figure's name holds its numbers already (entropy_reward.csv, ablation.csv).
    const bool tabled = std::any_of(result.tables.begin(), result.tables.end(), [&](const auto& t) { return t.name == figure.name; });
    for (auto& f : viz::save_analysis_figure((fs::path(a.out) / figure.name).string(), figure, a.style, !tabled)) files.push_back(f);
  }
  ordered_json summary = {{"analysis", definition.name}, {"from", definition.origin.label()}};
  if (!a.checkpoint.empty()) summary["checkpoint"] = a.checkpoint;
  ordered_json given = ordered_json::object();
  for (const auto& [key, value] : options.values())
    if (!value.empty()) given[key] = value;
  summary["options"] = given;
  const auto computed = ordered_json::parse(result.summary_json);
  for (const auto& [key, value] : computed.items()) summary[key] = value;
  finish(a, summary, files);
  out.commit();
}

std::string type_name(analysis::AnalysisOption::Type type) {
  using Type = analysis::AnalysisOption::Type;
  switch (type) {
    case Type::Integer: return "INT";
    case Type::Number: return "FLOAT";
    case Type::Choice: return "CHOICE";
    case Type::NumberList: return "FLOAT,...";
    case Type::Flag:
    case Type::Text: break;
  }
  return "TEXT";
}

}  // namespace

void add_analyze_commands(CLI::App& app, int& exit_code) {
  auto* analyze = app.add_subcommand("analyze", "The papers' analyses and those plugins add: numbers (JSON, CSV) and figures (PDF, SVG, PNG)");
  analyze->require_subcommand(1);
  using Type = analysis::AnalysisOption::Type;
  // One subcommand an analysis, its options and --help from its definition.
  for (const auto& definition : analysis::analysis_registry().all()) {
    std::string description = definition->description;
    if (!definition->origin.builtin()) description += " [" + definition->origin.label() + "]";
    auto* cmd = analyze->add_subcommand(definition->name, description);
    auto a = std::make_shared<RegisteredArgs>();
    if (definition->needs_checkpoint) {
      cmd->add_option("--checkpoint", a->checkpoint, "A Decision Studio checkpoint")->required()->check(CLI::ExistingFile);
      cmd->add_option("--dataset", a->dataset, "Windows from this dataset (default: the checkpoint's)");
    } else {
      cmd->add_option("--dataset", a->dataset, "The dataset to analyse");
    }
    cmd->add_option("--out", a->out, "Folder for summary.json, the CSV files and the figures (PDF, SVG, PNG; see --formats)")->required();
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
        cmd->add_flag_function("--" + key, [a, key](std::int64_t) { a->given[key] = "true"; }, help);
        continue;
      }
      if (!o.default_value.empty()) help += " [default: " + o.default_value + "]";
      auto* option = cmd->add_option_function<std::string>("--" + key, [a, key](const std::string& v) { a->given[key] = v; }, help);
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

// dstudio figure render RECIPE --out FILE: a figure `dstudio analyze`, `sweep collect` or the
// studio exported, drawn again from the recipe written beside it (dstudio/common/figure_recipe.h;
// the studio's views: view_recipes.h). The inputs are checked first (a checkpoint or dataset that
// changed since is refused, naming the hash that differs), then the analysis or the view is
// computed again with the recipe's options and seeds, and the figure is drawn in the recipe's style
// to FILE, whose extension says the format (pdf, svg, png), with its numbers beside it as CSV. On
// the same build the numbers and the PNG are byte for byte those first written.

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "analysis_recipes.h"
#include "commands.h"
#include "dstudio/analysis/analysis_registry.h"
#include "dstudio/behaviour/default_datasets.h"
#include "dstudio/common/atomic_file.h"
#include "dstudio/common/csv.h"
#include "dstudio/common/error.h"
#include "dstudio/common/figure_recipe.h"
#include "dstudio/common/read_file.h"
#include "dstudio/common/resources.h"
#include "dstudio/common/subprocess.h"
#include "dstudio/common/system_info.h"
#include "dstudio/common/text.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/models/checkpoint.h"
#include "dstudio/models/device.h"
#include "dstudio/sweep/sweep.h"
#include "dstudio/viz/figures.h"
#include "figure_options.h"
#include "rollouts.h"
#include "sweep_figures.h"
#include "view_recipes.h"

namespace dstudio::cli {
namespace {

using namespace recipes;

namespace fs = std::filesystem;
using Type = analysis::AnalysisOption::Type;

// `draw` writes the figure to base.<format> (and maybe other files, which are dropped) under a
// temporary name beside `out`, which the group renames over it with the files drawn with it
// (its numbers): all are written whole, or none is.
void draw_into(AtomicFileGroup& group, const std::string& out, const std::string& format,
               const viz::FigureStyle& style,
               const std::function<std::vector<std::string>(const std::string&,
                                                            const viz::FigureStyle&)>& draw,
               const std::string& nothing_drawn) {
  if (const auto folder = fs::path(out).parent_path(); !folder.empty()) {
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec) throw Error(folder.string() + ": cannot make the folder (" + ec.message() + ")");
  }
  const fs::path temp = group.add(out), file = temp.string() + "." + format;
  std::vector<std::string> written;
  std::error_code ec;
  const auto drop = [&](const fs::path& keep) {
    for (const auto& w : written)
      if (fs::path(w) != keep) fs::remove(w, ec);
  };
  try {
    written = draw(temp.string(), style);
  } catch (...) {
    for (const char* ext : {".pdf", ".svg", ".png", ".csv"}) fs::remove(temp.string() + ext, ec);
    throw;
  }
  drop(file);
  if (written.empty() || !fs::is_regular_file(file, ec)) {
    fs::remove(file, ec);
    throw Error(out + ": " + nothing_drawn);
  }
  fs::rename(file, temp, ec);
  if (ec) {
    const std::string why = ec.message();
    fs::remove(file, ec);
    throw Error(out + ": cannot be written (" + why + ")");
  }
}

// The group's files renamed into place, then named: only what is there is said to be written.
void commit_and_report(AtomicFileGroup& group) {
  const auto written = group.commit();
  std::string names;
  for (std::size_t i = 0; i < written.size(); ++i)
    names += (i == 0 ? "" : i + 1 == written.size() ? " and " : ", ") + written[i].string();
  std::printf("wrote %s\n", names.c_str());
}

// check_inputs, its refusal naming the recipe; inputs missing where the recipe names them may have
// moved, which --root answers.
void check_recipe_inputs(const FigureRecipe& recipe, const std::string& recipe_path) {
  try {
    check_inputs(recipe);
  } catch (const RecipeInputsError& e) {
    std::string message = recipe_path + ": " + e.what();
    if (e.missing())
      message +=
          "\nWhere they moved, --root DIR looks for each under DIR by the end of its path and "
          "takes it only with the hash recorded (inputs beside the recipe are read beside it).";
    throw FigureRecipeError(message);
  }
}

// The analysis's options from a recipe: its options, with the fields of their own put back.
// Whatever the analysis cannot take is refused, naming the recipe's key.
std::map<std::string, std::string> options_of(const FigureRecipe& r,
                                              const analysis::AnalysisDefinition& definition,
                                              const std::string& where) {
  const auto refuse = [&](const std::string& key, const std::string& problem) {
    throw FigureRecipeError(where + ": '" + key + "': " + problem);
  };
  const std::string takes = "the analysis '" + definition.name + "' takes no ";
  std::map<std::string, std::string> given = r.options;
  for (const auto& [key, value] : given)
    if (held_by_field(definition, key))
      refuse("options." + key, "a field of its own holds it, not the options");
  if (!r.compare.empty()) {
    if (!is_compared_checkpoint(definition, "compare")) refuse("compare", takes + "--compare");
    given["compare"] = r.compare;
  }
  if (!r.seeds.empty()) {
    if (!has_option(definition, "seed", Type::Integer)) refuse("seeds", takes + "--seed");
    if (r.seeds.size() != 1)
      refuse("seeds",
             "the analysis takes one --seed, the recipe names " + std::to_string(r.seeds.size()));
    given["seed"] = std::to_string(r.seeds.front());
  }
  if (r.step) {
    if (!has_option(definition, "step", Type::Integer)) refuse("step", takes + "--step");
    given["step"] = std::to_string(*r.step);
  }
  if (r.target) {
    if (!has_option(definition, "target", Type::Number)) refuse("target", takes + "--target");
    given["target"] = exact_number(*r.target);
  }
  // What the viewer's recipes may hold and an analysis cannot do: refused, never dropped.
  if (r.episode) refuse("episode", takes + "episode");
  if (!r.zeroing.empty()) refuse("zeroing", takes + "zeroing");
  if (!r.interventions.empty()) refuse("interventions", takes + "interventions");
  if (!r.bookmarks.empty()) refuse("bookmarks", takes + "bookmarks");
  return given;
}

// A figure of `sweep collect`: the sweep read again (its manifest, every cell's task.json and
// checkpoint checked against their hashes first), its groups and rliable's statistics computed with
// the recipe's bootstrap, and the named figure drawn.
void render_sweep(const FigureRecipe& recipe, const std::string& recipe_path,
                  const std::string& out, const std::string& format) {
  const auto option = [&](const char* key) {
    const auto it = recipe.options.find(key);
    if (it == recipe.options.end())
      throw FigureRecipeError(recipe_path + ": 'options': a sweep figure's recipe names its '" +
                              key + "'");
    return it->second;
  };
  const std::string dir = option("sweep");
  // As `sweep collect --resamples` and `--bootstrap-seed` take them: the whole text a whole number
  // in the option's range.
  const auto whole = [&](const char* key, std::uint64_t low, std::uint64_t high) {
    const std::string text = option(key);
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < low ||
        v > high)
      throw FigureRecipeError(recipe_path + ": 'options." + key + "': \"" + text +
                              "\" is not a whole number from " + std::to_string(low) + " to " +
                              std::to_string(high) + ", as sweep collect --" + key + " takes");
    return v;
  };
  analysis::BootstrapOptions bootstrap;
  bootstrap.resamples = static_cast<int>(whole("resamples", 1, kMostResamples));
  bootstrap.seed = whole("bootstrap-seed", 0, std::numeric_limits<std::uint64_t>::max());
  if (std::find(sweep_figure_names().begin(), sweep_figure_names().end(), recipe.figure.name) ==
      sweep_figure_names().end())
    throw FigureRecipeError(recipe_path + ": 'figure.name': sweep collect draws no figure '" +
                            recipe.figure.name + "'");
  check_recipe_inputs(recipe, recipe_path);
  const auto s = sweep::read_sweep(dir);
  const auto groups = sweep::collect_groups(s, nullptr, bootstrap);
  const auto stats = sweep::sweep_statistics(groups, bootstrap);
  viz::FigureContext context;
  AtomicFileGroup group;
  draw_into(
      group, out, format, viz::figure_style(recipe.figure, format),
      [&](const std::string& base, const viz::FigureStyle& style) {
        return write_sweep_figure(recipe.figure.name, groups, stats, base, style);
      },
      "the sweep has nothing to draw as " + recipe.figure.name + " now");
  commit_and_report(group);
}

// The checkpoint's own dataset: the analysis or view finds it itself (an analysis that plays
// episodes only refuses a --dataset), so it must be the one the recipe checked, or (a folder moved
// with its checkpoint, which names the dataset where it was) the same arrays elsewhere.
void check_own_dataset(const FigureRecipe& recipe, const std::string& recipe_path) {
  if (recipe.dataset_given || recipe.dataset.empty() || recipe.checkpoint.empty()) return;
  const std::string own = own_dataset(recipe.checkpoint);
  if (own == recipe.dataset) return;
  if (!own.empty() && !recipe.dataset_fingerprint.empty()) {
    try {
      if (dataset_fingerprint(own) == recipe.dataset_fingerprint) return;
    } catch (const Error&) {
      // Unreadable: not the recipe's.
    }
  }
  throw FigureRecipeError(recipe_path + ": 'dataset': the checkpoint's own dataset is " +
                          (own.empty() ? std::string("not on this machine") : "now " + own) +
                          ", the recipe was made from " + recipe.dataset);
}

// Another build may draw the figure otherwise: said, and drawn.
void warn_of_another_version(const FigureRecipe& recipe, const std::string& recipe_path) {
  if (recipe.studio_version == studio_version()) return;
  const std::string made = recipe.studio_version.empty() ? "a studio that did not say its version"
                                                         : recipe.studio_version;
  std::fprintf(stderr, "dstudio: warning: %s was made by %s, this is %s: the figure may differ\n",
               recipe_path.c_str(), made.c_str(), studio_version().c_str());
}

// A figure of one of the studio's views: what the view was shown computed again, the view built
// from it offscreen as the window built it, and exported as the window exported it; the figure
// of the recipe's name kept (a view of two panels writes two), with its numbers.
void render_view(const FigureRecipe& recipe, const std::string& recipe_path, const std::string& out,
                 const std::string& format) {
  check_recipe_inputs(recipe, recipe_path);
  check_own_dataset(recipe, recipe_path);
  warn_of_another_version(recipe, recipe_path);
  viz::FigureContext context;
  ViewBuilder build;
  run_interruptible(recipe.analysis, [&](const Progress& progress) {
    build = compute_view(recipe, recipe_path, progress);
  });
  const auto view = build();
  const std::string name = view->figureName().toStdString();
  if (recipe.figure.name.compare(0, name.size(), name) != 0)
    throw FigureRecipeError(recipe_path + ": 'figure.name': the view draws " + name + "*, not " +
                            recipe.figure.name);
  const std::string panel = recipe.figure.name.substr(name.size());
  std::string numbers;
  AtomicFileGroup group;
  draw_into(
      group, out, format, viz::figure_style(recipe.figure, format),
      [&](const std::string& base, const viz::FigureStyle& style) {
        auto written = view->exportFigure(base, style);
        const fs::path drawn = base + panel + "." + format, file = base + "." + format;
        std::error_code ec;
        if (!fs::exists(drawn, ec)) return std::vector<std::string>{};
        // The panel's numbers, or the view's where the panel has none of its own.
        for (const auto& csv : {base + panel + ".csv", base + ".csv"})
          if (numbers.empty() && fs::is_regular_file(csv, ec))
            numbers = read_regular_file(csv, std::uint64_t{1} << 30);
        if (drawn != file) {
          fs::rename(drawn, file, ec);
          if (ec) throw Error(out + ": cannot be written (" + ec.message() + ")");
          written.push_back(file.string());
        }
        return written;
      },
      "the view drew no figure " + recipe.figure.name);
  if (!numbers.empty())
    write_text_atomically(group.add(fs::path(out).replace_extension(".csv")), numbers);
  commit_and_report(group);
}

// A Viewer tab recording: its inputs checked here, then drawn by the studio's own viewer panel
// (decision-studio --render-clip, installed beside this program), which needs a display: the one
// there is, else a virtual one from xvfb-run.
void render_clip(const FigureRecipe& recipe, const std::string& recipe_path, const std::string& out,
                 const std::vector<std::string>& roots) {
  if (fs::path(out).extension() != ".mp4")
    throw UsageError("--out " + out + ": a viewer clip is drawn as an MP4 (.mp4)");
  const auto clip = clip_shown(recipe, recipe_path);
  check_recipe_inputs(recipe, recipe_path);
  check_own_dataset(recipe, recipe_path);
  warn_of_another_version(recipe, recipe_path);
  check_clip_within_episode(clip, recipe_path);
  if (const auto folder = fs::path(out).parent_path(); !folder.empty()) {
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec) throw Error(folder.string() + ": cannot make the folder (" + ec.message() + ")");
  }
  const fs::path studio = private_program("decision-studio");
  if (studio.empty())
    throw Error("drawing a clip needs decision-studio, which is not beside " +
                executable_path().string() + ": the installation is incomplete");
  std::vector<std::string> argv = {studio.string(), "--render-clip", recipe_path, "--out", out};
  for (const auto& root : roots) argv.insert(argv.end(), {"--root", root});
  const auto has = [](const char* name) {
    const char* v = std::getenv(name);
    return v && *v;
  };
  const bool virtual_display = !has("DISPLAY") && !has("WAYLAND_DISPLAY");
  if (virtual_display) {
    const std::string screen = "-screen 0 " +
                               std::to_string(std::max(1280, clip.panel_width + 64)) + "x" +
                               std::to_string(std::max(1024, clip.panel_height + 64)) + "x24";
    argv.insert(argv.begin(), {"xvfb-run", "-a", "-s", screen});
    ::setenv("QT_QPA_PLATFORM", "xcb", 1);
  } else if (const char* qpa = std::getenv("QT_QPA_PLATFORM");
             qpa && (std::string(qpa) == "offscreen" || std::string(qpa) == "minimal")) {
    // A platform without OpenGL draws no scene; the display there is does.
    ::setenv("QT_QPA_PLATFORM", has("DISPLAY") ? "xcb" : "wayland", 1);
  }
  SpawnOptions options;
  options.search_path = virtual_display;  // xvfb-run, wherever PATH has it
  options.default_signals = true;
  pid_t pid = 0;
  try {
    pid = spawn_program(argv.front(), argv, options);
  } catch (const Error&) {
    if (virtual_display)
      throw Error("drawing a clip needs a display: set DISPLAY, or install xvfb (xvfb-run)");
    throw;
  }
  const int code = wait_for_exit(pid);
  if (code != 0) {
    // Interrupted, it may leave its unfinished video under a temporary name: not kept.
    std::error_code ec;
    fs::remove(out + ".part", ec);
    throw Error(out + ": the clip was not drawn (decision-studio " +
                (code > 128 ? "ended by signal " + std::to_string(code - 128)
                            : "exited with " + std::to_string(code)) +
                ")");
  }
}

// Says which inputs were read from another place than the recipe names (--root).
void say_where_found(const std::vector<RecipeInputFound>& found) {
  constexpr std::size_t kListed = 20;
  for (std::size_t i = 0; i < found.size() && i < kListed; ++i)
    std::fprintf(stderr, "dstudio: %s %s read from %s\n", found[i].what.c_str(),
                 found[i].recorded.c_str(), found[i].found.c_str());
  if (found.size() > kListed)
    std::fprintf(stderr, "dstudio: ... and %zu more inputs read from under --root\n",
                 found.size() - kListed);
}

void render(const std::string& recipe_path, const std::string& out,
            const std::vector<std::string>& roots) {
  // The threads the window, `analyze` and the viewer's player compute with.
  models::compute_on_one_thread();
  std::vector<RecipeInputFound> found;
  const FigureRecipe recipe = read_figure_recipe(recipe_path, {roots.begin(), roots.end()}, &found);
  say_where_found(found);
  if (recipe.analysis == kClipView) return render_clip(recipe, recipe_path, out, roots);
  std::string format = fs::path(out).extension().string();
  for (auto& c : format) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (format == ".mp4")
    throw UsageError("--out " + out + ": only a viewer clip's recipe is drawn as an MP4; " +
                     recipe_path + " is a figure's (" + recipe.analysis + ")");
  if (format != ".pdf" && format != ".svg" && format != ".png")
    throw UsageError("--out " + out + ": its extension says the format: .pdf, .svg or .png");
  format.erase(0, 1);
  if (recipe.analysis == kSweepCollectRecipe) return render_sweep(recipe, recipe_path, out, format);
  if (is_view_recipe(recipe)) return render_view(recipe, recipe_path, out, format);
  const auto definition = analysis::analysis_registry().find(recipe.analysis);
  if (!definition)
    throw FigureRecipeError(recipe_path + ": 'analysis': this studio has no analysis '" +
                            recipe.analysis + "' (it has " +
                            analysis::analysis_registry().joined_names() + ")");
  analysis::AnalysisOptions options;
  try {
    options = analysis::resolve_options(*definition, options_of(recipe, *definition, recipe_path));
  } catch (const FigureRecipeError&) {
    throw;
  } catch (const UsageError& e) {
    // The command line is right; the recipe asks for what this analysis does not take.
    throw FigureRecipeError(recipe_path + ": 'options': " + e.what());
  }
  if (definition->needs_checkpoint && recipe.checkpoint.empty())
    throw FigureRecipeError(recipe_path + ": 'checkpoint': missing; the analysis '" +
                            definition->name + "' needs one");
  if (!definition->needs_checkpoint && !recipe.checkpoint.empty())
    throw FigureRecipeError(recipe_path + ": 'checkpoint': the analysis '" + definition->name +
                            "' takes none");
  check_recipe_inputs(recipe, recipe_path);
  check_own_dataset(recipe, recipe_path);
  const std::string dataset = recipe.dataset_given ? recipe.dataset : std::string();
  warn_of_another_version(recipe, recipe_path);

  analysis::AnalysisResult result;
  run_interruptible(definition->title.empty() ? definition->name : definition->title,
                    [&](const Progress& progress) {
                      result = analysis::run_analysis(
                          *definition, {recipe.checkpoint, dataset, options}, progress);
                    });
  const analysis::AnalysisFigure* figure = nullptr;
  std::string drawn;
  for (const auto& f : result.figures) {
    if (f.name == recipe.figure.name) figure = &f;
    drawn += (drawn.empty() ? "" : ", ") + f.name;
  }
  if (!figure)
    throw FigureRecipeError(recipe_path + ": 'figure.name': the analysis drew no figure '" +
                            recipe.figure.name + "' (it drew " +
                            (drawn.empty() ? std::string("none") : drawn) + ")");

  viz::FigureContext context;
  const viz::FigureStyle style = viz::figure_style(recipe.figure, format);
  AtomicFileGroup group;
  draw_into(
      group, out, format, style,
      [&](const std::string& base, const viz::FigureStyle& s) {
        return viz::save_analysis_figure(base, *figure, s, false);
      },
      "the figure could not be written");
  // Its numbers, as `analyze` wrote them: the table of the figure's name, else the figure's own.
  const auto table = std::find_if(result.tables.begin(), result.tables.end(),
                                  [&](const auto& t) { return t.name == figure->name; });
  write_text_atomically(group.add(fs::path(out).replace_extension(".csv")),
                        table != result.tables.end() ? analysis::table_csv(*table)
                                                     : viz::analysis_figure_csv(*figure));
  commit_and_report(group);
}

}  // namespace

void add_figure_commands(CLI::App& app, int& exit_code) {
  auto* figure = app.add_subcommand(
      "figure",
      "Figures exported by 'dstudio analyze', 'sweep collect' or the studio, drawn again from "
      "their recipes");
  figure->require_subcommand(1);
  auto* render_cmd = figure->add_subcommand(
      "render",
      "Draws a figure again from the <figure>.recipe.json written beside it (by 'dstudio "
      "analyze', 'sweep collect' or the studio's export): the checkpoint, dataset and other "
      "inputs must be unchanged (their hashes are checked), the analysis or view is computed "
      "again with the recipe's options and seeds, and the figure's numbers go beside FILE as CSV");
  auto recipe = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto roots = std::make_shared<std::vector<std::string>>();
  render_cmd->add_option("recipe", *recipe, "A figure recipe (<figure>.recipe.json)")
      ->required()
      ->check(CLI::ExistingFile);
  render_cmd
      ->add_option("--out", *out,
                   "The figure file; its extension says the format (.pdf, .svg, .png). Its "
                   "numbers are written beside it as .csv. A viewer clip's recipe draws an MP4 "
                   "(.mp4) with its clip log beside it as .json (through decision-studio, on the "
                   "display there is or under xvfb-run)")
      ->required();
  render_cmd
      ->add_option("--root", *roots,
                   "A folder the recipe's inputs moved to (repeatable). Inputs the recipe names "
                   "beside it are read beside it; each other input is looked for under DIR by "
                   "the end of its path, longest first (/home/a/paper/ckpt/dt.pt: "
                   "DIR/home/a/paper/ckpt/dt.pt, ..., DIR/ckpt/dt.pt, DIR/dt.pt), and read from "
                   "there only when it has the hash the recipe recorded; an option naming its "
                   "folder (a run's, a sweep's) follows it")
      ->check(CLI::ExistingDirectory);
  render_cmd->callback([&exit_code, recipe, out, roots] {
    exit_code = run_guarded([&] { render(*recipe, *out, *roots); });
  });
}

}  // namespace dstudio::cli

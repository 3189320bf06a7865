// dstudio: every computation of Decision Studio from the command line, headless.

#include <cstdio>
#include <exception>

#include "commands.h"
#include "dstudio/common/system_info.h"
#include "dstudio/plugins/loader.h"

int main(int argc, char** argv) {
  using namespace dstudio::cli;
  dstudio::keep_freed_memory();
  // Plugins first: their variants and analyses become options and subcommands below. One that is
  // refused is named here and everything else carries on.
  dstudio::plugins::apply_no_plugins_option(argc, argv);
  for (const auto& r : dstudio::plugins::load_default_plugins())
    if (!r.loaded)
      std::fprintf(stderr, "dstudio: plugin %s refused: %s\n", r.file.c_str(), r.error.c_str());
  CLI::App app{
      "dstudio: Decision Studio from the command line.\n"
      "Exit codes: 0 done, 1 the work failed (bad input data, I/O), 2 wrong usage.",
      "dstudio"};
  app.set_version_flag("--version", dstudio::studio_version());
  // Read before the plugins load (apply_no_plugins_option); here so that it is listed and accepted.
  bool no_plugins = false;
  app.add_flag("--no-plugins", no_plugins,
               "Load no plugin (also DSTUDIO_NO_PLUGINS=1): for a plugin that breaks the program; "
               "give it first");
  app.require_subcommand(1);
  app.fallthrough(false);
  int exit_code = kOk;
  add_dataset_commands(app, exit_code);
  add_plugin_commands(app, exit_code);
  add_env_commands(app, exit_code);
  add_bench_commands(app, exit_code);
  add_render_commands(app, exit_code);
  add_model_commands(app, exit_code);
  add_train_commands(app, exit_code);
  add_eval_commands(app, exit_code);
  add_sweep_commands(app, exit_code);
  add_lab_commands(app, exit_code);
#ifdef DSTUDIO_HAVE_FIGURES
  add_analyze_commands(app, exit_code);
  add_figure_commands(app, exit_code);
#endif
  add_model_bench_commands(app, exit_code);
  add_behaviour_commands(app, exit_code, argc, argv);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return kOk;
  } catch (const CLI::CallForAllHelp&) {
    std::fputs(app.help("", CLI::AppFormatMode::All).c_str(), stdout);
    return kOk;
  } catch (const CLI::CallForVersion&) {
    // "program (package) version", as GNU tools and help2man read it.
    const std::string version = dstudio::studio_version();
    std::printf("dstudio (Decision Studio) %s\n", version.substr(version.rfind(' ') + 1).c_str());
    return kOk;
  } catch (const CLI::ParseError& e) {
    // CLI11 prints subcommand help for `--help` after a subcommand through the same path.
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "dstudio: error: %s\nRun 'dstudio --help' for usage.\n", e.what());
    return kUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dstudio: error: %s\n", e.what());
    return dstudio::exit_code_of(e);
  }
  return exit_code;
}

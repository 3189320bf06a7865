// dstudio plugins: what was found in the plugin folders, what each plugin added, and why a plugin
// was refused.

#include <cstdio>
#include <iostream>
#include <memory>

#include "commands.h"
#include "dstudio/plugins/loader.h"
#include "dstudio/plugins/plugin.h"

namespace dstudio::cli {

void add_plugin_commands(CLI::App& app, int& exit_code) {
  auto* plugins =
      app.add_subcommand("plugins", "The plugins found, what each adds, and why any was refused");
  auto json = std::make_shared<bool>(false);
  plugins->add_flag(
      "--json", *json,
      "Print one JSON array: file, name, version, loaded, error and what each plugin added");
  plugins->callback([&exit_code, json] {
    const auto records = plugins::plugin_records();
    if (*json) {
      std::cout << plugins::records_json(records) << std::endl;
      exit_code = kOk;
      return;
    }
    std::printf(
        "Plugin interface %d, LibTorch %s. Folders searched (DSTUDIO_PLUGIN_PATH, then %s, then "
        "the studio's):\n",
        DSTUDIO_PLUGIN_ABI_VERSION, DSTUDIO_SDK_TORCH_VERSION,
        plugins::user_plugin_folder().c_str());
    const auto folders = plugins::plugin_folders();
    for (const auto& f : folders) std::printf("  %s\n", f.c_str());
    if (folders.empty()) std::printf("  (none exists)\n");
    if (records.empty()) std::printf("No plugins.\n");
    for (const auto& r : records) {
      std::printf("\n%s\n", r.file.c_str());
      if (!r.name.empty())
        std::printf("  %s %s: %s\n", r.name.c_str(), r.version.c_str(), r.description.c_str());
      if (!r.loaded) {
        std::printf("  refused: %s\n", r.error.c_str());
        continue;
      }
      auto list = [](const char* what, const std::vector<std::string>& names) {
        if (names.empty()) return;
        std::printf("  %-16s", what);
        for (std::size_t i = 0; i < names.size(); ++i)
          std::printf("%s%s", i ? ", " : "", names[i].c_str());
        std::printf("\n");
      };
      list("variants", r.variants);
      list("token mixers", r.mixers);
      list("analyses", r.analyses);
      list("dataset formats", r.dataset_formats);
      list("environments", r.environments);
    }
    exit_code = kOk;
  });
}

}  // namespace dstudio::cli

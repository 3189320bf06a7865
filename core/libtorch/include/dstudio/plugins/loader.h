#pragma once
/// \file
/// Finding and loading plugins (plugins/plugin.h), defensively: a plugin that cannot be used is
/// refused with a message naming its file and why (not a shared library, built for another
/// interface or LibTorch, missing symbols, a registration that throws), and the studio carries on
/// without it. Each file is first loaded in a child process (a fork of this one): a plugin that
/// crashes, hangs or exits while loading is refused there, by name, and never loaded here.
/// Loading happens once per file; what was found is listed by `plugin_records`.

#include <filesystem>
#include <string>
#include <vector>

namespace dstudio::plugins {

/// One plugin file the studio tried.
struct PluginRecord {
  std::string file;
  std::string name, version, description;  ///< empty when the file could not be read as a plugin
  bool loaded = false;
  std::string error;  ///< why it was refused (empty when loaded)
  /// What it added.
  std::vector<std::string> variants, mixers, analyses, dataset_formats, environments;
};

/// Where plugins are looked for, in this order: the folders of DSTUDIO_PLUGIN_PATH (separated by
/// ':'), the user's folder ($XDG_DATA_HOME or ~/.local/share, then decision-studio/plugins), and
/// the studio's own (`<libdir>/decision-studio/plugins` beside the installed programs, e.g.
/// /usr/lib/x86_64-linux-gnu/decision-studio/plugins). Folders that do not exist are left out.
std::vector<std::filesystem::path> plugin_folders();

/// The user's plugin folder (whether or not it exists).
std::filesystem::path user_plugin_folder();

/// Whether plugins are off: DSTUDIO_NO_PLUGINS set (to anything but "" or "0").
bool plugins_disabled();
/// Sets DSTUDIO_NO_PLUGINS when `--no-plugins` is among the arguments (before a "--"), so that
/// this program and those it starts load none. Called by each program before load_default_plugins.
void apply_no_plugins_option(int argc, char** argv);

/// Loads every `*.so` in `folders` (not their subfolders), in name order; a file already tried is
/// not tried again. Returns the records of this call.
std::vector<PluginRecord> load_plugins(const std::vector<std::filesystem::path>& folders);
/// load_plugins(plugin_folders()), once per process: later calls return the first call's records.
/// None when plugins_disabled().
const std::vector<PluginRecord>& load_default_plugins();

/// Loads one plugin file.
PluginRecord load_plugin(const std::filesystem::path& file);

/// Every plugin tried so far, loaded or refused, in the order tried.
std::vector<PluginRecord> plugin_records();

/// The registrar of definitions that ship with the studio: the calls a plugin's registration makes
/// (plugins/plugin.h), with what they add marked built in. What is added through it is listed and
/// used exactly as the studio's own entries are.
class Registrar;
Registrar& builtin_registrar();

/// One JSON array of the records: what `dstudio plugins --json` prints.
std::string records_json(const std::vector<PluginRecord>& records);

}  // namespace dstudio::plugins

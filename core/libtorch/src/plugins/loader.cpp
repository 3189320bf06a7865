// Loading plugins: version checks before any of their code runs, registration that is undone
// when it fails. See plugins/loader.h and plugins/plugin.h.

#include "dstudio/plugins/loader.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>

#include "dstudio/common/resources.h"
#include "dstudio/models/token_mixer.h"
#include "dstudio/plugins/plugin.h"

namespace dstudio::plugins {
namespace fs = std::filesystem;

namespace {

std::mutex& records_mutex() {
  static std::mutex m;
  return m;
}
std::vector<PluginRecord>& all_records() {
  static std::vector<PluginRecord> records;
  return records;
}

// Stamps what a plugin adds with its origin and remembers it, so a failed registration can be
// undone.
class RecordingRegistrar final : public Registrar {
 public:
  RecordingRegistrar(Origin origin, PluginRecord& record)
      : origin_(std::move(origin)), record_(record) {}

  void add_variant(models::VariantDefinition d) override {
    d.origin = origin_;
    const auto name = d.name;
    models::variant_registry().add(std::move(d));
    record_.variants.push_back(name);
  }
  void add_token_mixer(models::MixerDefinition d, models::TokenMixerFactory factory) override {
    d.origin = origin_;
    const auto name = d.name;
    // The registry holds the built-in mixers too and refuses a name it holds. A failed factory
    // registration is undone with the rest of the plugin (undo()).
    models::mixer_registry().add(std::move(d));
    models::register_token_mixer(name, std::move(factory));
    record_.mixers.push_back(name);
  }
  void add_analysis(analysis::AnalysisDefinition d) override {
    d.origin = origin_;
    const auto name = d.name;
    analysis::analysis_registry().add(std::move(d));
    record_.analyses.push_back(name);
  }
  void add_dataset_format(data::DatasetFormatDefinition d) override {
    d.origin = origin_;
    const auto name = d.name;
    if (!d.detect || !d.load)
      throw UsageError("the dataset format '" + name + "' needs detect and load");
    data::dataset_format_registry().add(std::move(d));
    record_.dataset_formats.push_back(name);
  }
  void add_environment(env::EnvironmentDefinition d) override {
    d.origin = origin_;
    if (d.base.empty()) d.base = d.name;
    const auto name = d.name;
    env::validate(d);
    // The model must compile and fit the definition before anything can use it.
    (void)env::load_model(d);
    env::environments().add(std::move(d));
    record_.environments.push_back(name);
  }

  // Takes out everything this plugin added.
  void undo() {
    models::variant_registry().remove_plugin(origin_.plugin);
    models::mixer_registry().remove_plugin(origin_.plugin);
    for (const auto& m : record_.mixers) models::unregister_token_mixer(m);
    analysis::analysis_registry().remove_plugin(origin_.plugin);
    data::dataset_format_registry().remove_plugin(origin_.plugin);
    env::environments().remove_plugin(origin_.plugin);
    record_.variants.clear();
    record_.mixers.clear();
    record_.analyses.clear();
    record_.dataset_formats.clear();
    record_.environments.clear();
  }

 private:
  Origin origin_;
  PluginRecord& record_;
};

std::string text_of(const char* s) {
  return s ? std::string(s) : std::string();
}

PluginRecord& builtin_record() {
  static PluginRecord record;
  return record;
}

// The dynamic loader maps a library's segments as the headers describe them; a truncated file then
// faults (SIGBUS) while it is being relocated, not with an error. So the headers are checked
// against the file's size first. Returns why the file cannot be a library of this machine, or "".
std::string elf_problem(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::error_code ec;
  const auto size = static_cast<std::uint64_t>(fs::file_size(file, ec));
  Elf64_Ehdr header{};
  if (ec || !in.read(reinterpret_cast<char*>(&header), sizeof header))
    return "it is too short to be a shared library";
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) return "it is not an ELF file";
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB)
    return "it is not a 64-bit little-endian library";
#if defined(__x86_64__)
  if (header.e_machine != EM_X86_64) return "it was built for another processor";
#elif defined(__aarch64__)
  if (header.e_machine != EM_AARCH64) return "it was built for another processor";
#endif
  if (header.e_type != ET_DYN) return "it is not a shared library";
  auto beyond = [size](std::uint64_t offset, std::uint64_t bytes) {
    return offset > size || bytes > size - offset;
  };
  if (header.e_phentsize != sizeof(Elf64_Phdr) ||
      beyond(header.e_phoff, std::uint64_t{header.e_phnum} * sizeof(Elf64_Phdr)))
    return "it is truncated (its program headers end beyond the file)";
  if (header.e_shoff != 0 &&
      beyond(header.e_shoff, std::uint64_t{header.e_shnum} * header.e_shentsize))
    return "it is truncated (its section headers end beyond the file's " + std::to_string(size) +
           " bytes)";
  in.seekg(static_cast<std::streamoff>(header.e_phoff));
  for (int i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment{};
    if (!in.read(reinterpret_cast<char*>(&segment), sizeof segment))
      return "it is truncated (its program headers cannot be read)";
    if ((segment.p_type == PT_LOAD || segment.p_type == PT_DYNAMIC) &&
        beyond(segment.p_offset, segment.p_filesz))
      return "it is truncated: a segment ends at byte " +
             std::to_string(segment.p_offset + segment.p_filesz) + " of a file of " +
             std::to_string(size);
  }
  return {};
}

bool already_tried(const std::string& file) {
  std::lock_guard lock(records_mutex());
  for (const auto& r : all_records())
    if (r.file == file) return true;
  return false;
}

bool name_taken(const std::string& name, std::string& by) {
  std::lock_guard lock(records_mutex());
  for (const auto& r : all_records())
    if (r.loaded && r.name == name) {
      by = r.file;
      return true;
    }
  return false;
}

PluginRecord try_load(const fs::path& file) {
  PluginRecord record;
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(file, ec);
  record.file = (ec ? file : canonical).string();
  auto refuse = [&](const std::string& why) {
    record.loaded = false;
    record.error = why;
    return record;
  };
  if (!fs::is_regular_file(file, ec)) return refuse("no such file");
  if (const auto problem = elf_problem(file); !problem.empty())
    return refuse("cannot be loaded as a shared library: " + problem);
  // RTLD_NOW: a plugin built against other libraries fails here, naming the missing symbol,
  // instead of later in the middle of a computation. Handles are never closed: a C++ library's
  // static objects must not be unloaded under the studio.
  void* handle = dlopen(record.file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    return refuse("cannot be loaded as a shared library: " + text_of(why));
  }
  dlerror();
  auto* info_fn =
      reinterpret_cast<const DStudioPluginInfo* (*)()>(dlsym(handle, DSTUDIO_PLUGIN_INFO_SYMBOL));
  if (!info_fn)
    return refuse("is not a Decision Studio plugin: it has no " DSTUDIO_PLUGIN_INFO_SYMBOL
                  " (see DSTUDIO_PLUGIN in dstudio/plugins/plugin.h)");
  const DStudioPluginInfo* info = info_fn();
  if (!info) return refuse(DSTUDIO_PLUGIN_INFO_SYMBOL " returned nothing");
  // Only the first field is read before the version is known to match.
  if (info->abi_version != DSTUDIO_PLUGIN_ABI_VERSION)
    return refuse("was built for plugin interface " + std::to_string(info->abi_version) +
                  "; this studio has interface " + std::to_string(DSTUDIO_PLUGIN_ABI_VERSION) +
                  ": rebuild it against this studio's SDK");
  record.name = text_of(info->name);
  record.version = text_of(info->version);
  record.description = text_of(info->description);
  if (text_of(info->torch_version) != DSTUDIO_SDK_TORCH_VERSION)
    return refuse("was built with LibTorch " + text_of(info->torch_version) +
                  "; this studio uses LibTorch " DSTUDIO_SDK_TORCH_VERSION
                  ": rebuild it against this studio's SDK");
  if (record.name.empty()) return refuse("has no name");
  std::string by;
  if (name_taken(record.name, by))
    return refuse("a plugin called '" + record.name + "' is already loaded, from " + by);
  auto* register_fn =
      reinterpret_cast<void (*)(Registrar&)>(dlsym(handle, DSTUDIO_PLUGIN_REGISTER_SYMBOL));
  if (!register_fn) return refuse("has no " DSTUDIO_PLUGIN_REGISTER_SYMBOL);
  RecordingRegistrar registrar({record.name, record.version, record.file}, record);
  try {
    register_fn(registrar);
  } catch (const std::exception& e) {
    registrar.undo();
    return refuse(std::string("its registration failed: ") + e.what());
  } catch (...) {
    registrar.undo();
    return refuse("its registration failed with an exception that is not a std::exception");
  }
  record.loaded = true;
  return record;
}

// How long a plugin may take to load in the probe before it is taken to hang.
constexpr int kProbeSecondsPerPlugin = 60;

// Loads `files` in a child process, as they will be loaded here, and returns for each file what
// happened if it crashed, hung or ended the child ("" for the others): a plugin that does so is
// refused by name instead of taking this process (and the user's work) with it. The child is a fork
// of this process, not a new program: it then has the same symbols and registries the plugin will
// meet here, in any program (the studio's and its tests). It reports each file done with a byte on
// a pipe, so one child serves all the files that load cleanly; after a failure, a new child takes
// the rest.
std::vector<std::string> probe_in_child(const std::vector<fs::path>& all) {
  std::vector<std::string> problems(all.size());
  for (std::size_t first = 0; first < all.size();) {
    const std::vector<fs::path> files(all.begin() + static_cast<std::ptrdiff_t>(first), all.end());
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return problems;  // no probe: loaded as before
    std::fflush(nullptr);                               // nothing buffered is written twice
    const pid_t pid = ::fork();
    if (pid < 0) {
      ::close(fds[0]);
      ::close(fds[1]);
      return problems;
    }
    if (pid == 0) {
      ::close(fds[0]);
      // What a plugin prints while loading is printed when it loads for real.
      const int null = ::open("/dev/null", O_WRONLY);
      if (null >= 0) ::dup2(null, STDOUT_FILENO), ::dup2(null, STDERR_FILENO);
      for (const auto& f : files) {
        (void)try_load(f);
        const char done = '.';
        if (::write(fds[1], &done, 1) != 1) ::_exit(3);
      }
      ::_exit(0);  // no destructors, no atexit handlers of the parent's
    }
    ::close(fds[1]);
    std::size_t done = 0;
    bool hung = false;
    for (;;) {
      pollfd p{fds[0], POLLIN, 0};
      const int ready = ::poll(&p, 1, kProbeSecondsPerPlugin * 1000);
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) {
        hung = true;
        break;
      }
      char buffer[64];
      const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    ::close(fds[0]);
    if (hung) ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (done >= files.size()) break;  // every file loaded
    std::string& why = problems[first + done];
    if (hung)
      why = "it did not finish loading within " + std::to_string(kProbeSecondsPerPlugin) +
            " s, so it was not loaded";
    else if (WIFSIGNALED(status))
      why = "it crashed while loading (signal " + std::to_string(WTERMSIG(status)) + ", " +
            strsignal(WTERMSIG(status)) + "), so it was not loaded";
    else
      why = "it ended the program while loading (exit status " +
            std::to_string(WEXITSTATUS(status)) + "), so it was not loaded";
    first += done + 1;
  }
  return problems;
}

// Probes, then loads each file that the probe did not find crashing.
std::vector<PluginRecord> load_probed(const std::vector<fs::path>& files) {
  const auto problems = probe_in_child(files);
  std::vector<PluginRecord> out;
  for (std::size_t i = 0; i < files.size(); ++i) {
    PluginRecord record;
    if (problems[i].empty()) {
      record = try_load(files[i]);
    } else {
      std::error_code ec;
      const fs::path canonical = fs::weakly_canonical(files[i], ec);
      record.file = (ec ? files[i] : canonical).string();
      record.error = problems[i];
    }
    std::lock_guard lock(records_mutex());
    all_records().push_back(record);
    out.push_back(std::move(record));
  }
  return out;
}

}  // namespace

bool plugins_disabled() {
  const char* env = std::getenv("DSTUDIO_NO_PLUGINS");
  return env && *env && std::string(env) != "0";
}

void apply_no_plugins_option(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) return;
    // Passed on to every program this one starts (a sweep's tasks).
    if (std::strcmp(argv[i], "--no-plugins") == 0) ::setenv("DSTUDIO_NO_PLUGINS", "1", 1);
  }
}

fs::path user_plugin_folder() {
  const char* xdg = std::getenv("XDG_DATA_HOME");
  const char* home = std::getenv("HOME");
  fs::path base = xdg && *xdg ? fs::path(xdg) : fs::path(home ? home : ".") / ".local" / "share";
  return base / "decision-studio" / "plugins";
}

std::vector<fs::path> plugin_folders() {
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("DSTUDIO_PLUGIN_PATH")) {
    std::string list = env;
    std::size_t start = 0;
    while (start <= list.size()) {
      const auto end = std::min(list.find(':', start), list.size());
      if (end > start) candidates.emplace_back(list.substr(start, end - start));
      start = end + 1;
    }
  }
  candidates.push_back(user_plugin_folder());
  if (const auto installed = installed_plugin_dir(); !installed.empty())
    candidates.push_back(installed);
  std::error_code ec;
  std::vector<fs::path> folders;
  std::set<fs::path> seen;
  for (const auto& c : candidates) {
    if (!fs::is_directory(c, ec)) continue;
    const auto key = fs::weakly_canonical(c, ec);
    if (seen.insert(key).second) folders.push_back(c);
  }
  return folders;
}

PluginRecord load_plugin(const fs::path& file) {
  return load_probed({file}).front();
}

std::vector<PluginRecord> load_plugins(const std::vector<fs::path>& folders) {
  std::vector<PluginRecord> out;
  for (const auto& folder : folders) {
    std::error_code ec;
    std::vector<fs::path> files;
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().extension() == ".so") files.push_back(it->path());
    std::sort(files.begin(), files.end());
    std::vector<fs::path> untried;
    for (const auto& f : files) {
      const auto canonical = fs::weakly_canonical(f, ec).string();
      if (!already_tried(canonical)) untried.push_back(f);
    }
    // Folder by folder: a name a later folder repeats is refused as it would be loaded.
    for (auto& r : load_probed(untried)) out.push_back(std::move(r));
  }
  return out;
}

const std::vector<PluginRecord>& load_default_plugins() {
  static const std::vector<PluginRecord> records =
      plugins_disabled() ? std::vector<PluginRecord>{} : load_plugins(plugin_folders());
  return records;
}

std::vector<PluginRecord> plugin_records() {
  std::lock_guard lock(records_mutex());
  return all_records();
}

std::string records_json(const std::vector<PluginRecord>& records) {
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (const auto& r : records)
    all.push_back({{"file", r.file},
                   {"name", r.name},
                   {"version", r.version},
                   {"description", r.description},
                   {"loaded", r.loaded},
                   {"error", r.error},
                   {"variants", r.variants},
                   {"mixers", r.mixers},
                   {"analyses", r.analyses},
                   {"dataset_formats", r.dataset_formats},
                   {"environments", r.environments}});
  return all.dump(2);
}

Registrar& builtin_registrar() {
  // Origin{} is "built in"; nothing built in is ever undone, so the record only accumulates.
  static RecordingRegistrar registrar(Origin{}, builtin_record());
  return registrar;
}

}  // namespace dstudio::plugins

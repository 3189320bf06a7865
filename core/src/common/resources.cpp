#include "dstudio/common/resources.h"

#include <cstdlib>
#include <string>
#include <system_error>

#include "dstudio/common/error.h"

namespace fs = std::filesystem;

namespace dstudio {

namespace {
fs::path prefix() {
  const fs::path exe = executable_path();
  return exe.empty() ? fs::path() : exe.parent_path().parent_path();
}
}  // namespace

fs::path executable_path() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe;
}

fs::path resources_dir() {
  std::error_code ec;
  if (const char* env = std::getenv("DSTUDIO_RESOURCES"); env && *env) {
    const fs::path dir(env);
    return fs::is_directory(dir, ec) ? dir : fs::path();
  }
  const fs::path base = prefix();
  if (base.empty()) return {};
  const fs::path dir = base / "share" / "decision-studio";
  return fs::is_directory(dir, ec) ? dir : fs::path();
}

fs::path resource_file(const fs::path& relative) {
  const fs::path dir = resources_dir();
  std::error_code ec;
  if (!dir.empty() && fs::exists(dir / relative, ec)) return dir / relative;
  const char* env = std::getenv("DSTUDIO_RESOURCES");
  const std::string looked = env && *env ? std::string("$DSTUDIO_RESOURCES (") + env + ")"
                                         : (prefix() / "share" / "decision-studio").string();
  if (dir.empty())
    throw Error("the studio's resources are not where they should be: " + looked +
                " is not a folder");
  throw Error("the shipped file " + relative.string() + " is missing from " + dir.string());
}

fs::path private_lib_dir() {
  const fs::path base = prefix();
  return base.empty() ? fs::path() : base / DSTUDIO_PRIVATE_LIBDIR;
}

fs::path installed_plugin_dir() {
  const fs::path dir = private_lib_dir();
  return dir.empty() ? fs::path() : dir / "plugins";
}

fs::path private_program(std::string_view name) {
  const fs::path exe = executable_path();
  if (exe.empty()) return {};
  std::error_code ec;
  for (const fs::path& candidate : {exe.parent_path() / name, private_lib_dir() / name})
    if (fs::is_regular_file(candidate, ec)) return candidate;
  return {};
}

}  // namespace dstudio

// Files written whole or not at all. See atomic_file.h.

#include "dstudio/common/atomic_file.h"

#include <unistd.h>

#include <fstream>
#include <string>

#include "dstudio/common/error.h"

namespace dstudio {
namespace fs = std::filesystem;

void write_file_atomically(const fs::path& path, const std::function<void(const fs::path& temp)>& write) {
  // Hidden, and named by the process: two writers of one file never share a temporary.
  std::string name = ".";
  name += path.filename().string();
  name += ".partial-" + std::to_string(getpid());
  const fs::path temp = path.parent_path() / name;
  std::error_code ec;
  try {
    write(temp);
    fs::rename(temp, path, ec);
  } catch (...) {
    fs::remove(temp, ec);
    throw;
  }
  if (ec) {
    const std::string why = ec.message();
    fs::remove(temp, ec);
    throw Error(path.string() + ": cannot be written (" + why + ")");
  }
}

void write_text_atomically(const fs::path& path, std::string_view text) {
  write_file_atomically(path, [&](const fs::path& temp) {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.flush();
    if (!out) throw Error(path.string() + ": cannot be written");
  });
}

}  // namespace dstudio

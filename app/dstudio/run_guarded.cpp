// The error handling every command shares. See commands.h.

#include <cstdio>
#include <stdexcept>
#include <vector>

#include "commands.h"
#include "dstudio/common/error.h"
#include "dstudio/common/progress.h"

namespace dstudio::cli {

OutputFolder::OutputFolder(std::filesystem::path folder) : folder_(std::move(folder)) {
  std::error_code ec;
  if (std::filesystem::exists(folder_, ec)) {
    for (const auto& entry : std::filesystem::directory_iterator(folder_, ec))
      before_.insert(entry.path());
  } else {
    std::filesystem::create_directories(folder_);
    created_ = true;
  }
}

OutputFolder::~OutputFolder() {
  if (committed_) return;
  std::error_code ec;
  if (created_) {
    std::filesystem::remove_all(folder_, ec);
    return;
  }
  std::vector<std::filesystem::path> added;
  for (const auto& entry : std::filesystem::directory_iterator(folder_, ec))
    if (!before_.count(entry.path())) added.push_back(entry.path());
  for (const auto& path : added) std::filesystem::remove_all(path, ec);
}

int run_guarded(const std::function<void()>& body) {
  return run_reporting("dstudio", [&] {
    try {
      body();
    } catch (const CLI::ValidationError& e) {
      throw UsageError(e.what());  // a value CLI11 refused after parsing: the command line's fault
    }
    return static_cast<int>(kOk);
  });
}

}  // namespace dstudio::cli

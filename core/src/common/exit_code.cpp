// One mapping from errors to exit codes. See exit_code.h.

#include "dstudio/common/exit_code.h"

#include <cstdio>
#include <string>

#include "dstudio/common/error.h"
#include "dstudio/common/progress.h"

namespace dstudio {

ExitCode exit_code_of(const std::exception& e) {
  if (dynamic_cast<const UsageError*>(&e)) return kExitUsage;
  if (dynamic_cast<const Cancelled*>(&e)) return kExitCancelled;
  return kExitFailed;
}

int run_reporting(std::string_view program, const std::function<int()>& body) {
  const std::string name(program);
  try {
    return body();
  } catch (const Cancelled&) {
    std::fprintf(stderr, "%s: cancelled\n", name.c_str());
    return kExitCancelled;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", name.c_str(), e.what());
    return exit_code_of(e);
  }
}

}  // namespace dstudio

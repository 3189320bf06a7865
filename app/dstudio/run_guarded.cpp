// The error handling every command shares. See commands.h.

#include <cstdio>
#include <stdexcept>

#include "commands.h"
#include "dstudio/common/error.h"
#include "dstudio/common/progress.h"

namespace dstudio::cli {

int run_guarded(const std::function<void()>& body) {
  try {
    body();
    return kOk;
  } catch (const CLI::ValidationError& e) {
    std::fprintf(stderr, "dstudio: error: %s\n", e.what());
    return kUsage;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "dstudio: error: %s\n", e.what());
    return kUsage;
  } catch (const Cancelled&) {
    std::fprintf(stderr, "dstudio: cancelled\n");
    return 130;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dstudio: error: %s\n", e.what());
    return kFailed;
  }
}

}  // namespace dstudio::cli

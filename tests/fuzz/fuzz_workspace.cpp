// Fuzz target: workspace files (parse_workspace), on any text. An accepted workspace must write
// back to JSON that reads back equal, and its Markov lab settings either apply or are refused.

#include <cstddef>
#include <cstdint>

#include "dstudio/common/workspace.h"
#include "fuzz_support.h"

extern "C" const char* __asan_default_options() {
  return "detect_leaks=1";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dstudio;
  fuzz::run([&] {
    const Workspace w = parse_workspace(fuzz::text_of(data, size));
    fuzz::require(parse_workspace(to_json(w)) == w, "a workspace reads back equal");
    (void)resolve_resources(w, "/resources");
    if (w.markov_lab) (void)w.markov_lab->apply({});
  });
  return 0;
}

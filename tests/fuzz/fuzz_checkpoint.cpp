// Fuzz target: the checkpoint loader's checks that need no LibTorch, on any bytes:
// models::verify_checkpoint_bytes (the seal and every zip record's CRC-32, before the weights are
// used) and models::checkpoint_info_from_description (the description JSON a checkpoint holds in
// its "meta" record: configurations, dataset statistics, step). The corpus holds small real
// checkpoints for the first and descriptions taken from the shipped checkpoints for the second;
// each input goes to both. A verified checkpoint must report the input's size and, when sealed, a
// 32-digit digest.

#include <cstddef>
#include <cstdint>
#include <string>

#include "dstudio/models/checkpoint_info.h"
#include "dstudio/models/checkpoint_integrity.h"
#include "fuzz_support.h"

extern "C" const char* __asan_default_options() {
  return "detect_leaks=1";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dstudio;
  const std::string_view bytes = fuzz::text_of(data, size);
  fuzz::run([&] {
    const models::CheckpointIntegrity integrity = models::verify_checkpoint_bytes(bytes, "fuzz.pt");
    fuzz::require(integrity.bytes == size, "the size verified is the input's");
    fuzz::require(!integrity.sealed || integrity.digest.size() == 32,
                  "a seal's digest has 32 hexadecimal digits");
  });
  fuzz::run([&] {
    const models::CheckpointInfo info =
        models::checkpoint_info_from_description("fuzz.pt", std::string(bytes));
    fuzz::require(info.state_mean.size() == static_cast<std::size_t>(info.variant.state_dim) &&
                      info.state_std.size() == info.state_mean.size(),
                  "one state mean and deviation per state dimension");
    (void)models::summarize(info);
  });
  return 0;
}

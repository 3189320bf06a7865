// Fuzz target: the configuration parsers, on any text: a variant's JSON
// (models::variant_from_json), overrides on a variant's defaults (models::with_overrides, as
// --config gives them), a training configuration (models::training_from_json) and the names parsed
// from the command line. What a parser accepts must write back to JSON that reads back equal.

#include <cstddef>
#include <cstdint>
#include <string>

#include "dstudio/models/markov_lab_options.h"
#include "dstudio/models/training_config.h"
#include "dstudio/models/variant_config.h"
#include "fuzz_support.h"

extern "C" const char* __asan_default_options() {
  return "detect_leaks=1";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dstudio;
  const std::string text(fuzz::text_of(data, size));
  fuzz::run([&] {
    const models::VariantConfig c = models::variant_from_json(text);
    fuzz::require(models::variant_from_json(models::to_json(c)) == c, "a variant reads back equal");
    c.validate();
    (void)models::forward_flops(c, 64);
    for (const auto& name : {"hidden", "heads", "gaussian_w", "pool_size", "no such key"})
      (void)models::uses_field(c, name);
  });
  fuzz::run([&] {
    const models::VariantConfig c = models::with_overrides(models::make_variant("dc"), text);
    fuzz::require(models::variant_from_json(models::to_json(c)) == c,
                  "an overridden variant reads back equal");
  });
  fuzz::run([&] {
    const models::TrainingConfig c = models::training_from_json(text);
    const models::TrainingConfig back = models::training_from_json(models::to_json(c));
    fuzz::require(models::to_json(back) == models::to_json(c),
                  "a training configuration reads back equal");
  });
  if (size <= 64) {
    fuzz::run([&] { (void)models::make_variant(text); });
    fuzz::run([&] { (void)models::zeroing_from_string(text); });
    fuzz::run([&] { (void)models::lab_mixer_from_string(text); });
  }
  return 0;
}

#include "dstudio/models/markov_lab_options.h"

#include <algorithm>

#include "dstudio/common/error.h"

namespace dstudio::models {

const EnumNames<LabMixer>& lab_mixer_names() {
  static const EnumNames<LabMixer> names{{LabMixer::Pooling, "pooling"},
                                         {LabMixer::Attention, "attention"},
                                         {LabMixer::Convolution, "conv"}};
  return names;
}

std::string to_string(LabMixer mixer) {
  return lab_mixer_names().name(mixer);
}

LabMixer lab_mixer_from_string(const std::string& name) {
  if (const auto m = lab_mixer_names().parse(name)) return *m;
  throw UsageError("unknown mixer '" + name + "' (" + lab_mixer_names().joined() + ")");
}

namespace {

void check_range(const char* name, long long value, long long lo, long long hi) {
  if (value < lo || value > hi)
    throw UsageError(std::string(name) + " must be in [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "], got " + std::to_string(value));
}

}  // namespace

void MarkovLabOptions::check() const {
  // The chain's own ranges (MarkovChain::make) apply to a chain built by hand as well.
  analysis::MarkovChain::make(chain.p, chain.q, chain.order, chain.states);
  check_range("length", length, std::max(8, chain.order + 1), 256);
  check_range("window", window, 1, length);
  check_range("steps", steps, 1, 100000);
  check_range("batch", batch, 1, 1024);
  check_range("embedding", embedding, 2, 128);
  check_range("ffn", ffn, 1, 512);
  check_range("eval_every", eval_every, 1, 100000);
  if (!(learning_rate > 0.0 && learning_rate <= 1.0))
    throw UsageError("learning_rate must be in (0, 1], got " + std::to_string(learning_rate));
}

}  // namespace dstudio::models

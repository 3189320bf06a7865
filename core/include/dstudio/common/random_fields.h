#pragma once
/// \file
/// The field table of a random stream's state (`Random::State`: its counter and a spare normal
/// draw), for every file that keeps one to continue a stream exactly: a training checkpoint's
/// window sampler, a SAC run's action and batch streams.

#include "dstudio/common/json_fields.h"
#include "dstudio/common/random.h"

namespace dstudio {

/// {"counter", "spare", "has_spare"}, each required.
const JsonFields<Random::State>& random_state_fields();

}  // namespace dstudio

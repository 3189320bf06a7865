// A steering direction's file. See steering_direction.h.

#include "dstudio/models/steering_direction.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "dstudio/common/json_fields.h"
#include "dstudio/common/text.h"

namespace dstudio::models {
namespace {

const JsonFields<SteeringDirectionFile>& direction_fields() {
  static const auto fields = [] {
    using F = SteeringDirectionFile;
    JsonFields<F> t;
    t.field("direction", &F::direction)
        .required("not a steering direction")
        .checked([](const F& f, const std::string& where) {
          // The stream is float32: a number beyond its range would be read as inf.
          constexpr double kMost = std::numeric_limits<float>::max();
          for (std::size_t i = 0; i < f.direction.size(); ++i)
            if (std::abs(f.direction[i]) > kMost)
              JsonFields<F>::refuse(where + "[" + std::to_string(i) + "] is " +
                                    general_number(f.direction[i]) + ", beyond float32's range (" +
                                    general_number(kMost) + ")");
        })
        .field("layer", &F::layer, {0})
        .field("high_target", &F::high_target)
        .field("low_target", &F::low_target)
        .field("norm", &F::norm, {0})
        .field("checkpoint", &F::checkpoint)
        .field("checkpoint_hash", &F::checkpoint_hash)
        .errors_as<UsageError>();
    return t;
  }();
  return fields;
}

}  // namespace

std::string steering_direction_text(const SteeringDirectionFile& file) {
  return direction_fields().write(file).dump(2) + "\n";
}

SteeringDirectionFile read_steering_direction(const std::string& text, const std::string& where) {
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(text);
  } catch (const std::exception& e) {
    throw UsageError(where + ": not a steering direction (" + std::string(e.what()) + ")");
  }
  if (!j.is_object()) throw UsageError(where + ": not a steering direction (not a JSON object)");
  return direction_fields().read(j, where);
}

}  // namespace dstudio::models

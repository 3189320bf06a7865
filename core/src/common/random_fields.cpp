// A random stream's state as JSON. See random_fields.h.

#include "dstudio/common/random_fields.h"

namespace dstudio {

const JsonFields<Random::State>& random_state_fields() {
  static const auto fields = [] {
    using S = Random::State;
    JsonFields<S> t;
    t.field("counter", &S::counter)
        .required()
        .field("spare", &S::spare)
        .required()
        .field("has_spare", &S::has_spare)
        .required();
    return t;
  }();
  return fields;
}

}  // namespace dstudio

#pragma once
// The field tables of the variant and training configurations: their JSON both ways, their ranges,
// and the descriptions config_fields.h lists for forms and help texts. Private to the models
// library.

#include "dstudio/common/json_fields.h"
#include "dstudio/models/training_config.h"
#include "dstudio/models/variant_config.h"

namespace dstudio::models {

const JsonFields<TrainingConfig>& training_table();
const JsonFields<VariantConfig>& variant_table();

}  // namespace dstudio::models

// A plugin whose registration throws after adding a variant: refused, and the variant taken out.
#include <dstudio/plugins/plugin.h>

#include <stdexcept>

DSTUDIO_PLUGIN("test-throwing", "0.1.0", "Test plugin whose registration fails half-way") {
  dstudio::models::VariantDefinition v;
  v.name = "half-registered";
  v.description = "added before the registration fails";
  v.defaults = [] { return dstudio::models::make_variant("dt"); };
  registrar.add_variant(v);
  throw std::runtime_error("deliberate failure after one variant");
}

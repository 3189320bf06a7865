// A plugin that claims a name the studio already has: refused, naming the name and its owner.
#include <dstudio/plugins/plugin.h>

DSTUDIO_PLUGIN("test-duplicate", "0.1.0", "Test plugin that redefines dt") {
  dstudio::models::VariantDefinition v;
  v.name = "dt";
  v.description = "a second dt";
  v.defaults = [] { return dstudio::models::make_variant("dc"); };
  registrar.add_variant(v);
}

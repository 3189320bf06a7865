// A plugin whose registration crashes the process (a null pointer written): probed in a child
// process, it is refused by name and never loaded into the program.
#include <dstudio/plugins/plugin.h>

#include <csignal>

DSTUDIO_PLUGIN("test-crashing", "0.1.0", "Test plugin whose registration crashes") {
  dstudio::models::VariantDefinition v;
  v.name = "crash-registered";
  v.description = "added before the crash";
  v.defaults = [] { return dstudio::models::make_variant("dt"); };
  registrar.add_variant(v);
  std::raise(SIGSEGV);
}

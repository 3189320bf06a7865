// A plugin built for another interface version: refused before any of its code runs.
#include <dstudio/plugins/plugin.h>

#include <cstdlib>

extern "C" __attribute__((visibility("default"))) const DStudioPluginInfo* dstudio_plugin_info() {
  static const DStudioPluginInfo info{DSTUDIO_PLUGIN_ABI_VERSION + 998,
                                      "9.9.9",
                                      DSTUDIO_SDK_TORCH_VERSION,
                                      "test-bad-abi",
                                      "0.1.0",
                                      "Test plugin of another interface version"};
  return &info;
}

extern "C" __attribute__((visibility("default"))) void dstudio_plugin_register(
    dstudio::plugins::Registrar&) {
  std::abort();  // must never be called
}

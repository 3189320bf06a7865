// A plugin whose dataset format crashes on every file it claims (*.crashes): it registers fine,
// and only reading a file goes wrong. The studio reads such files in the plugin reader process,
// so the crash ends that process and the file is refused naming the format.
#include <dstudio/plugins/plugin.h>

#include <csignal>

DSTUDIO_PLUGIN("test-crashing-format", "0.1.0",
               "Test plugin whose dataset format crashes while reading") {
  registrar.add_dataset_format(
      {"crashing-format",
       "claims *.crashes files and crashes reading them",
       [](const std::filesystem::path& path) { return path.extension() == ".crashes"; },
       [](const std::filesystem::path&, const dstudio::data::LoadOptions&,
          const dstudio::Progress&) {
         std::raise(SIGSEGV);
         return dstudio::data::Dataset{};
       },
       {}});
}

// dstudio-plugin-reader: the dataset reader process for the files of plugins' dataset formats
// (dstudio/data/reader_process.h). It loads the one plugin named with --plugin, then reads the
// file as dstudio-probe reads HDF5 files: a plugin that crashes, hangs or exhausts the memory on
// a file takes only this process with it. The studio's programs run it; it is not a command for
// users.

#include <string>

#include "dstudio/common/error.h"
#include "dstudio/data/reader_process.h"
#include "dstudio/plugins/loader.h"

int main(int argc, char** argv) {
  return dstudio::data::reader_process_main(argc, argv, [](const std::string& file) {
    const auto record = dstudio::plugins::load_plugin(file);
    if (!record.loaded)
      throw dstudio::Error("the plugin " + file + " cannot be loaded: " + record.error);
  });
}

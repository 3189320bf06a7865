#pragma once
/// \file
/// The dataset reader process, `dstudio-probe`: libhdf5 (Debian's 1.10.8) crashes, loops forever
/// or allocates gigabytes on some damaged files, so `load_dataset` with `LoadOptions::isolate`
/// reads an HDF5 dataset in this separate program, under a memory limit and a time limit, and the
/// arrays come back through a memory file: libhdf5 never reads the file in the process that holds
/// the user's work.
///
/// The program loads the file exactly as `load_dataset` would and reports on its standard output,
/// one line each: `at <0|1> <what>` before each step that touches the file (1: optional metadata),
/// `progress <fraction> <stage>`, then `ok`, `refused <file>\t<key>\t<problem>`, `nomem` or
/// `failed <message>`. A crash leaves the last `at` line naming what was being read.

#include <functional>
#include <string>

namespace dstudio::data {

/// The reader program's `main`: `dstudio-probe [--no-metadata] [--no-infos] [--next-observations]
/// [--max-bytes N] [--max-episode-steps N] [--memory-limit BYTES] <dataset>`. Exits 0 when the
/// dataset loads, 1 when it is refused, 3 when memory ran out, 2 on bad arguments. The memory
/// limit counts from what the program has mapped when it starts reading.
///
/// `dstudio-plugin-reader`, which reads the files of plugins' dataset formats, passes
/// `load_plugin`: it then takes `--plugin FILE` and loads that plugin before reading the dataset
/// (a plugin that cannot be loaded fails the read, naming it).
int reader_process_main(int argc, char** argv,
                        const std::function<void(const std::string& plugin)>& load_plugin = {});

}  // namespace dstudio::data

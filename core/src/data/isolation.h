#pragma once
// Internal: the parent's side of the dataset reader process (see dstudio/data/reader_process.h).

#include <filesystem>
#include <string>
#include <vector>

#include "dstudio/common/progress.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/data/format_registry.h"

namespace dstudio::data {

/// Loads the HDF5 file `file` in `dstudio-probe` with `options` and limits derived from the file's
/// size, and returns the dataset it read (handed back through a memory file): this process never
/// lets libhdf5 touch the file. A crash, a timeout or exhausted memory in the metadata is retried
/// without metadata, and a warning says what was left out. Throws DatasetError when the reader
/// refuses the file, crashes, times out or runs out of memory elsewhere; `Cancelled` (the reader
/// killed) when `progress` is cancelled; Error when the reader program cannot be found or started.
/// With `plugin_format`, the file is a plugin's: it is read by `dstudio-plugin-reader`, which loads
/// that plugin (Origin::file) and nothing else, under the same limits; what fails there is named
/// as the plugin's format's.
Dataset load_in_reader_process(const std::filesystem::path& file, const LoadOptions& options,
                               const Progress& progress,
                               const DatasetFormatDefinition* plugin_format = nullptr);

}  // namespace dstudio::data

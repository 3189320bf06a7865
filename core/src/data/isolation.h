#pragma once
// Internal: the parent's side of the dataset reader process (see dstudio/data/reader_process.h).

#include <filesystem>
#include <string>
#include <vector>

#include "dstudio/common/progress.h"
#include "dstudio/data/dataset_io.h"

namespace dstudio::data {

/// Loads the HDF5 file `file` in `dstudio-probe` with `options` and limits derived from the file's
/// size, and returns the dataset it read (handed back through a memory file): this process never
/// lets libhdf5 touch the file. A crash, a timeout or exhausted memory in the metadata is retried
/// without metadata, and a warning says what was left out. Throws DatasetError when the reader
/// refuses the file, crashes, times out or runs out of memory elsewhere; `Cancelled` (the reader
/// killed) when `progress` is cancelled; Error when the reader program cannot be found or started.
Dataset load_in_reader_process(const std::filesystem::path& file, const LoadOptions& options, const Progress& progress);

}  // namespace dstudio::data

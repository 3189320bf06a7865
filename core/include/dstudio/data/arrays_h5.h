#pragma once
/// \file
/// Small HDF5 files of named N-dimensional arrays: the inputs and outputs of `dstudio predict`,
/// readable and writable by h5py and any other HDF5 tool.

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace dstudio::data {

/// An N-dimensional array, row-major. Values are held as double so that float32, float64 and
/// integer data (timesteps) read back exactly.
struct NdArray {
  std::vector<std::int64_t> shape;
  std::vector<double> values;
  std::string dtype;  ///< as stored in the file ("float32", "int64", "bool", ...); "float32" for writing

  [[nodiscard]] std::int64_t numel() const;
};

/// Reads `required` and, where present, `optional` keys of `path`. Throws DatasetError naming the
/// file and key for a missing file or key, an unsupported dtype, or NaN/Inf values.
std::map<std::string, NdArray> read_nd_arrays(const std::filesystem::path& path, const std::vector<std::string>& required,
                                              const std::vector<std::string>& optional = {});

/// Writes `arrays` as float32 datasets. The file appears complete or not at all.
void write_nd_arrays(const std::filesystem::path& path, const std::map<std::string, NdArray>& arrays);

}  // namespace dstudio::data

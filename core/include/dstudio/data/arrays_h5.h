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
  std::string
      dtype;  ///< as stored in the file ("float32", "int64", "bool", ...); "float32" for writing

  /// The product of the shape; INT64_MAX when it would overflow, -1 for a negative dimension.
  [[nodiscard]] std::int64_t numel() const;
};

/// The most values read_nd_arrays reads into one array (2^27: 1 GiB of doubles).
constexpr std::int64_t kMaxArrayValues = std::int64_t{1} << 27;

/// Reads `required` and, where present, `optional` keys of `path`. Throws DatasetError naming the
/// file and key for a missing file or key, an unsupported dtype, NaN/Inf values, or a shape of more
/// than kMaxArrayValues values (refused before anything is allocated).
std::map<std::string, NdArray> read_nd_arrays(const std::filesystem::path& path,
                                              const std::vector<std::string>& required,
                                              const std::vector<std::string>& optional = {});

/// Writes `arrays` as float32 datasets. The file appears complete or not at all.
void write_nd_arrays(const std::filesystem::path& path,
                     const std::map<std::string, NdArray>& arrays);

}  // namespace dstudio::data

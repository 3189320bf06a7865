// Named N-dimensional arrays in HDF5. See arrays_h5.h.

#include "dstudio/data/arrays_h5.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "dstudio/data/dataset_io.h"
#include "h5.h"

namespace dstudio::data {
namespace fs = std::filesystem;
using h5::Handle;

std::int64_t NdArray::numel() const {
  // Saturates instead of overflowing: a shape read from a hostile file can multiply past int64.
  std::int64_t n = 1;
  for (auto d : shape) {
    if (d < 0) return -1;
    if (d != 0 && n > std::numeric_limits<std::int64_t>::max() / d)
      return std::numeric_limits<std::int64_t>::max();
    n *= d;
  }
  return n;
}

std::map<std::string, NdArray> read_nd_arrays(const fs::path& path,
                                              const std::vector<std::string>& required,
                                              const std::vector<std::string>& optional) {
  h5::Context ctx{path.string()};
  std::error_code ec;
  if (!fs::exists(path, ec)) ctx.fail("", "no such file");
  ctx.file_bytes = static_cast<std::int64_t>(fs::file_size(path, ec));
  if (ec) ctx.fail("", "cannot be read: " + ec.message());
  h5::StorageMap storage;
  std::map<std::string, NdArray> out;
  std::lock_guard lock(h5::library_mutex());
  h5::silence_library();
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    ctx.fail("", "is not an HDF5 file");
  }
  Handle fid(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!fid.valid()) ctx.fail_h5("", "cannot be opened: the file is truncated or corrupt");
  auto read = [&](const std::string& key) {
    h5::Array a = h5::open_array(ctx, fid, key, key);
    NdArray array;
    array.shape = a.shape;
    array.dtype = a.dtype;
    // The shape is the file's claim: checked against a limit before anything is allocated.
    const std::int64_t count = array.numel();
    if (count < 0 || count > kMaxArrayValues) {
      std::string shape = "(";
      for (std::size_t i = 0; i < a.shape.size(); ++i)
        shape += (i ? ", " : "") + std::to_string(a.shape[i]);
      ctx.fail(key, "has shape " + shape + ", more than the " + std::to_string(kMaxArrayValues) +
                        " values an array may hold");
    }
    h5::require_stored(ctx, a, storage);
    if (a.kind == h5::Kind::Float || a.kind == h5::Kind::Integer || a.kind == h5::Kind::Bool)
      h5::require_standard_type(ctx, a);
    const auto n = static_cast<std::size_t>(count);
    array.values.resize(n);
    if (n == 0) return array;
    if (a.kind == h5::Kind::Float || a.kind == h5::Kind::Integer) {
      if (H5Dread(a.dataset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                  array.values.data()) < 0)
        ctx.fail_h5(key, "could not be read: the file is truncated or corrupt");
    } else if (a.kind == h5::Kind::Bool) {
      // Enums cannot be converted to numbers by HDF5; read their stored integer values.
      Handle memtype(H5Tget_native_type(a.type, H5T_DIR_ASCEND), H5Tclose);
      const std::size_t size = H5Tget_size(memtype);
      if (size > 8) ctx.fail(key, "has unsupported dtype " + a.dtype);
      std::vector<unsigned char> raw(n * size);
      if (H5Dread(a.dataset, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw.data()) < 0)
        ctx.fail_h5(key, "could not be read: the file is truncated or corrupt");
      for (std::size_t i = 0; i < n; ++i) {
        std::int64_t v = 0;
        std::memcpy(&v, &raw[i * size], size);  // little-endian
        array.values[i] = static_cast<double>(v);
      }
    } else {
      ctx.fail(key, "has unsupported dtype " + a.dtype + "; expected numbers");
    }
    for (std::size_t i = 0; i < n; ++i)
      if (!std::isfinite(array.values[i]))
        ctx.fail(key, "holds NaN or Inf (the first at flat index " + std::to_string(i) + ")");
    return array;
  };
  for (const auto& key : required) {
    if (!h5::has_path(ctx, fid, key, key)) ctx.fail(key, "is missing");
    out[key] = read(key);
  }
  for (const auto& key : optional)
    if (h5::has_path(ctx, fid, key, key)) out[key] = read(key);
  return out;
}

void write_nd_arrays(const fs::path& path, const std::map<std::string, NdArray>& arrays) {
  const h5::Context ctx{path.string()};
  for (const auto& [key, a] : arrays)
    if (static_cast<std::int64_t>(a.values.size()) != a.numel())
      ctx.fail(key, "holds " + std::to_string(a.values.size()) + " values for its shape");
  h5::write_file_atomically(ctx, path, /*track_times=*/true, [&](hid_t file) {
    for (const auto& [key, a] : arrays) {
      std::vector<hsize_t> dims(a.shape.begin(), a.shape.end());
      std::vector<float> values(a.values.begin(), a.values.end());
      Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose);
      Handle d(H5Dcreate2(file, key.c_str(), H5T_IEEE_F32LE, space, H5P_DEFAULT, H5P_DEFAULT,
                          H5P_DEFAULT),
               H5Dclose);
      if (!d.valid() ||
          H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0)
        ctx.fail_h5(key, "could not be written");
    }
  });
}

}  // namespace dstudio::data

#include "h5.h"

#include "dstudio/common/atomic_file.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <sstream>

namespace dstudio::data::h5 {

std::mutex& library_mutex() {
  static std::mutex m;
  return m;
}

void silence_library() {
  static std::once_flag once;
  std::call_once(once, [] { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); });
}

std::string error_stack_message() {
  std::string message;
  // Walking upward starts at the most specific error: the one that names the actual cause
  // ("truncated file", "addr overflow"), not the API call that failed.
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_UPWARD,
      [](unsigned, const H5E_error2_t* e, void* data) -> herr_t {
        auto* out = static_cast<std::string*>(data);
        if (out->empty() && e->desc && *e->desc) *out = e->desc;
        return 0;
      },
      &message);
  H5Eclear2(H5E_DEFAULT);
  return message;
}

void Context::fail(const std::string& key, const std::string& problem) const {
  throw DatasetError(file, key, problem);
}

void Context::fail_h5(const std::string& key, const std::string& what) const {
  const std::string cause = error_stack_message();
  fail(key, cause.empty() ? what : what + " (" + cause + ")");
}

bool has_link(hid_t loc, const std::string& name) {
  return H5Lexists(loc, name.c_str(), H5P_DEFAULT) > 0;
}

bool has_path(hid_t loc, const std::string& path) {
  std::string prefix;
  std::stringstream parts(path);
  for (std::string part; std::getline(parts, part, '/');) {
    prefix += prefix.empty() ? part : "/" + part;
    if (H5Lexists(loc, prefix.c_str(), H5P_DEFAULT) <= 0) {
      H5Eclear2(H5E_DEFAULT);
      return false;
    }
  }
  return true;
}

bool is_group(hid_t loc, const std::string& path) {
  H5O_info_t info;
  if (H5Oget_info_by_name2(loc, path.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0) {
    H5Eclear2(H5E_DEFAULT);
    return false;
  }
  return info.type == H5O_TYPE_GROUP;
}

std::vector<std::string> link_names(hid_t loc) {
  std::vector<std::string> names;
  H5Literate(
      loc, H5_INDEX_NAME, H5_ITER_INC, nullptr,
      [](hid_t, const char* name, const H5L_info_t*, void* data) -> herr_t {
        static_cast<std::vector<std::string>*>(data)->emplace_back(name);
        return 0;
      },
      &names);
  return names;
}

static std::string describe_type(hid_t type, Kind& kind) {
  const std::size_t size = H5Tget_size(type);
  switch (H5Tget_class(type)) {
    case H5T_FLOAT:
      kind = Kind::Float;
      return "float" + std::to_string(8 * size);
    case H5T_INTEGER:
      kind = Kind::Integer;
      return (H5Tget_sign(type) == H5T_SGN_NONE ? "uint" : "int") + std::to_string(8 * size);
    case H5T_ENUM: {
      // h5py stores numpy bool as an enum {FALSE = 0, TRUE = 1} over int8.
      kind = Kind::Bool;
      if (H5Tget_nmembers(type) == 2) {
        char* first = H5Tget_member_name(type, 0);
        char* second = H5Tget_member_name(type, 1);
        const bool is_bool =
            first && second && std::strcmp(first, "FALSE") == 0 && std::strcmp(second, "TRUE") == 0;
        H5free_memory(first);
        H5free_memory(second);
        if (is_bool) return "bool";
      }
      return "enum" + std::to_string(8 * size);
    }
    case H5T_STRING:
      kind = Kind::String;
      return "string";
    case H5T_COMPOUND:
      kind = Kind::Other;
      return "compound";
    default:
      kind = Kind::Other;
      return "other";
  }
}

static std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

Array open_array(const Context& ctx, hid_t loc, const std::string& path, const std::string& key) {
  if (!has_path(loc, path)) ctx.fail(key, "missing: the file has no such dataset");
  Array a;
  a.key = key;
  a.dataset = Handle(H5Dopen2(loc, path.c_str(), H5P_DEFAULT), H5Dclose);
  if (!a.dataset.valid()) ctx.fail_h5(key, "cannot be opened as a dataset (is it a group?)");
  a.type = Handle(H5Dget_type(a.dataset), H5Tclose);
  a.space = Handle(H5Dget_space(a.dataset), H5Sclose);
  if (!a.type.valid() || !a.space.valid()) ctx.fail_h5(key, "has an unreadable header");
  const int rank = H5Sget_simple_extent_ndims(a.space);
  if (rank < 0) ctx.fail_h5(key, "has an unreadable shape");
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  H5Sget_simple_extent_dims(a.space, dims.data(), nullptr);
  a.shape.assign(dims.begin(), dims.end());
  a.element_size = H5Tget_size(a.type);
  a.dtype = describe_type(a.type, a.kind);
  return a;
}

std::int64_t matrix_cols(const Context& ctx, const Array& a, bool allow_vector) {
  if (a.shape.size() == 2 && a.shape[1] >= 1) return a.shape[1];
  if (a.shape.size() == 1 && allow_vector) return 1;
  ctx.fail(a.key, "has shape " + shape_text(a.shape) + "; expected a 2-D array (N, dim)");
}

void require_vector(const Context& ctx, const Array& a) {
  const bool ok = a.shape.size() == 1 || (a.shape.size() == 2 && a.shape[1] == 1);
  if (!ok) ctx.fail(a.key, "has shape " + shape_text(a.shape) + "; expected (N) or (N, 1)");
}

// Rows per read: whole chunks, about 64k rows, so each compressed chunk is inflated exactly once.
static std::int64_t block_rows(const Array& a) {
  std::int64_t chunk = 1;
  Handle plist(H5Dget_create_plist(a.dataset), H5Pclose);
  if (plist.valid() && H5Pget_layout(plist) == H5D_CHUNKED) {
    hsize_t dims[H5S_MAX_RANK];
    if (H5Pget_chunk(plist, H5S_MAX_RANK, dims) >= 1) chunk = static_cast<std::int64_t>(dims[0]);
  }
  const std::int64_t target = 65536;
  return chunk >= target ? chunk : (target / chunk) * chunk;
}

// Selects rows [row0, row0 + rows) of `a` in a fresh copy of its dataspace.
static Handle select_rows(const Array& a, std::int64_t row0, std::int64_t rows, std::int64_t cols) {
  Handle space(H5Scopy(a.space), H5Sclose);
  if (a.shape.empty()) return space;
  const hsize_t start[2] = {static_cast<hsize_t>(row0), 0};
  const hsize_t count[2] = {static_cast<hsize_t>(rows), static_cast<hsize_t>(cols)};
  H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr);
  return space;
}

void read_floats(const Context& ctx, const Array& a, std::int64_t cols, float* out,
                 const std::function<void(std::int64_t)>& on_rows, std::int64_t row_offset) {
  if (a.kind != Kind::Float || (a.element_size != 4 && a.element_size != 8))
    ctx.fail(a.key, "has unsupported dtype " + a.dtype + "; expected float32 or float64");
  const std::int64_t n = a.rows();
  const std::int64_t step = block_rows(a);
  std::int64_t bad = 0, first_bad = -1;
  for (std::int64_t r0 = 0; r0 < n; r0 += step) {
    const std::int64_t rows = std::min(step, n - r0);
    Handle file_space = select_rows(a, r0, rows, cols);
    // The memory space has the block's own shape: with a shape that differs from the file
    // selection, HDF5 maps every element separately and reads three times slower.
    const hsize_t mem_dims[2] = {static_cast<hsize_t>(rows), static_cast<hsize_t>(cols)};
    Handle mem_space(H5Screate_simple(a.shape.size() == 2 ? 2 : 1, mem_dims, nullptr), H5Sclose);
    float* block = out + r0 * cols;
    if (H5Dread(a.dataset, H5T_NATIVE_FLOAT, mem_space, file_space, H5P_DEFAULT, block) < 0)
      ctx.fail_h5(a.key, "could not be read at rows " + std::to_string(r0) + ".." +
                             std::to_string(r0 + rows - 1) + ": the file is truncated or corrupt");
    for (std::int64_t i = 0; i < rows * cols; ++i) {
      if (!std::isfinite(block[i])) {
        if (bad++ == 0) first_bad = r0 * cols + i;
      }
    }
    if (on_rows) on_rows(rows);
  }
  if (bad > 0) {
    ctx.fail(a.key, std::to_string(bad) + (bad == 1 ? " value is" : " values are") +
                        " NaN or Inf; the first at row " +
                        std::to_string(row_offset + first_bad / cols) + ", column " +
                        std::to_string(first_bad % cols));
  }
}

void read_flags(const Context& ctx, const Array& a, std::uint8_t* out, std::int64_t row_offset) {
  const std::int64_t n = a.rows();
  auto check = [&](std::int64_t i, double v) {
    if (v != 0.0 && v != 1.0) {
      std::ostringstream s;
      s << "holds " << v << " at row " << row_offset + i << "; flags must be 0 or 1";
      ctx.fail(a.key, s.str());
    }
    out[i] = v != 0.0;
  };
  auto read_all = [&](hid_t memtype, void* buffer) {
    if (H5Dread(a.dataset, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer) < 0)
      ctx.fail_h5(a.key, "could not be read: the file is truncated or corrupt");
  };
  switch (a.kind) {
    case Kind::Bool: {
      // Enums cannot be converted to numbers by HDF5; read their stored integer values.
      Handle memtype(H5Tget_native_type(a.type, H5T_DIR_ASCEND), H5Tclose);
      const std::size_t size = H5Tget_size(memtype);
      if (size > 8) ctx.fail(a.key, "has unsupported dtype " + a.dtype);
      std::vector<unsigned char> raw(static_cast<std::size_t>(n) * size);
      read_all(memtype, raw.data());
      for (std::int64_t i = 0; i < n; ++i) {
        std::int64_t v = 0;
        std::memcpy(&v, &raw[static_cast<std::size_t>(i) * size], size);  // little-endian
        check(i, static_cast<double>(v));
      }
      break;
    }
    case Kind::Integer: {
      std::vector<std::int64_t> values(static_cast<std::size_t>(n));
      read_all(H5T_NATIVE_INT64, values.data());
      for (std::int64_t i = 0; i < n; ++i) check(i, static_cast<double>(values[i]));
      break;
    }
    case Kind::Float: {
      std::vector<double> values(static_cast<std::size_t>(n));
      read_all(H5T_NATIVE_DOUBLE, values.data());
      for (std::int64_t i = 0; i < n; ++i) check(i, values[i]);
      break;
    }
    default:
      ctx.fail(a.key, "has unsupported dtype " + a.dtype + "; expected bool, integer or float");
  }
}

// Reads a scalar value of any simple type as text; `read` does the H5Dread/H5Aread.
static std::string scalar_text(hid_t type, hid_t space,
                               const std::function<herr_t(hid_t, void*)>& read) {
  if (H5Sget_simple_extent_npoints(space) != 1) return "";
  switch (H5Tget_class(type)) {
    case H5T_STRING: {
      if (H5Tis_variable_str(type) > 0) {
        Handle memtype(H5Tcopy(H5T_C_S1), H5Tclose);
        H5Tset_size(memtype, H5T_VARIABLE);
        H5Tset_cset(memtype, H5Tget_cset(type));
        char* text = nullptr;
        if (read(memtype, &text) < 0) return "";
        std::string result = text ? text : "";
        H5Dvlen_reclaim(memtype, space, H5P_DEFAULT, &text);
        return result;
      }
      const std::size_t size = H5Tget_size(type);
      std::string text(size, '\0');
      Handle memtype(H5Tcopy(type), H5Tclose);
      if (read(memtype, text.data()) < 0) return "";
      text.resize(std::strlen(text.c_str()));
      return text;
    }
    case H5T_FLOAT: {
      double v = 0;
      if (read(H5T_NATIVE_DOUBLE, &v) < 0) return "";
      std::ostringstream s;
      s.precision(17);
      s << v;
      return s.str();
    }
    case H5T_INTEGER: {
      long long v = 0;
      if (read(H5T_NATIVE_LLONG, &v) < 0) return "";
      return std::to_string(v);
    }
    case H5T_ENUM: {
      Handle memtype(H5Tget_native_type(type, H5T_DIR_ASCEND), H5Tclose);
      long long v = 0;
      if (H5Tget_size(memtype) > sizeof v || read(memtype, &v) < 0) return "";
      return v ? "true" : "false";
    }
    default:
      return "";
  }
}

std::string read_scalar_text(const Array& a) {
  std::string text = scalar_text(a.type, a.space, [&](hid_t memtype, void* buffer) {
    return H5Dread(a.dataset, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer);
  });
  H5Eclear2(H5E_DEFAULT);
  return text;
}

std::string read_attribute_text(hid_t obj, const std::string& name) {
  Handle attr(H5Aopen(obj, name.c_str(), H5P_DEFAULT), H5Aclose);
  if (!attr.valid()) {
    H5Eclear2(H5E_DEFAULT);
    return "";
  }
  Handle type(H5Aget_type(attr), H5Tclose);
  Handle space(H5Aget_space(attr), H5Sclose);
  std::string text = scalar_text(
      type, space, [&](hid_t memtype, void* buffer) { return H5Aread(attr, memtype, buffer); });
  H5Eclear2(H5E_DEFAULT);
  return text;
}

std::vector<std::string> attribute_names(hid_t obj) {
  std::vector<std::string> names;
  H5Aiterate2(
      obj, H5_INDEX_NAME, H5_ITER_INC, nullptr,
      [](hid_t, const char* name, const H5A_info_t*, void* data) -> herr_t {
        static_cast<std::vector<std::string>*>(data)->emplace_back(name);
        return 0;
      },
      &names);
  return names;
}

void write_file_atomically(const Context& ctx, const std::filesystem::path& path, bool track_times,
                           const std::function<void(hid_t file)>& fill) {
  namespace fs = std::filesystem;
  static std::atomic<int> counter{0};
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  // Built by appending: GCC 12 warns falsely (-Wrestrict) on chains of string concatenation.
  std::string temp_name = ".";
  temp_name += path.filename().string();
  temp_name += ".partial-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
  const fs::path temp = dir / temp_name;
  remove_stale_temporaries(path);
  try {
    {
      std::lock_guard lock(library_mutex());
      silence_library();
      Handle fcpl(H5Pcreate(H5P_FILE_CREATE), H5Pclose);
      if (!track_times) H5Pset_obj_track_times(fcpl, 0);  // intermediate groups inherit this
      Handle file(H5Fcreate(temp.c_str(), H5F_ACC_TRUNC, fcpl, H5P_DEFAULT), H5Fclose);
      if (!file.valid()) ctx.fail_h5("", "cannot be created (is the folder writable?)");
      fill(file);
      if (H5Fflush(file, H5F_SCOPE_GLOBAL) < 0) ctx.fail_h5("", "could not be written (is the disk full?)");
      if (!file.close()) ctx.fail_h5("", "could not be written (is the disk full?)");
    }
    try {
      sync_to_disk(temp);  // on the disk before it takes the name: a power loss leaves the old file or the new
    } catch (const Error& e) {
      ctx.fail("", e.what());
    }
    std::error_code ec;
    fs::rename(temp, path, ec);
    if (ec) ctx.fail("", "could not be moved into place: " + ec.message());
    try {
      sync_to_disk(dir);
    } catch (const Error& e) {
      ctx.fail("", e.what());
    }
  } catch (...) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    throw;
  }
}

}  // namespace dstudio::data::h5

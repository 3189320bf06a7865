// Typed reads over HDF5's C API and files written whole, for the readers and the writer. See h5.h.

// Index of this file:
//   [SECTION] Locking and errors
//   [SECTION] Breadcrumbs
//   [SECTION] Links and groups
//   [SECTION] Opening arrays
//   [SECTION] Where an array is stored
//   [SECTION] Reading arrays
//   [SECTION] Scalars and attributes
//   [SECTION] Writing a file

#include "h5.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <sstream>

#include "dstudio/common/atomic_file.h"

namespace dstudio::data::h5 {

// ---------------------------------------------------------------------------------------------
// [SECTION] Locking and errors

std::mutex& library_mutex() {
  static std::mutex m;
  return m;
}

void silence_library() {
  // Every time: a thread-safe libhdf5 keeps this setting per thread.
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
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

// ---------------------------------------------------------------------------------------------
// [SECTION] Breadcrumbs

namespace {
void (*g_breadcrumb_sink)(const std::string&, bool) = nullptr;
}  // namespace

void set_breadcrumb_sink(void (*sink)(const std::string& what, bool optional)) {
  g_breadcrumb_sink = sink;
}

void breadcrumb(const std::string& what, bool optional) {
  if (g_breadcrumb_sink) g_breadcrumb_sink(what, optional);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Links and groups

static std::string named(const std::string& key) {
  return key.empty() ? "the file's top level" : "'" + key + "'";
}

bool has_link(const Context& ctx, hid_t loc, const std::string& name, const std::string& key) {
  const htri_t exists = H5Lexists(loc, name.c_str(), H5P_DEFAULT);
  if (exists < 0) ctx.fail_h5(key, "cannot be read: its link in the file is damaged");
  return exists > 0;
}

bool has_path(const Context& ctx, hid_t loc, const std::string& path, const std::string& key) {
  std::string prefix;
  std::stringstream parts(path);
  for (std::string part; std::getline(parts, part, '/');) {
    prefix += prefix.empty() ? part : "/" + part;
    if (!has_link(ctx, loc, prefix, key)) return false;
  }
  return true;
}

bool is_group(const Context& ctx, hid_t loc, const std::string& path, const std::string& key) {
  if (!has_path(ctx, loc, path, key)) return false;
  H5O_info_t info;
  if (H5Oget_info_by_name2(loc, path.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0)
    ctx.fail_h5(key, "has an unreadable header");
  return info.type == H5O_TYPE_GROUP;
}

std::vector<std::string> link_names(const Context& ctx, hid_t loc, const std::string& key) {
  breadcrumb("listing the links of " + named(key), key.rfind("metadata", 0) == 0);
  std::vector<std::string> names;
  const herr_t status = H5Literate(
      loc, H5_INDEX_NAME, H5_ITER_INC, nullptr,
      [](hid_t, const char* name, const H5L_info_t*, void* data) -> herr_t {
        static_cast<std::vector<std::string>*>(data)->emplace_back(name);
        return 0;
      },
      &names);
  if (status < 0) ctx.fail_h5(key, "cannot be listed: its list of links is damaged");
  return names;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Opening arrays

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
  breadcrumb("opening " + named(key), key.rfind("metadata/", 0) == 0);
  if (!has_path(ctx, loc, path, key)) ctx.fail(key, "missing: the file has no such dataset");
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

// ---------------------------------------------------------------------------------------------
// [SECTION] Where an array is stored

// Deflate cannot shrink data by more than about 1032:1; a compressed array claiming more values
// than this many times the file's size has a damaged shape.
constexpr double kMaxCompression = 1100.0;
// Beyond this many chunks, listing each (HDF5 walks the index for every one) costs seconds; the
// count is still checked.
constexpr hsize_t kMaxListedChunks = 2048;

static void claim(const Context& ctx, const Array& a, StorageMap& map, std::uint64_t begin,
                  std::uint64_t size) {
  const std::uint64_t end = begin + size;
  if (ctx.file_bytes > 0 && (end < begin || end > static_cast<std::uint64_t>(ctx.file_bytes)))
    ctx.fail(a.key, "has values stored at bytes " + std::to_string(begin) + ".." +
                        std::to_string(end) + ", beyond the file's " +
                        std::to_string(ctx.file_bytes) +
                        " bytes: its address is damaged or the file is truncated");
  if (size == 0) return;
  auto next = map.extents.lower_bound(begin);
  const auto overlaps = [&](std::size_t owner) {
    ctx.fail(a.key, "has values stored in the same bytes as " + named(map.owners[owner]) +
                        ": an address in the file is damaged, and HDF5 would read one array's "
                        "values as the other's");
  };
  if (next != map.extents.end() && next->first < end) overlaps(next->second.second);
  if (next != map.extents.begin() && std::prev(next)->second.first > begin)
    overlaps(std::prev(next)->second.second);
  if (map.owners.empty() || map.owners.back() != a.key) map.owners.push_back(a.key);
  map.extents.emplace(begin, std::make_pair(end, map.owners.size() - 1));
}

void require_stored(const Context& ctx, const Array& a, StorageMap& map) {
  breadcrumb("checking where " + named(a.key) + " is stored");
  long double values = 1;
  for (auto d : a.shape) values *= static_cast<long double>(d);
  if (values <= 0) return;  // nothing to read, nothing stored (an empty Minari episode)
  const long double declared = values * static_cast<long double>(a.element_size);
  Handle dcpl(H5Dget_create_plist(a.dataset), H5Pclose);
  if (!dcpl.valid()) ctx.fail_h5(a.key, "has an unreadable storage layout");
  const H5D_layout_t layout = H5Pget_layout(dcpl);
  const int filters = H5Pget_nfilters(dcpl);
  if (ctx.file_bytes > 0 &&
      declared > (filters > 0 ? kMaxCompression : 1.0) * static_cast<long double>(ctx.file_bytes))
    ctx.fail(a.key, "has shape " + shape_text(a.shape) + ", more values than a file of " +
                        std::to_string(ctx.file_bytes) + " bytes can hold: its header is damaged");
  H5D_space_status_t status{};
  if (H5Dget_space_status(a.dataset, &status) < 0)
    ctx.fail_h5(a.key, "has an unreadable storage index");
  if (status == H5D_SPACE_STATUS_NOT_ALLOCATED)
    ctx.fail(a.key,
             "has no values stored in the file: HDF5 would read it as its fill value (zeros); the "
             "file is damaged or was never completely written");
  if (layout == H5D_CONTIGUOUS) {
    const haddr_t offset = H5Dget_offset(a.dataset);
    const hsize_t size = H5Dget_storage_size(a.dataset);
    if (offset == HADDR_UNDEF) ctx.fail_h5(a.key, "has no address for its values in the file");
    if (static_cast<long double>(size) < declared)
      ctx.fail(a.key, "stores " + std::to_string(size) + " bytes, fewer than its shape " +
                          shape_text(a.shape) + " needs: its header is damaged");
    claim(ctx, a, map, offset, size);
  } else if (layout == H5D_CHUNKED) {
    const int rank = static_cast<int>(a.shape.size());
    std::vector<hsize_t> chunk(static_cast<std::size_t>(std::max(rank, 1)), 1);
    if (H5Pget_chunk(dcpl, rank, chunk.data()) != rank)
      ctx.fail_h5(a.key, "has an unreadable chunk shape");
    // The chunk grid, row-major: which chunk each stored one is, so that none is missing or twice.
    std::vector<hsize_t> grid(static_cast<std::size_t>(rank));
    long double expected = 1;
    for (int d = 0; d < rank; ++d) {
      if (chunk[d] == 0) ctx.fail(a.key, "has a chunk dimension of 0: its header is damaged");
      grid[d] = (static_cast<hsize_t>(a.shape[d]) + chunk[d] - 1) / chunk[d];
      expected *= static_cast<long double>(grid[d]);
    }
    hsize_t chunk_bytes = a.element_size;
    for (int d = 0; d < rank; ++d) chunk_bytes *= chunk[d];
    hsize_t stored = 0;
    if (H5Dget_num_chunks(a.dataset, a.space, &stored) < 0)
      ctx.fail_h5(a.key, "has an unreadable chunk index");
    if (static_cast<long double>(stored) != expected)
      ctx.fail(a.key, "has " + std::to_string(stored) + " of the " +
                          std::to_string(static_cast<std::uint64_t>(expected)) +
                          " chunks its shape needs: HDF5 would read the missing ones as the fill "
                          "value (zeros); its chunk index is damaged");
    // Every chunk of the grid found the way a read finds it (a lookup by its position): a damaged
    // key in the index can leave a chunk counted, listed, yet not found, and read as zeros.
    std::vector<hsize_t> position(static_cast<std::size_t>(std::max(rank, 1)), 0);
    for (hsize_t cell = 0; cell < stored; ++cell) {
      hsize_t rest = cell;
      for (int d = rank - 1; d >= 0; --d) {
        position[d] = (rest % grid[d]) * chunk[d];
        rest /= grid[d];
      }
      hsize_t found = 0;
      if (H5Dget_chunk_storage_size(a.dataset, position.data(), &found) < 0 || found == 0)
        ctx.fail(a.key, "has no chunk found at row " + std::to_string(position[0]) +
                            " (its chunk index is damaged): HDF5 would read those values as the "
                            "fill value (zeros)");
    }
    if (stored <= kMaxListedChunks) {
      std::vector<bool> seen(stored, false);
      std::vector<hsize_t> origin(static_cast<std::size_t>(std::max(rank, 1)));
      for (hsize_t i = 0; i < stored; ++i) {
        unsigned mask = 0;
        haddr_t address = HADDR_UNDEF;
        hsize_t size = 0;
        if (H5Dget_chunk_info(a.dataset, a.space, i, origin.data(), &mask, &address, &size) < 0 ||
            address == HADDR_UNDEF)
          ctx.fail_h5(a.key, "has an unreadable entry in its chunk index");
        hsize_t cell = 0;
        bool on_grid = true;
        for (int d = 0; d < rank; ++d) {
          on_grid = on_grid && origin[d] % chunk[d] == 0 && origin[d] / chunk[d] < grid[d];
          cell = cell * grid[d] + (on_grid ? origin[d] / chunk[d] : 0);
        }
        if (!on_grid || seen[cell])
          ctx.fail(a.key,
                   "has a chunk index that does not cover its shape (a chunk is misplaced or "
                   "listed twice): HDF5 would read part of it as the fill value (zeros)");
        // A chunk stored without its filters (a set bit in its filter mask) or without any holds
        // exactly the chunk's raw bytes; otherwise HDF5 would hand back compressed bytes as values.
        if ((filters == 0 || mask != 0) && size != chunk_bytes)
          ctx.fail(a.key, "has a chunk of " + std::to_string(size) + " bytes stored " +
                              (filters == 0 ? "uncompressed" : "with its filters skipped") +
                              " where " + std::to_string(chunk_bytes) +
                              " are needed: its chunk index is damaged");
        seen[cell] = true;
        claim(ctx, a, map, address, size);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Reading arrays

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

// A float type exactly as IEEE 754 defines it, an integer using all of its bytes: a damaged type
// description (an exponent bias, a precision) makes HDF5 convert every value wrongly, silently.
void require_standard_type(const Context& ctx, const Array& a) {
  bool standard = false;
  if (a.kind == Kind::Float) {
    for (hid_t ieee : {H5T_IEEE_F32LE, H5T_IEEE_F32BE, H5T_IEEE_F64LE, H5T_IEEE_F64BE})
      standard = standard || H5Tequal(a.type, ieee) > 0;
  } else {
    Handle base(a.kind == Kind::Bool ? H5Tget_super(a.type) : H5Tcopy(a.type), H5Tclose);
    standard = base.valid() && H5Tget_class(base) == H5T_INTEGER && H5Tget_offset(base) == 0 &&
               H5Tget_precision(base) == 8 * H5Tget_size(base);
  }
  H5Eclear2(H5E_DEFAULT);
  if (!standard)
    ctx.fail(a.key,
             "has a " + a.dtype +
                 " type that is not a standard one: its type description in the file is damaged");
}

void read_floats(const Context& ctx, const Array& a, std::int64_t cols, float* out,
                 const std::function<void(std::int64_t)>& on_rows, std::int64_t row_offset) {
  if (a.kind != Kind::Float || (a.element_size != 4 && a.element_size != 8))
    ctx.fail(a.key, "has unsupported dtype " + a.dtype + "; expected float32 or float64");
  require_standard_type(ctx, a);
  breadcrumb("reading " + named(a.key));
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
  breadcrumb("reading " + named(a.key));
  const std::int64_t n = a.rows();
  auto check = [&](std::int64_t i, double v) {
    if (v != 0.0 && v != 1.0) {
      std::ostringstream s;
      s << "holds " << v << " at row " << row_offset + i << "; flags must be 0 or 1";
      ctx.fail(a.key, s.str());
    }
    out[i] = v != 0.0;
  };
  if (a.kind == Kind::Bool || a.kind == Kind::Integer || a.kind == Kind::Float)
    require_standard_type(ctx, a);
  auto read_all = [&](hid_t memtype, void* buffer) {
    if (H5Dread(a.dataset, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer) < 0)
      ctx.fail_h5(a.key, "could not be read: the file is truncated or corrupt");
  };
  switch (a.kind) {
    case Kind::Bool: {
      // Enums cannot be converted to numbers by HDF5; read their stored integer values.
      Handle memtype(H5Tget_native_type(a.type, H5T_DIR_ASCEND), H5Tclose);
      if (!memtype.valid()) ctx.fail_h5(a.key, "has an unreadable type");
      const std::size_t size = H5Tget_size(memtype);
      if (size == 0 || size > 8) ctx.fail(a.key, "has unsupported dtype " + a.dtype);
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

// ---------------------------------------------------------------------------------------------
// [SECTION] Scalars and attributes

// Reads a scalar value of any simple type as text; `read` does the H5Dread/H5Aread, `stored_length`
// gives a variable-length string's length as the file declares it when it can be known before
// HDF5 allocates that much (-1 when not).
static std::string scalar_text(const Context& ctx, const std::string& key, hid_t type, hid_t space,
                               const std::function<herr_t(hid_t, void*)>& read,
                               const std::function<std::int64_t()>& stored_length) {
  if (type < 0 || space < 0) ctx.fail_h5(key, "has an unreadable header");
  const hssize_t points = H5Sget_simple_extent_npoints(space);
  if (points < 0) ctx.fail_h5(key, "has an unreadable shape");
  if (points != 1) return "";
  const auto failed = [&] {
    ctx.fail_h5(key, "could not be read: the file is truncated or corrupt");
  };
  switch (H5Tget_class(type)) {
    case H5T_STRING: {
      if (H5Tis_variable_str(type) > 0) {
        // HDF5 allocates whatever length the file declares before it reads the string: a damaged
        // length would cost gigabytes.
        if (const std::int64_t length = stored_length();
            length > static_cast<std::int64_t>(kMaxTextBytes))
          ctx.fail(key, "declares a text of " + std::to_string(length) + " bytes, more than the " +
                            std::to_string(kMaxTextBytes) +
                            " a metadata text may have: its length is damaged");
        Handle memtype(H5Tcopy(H5T_C_S1), H5Tclose);
        H5Tset_size(memtype, H5T_VARIABLE);
        H5Tset_cset(memtype, H5Tget_cset(type));
        char* text = nullptr;
        if (read(memtype, &text) < 0) failed();
        std::string result = text ? text : "";
        H5Dvlen_reclaim(memtype, space, H5P_DEFAULT, &text);
        if (result.size() > kMaxTextBytes)
          ctx.fail(key, "is a text longer than " + std::to_string(kMaxTextBytes) + " bytes");
        return result;
      }
      const std::size_t size = H5Tget_size(type);
      if (size == 0 || size > kMaxTextBytes)
        ctx.fail(key, "declares a text of " + std::to_string(size) +
                          " bytes; a metadata text may have at most " +
                          std::to_string(kMaxTextBytes));
      std::string text(size, '\0');
      Handle memtype(H5Tcopy(type), H5Tclose);
      if (read(memtype, text.data()) < 0) failed();
      text.resize(std::strlen(text.c_str()));
      return text;
    }
    case H5T_FLOAT: {
      double v = 0;
      if (read(H5T_NATIVE_DOUBLE, &v) < 0) failed();
      std::ostringstream s;
      s.precision(17);
      s << v;
      return s.str();
    }
    case H5T_INTEGER: {
      long long v = 0;
      if (read(H5T_NATIVE_LLONG, &v) < 0) failed();
      return std::to_string(v);
    }
    case H5T_ENUM: {
      Handle memtype(H5Tget_native_type(type, H5T_DIR_ASCEND), H5Tclose);
      long long v = 0;
      if (!memtype.valid() || H5Tget_size(memtype) > sizeof v || read(memtype, &v) < 0) failed();
      return v ? "true" : "false";
    }
    default:
      return "";
  }
}

std::string read_scalar_text(const Context& ctx, const Array& a) {
  breadcrumb("reading " + named(a.key), true);
  // A contiguous variable-length string stores its length in the first 4 bytes of its data.
  const auto stored_length = [&]() -> std::int64_t {
    const haddr_t offset = H5Dget_offset(a.dataset);
    H5Eclear2(H5E_DEFAULT);
    if (offset == HADDR_UNDEF || ctx.file.empty()) return -1;
    std::uint32_t length = 0;
    FILE* f = std::fopen(ctx.file.c_str(), "rb");
    if (!f) return -1;
    const bool ok = std::fseek(f, static_cast<long>(offset), SEEK_SET) == 0 &&
                    std::fread(&length, 4, 1, f) == 1;
    std::fclose(f);
    return ok ? static_cast<std::int64_t>(length) : -1;  // little-endian, as HDF5 writes it on x86
  };
  std::string text = scalar_text(
      ctx, a.key, a.type, a.space,
      [&](hid_t memtype, void* buffer) {
        return H5Dread(a.dataset, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer);
      },
      stored_length);
  H5Eclear2(H5E_DEFAULT);
  return text;
}

std::string read_attribute_text(const Context& ctx, hid_t obj, const std::string& name) {
  breadcrumb("reading the attribute '" + name + "'", true);
  Handle attr(H5Aopen(obj, name.c_str(), H5P_DEFAULT), H5Aclose);
  if (!attr.valid()) ctx.fail_h5(name, "cannot be opened as an attribute");
  Handle type(H5Aget_type(attr), H5Tclose);
  Handle space(H5Aget_space(attr), H5Sclose);
  std::string text = scalar_text(
      ctx, name, type, space,
      [&](hid_t memtype, void* buffer) { return H5Aread(attr, memtype, buffer); },
      [] { return std::int64_t{-1}; });
  H5Eclear2(H5E_DEFAULT);
  return text;
}

std::vector<std::string> attribute_names(const Context& ctx, hid_t obj, const std::string& key) {
  breadcrumb("listing the attributes of " + named(key), true);
  std::vector<std::string> names;
  const herr_t status = H5Aiterate2(
      obj, H5_INDEX_NAME, H5_ITER_INC, nullptr,
      [](hid_t, const char* name, const H5A_info_t*, void* data) -> herr_t {
        static_cast<std::vector<std::string>*>(data)->emplace_back(name);
        return 0;
      },
      &names);
  if (status < 0) ctx.fail_h5(key, "has attributes that cannot be listed: their index is damaged");
  return names;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Writing a file

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
      if (H5Fflush(file, H5F_SCOPE_GLOBAL) < 0)
        ctx.fail_h5("", "could not be written (is the disk full?)");
      if (!file.close()) ctx.fail_h5("", "could not be written (is the disk full?)");
    }
    try {
      sync_to_disk(temp);  // on the disk before it takes the name: a power loss leaves the old file
                           // or the new
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

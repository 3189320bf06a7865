#pragma once
// Internal: RAII handles and typed reads over HDF5's C API, shared by the readers and the writer.
// Every function here expects the caller to hold `library_mutex()`.

#include <hdf5.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "dstudio/data/dataset_io.h"

namespace dstudio::data::h5 {

/// Debian's serial HDF5 is not built thread-safe: every use of the library takes this lock.
std::mutex& library_mutex();

/// Turns off HDF5's automatic error printing (we turn the stack into DatasetError messages).
void silence_library();

/// The most specific description on HDF5's current error stack ("" if none).
std::string error_stack_message();

/// Owns an HDF5 identifier and closes it with the matching H5?close.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& o) noexcept : id_(std::exchange(o.id_, H5I_INVALID_HID)), closer_(o.closer_) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = std::exchange(o.id_, H5I_INVALID_HID);
      closer_ = o.closer_;
    }
    return *this;
  }
  ~Handle() { reset(); }
  void reset() { (void)close(); }
  /// Closes now; false when the library reports a failure (for a file: its last writes failed).
  bool close() {
    const bool ok = id_ < 0 || !closer_ || closer_(id_) >= 0;
    id_ = H5I_INVALID_HID;
    return ok;
  }
  [[nodiscard]] bool valid() const { return id_ >= 0; }
  operator hid_t() const { return id_; }  // NOLINT: handles are used where hid_t is expected

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

/// Raises DatasetError for one file, adding HDF5's own explanation when it has one.
struct Context {
  std::string file;
  /// The file's size in bytes: no array may claim more storage than this (0: not checked).
  std::int64_t file_bytes = 0;
  [[noreturn]] void fail(const std::string& key, const std::string& problem) const;
  [[noreturn]] void fail_h5(const std::string& key, const std::string& what) const;
};

/// Creates `path` as a new HDF5 file whose contents `fill` writes, under a temporary name beside
/// it that is renamed into place only when complete: a failure or crash leaves no half-written
/// file. Without `track_times`, object headers carry no modification times, so the same
/// contents give the same bytes. Takes the library lock.
void write_file_atomically(const Context& ctx, const std::filesystem::path& path, bool track_times,
                           const std::function<void(hid_t file)>& fill);

/// What kind of values an array holds.
enum class Kind { Float, Integer, Bool, String, Other };

/// An opened HDF5 dataset with its type and shape.
struct Array {
  std::string key;
  Handle dataset, type, space;
  std::vector<std::int64_t> shape;
  Kind kind = Kind::Other;
  std::size_t element_size = 0;
  std::string dtype;  // "float32", "bool", "uint8", ...
  [[nodiscard]] std::int64_t rows() const { return shape.empty() ? 1 : shape[0]; }
  [[nodiscard]] ArrayInfo info() const { return {key, dtype, shape}; }
};

/// Tells the reader process's parent what is being read, so that a crash or a hang inside
/// libhdf5 can be named ("reading 'metadata/policy'"). `optional` marks reads whose failure may
/// cost a warning instead of the dataset (metadata). A no-op unless a sink is installed.
void breadcrumb(const std::string& what, bool optional = false);
/// Installs the function that receives breadcrumbs (the reader process writes them to a pipe).
void set_breadcrumb_sink(void (*sink)(const std::string& what, bool optional));

/// True if `loc` has a link called `name` (a single path component). A link HDF5 cannot read
/// raises DatasetError naming `key`: a damaged link is not an absent one.
bool has_link(const Context& ctx, hid_t loc, const std::string& name, const std::string& key);
/// True if `path` (possibly nested, e.g. "infos/qpos") exists below `loc`; DatasetError naming
/// `key` when one of its links cannot be read.
bool has_path(const Context& ctx, hid_t loc, const std::string& path, const std::string& key);
/// True if the object at `path` is a group; false when it is absent or another kind of object,
/// DatasetError naming `key` when it exists but its header cannot be read.
bool is_group(const Context& ctx, hid_t loc, const std::string& path, const std::string& key);
/// The link names directly inside group `loc`, in HDF5's name order; DatasetError naming `key`
/// when the list cannot be read to its end.
std::vector<std::string> link_names(const Context& ctx, hid_t loc, const std::string& key);

/// Opens `path` below `loc`; `key` is the name used in messages.
Array open_array(const Context& ctx, hid_t loc, const std::string& path, const std::string& key);

/// The byte ranges in the file that the arrays read so far occupy; two arrays sharing bytes is
/// a damaged address, which HDF5 itself would read without complaint.
struct StorageMap {
  std::map<std::uint64_t, std::pair<std::uint64_t, std::size_t>> extents;  // begin -> (end, owner)
  std::vector<std::string> owners;
};

/// Checks, before anything is allocated or read, that every value of `a` is stored in the file:
/// all of its storage allocated (HDF5 reads unallocated chunks as the fill value, zeros, without
/// an error), every chunk where the grid expects one, inside the file, and overlapping no other
/// array in `map`; and that its declared size is one the file's bytes can hold.
void require_stored(const Context& ctx, const Array& a, StorageMap& map);

/// Refuses a float type other than IEEE 754's, an integer (or an enum's base) that does not use all
/// of its bytes: a damaged type description converts every value wrongly, or crashes HDF5's
/// converters.
void require_standard_type(const Context& ctx, const Array& a);

/// Checks that `a` is (rows, cols) with cols >= 1, or (rows) when `allow_vector`.
/// Returns cols (1 for a vector).
std::int64_t matrix_cols(const Context& ctx, const Array& a, bool allow_vector);
/// Checks that `a` is (N) or (N, 1).
void require_vector(const Context& ctx, const Array& a);

/// Reads rows [row0, row0 + rows) of a float array (float32 or float64 in the file) as float32
/// into `out` (rows x cols), in blocks, calling `on_rows(n)` after each block. Non-finite values
/// raise DatasetError naming the count and the first (row, column), offset by `row_offset`.
void read_floats(const Context& ctx, const Array& a, std::int64_t cols, float* out,
                 const std::function<void(std::int64_t)>& on_rows, std::int64_t row_offset = 0);

/// Reads a flag vector stored as bool (h5py's enum), integer or float; each value must be 0 or 1.
void read_flags(const Context& ctx, const Array& a, std::uint8_t* out, std::int64_t row_offset = 0);

/// Longest text a metadata string may have; longer ones are refused before HDF5 allocates them.
constexpr std::size_t kMaxTextBytes = 1 << 20;

/// Reads a scalar (or one-element) dataset or attribute as text; "" if it is not scalar-like
/// (an array, a compound). DatasetError naming the key when it cannot be read or its text is
/// longer than kMaxTextBytes.
std::string read_scalar_text(const Context& ctx, const Array& a);
std::string read_attribute_text(const Context& ctx, hid_t obj, const std::string& name);
/// Names of the attributes of `obj`; DatasetError naming `key` when they cannot be listed.
std::vector<std::string> attribute_names(const Context& ctx, hid_t obj, const std::string& key);

}  // namespace dstudio::data::h5

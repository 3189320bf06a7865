// Writing the D4RL layout. The file is created under a temporary name beside the target and
// renamed into place only when complete.

#include <algorithm>
#include <filesystem>

#include "dstudio/data/dataset_io.h"
#include "h5.h"

namespace dstudio::data {
namespace {

using h5::Handle;

// h5py's representation of numpy bool, so that Python tools read our flags as bool.
Handle bool_type() {
  Handle t(H5Tenum_create(H5T_NATIVE_INT8), H5Tclose);
  const signed char no = 0, yes = 1;
  H5Tenum_insert(t, "FALSE", &no);
  H5Tenum_insert(t, "TRUE", &yes);
  return t;
}

class Writer {
 public:
  Writer(const h5::Context& ctx, hid_t file, const WriteOptions& options)
      : ctx_(ctx), file_(file), options_(options) {}

  void floats(const std::string& key, const std::vector<float>& values, std::int64_t rows,
              std::int64_t cols, bool vector) {
    const hid_t file_type = options_.float64 ? H5T_IEEE_F64LE : H5T_IEEE_F32LE;
    write(key, file_type, H5T_NATIVE_FLOAT, values.data(), rows, cols, vector);
  }

  void flags(const std::string& key, const std::vector<std::uint8_t>& values, std::int64_t rows) {
    Handle type = bool_type();
    // The flags are 0/1 bytes, which is exactly the enum's int8 representation.
    write(key, type, type, values.data(), rows, 1, true);
  }

  void text(const std::string& key, const std::string& value) {
    Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(type, H5T_VARIABLE);
    H5Tset_cset(type, H5T_CSET_UTF8);
    Handle space(H5Screate(H5S_SCALAR), H5Sclose);
    Handle lcpl = group_creating_plist();
    Handle dcpl = dataset_plist();
    Handle d(H5Dcreate2(file_, key.c_str(), type, space, lcpl, dcpl, H5P_DEFAULT), H5Dclose);
    const char* data = value.c_str();
    if (!d.valid() || H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, &data) < 0)
      ctx_.fail_h5(key, "could not be written");
  }

 private:
  // No modification times in object headers: the same arrays give the same bytes.
  static Handle dataset_plist() {
    Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    H5Pset_obj_track_times(dcpl, 0);
    return dcpl;
  }

  static Handle group_creating_plist() {
    Handle lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
    H5Pset_create_intermediate_group(lcpl, 1);
    return lcpl;
  }

  void write(const std::string& key, hid_t file_type, hid_t mem_type, const void* data,
             std::int64_t rows, std::int64_t cols, bool vector) {
    const int rank = vector ? 1 : 2;
    const hsize_t dims[2] = {static_cast<hsize_t>(rows), static_cast<hsize_t>(cols)};
    Handle space(H5Screate_simple(rank, dims, nullptr), H5Sclose);
    Handle dcpl = dataset_plist();
    if (options_.gzip_level > 0 && rows > 0) {
      const hsize_t chunk[2] = {static_cast<hsize_t>(std::min(rows, options_.chunk_rows)),
                                static_cast<hsize_t>(cols)};
      H5Pset_chunk(dcpl, rank, chunk);
      H5Pset_deflate(dcpl, static_cast<unsigned>(options_.gzip_level));
    }
    Handle lcpl = group_creating_plist();
    Handle d(H5Dcreate2(file_, key.c_str(), file_type, space, lcpl, dcpl, H5P_DEFAULT), H5Dclose);
    if (!d.valid() || H5Dwrite(d, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
      ctx_.fail_h5(key, "could not be written");
  }

  const h5::Context& ctx_;
  hid_t file_;
  const WriteOptions& options_;
};

void check_arrays(const h5::Context& ctx, const TransitionArrays& d) {
  const std::int64_t n = d.size();
  if (d.obs_dim <= 0 || d.act_dim <= 0) ctx.fail("", "obs_dim and act_dim must be positive");
  if (n == 0) ctx.fail("observations", "holds zero transitions");
  auto expect = [&](const char* key, std::size_t have, std::int64_t cols, bool optional) {
    if (optional && have == 0) return;
    if (static_cast<std::int64_t>(have) != n * cols)
      ctx.fail(key, "holds " + std::to_string(have) + " values; expected " + std::to_string(n) +
                        " x " + std::to_string(cols));
  };
  if (static_cast<std::int64_t>(d.observations.size()) != n * d.obs_dim)
    ctx.fail("observations", "is not a whole number of rows of obs_dim");
  expect("actions", d.actions.size(), d.act_dim, false);
  expect("rewards", d.rewards.size(), 1, false);
  expect("terminals", d.terminals.size(), 1, false);
  expect("timeouts", d.timeouts.size(), 1, true);
  expect("next_observations", d.next_observations.size(), d.obs_dim, true);
  expect("infos/qpos", d.qpos.size(), d.qpos_dim, true);
  expect("infos/qvel", d.qvel.size(), d.qvel_dim, true);
  expect("infos/goal", d.goals.size(), d.goal_dim, true);
  for (const auto& [key, info] : d.state_infos) {
    if (key.empty() || key.find('/') != std::string::npos || info.dim < 1)
      ctx.fail("infos/" + key, "is not a name and a width an infos array can have");
    expect(("infos/" + key).c_str(), info.values.size(), info.dim, false);
  }
}

}  // namespace

void write_d4rl(const std::filesystem::path& path, const TransitionArrays& data,
                const std::map<std::string, std::string>& metadata, const WriteOptions& options) {
  const h5::Context ctx{path.string()};
  check_arrays(ctx, data);
  h5::write_file_atomically(ctx, path, /*track_times=*/false, [&](hid_t file) {
    Writer w(ctx, file, options);
    const std::int64_t n = data.size();
    w.floats("observations", data.observations, n, data.obs_dim, false);
    w.floats("actions", data.actions, n, data.act_dim, false);
    w.floats("rewards", data.rewards, n, 1, true);
    w.flags("terminals", data.terminals, n);
    if (options.write_timeouts) {
      std::vector<std::uint8_t> none;
      w.flags("timeouts", data.timeouts.empty() ? (none.assign(n, 0), none) : data.timeouts, n);
    }
    if (!data.next_observations.empty())
      w.floats("next_observations", data.next_observations, n, data.obs_dim, false);
    if (!data.qpos.empty()) w.floats("infos/qpos", data.qpos, n, data.qpos_dim, false);
    if (!data.qvel.empty()) w.floats("infos/qvel", data.qvel, n, data.qvel_dim, false);
    if (!data.goals.empty()) w.floats("infos/goal", data.goals, n, data.goal_dim, false);
    for (const auto& [key, info] : data.state_infos)
      w.floats("infos/" + key, info.values, n, info.dim, false);
    for (const auto& [key, value] : metadata) w.text("metadata/" + key, value);
  });
}

}  // namespace dstudio::data

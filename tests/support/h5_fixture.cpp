#include "h5_fixture.h"

#include <unistd.h>

#include <atomic>
#include <numeric>
#include <stdexcept>

namespace dstudio::test {

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  path_ = std::filesystem::temp_directory_path() /
          ("dstudio-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
  std::filesystem::remove_all(path_);
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

static void check(herr_t status, const std::string& what) {
  if (status < 0) throw std::runtime_error("fixture: HDF5 call failed: " + what);
}

static hid_t link_plist() {
  hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  return lcpl;
}

H5Writer::H5Writer(const std::filesystem::path& path) {
  file_ = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file_ < 0) throw std::runtime_error("fixture: cannot create " + path.string());
}

H5Writer::~H5Writer() {
  H5Fclose(file_);
}

void H5Writer::numbers(const std::string& key, const std::vector<double>& values,
                       const std::vector<hsize_t>& shape, hid_t file_type, bool gzip) {
  hid_t space = H5Screate_simple(static_cast<int>(shape.size()), shape.data(), nullptr);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (gzip && !shape.empty() && shape[0] > 0) {
    std::vector<hsize_t> chunk = shape;
    chunk[0] = std::min<hsize_t>(shape[0], 64);
    check(H5Pset_chunk(dcpl, static_cast<int>(chunk.size()), chunk.data()), "chunk");
    check(H5Pset_deflate(dcpl, 4), "deflate");
  }
  hid_t lcpl = link_plist();
  hid_t d = H5Dcreate2(file_, key.c_str(), file_type, space, lcpl, dcpl, H5P_DEFAULT);
  if (d < 0) throw std::runtime_error("fixture: cannot create " + key);
  if (!values.empty())
    check(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), key);
  H5Dclose(d);
  H5Pclose(lcpl);
  H5Pclose(dcpl);
  H5Sclose(space);
}

void H5Writer::bools(const std::string& key, const std::vector<int>& values,
                     const std::vector<hsize_t>& shape) {
  hid_t type = H5Tenum_create(H5T_NATIVE_INT8);
  const signed char f = 0, t = 1;
  H5Tenum_insert(type, "FALSE", &f);
  H5Tenum_insert(type, "TRUE", &t);
  std::vector<signed char> raw(values.begin(), values.end());
  hid_t space = H5Screate_simple(static_cast<int>(shape.size()), shape.data(), nullptr);
  hid_t lcpl = link_plist();
  hid_t d = H5Dcreate2(file_, key.c_str(), type, space, lcpl, H5P_DEFAULT, H5P_DEFAULT);
  if (!raw.empty()) check(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw.data()), key);
  H5Dclose(d);
  H5Pclose(lcpl);
  H5Sclose(space);
  H5Tclose(type);
}

void H5Writer::text(const std::string& key, const std::string& value) {
  hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  hid_t space = H5Screate(H5S_SCALAR);
  hid_t lcpl = link_plist();
  hid_t d = H5Dcreate2(file_, key.c_str(), type, space, lcpl, H5P_DEFAULT, H5P_DEFAULT);
  const char* p = value.c_str();
  check(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, &p), key);
  H5Dclose(d);
  H5Pclose(lcpl);
  H5Sclose(space);
  H5Tclose(type);
}

void H5Writer::attribute(const std::string& path, const std::string& name,
                         const std::string& value) {
  hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  hid_t space = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate_by_name(file_, path.c_str(), name.c_str(), type, space, H5P_DEFAULT,
                              H5P_DEFAULT, H5P_DEFAULT);
  const char* p = value.c_str();
  check(H5Awrite(a, type, &p), name);
  H5Aclose(a);
  H5Sclose(space);
  H5Tclose(type);
}

void H5Writer::attribute(const std::string& path, const std::string& name, std::int64_t value) {
  hid_t space = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate_by_name(file_, path.c_str(), name.c_str(), H5T_STD_I64LE, space, H5P_DEFAULT,
                              H5P_DEFAULT, H5P_DEFAULT);
  check(H5Awrite(a, H5T_NATIVE_INT64, &value), name);
  H5Aclose(a);
  H5Sclose(space);
}

void H5Writer::group(const std::string& path) {
  hid_t lcpl = link_plist();
  hid_t g = H5Gcreate2(file_, path.c_str(), lcpl, H5P_DEFAULT, H5P_DEFAULT);
  if (g < 0) throw std::runtime_error("fixture: cannot create group " + path);
  H5Gclose(g);
  H5Pclose(lcpl);
}

void H5Writer::declare_only(const std::string& key, const std::vector<hsize_t>& shape) {
  hid_t space = H5Screate_simple(static_cast<int>(shape.size()), shape.data(), nullptr);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  std::vector<hsize_t> chunk(shape.size(), 1);
  chunk[0] = 1024;
  if (shape.size() > 1) chunk[1] = shape[1];
  H5Pset_chunk(dcpl, static_cast<int>(chunk.size()), chunk.data());
  hid_t d = H5Dcreate2(file_, key.c_str(), H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (d < 0) throw std::runtime_error("fixture: cannot declare " + key);
  H5Dclose(d);
  H5Pclose(dcpl);
  H5Sclose(space);
}

void write_d4rl_fixture(const std::filesystem::path& path, const D4rlSpec& spec) {
  H5Writer w(path);
  const auto n = static_cast<hsize_t>(spec.n);
  const hid_t ftype = spec.float64 ? H5T_IEEE_F64LE : H5T_IEEE_F32LE;
  std::vector<double> obs, next, act, rew;
  for (int i = 0; i < spec.n; ++i) {
    for (int j = 0; j < spec.obs_dim; ++j) obs.push_back(spec.obs(i, j));
    for (int j = 0; j < spec.obs_dim; ++j) next.push_back(spec.obs(i + 1, j));
    for (int k = 0; k < spec.act_dim; ++k) act.push_back(spec.act(i, k));
    rew.push_back(spec.reward(i));
  }
  const std::vector<hsize_t> vec =
      spec.column_vectors ? std::vector<hsize_t>{n, 1} : std::vector<hsize_t>{n};
  w.numbers("observations", obs, {n, static_cast<hsize_t>(spec.obs_dim)}, ftype, spec.gzip);
  w.numbers("actions", act, {n, static_cast<hsize_t>(spec.act_dim)}, ftype, spec.gzip);
  w.numbers("rewards", rew, vec, ftype, spec.gzip);
  if (spec.with_next_observations)
    w.numbers("next_observations", next, {n, static_cast<hsize_t>(spec.obs_dim)}, ftype, spec.gzip);
  auto flags = [&](const std::string& key, std::vector<int> values) {
    values.resize(n, 0);
    switch (spec.flags) {
      case FlagType::Bool:
        w.bools(key, values, vec);
        break;
      case FlagType::UInt8:
        w.numbers(key, {values.begin(), values.end()}, vec, H5T_STD_U8LE, spec.gzip);
        break;
      case FlagType::Float32:
        w.numbers(key, {values.begin(), values.end()}, vec, H5T_IEEE_F32LE, spec.gzip);
        break;
    }
  };
  flags("terminals", spec.terminals);
  if (spec.with_timeouts) flags("timeouts", spec.timeouts);
  if (spec.with_infos) {
    std::vector<double> qpos, qvel;
    for (int i = 0; i < spec.n; ++i) {
      qpos.push_back(spec.obs(i, 0));
      qpos.push_back(spec.obs(i, 1));
      qvel.push_back(spec.reward(i));
    }
    w.numbers("infos/qpos", qpos, {n, 2}, ftype, spec.gzip);
    w.numbers("infos/qvel", qvel, {n, 1}, ftype, spec.gzip);
    w.numbers("infos/action_log_probs", rew, {n}, ftype, spec.gzip);
  }
  if (spec.with_metadata) {
    w.text("metadata/algorithm", "SAC");
    w.numbers("metadata/iteration", {42.0}, {}, H5T_STD_I64LE);
    w.numbers("metadata/policy/fc0/weight", std::vector<double>(6, 0.5), {2, 3}, H5T_IEEE_F32LE);
  }
}

void write_minari_fixture(const std::filesystem::path& path,
                          const std::vector<MinariEpisodeSpec>& episodes) {
  std::filesystem::create_directories(path.parent_path());
  H5Writer w(path);
  std::int64_t total_steps = 0;
  for (std::size_t e = 0; e < episodes.size(); ++e) {
    const auto& ep = episodes[e];
    const std::string g = "episode_" + std::to_string(e);
    const auto steps = static_cast<hsize_t>(ep.steps);
    std::vector<double> obs, act, rew;
    std::vector<int> term(steps, 0), trunc(steps, 0);
    for (int t = 0; t <= ep.steps; ++t)
      for (int j = 0; j < 2; ++j) obs.push_back(ep.base + t + 0.1 * j);
    for (int t = 0; t < ep.steps; ++t) {
      act.push_back(0.5 * t);
      rew.push_back(t + 1.0);
    }
    if (ep.steps > 0) {
      term.back() = ep.terminated;
      trunc.back() = ep.truncated;
    }
    w.numbers(g + "/observations", obs, {steps + 1, 2}, H5T_IEEE_F64LE);
    w.numbers(g + "/actions", act, {steps, 1}, H5T_IEEE_F32LE);
    w.numbers(g + "/rewards", rew, {steps}, H5T_IEEE_F64LE);
    w.bools(g + "/terminations", term, {steps});
    w.bools(g + "/truncations", trunc, {steps});
    w.attribute(g, "id", static_cast<std::int64_t>(e));
    total_steps += ep.steps;
  }
  w.attribute("/", "total_episodes", static_cast<std::int64_t>(episodes.size()));
  w.attribute("/", "total_steps", total_steps);
  w.attribute("/", "dataset_id", std::string("pointmass/test-v0"));
  w.attribute("/", "env_spec", std::string(R"({"id": "PointMass-v0", "max_episode_steps": 100})"));
}

void write_minari_antmaze_fixture(const std::filesystem::path& path) {
  std::filesystem::create_directories(path.parent_path());
  H5Writer w(path);
  const int lengths[] = {5, 3};
  for (int e = 0; e < 2; ++e) {
    const std::string g = "episode_" + std::to_string(e);
    const int T = lengths[e];
    std::vector<double> achieved, desired, observation, act, rew;
    for (int t = 0; t <= T; ++t) {
      achieved.push_back(0.1 * t), achieved.push_back(0.2 * t);
      desired.push_back(0.0), desired.push_back(8.0);
      for (int j = 0; j < 27; ++j) observation.push_back(0.01 * j + t);
    }
    for (int t = 0; t < T; ++t) {
      for (int k = 0; k < 8; ++k) act.push_back(0.0);
      rew.push_back(e == 0 && t == T - 1 ? 1.0 : 0.0);
    }
    const auto steps = static_cast<hsize_t>(T);
    w.numbers(g + "/observations/achieved_goal", achieved, {steps + 1, 2}, H5T_IEEE_F64LE);
    w.numbers(g + "/observations/desired_goal", desired, {steps + 1, 2}, H5T_IEEE_F64LE);
    w.numbers(g + "/observations/observation", observation, {steps + 1, 27}, H5T_IEEE_F64LE);
    w.numbers(g + "/actions", act, {steps, 8}, H5T_IEEE_F32LE);
    w.numbers(g + "/rewards", rew, {steps}, H5T_IEEE_F64LE);
    std::vector<int> term(steps, 0), trunc(steps, 0);
    (e == 0 ? term : trunc).back() = 1;
    w.bools(g + "/terminations", term, {steps});
    w.bools(g + "/truncations", trunc, {steps});
    w.attribute(g, "id", static_cast<std::int64_t>(e));
  }
  w.attribute("/", "total_episodes", static_cast<std::int64_t>(2));
  w.attribute("/", "total_steps", static_cast<std::int64_t>(8));
  w.attribute("/", "dataset_id", std::string("D4RL/antmaze/umaze-v1"));
  w.attribute("/", "env_spec",
              std::string(R"({"id": "AntMaze_UMaze-v4", "max_episode_steps": 700})"));
}

void rename_link(const std::filesystem::path& path, const std::string& from,
                 const std::string& to) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  if (file < 0) throw std::runtime_error("cannot open " + path.string());
  const herr_t moved = H5Lmove(file, from.c_str(), file, to.c_str(), H5P_DEFAULT, H5P_DEFAULT);
  H5Fclose(file);
  if (moved < 0) throw std::runtime_error("cannot rename '" + from + "' in " + path.string());
}

}  // namespace dstudio::test

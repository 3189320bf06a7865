#pragma once
/// \file
/// Test fixtures written through HDF5's C API directly, independently of the project's writer,
/// so that loader tests do not trust the code they test. Each function writes one array or group
/// exactly as described; `D4rlFile` composes them into the quirks real files have.

#include <hdf5.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace dstudio::test {

/// A fresh temporary folder, removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] std::filesystem::path operator/(const std::string& name) const {
    return path_ / name;
  }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// An HDF5 file open for writing; closed on destruction.
class H5Writer {
 public:
  explicit H5Writer(const std::filesystem::path& path);
  ~H5Writer();
  H5Writer(const H5Writer&) = delete;
  H5Writer& operator=(const H5Writer&) = delete;
  [[nodiscard]] hid_t id() const { return file_; }

  /// Writes `values` (row-major) as a dataset of `shape` with the given file type; values are
  /// converted from double by HDF5. `gzip` chunks by up to 64 rows and deflates.
  void numbers(const std::string& key, const std::vector<double>& values,
               const std::vector<hsize_t>& shape, hid_t file_type, bool gzip = false);
  /// Writes flags as h5py writes numpy bool: an enum {FALSE = 0, TRUE = 1} over int8.
  void bools(const std::string& key, const std::vector<int>& values,
             const std::vector<hsize_t>& shape);
  /// Writes a scalar variable-length string dataset.
  void text(const std::string& key, const std::string& value);
  /// Writes a scalar attribute (string or int64) on the object at `path`.
  void attribute(const std::string& path, const std::string& name, const std::string& value);
  void attribute(const std::string& path, const std::string& name, std::int64_t value);
  /// Creates an empty group.
  void group(const std::string& path);
  /// Declares a chunked float32 dataset of `shape` without writing any data.
  void declare_only(const std::string& key, const std::vector<hsize_t>& shape);

 private:
  hid_t file_;
};

/// The flag storage variants seen in real D4RL files.
enum class FlagType { Bool, UInt8, Float32 };

/// A D4RL-layout file with every quirk selectable. Values are defined by simple formulas so tests
/// can compute expectations independently: obs[i][j] = 0.5 * i + 0.01 * j, act[i][k] =
/// 0.001 * i - 0.1 * k, reward[i] = 1 + 0.25 * (i % 4); `terminals`/`timeouts` as given.
struct D4rlSpec {
  int n = 10;
  int obs_dim = 3;
  int act_dim = 2;
  bool float64 = false;
  bool column_vectors = false;  ///< rewards and flags shaped (N, 1) instead of (N)
  FlagType flags = FlagType::Bool;
  bool gzip = true;
  bool with_timeouts = true;
  bool with_next_observations = true;
  bool with_infos = false;  ///< infos/qpos (N, 2) = obs[:, :2], infos/qvel (N, 1) = reward
  bool with_metadata = false;
  std::vector<int> terminals;  ///< defaults to all 0
  std::vector<int> timeouts;   ///< defaults to all 0

  [[nodiscard]] double obs(int i, int j) const { return 0.5 * i + 0.01 * j; }
  [[nodiscard]] double act(int i, int k) const { return 0.001 * i - 0.1 * k; }
  [[nodiscard]] double reward(int i) const { return 1.0 + 0.25 * (i % 4); }
};

/// Writes `spec` to `path` through the C API.
void write_d4rl_fixture(const std::filesystem::path& path, const D4rlSpec& spec);

/// Renames the link `from` of the HDF5 file `path` to `to` (any bytes), as a damaged name would;
/// throws std::runtime_error when HDF5 cannot.
void rename_link(const std::filesystem::path& path, const std::string& from, const std::string& to);

/// One Minari episode: `steps` actions, `steps + 1` observations with obs[t][j] = base + t + 0.1 j.
struct MinariEpisodeSpec {
  int steps = 4;
  bool terminated = false;
  bool truncated = false;
  double base = 0.0;
};

/// Writes a Minari main_data.hdf5 with the given episodes (obs_dim 2, act_dim 1, reward = t + 1).
void write_minari_fixture(const std::filesystem::path& path,
                          const std::vector<MinariEpisodeSpec>& episodes);

/// Writes Minari's D4RL/antmaze/umaze-v1 layout: Gymnasium-Robotics' AntMaze_UMaze-v4, dict
/// observations (achieved_goal 2, desired_goal 2, observation 27), 8 actions; an episode of 5
/// steps that terminates (reward 1 on its last step) and one of 3 that is truncated.
void write_minari_antmaze_fixture(const std::filesystem::path& path);

}  // namespace dstudio::test

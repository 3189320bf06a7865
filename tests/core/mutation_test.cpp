// Damaged datasets: deterministic mutants of the project's sample files
// (tests/data/damaged/samples) loaded as the studio loads them (LoadOptions::isolate). None may
// take the test process down, hang or allocate past a bound; each is refused with the file named,
// or loads the original's arrays, or loads with a warning that says what was dropped.
//
// $DSTUDIO_MUTANTS sets the mutants per sample (default 100), $DSTUDIO_MUTATION_SEED the seed, and
// $DSTUDIO_MUTANTS_OUT a folder to write each mutant to (for runs of the command line on them).
// DISABLED_WriteSamples rewrites the samples (run with --gtest_also_run_disabled_tests).

#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "dstudio/data/dataset_io.h"
#include "h5_fixture.h"

namespace dstudio::data {
namespace {

namespace fs = std::filesystem;

const fs::path kSamples = fs::path(DSTUDIO_TEST_DATA) / "damaged" / "samples";

std::vector<char> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void write_bytes(const fs::path& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::int64_t env_int(const char* name, std::int64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoll(v) : fallback;
}

// The byte ranges holding array values, found through HDF5's C API independently of the loader:
// mutations go to the file's structure (headers, indexes, heaps, superblock), since a flipped bit
// in raw values is undetectable by any reader without checksums.
std::vector<std::pair<std::uint64_t, std::uint64_t>> value_ranges(const fs::path& path) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) return ranges;
  H5Ovisit2(
      file, H5_INDEX_NAME, H5_ITER_INC,
      [](hid_t loc, const char* name, const H5O_info_t* info, void* data) -> herr_t {
        if (info->type != H5O_TYPE_DATASET) return 0;
        auto* out = static_cast<std::vector<std::pair<std::uint64_t, std::uint64_t>>*>(data);
        hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
        hid_t dcpl = H5Dget_create_plist(d);
        if (H5Pget_layout(dcpl) == H5D_CONTIGUOUS) {
          const haddr_t offset = H5Dget_offset(d);
          if (offset != HADDR_UNDEF) out->emplace_back(offset, offset + H5Dget_storage_size(d));
        } else if (H5Pget_layout(dcpl) == H5D_CHUNKED) {
          hid_t space = H5Dget_space(d);
          hsize_t n = 0;
          H5Dget_num_chunks(d, space, &n);
          for (hsize_t i = 0; i < n; ++i) {
            hsize_t origin[8];
            unsigned mask = 0;
            haddr_t addr = 0;
            hsize_t size = 0;
            if (H5Dget_chunk_info(d, space, i, origin, &mask, &addr, &size) >= 0)
              out->emplace_back(addr, addr + size);
          }
          H5Sclose(space);
        }
        H5Pclose(dcpl);
        H5Dclose(d);
        return 0;
      },
      &ranges, H5O_INFO_BASIC);
  H5Fclose(file);
  return ranges;
}

// One deterministic mutant of `original`: the kinds of damage a copy, a crash or a bad disk does.
std::vector<char> mutate(const std::vector<char>& original,
                         const std::vector<std::pair<std::uint64_t, std::uint64_t>>& values,
                         std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<char> bytes = original;
  const std::size_t size = bytes.size();
  auto structural = [&]() -> std::size_t {  // a position outside the arrays' values
    for (;;) {
      const std::size_t p = rng() % size;
      bool inside = false;
      for (const auto& [b, e] : values) inside = inside || (p >= b && p < e);
      if (!inside) return p;
    }
  };
  auto word = [&]() { return std::min(structural() & ~std::size_t{7}, size - 8); };
  switch (rng() % 6) {
    case 0:  // bit flips
      for (int i = 0, n = 1 + static_cast<int>(rng() % 3); i < n; ++i)
        bytes[structural()] ^= static_cast<char>(1 << (rng() % 8));
      break;
    case 1:  // bytes overwritten
      for (int i = 0, n = 1 + static_cast<int>(rng() % 4); i < n; ++i)
        bytes[structural()] = static_cast<char>(rng());
      break;
    case 2:  // truncated
      bytes.resize(rng() % size);
      break;
    case 3: {  // an 8-byte length or address zeroed
      const std::size_t p = word();
      std::fill_n(bytes.begin() + static_cast<std::ptrdiff_t>(p), 8, 0);
      break;
    }
    case 4: {  // an 8-byte length or address duplicated from elsewhere
      const std::size_t to = word(), from = word();
      std::copy_n(original.begin() + static_cast<std::ptrdiff_t>(from), 8,
                  bytes.begin() + static_cast<std::ptrdiff_t>(to));
      break;
    }
    default: {  // an 8-byte address made undefined (all ones) or huge
      const std::size_t p = word();
      std::fill_n(bytes.begin() + static_cast<std::ptrdiff_t>(p), rng() % 2 ? 8 : 4,
                  static_cast<char>(0xff));
      break;
    }
  }
  return bytes;
}

// The arrays of `a` that differ from `b`'s ("" when none).
std::string different_arrays(const Dataset& a, const Dataset& b) {
  const auto& x = a.data;
  const auto& y = b.data;
  std::string out;
  auto compare = [&](const char* name, bool same) {
    out += same ? "" : std::string(out.empty() ? "" : ", ") + name;
  };
  compare("dims", x.obs_dim == y.obs_dim && x.act_dim == y.act_dim);
  compare("observations", x.observations == y.observations);
  compare("actions", x.actions == y.actions);
  compare("rewards", x.rewards == y.rewards);
  compare("terminals", x.terminals == y.terminals);
  compare("timeouts", x.timeouts == y.timeouts);
  compare("infos/qpos", x.qpos == y.qpos);
  compare("infos/qvel", x.qvel == y.qvel);
  return out;
}

struct Counts {
  std::atomic<int> refused{0}, identical{0}, warned{0}, died_in_reader{0}, died_in_metadata{0},
      silent{0};
};

void run_mutants(const std::string& sample, int count, std::uint64_t seed, Counts& counts,
                 std::vector<std::string>& failures) {
  const fs::path original_path = kSamples / sample;
  const auto original = read_bytes(original_path);
  ASSERT_GT(original.size(), 1000u) << original_path;
  const auto values = value_ranges(original_path);
  ASSERT_FALSE(values.empty());
  LoadOptions options;
  options.isolate = true;
  options.reader_timeout_seconds = 3;
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const Dataset reference = load_dataset(original_path, options);
  ASSERT_TRUE(
      std::none_of(reference.warnings.begin(), reference.warnings.end(),
                   [](const std::string& w) { return w.find("left out") != std::string::npos; }));
  const char* out_dir = std::getenv("DSTUDIO_MUTANTS_OUT");
  test::TempDir dir;
  std::mutex failures_mutex;
  std::atomic<int> next{0};
  auto worker = [&] {
    for (int i; (i = next++) < count;) {
      const std::uint64_t mutant_seed = seed * 1000003 + static_cast<std::uint64_t>(i);
      const auto bytes = mutate(original, values, mutant_seed);
      const std::string name =
          fs::path(sample).stem().string() + "-" + std::to_string(mutant_seed) + ".hdf5";
      const fs::path path = out_dir ? fs::path(out_dir) / name : dir / name;
      write_bytes(path, bytes);
      std::string failure;
      try {
        const Dataset ds = load_dataset(path, options);
        if (std::any_of(ds.warnings.begin(), ds.warnings.end(), [](const std::string& w) {
              return w.find("the HDF5 library") != std::string::npos;
            }))
          ++counts.died_in_metadata;
        if (const std::string differ = different_arrays(ds, reference); differ.empty()) {
          ++counts.identical;
        } else {
          // A new warning or note (a tail that appeared) tells the user the file is not what it
          // was.
          const auto said_anew = [](const std::vector<std::string>& now,
                                    const std::vector<std::string>& before) {
            return std::any_of(now.begin(), now.end(), [&](const std::string& w) {
              return std::find(before.begin(), before.end(), w) == before.end();
            });
          };
          const bool new_warning =
              said_anew(ds.warnings, reference.warnings) || said_anew(ds.notes, reference.notes);
          if (new_warning)
            ++counts.warned;
          else {
            ++counts.silent;
            failure = name + ": loaded with different " + differ + " and no warning";
          }
        }
      } catch (const DatasetError& e) {
        ++counts.refused;
        const std::string what = e.what();
        if (what.find(path.string()) == std::string::npos)
          failure = name + ": the refusal does not name the file: " + what;
        if (what.find("the HDF5 library") != std::string::npos) ++counts.died_in_reader;
      } catch (const std::exception& e) {
        failure = name + ": not a DatasetError: " + e.what();
      }
      if (!failure.empty()) {
        std::lock_guard lock(failures_mutex);
        failures.push_back(failure);
      }
      if (!out_dir) fs::remove(path);
    }
  };
  std::thread second(worker);
  worker();
  second.join();
}

class Mutants : public testing::TestWithParam<std::string> {};

TEST_P(Mutants, NeverCrashHangOverAllocateOrLoadSilentlyWrongArrays) {
  const int count = static_cast<int>(env_int("DSTUDIO_MUTANTS", 100));
  const auto seed = static_cast<std::uint64_t>(env_int("DSTUDIO_MUTATION_SEED", 20261126));
  Counts counts;
  std::vector<std::string> failures;
  const auto start = std::chrono::steady_clock::now();
  run_mutants(GetParam(), count, seed, counts, failures);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const auto& f : failures) ADD_FAILURE() << f;
  EXPECT_EQ(counts.refused + counts.identical + counts.warned + counts.silent, count);
  // The reader processes have a memory limit; this process may hold the samples and little more.
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  EXPECT_LT(usage.ru_maxrss, 1 << 20) << "kB: this process allocated more than 1 GiB";
  std::printf(
      "%s: %d mutants in %.1f s: %d refused (%d of them crashed, looped or ran out of memory in "
      "the reader), "
      "%d loaded identical, %d loaded with a warning, %d silently different; %d loaded without "
      "metadata after the reader "
      "crashed, looped or ran out of memory in it\n",
      GetParam().c_str(), count, seconds, counts.refused.load(), counts.died_in_reader.load(),
      counts.identical.load(), counts.warned.load(), counts.silent.load(),
      counts.died_in_metadata.load());
}

INSTANTIATE_TEST_SUITE_P(Samples, Mutants,
                         testing::Values("d4rl_gzip.hdf5", "d4rl_contiguous.hdf5", "minari.hdf5"),
                         [](const testing::TestParamInfo<std::string>& p) {
                           std::string name = fs::path(p.param).stem().string();
                           std::replace(name.begin(), name.end(), '_', 'X');
                           return name;
                         });

// The samples: small, with every optional part (timeouts, next_observations, infos, metadata).
TEST(Mutants, DISABLED_WriteSamples) {
  fs::create_directories(kSamples);
  test::D4rlSpec spec;
  spec.n = 256;
  spec.obs_dim = 5;
  spec.act_dim = 2;
  spec.with_infos = true;
  spec.with_metadata = true;
  spec.terminals.assign(spec.n, 0);
  spec.timeouts.assign(spec.n, 0);
  for (int i = 40; i < spec.n; i += 70) spec.terminals[i] = 1;
  for (int i = 99; i < spec.n; i += 100) spec.timeouts[i] = 1;
  spec.timeouts[spec.n - 1] = 1;
  spec.gzip = true;
  test::write_d4rl_fixture(kSamples / "d4rl_gzip.hdf5", spec);
  spec.gzip = false;
  test::write_d4rl_fixture(kSamples / "d4rl_contiguous.hdf5", spec);
  test::write_minari_fixture(kSamples / "minari.hdf5", {{12, true, false, 0.0},
                                                        {20, false, true, 1.0},
                                                        {7, true, false, 2.0},
                                                        {15, false, true, 3.0},
                                                        {9, true, false, 4.0}});
}

}  // namespace
}  // namespace dstudio::data

// dstudio bench dataset-load: time and memory of loading a D4RL file.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <vector>

#include "commands.h"
#include "dstudio/common/system_info.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/data/synthetic.h"

namespace dstudio::cli {
namespace {

std::int64_t dtype_bytes(const std::string& dtype) {
  if (dtype == "bool") return 1;
  for (const char* prefix : {"float", "uint", "int", "enum"}) {
    const std::string p = prefix;
    if (dtype.rfind(p, 0) == 0) return std::stoll(dtype.substr(p.size())) / 8;
  }
  return 0;
}

double mib(std::int64_t bytes) {
  return static_cast<double>(bytes) / (1 << 20);
}

struct LoadBenchArgs {
  std::int64_t transitions = 1'000'000;
  int repeats = 5;
  std::string file;
  bool float64 = false;
};

int run_load_bench(const LoadBenchArgs& args) {
  namespace fs = std::filesystem;
  fs::path file = args.file;
  fs::path temp_dir;
  if (file.empty()) {
    // hopper-medium-v2's shape: obs 11, act 3, qpos 6, qvel 6, next_observations, gzip.
    temp_dir = fs::temp_directory_path() / ("dstudio-bench-" + std::to_string(::getpid()));
    fs::create_directories(temp_dir);
    file = temp_dir / "hopper-shaped.hdf5";
    data::SyntheticSpec spec;
    spec.transitions = args.transitions;
    data::WriteOptions options;
    options.float64 = args.float64;
    std::printf("writing %lld hopper-shaped transitions to %s ...\n",
                static_cast<long long>(args.transitions), file.c_str());
    data::write_d4rl(file, data::make_synthetic(spec), data::synthetic_metadata(spec), options);
  }

  std::vector<double> seconds;
  std::int64_t held = 0, raw = 0, rss_growth = 0, transitions = 0;
  for (int r = 0; r < args.repeats; ++r) {
    const std::int64_t rss_before = current_rss_bytes();
    const auto t0 = std::chrono::steady_clock::now();
    auto ds = std::make_unique<data::Dataset>(data::load_dataset(file));
    const auto t1 = std::chrono::steady_clock::now();
    seconds.push_back(std::chrono::duration<double>(t1 - t0).count());
    if (r == 0) {
      rss_growth = current_rss_bytes() - rss_before;
      held = ds->memory_bytes();
      transitions = ds->transitions();
      for (const auto& a : ds->arrays) {
        std::int64_t n = dtype_bytes(a.dtype);
        for (auto d : a.shape) n *= d;
        raw += n;
      }
    }
  }
  std::vector<double> sorted = seconds;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];

  std::printf("benchmark      dataset-load\n");
  std::printf("file           %s (%.1f MiB on disk, gzip)\n", file.c_str(),
              mib(fs::file_size(file)));
  std::printf("configuration  %lld transitions, repeats %d, %s\n",
              static_cast<long long>(transitions), args.repeats,
              args.float64 ? "float64 in the file" : "float32 in the file");
  std::printf("threads        1 (the loader is single-threaded; %d hardware threads)\n",
              hardware_threads());
  std::printf("blas           %s (%s)\n", active_blas_name().c_str(), active_blas().c_str());
  std::printf("load seconds   median %.3f  min %.3f  max %.3f\n", median, sorted.front(),
              sorted.back());
  std::printf("throughput     %.1f M transitions/s, %.0f MiB/s of raw arrays\n",
              static_cast<double>(transitions) / median / 1e6, mib(raw) / median);
  std::printf("raw arrays     %.1f MiB (uncompressed size of every array in the file)\n", mib(raw));
  std::printf("held           %.1f MiB  (%.2fx raw)\n", mib(held),
              static_cast<double>(held) / static_cast<double>(raw));
  std::printf("rss growth     %.1f MiB  (%.2fx raw) during the first load; peak rss %.1f MiB\n",
              mib(rss_growth), static_cast<double>(rss_growth) / static_cast<double>(raw),
              mib(peak_rss_bytes()));
  if (!temp_dir.empty()) fs::remove_all(temp_dir);
  return kOk;
}

}  // namespace

void add_bench_commands(CLI::App& app, int& exit_code) {
  auto* bench = app.add_subcommand("bench", "Benchmarks: medians, configuration, threads and BLAS");
  bench->require_subcommand(1);
  auto* load = bench->add_subcommand(
      "dataset-load",
      "Load a D4RL file repeatedly (by default a generated one of hopper-medium-v2's size)");
  auto args = std::make_shared<LoadBenchArgs>();
  load->add_option("--transitions", args->transitions, "Transitions of the generated file")
      ->check(CLI::Range(int64_t{1000}, int64_t{50'000'000}))
      ->capture_default_str();
  load->add_option("--repeats", args->repeats, "Timed loads")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  load->add_option("--file", args->file, "Time this file instead of a generated one")
      ->check(CLI::ExistingPath);
  load->add_flag("--float64", args->float64, "Generate the file with float64 arrays");
  load->callback([&exit_code, args] {
    try {
      exit_code = run_load_bench(*args);
    } catch (const data::DatasetError& e) {
      std::fprintf(stderr, "dstudio: error: %s\n", e.what());
      exit_code = kFailed;
    }
  });
}

}  // namespace dstudio::cli

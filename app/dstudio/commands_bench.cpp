// dstudio bench dataset-load: time and memory of loading a D4RL file.

#include <mujoco/mujoco.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <tuple>
#include <vector>

#include "commands.h"
#include "dstudio/analysis/tsne.h"
#include "dstudio/behaviour/antmaze_data.h"
#include "dstudio/behaviour/policy_set.h"
#include "dstudio/common/random.h"
#include "dstudio/common/system_info.h"
#include "dstudio/data/arrays_h5.h"
#include "dstudio/data/dataset_io.h"
#include "dstudio/data/synthetic.h"
#include "dstudio/env/environment.h"

namespace dstudio::cli {
namespace {

std::int64_t dtype_bytes(const std::string& dtype) {
  if (dtype == "bool") return 1;
  for (const char* prefix : {"float", "uint", "int", "enum"}) {
    const std::string p = prefix;
    if (dtype.rfind(p, 0) != 0) continue;
    // "float32": the bits after the name; a dtype without them counts as unknown (0).
    std::int64_t bits = 0;
    for (char ch : dtype.substr(p.size())) {
      if (ch < '0' || ch > '9') return 0;
      bits = bits * 10 + (ch - '0');
      if (bits > 4096) return 0;
    }
    return bits / 8;
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

// Environment steps per second on one core, with smooth open-loop actions (episodes reset as
// they end, so contacts and resets are part of the cost).
int run_env_bench(const std::vector<std::string>& names, int steps, int repeats) {
  std::printf("benchmark      env-step\n");
  std::printf("configuration  %d steps per repeat, %d repeats, MuJoCo %s\n", steps, repeats,
              mj_versionString());
  std::printf("threads        1 (one environment on one core; %d hardware threads)\n",
              hardware_threads());
  std::printf("blas           %s (not used by MuJoCo)\n", active_blas_name().c_str());
  for (const auto& name : names) {
    env::Environment e(name);
    const auto& spec = e.spec();
    std::vector<float> obs(static_cast<std::size_t>(spec.obs_dim)),
        act(static_cast<std::size_t>(spec.act_dim));
    std::vector<double> rates;
    std::uint64_t seed = 0;
    for (int r = 0; r < repeats; ++r) {
      e.reset(seed++, obs);
      const auto t0 = std::chrono::steady_clock::now();
      for (int t = 0; t < steps; ++t) {
        for (int i = 0; i < spec.act_dim; ++i)
          act[i] = static_cast<float>(0.8 * std::sin(0.05 * t + i));
        const auto res = e.step(act, obs);
        if (res.terminated || res.truncated) e.reset(seed++, obs);
      }
      rates.push_back(steps /
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(rates.begin(), rates.end());
    const double median = rates[rates.size() / 2];
    std::printf(
        "%-12s   median %8.0f env steps/s  (%8.0f physics steps/s, frame skip %d)  min %.0f  max "
        "%.0f\n",
        spec.name.c_str(), median, median * spec.frame_skip, spec.frame_skip, rates.front(),
        rates.back());
  }
  return kOk;
}

// AntMaze data as `dataset default` makes it, timed: transitions per second of collection and
// relabelling, and what 1,000,000 transitions take at that rate.
struct AntMazeDataBenchArgs {
  std::vector<std::string> tasks = {"antmaze-umaze-v2", "antmaze-medium-play-v2",
                                    "antmaze-large-play-v2"};
  std::int64_t transitions = 50'000;
  int repeats = 3, threads = 2;
  std::string policies;
};

int run_antmaze_data_bench(const AntMazeDataBenchArgs& a) {
  const auto goal_reacher = behaviour::load_goal_reacher(a.policies);
  const std::string source = a.policies.empty() ? "the shipped goal-reacher" : a.policies;
  std::printf("benchmark      antmaze-data\n");
  std::printf(
      "configuration  %lld transitions per repeat, %d repeats, %s (%lld weights), MuJoCo %s\n",
      static_cast<long long>(a.transitions), a.repeats, source.c_str(),
      static_cast<long long>(goal_reacher.parameter_count()), mj_versionString());
  std::printf("threads        %d rollout threads (%d hardware threads)\n", a.threads,
              hardware_threads());
  std::printf("blas           %s (not used: the goal-reacher is plain C++)\n",
              active_blas_name().c_str());
  for (const auto& task : a.tasks) {
    behaviour::AntMazeDataConfig config;
    config.task = env::task(task).name;
    config.transitions = a.transitions;
    config.threads = a.threads;
    std::vector<double> rates;
    for (int r = 0; r < a.repeats; ++r) {
      config.seed = static_cast<std::uint64_t>(r);
      const auto t0 = std::chrono::steady_clock::now();
      const auto made = behaviour::generate_antmaze_dataset(config, goal_reacher);
      rates.push_back(static_cast<double>(made.arrays.size()) /
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(rates.begin(), rates.end());
    const double median = rates[rates.size() / 2];
    std::printf("%-26s median %8.0f transitions/s  (1,000,000 in %.0f s)  min %.0f  max %.0f\n",
                config.task.c_str(), median, 1e6 / median, rates.front(), rates.back());
  }
  return kOk;
}

}  // namespace

// Clustered points like token embeddings: `clusters` Gaussian blobs in `dims` dimensions, centres
// N(0, 4^2), unit spread. Deterministic for a seed.
std::vector<float> clustered_points(int n, int dims, int clusters, std::uint64_t seed) {
  Random rng(seed);
  std::vector<float> centres(static_cast<std::size_t>(clusters) * dims),
      x(static_cast<std::size_t>(n) * dims);
  for (auto& v : centres) v = static_cast<float>(4.0 * rng.normal());
  for (int i = 0; i < n; ++i)
    for (int q = 0; q < dims; ++q)
      x[static_cast<std::size_t>(i) * dims + q] =
          centres[static_cast<std::size_t>(i % clusters) * dims + q] +
          static_cast<float>(rng.normal());
  return x;
}

struct TsneBenchArgs {
  int points = 10000, dims = 128, clusters = 10, threads = 2, repeats = 1;
  std::string method = "auto", neighbours = "auto";
  std::string write_points;
  bool json = false;
};

int run_tsne_bench(const TsneBenchArgs& a) {
  const auto x = clustered_points(a.points, a.dims, a.clusters, 0);
  if (!a.write_points.empty()) {
    data::NdArray points{{a.points, a.dims}, std::vector<double>(x.begin(), x.end()), "float32"};
    data::write_nd_arrays(a.write_points, {{"points", points}});
  }
  analysis::TsneConfig config;
  config.threads = a.threads;
  config.method = analysis::tsne_method_named(a.method);
  config.neighbours = analysis::tsne_neighbours_named(a.neighbours);
  std::vector<double> seconds, neighbour_seconds;
  analysis::TsneResult last;
  for (int r = 0; r < a.repeats; ++r) {
    last = analysis::tsne(x, a.points, a.dims, config);
    seconds.push_back(last.seconds);
    neighbour_seconds.push_back(last.neighbour_seconds);
  }
  std::sort(seconds.begin(), seconds.end());
  std::sort(neighbour_seconds.begin(), neighbour_seconds.end());
  const double med = seconds[seconds.size() / 2],
               neighbours_med = neighbour_seconds[neighbour_seconds.size() / 2];
  const char* method = analysis::to_string(last.method);
  const char* neighbours = analysis::to_string(last.neighbours);
  if (a.json) {
    std::printf(
        "{\"benchmark\": \"tsne\", \"points\": %d, \"dims\": %d, \"clusters\": %d, \"perplexity\": "
        "30, "
        "\"iterations\": 1000, \"method\": \"%s\", \"neighbours\": \"%s\", \"threads\": %d, "
        "\"blas\": \"%s\", "
        "\"seconds\": %.3f, \"seconds_min\": %.3f, \"seconds_max\": %.3f, \"neighbour_seconds\": "
        "%.3f, "
        "\"kl\": %.6f, \"kl_exact\": %s, \"repeats\": %d}\n",
        a.points, a.dims, a.clusters, method, neighbours, a.threads, active_blas_name().c_str(),
        med, seconds.front(), seconds.back(), neighbours_med, last.kl,
        last.kl_exact ? "true" : "false", a.repeats);
    return kOk;
  }
  std::printf(
      "benchmark      t-SNE (perplexity 30, exaggeration 12 for 250 of 1000 iterations, PCA "
      "init)\n");
  std::printf("method         %s gradient%s, %s neighbours\n", method,
              last.method == analysis::TsneMethod::BarnesHut ? " (theta 0.5)" : "", neighbours);
  std::printf("configuration  %d points in %d dimensions, %d Gaussian clusters, seed 0\n", a.points,
              a.dims, a.clusters);
  std::printf("threads        %d (%d hardware threads)\n", a.threads, hardware_threads());
  std::printf("blas           %s (not used by t-SNE)\n", active_blas_name().c_str());
  std::printf(
      "time           median %.2f s  min %.2f  max %.2f over %d repeats (neighbours included: "
      "median %.2f s)\n",
      med, seconds.front(), seconds.back(), a.repeats, neighbours_med);
  std::printf("kl             %.4f (KL(P || Q) of the final layout, %s)\n", last.kl,
              last.kl_exact ? "Z summed over every pair" : "Z from a fine FFT grid");
  std::printf("memory         peak rss %.0f MiB\n",
              static_cast<double>(peak_rss_bytes()) / (1 << 20));
  return kOk;
}

void add_bench_commands(CLI::App& app, int& exit_code) {
  auto* bench = app.add_subcommand("bench", "Benchmarks: medians, configuration, threads and BLAS");
  bench->require_subcommand(1);
  auto* load = bench->add_subcommand(
      "dataset-load",
      "Load a D4RL file repeatedly (by default a generated one of hopper-medium-v2's size)");
  auto args = std::make_shared<LoadBenchArgs>();
  load->add_option("--transitions", args->transitions, "Transitions of the generated file")
      ->check(whole_number(1000, 50'000'000))
      ->capture_default_str();
  load->add_option("--repeats", args->repeats, "Timed loads")
      ->check(whole_number(1, 1000))
      ->capture_default_str();
  load->add_option("--file", args->file, "Time this file instead of a generated one")
      ->check(CLI::ExistingPath);
  load->add_flag("--float64", args->float64, "Generate the file with float64 arrays");
  auto* envs = bench->add_subcommand("env", "Environment steps per second on one core");
  auto env_args = std::make_shared<std::tuple<std::vector<std::string>, int, int>>(
      std::vector<std::string>{"hopper", "walker2d", "halfcheetah"}, 20000, 5);
  envs->add_option("--env", std::get<0>(*env_args), "Environments")
      ->capture_default_str()
      ->check(known_environment());
  envs->add_option("--steps", std::get<1>(*env_args), "Steps per repeat")
      ->check(whole_number(100, 10'000'000))
      ->capture_default_str();
  envs->add_option("--repeats", std::get<2>(*env_args), "Repeats")
      ->check(whole_number(1, 1000))
      ->capture_default_str();
  envs->callback([&exit_code, env_args] {
    exit_code =
        run_env_bench(std::get<0>(*env_args), std::get<1>(*env_args), std::get<2>(*env_args));
  });

  auto* antmaze = bench->add_subcommand("antmaze-data",
                                        "AntMaze data as D4RL made it (navigator, goal-reacher, "
                                        "relabelling): transitions per second");
  auto am = std::make_shared<AntMazeDataBenchArgs>();
  antmaze->add_option("--env", am->tasks, "AntMaze tasks")
      ->capture_default_str()
      ->check(known_environment());
  antmaze->add_option("--transitions", am->transitions, "Transitions per repeat")
      ->check(whole_number(1000, 10'000'000))
      ->capture_default_str();
  antmaze->add_option("--repeats", am->repeats, "Repeats")
      ->check(whole_number(1, 100))
      ->capture_default_str();
  antmaze->add_option("--threads", am->threads, "Rollout threads")
      ->check(whole_number(1, 64))
      ->capture_default_str();
  antmaze->add_option("--policies", am->policies,
                      "The goal-reacher's policies (default: the shipped one)");
  antmaze->callback(
      [&exit_code, am] { exit_code = run_guarded([&] { run_antmaze_data_bench(*am); }); });

  auto* tsne =
      bench->add_subcommand("tsne", "Seconds and KL divergence of t-SNE on clustered points");
  auto tsne_args = std::make_shared<TsneBenchArgs>();
  tsne->add_option("--points", tsne_args->points, "Points")
      ->check(whole_number(100, 1'000'000))
      ->capture_default_str();
  tsne->add_option("--dims", tsne_args->dims, "Dimensions")
      ->check(whole_number(2, 4096))
      ->capture_default_str();
  tsne->add_option("--clusters", tsne_args->clusters, "Clusters")
      ->check(whole_number(1, 1000))
      ->capture_default_str();
  tsne->add_option("--threads", tsne_args->threads, "Threads")
      ->check(whole_number(1, 64))
      ->capture_default_str();
  tsne->add_option("--repeats", tsne_args->repeats, "Timed repeats")
      ->check(whole_number(1, 100))
      ->capture_default_str();
  tsne->add_option("--method", tsne_args->method,
                   "Repulsive forces: auto (Barnes-Hut below 5,000 points, FFT from there), exact, "
                   "barnes-hut, fft")
      ->check(CLI::IsMember({"auto", "exact", "barnes-hut", "fft"}))
      ->capture_default_str();
  tsne->add_option("--neighbours", tsne_args->neighbours,
                   "Neighbour search: auto (exact below 8,000 points), exact, approximate")
      ->check(CLI::IsMember({"auto", "exact", "approximate"}))
      ->capture_default_str();
  tsne->add_option("--write-points", tsne_args->write_points,
                   "Also write the points (HDF5 'points') for a reference run");
  tsne->add_flag("--json", tsne_args->json, "Print one JSON object");
  tsne->callback([&exit_code, tsne_args] {
    try {
      exit_code = run_tsne_bench(*tsne_args);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "dstudio: error: %s\n", e.what());
      exit_code = kFailed;
    }
  });

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

#pragma once
// Benchmarks that time two ways of the same work alternately, in one run: a listing of run folders
// from the checkpoints' headers against reading them whole, a sweep's status against one that reads
// every cell's checkpoint. Each gives its medians, the bytes each way read and their ratio, in the
// bench commands' layout.

#include <CLI/CLI.hpp>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

namespace dstudio::cli {

/// What such a benchmark is given: how many folders (runs, cells), how many timed repeats of each
/// way, and the checkpoint each folder holds ("": the shipped hopper DT).
struct TwoWaysArgs {
  int count = 100, repeats = 5;
  std::string checkpoint;
};

/// The checkpoint a benchmark copies into each folder.
std::filesystem::path bench_checkpoint(const TwoWaysArgs& a);

/// One way's median time over the repeats and the bytes it read (the last repeat's).
struct WayMeasured {
  double median_ms = 0.0;
  std::int64_t bytes = 0;
};

/// Runs `fast` then `slow`, `repeats` times, alternating, each timed and its bytes read counted.
std::pair<WayMeasured, WayMeasured> time_two_ways(int repeats, const std::function<void()>& fast,
                                                  const std::function<void()>& slow);

/// Prints the report: `configuration`, threads and BLAS, a line for each way (named by `fast_label`
/// and `slow_label`, per one of `count` `unit`s), and how many times faster and fewer bytes the
/// fast way is.
void print_two_ways(const std::string& configuration, const char* fast_label,
                    const char* slow_label, const char* unit, int count, int repeats,
                    const std::pair<WayMeasured, WayMeasured>& measured);

/// Registers `dstudio bench <name>` with --<count_option> (1 to 10000), --repeats and --checkpoint;
/// `run` measures and returns the exit code.
void add_two_ways_bench(CLI::App* bench, const char* name, const char* description,
                        const char* count_option, const char* count_help, const char* holds,
                        std::function<int(const TwoWaysArgs&)> run, int& exit_code);

}  // namespace dstudio::cli

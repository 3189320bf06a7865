// Two ways of the same work, timed alternately. See bench_two_ways.h.

#include "bench_two_ways.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <vector>

#include "commands.h"
#include "dstudio/common/read_file.h"
#include "dstudio/common/resources.h"
#include "dstudio/common/system_info.h"

namespace dstudio::cli {

std::filesystem::path bench_checkpoint(const TwoWaysArgs& a) {
  return a.checkpoint.empty() ? resource_file("checkpoints/hopper-medium-dt.pt")
                              : std::filesystem::path(a.checkpoint);
}

std::pair<WayMeasured, WayMeasured> time_two_ways(int repeats, const std::function<void()>& fast,
                                                  const std::function<void()>& slow) {
  std::vector<double> ms[2];
  WayMeasured out[2];
  for (int r = 0; r < repeats; ++r) {
    for (int way = 0; way < 2; ++way) {
      const auto bytes = bytes_read_so_far();
      const auto start = std::chrono::steady_clock::now();
      (way == 0 ? fast : slow)();
      ms[way].push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
      out[way].bytes = bytes_read_so_far() - bytes;
    }
  }
  for (int way = 0; way < 2; ++way) {
    std::sort(ms[way].begin(), ms[way].end());
    out[way].median_ms = ms[way][ms[way].size() / 2];
  }
  return {out[0], out[1]};
}

void print_two_ways(const std::string& configuration, const char* fast_label,
                    const char* slow_label, const char* unit, int count, int repeats,
                    const std::pair<WayMeasured, WayMeasured>& measured) {
  const auto& [fast, slow] = measured;
  std::printf("configuration  %s\n", configuration.c_str());
  std::printf("threads        1\n");
  std::printf("blas           %s (unused)\n", active_blas_name().c_str());
  for (const auto& [label, way] : {std::pair{fast_label, fast}, std::pair{slow_label, slow}})
    std::printf("%-15smedian %.1f ms (%.2f ms a %s), %s read\n", label, way.median_ms,
                way.median_ms / count, unit,
                byte_size_text(static_cast<std::uint64_t>(way.bytes)).c_str());
  std::printf(
      "ratio          %.1fx faster, %.0fx fewer bytes, over %d repeats, alternating\n",
      slow.median_ms / fast.median_ms,
      static_cast<double>(slow.bytes) / static_cast<double>(std::max<std::int64_t>(1, fast.bytes)),
      repeats);
}

void add_two_ways_bench(CLI::App* bench, const char* name, const char* description,
                        const char* count_option, const char* count_help, const char* holds,
                        std::function<int(const TwoWaysArgs&)> run, int& exit_code) {
  auto a = std::make_shared<TwoWaysArgs>();
  auto* cmd = bench->add_subcommand(name, description);
  cmd->add_option(count_option, a->count, count_help)
      ->check(whole_number(1, 10000))
      ->capture_default_str();
  cmd->add_option("--repeats", a->repeats, "Timed repeats of each way")
      ->check(whole_number(1, 1000))
      ->capture_default_str();
  cmd->add_option(
         "--checkpoint", a->checkpoint,
         std::string("The checkpoint each ") + holds + " holds (default: the shipped hopper DT)")
      ->check(CLI::ExistingFile);
  cmd->callback([&exit_code, a, run = std::move(run)] {
    int measured = kOk;
    exit_code = run_guarded([&] { measured = run(*a); });
    if (exit_code == kOk) exit_code = measured;
  });
}

}  // namespace dstudio::cli

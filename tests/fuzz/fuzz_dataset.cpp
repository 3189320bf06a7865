// Fuzz target: the dataset loader (data::load_dataset) on small D4RL and Minari HDF5 files. The
// bytes are written to a file and loaded with every optional array. An accepted dataset must be
// consistent: one row per transition in every array, episodes that tile the transitions in order.
//
// libhdf5 (Debian's 1.10.8, not instrumented) crashes, hangs and leaks on some malformed files by
// itself; packaging/fuzz.sh tells those crashes from the project's by their stacks
// (docs/fuzzing.md). Leak detection is off here for that reason.

#include <hdf5.h>

#include <cstddef>
#include <cstdint>

#include "dstudio/data/dataset_io.h"
#include "fuzz_support.h"

extern "C" const char* __asan_default_options() {
  return "detect_leaks=0:allocator_may_return_null=1";
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  H5dont_atexit();  // libhdf5's own exit handler would run after ASan's
  H5set_free_list_limits(0, 0, 0, 0, 0,
                         0);  // no free lists: gigabytes after a few hundred files otherwise
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dstudio;
  const auto path = fuzz::input_file(data, size, "input.hdf5");
  fuzz::run([&] {
    data::LoadOptions options;
    options.next_observations = true;
    options.infos = true;
    options.max_bytes = 64 << 20;
    const data::Dataset d = data::load_dataset(path, options);
    const auto& a = d.data;
    const auto n = static_cast<std::size_t>(d.transitions());
    fuzz::require(a.obs_dim > 0 && a.act_dim > 0, "positive dimensions");
    fuzz::require(a.observations.size() == n * static_cast<std::size_t>(a.obs_dim),
                  "observations: one row per transition");
    fuzz::require(a.actions.size() == n * static_cast<std::size_t>(a.act_dim),
                  "actions: one row per transition");
    fuzz::require(a.rewards.size() == n && a.terminals.size() == n,
                  "rewards and terminals: one per transition");
    fuzz::require(a.timeouts.size() == n || (a.timeouts.empty() && d.timeouts_synthesized),
                  "timeouts: one per transition, or none");
    fuzz::require(
        a.next_observations.empty() || a.next_observations.size() == a.observations.size(),
        "next_observations like observations");
    fuzz::require(a.qpos.size() == n * static_cast<std::size_t>(a.qpos_dim) &&
                      a.qvel.size() == n * static_cast<std::size_t>(a.qvel_dim),
                  "infos: one row per transition");
    std::int64_t next = 0;
    for (const auto& e : d.episodes) {
      fuzz::require(e.start == next && e.length > 0, "episodes tile the transitions in order");
      next += e.length;
    }
    fuzz::require(next == d.transitions(), "episodes cover every transition");
    (void)data::summarize(d);
  });
  return 0;
}

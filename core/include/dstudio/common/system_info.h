#pragma once
/// \file
/// Facts about the running machine that benchmarks and checkpoints record next to their numbers.

#include <cstdint>
#include <string>

namespace dstudio {

/// The library the `libblas.so.3` alternative resolves to (e.g.
/// ".../openblas-pthread/libblas.so.3"), or "unknown" when it cannot be determined.
std::string active_blas();

/// A short name for `active_blas()`: "openblas-pthread", "openblas-openmp", "reference", ...
std::string active_blas_name();

/// Sets the thread count of the active BLAS when it has one of its own (OpenBLAS, BLIS). Without
/// this, OpenBLAS's pthread pool spins beside LibTorch's threads and burns the machine's cores.
/// Returns false when the BLAS offers no such control.
bool set_blas_threads(int threads);

/// Keeps freed memory in the process for reuse instead of returning it to the system at once.
/// A training step allocates and frees the same few hundred megabytes every time; with glibc's
/// defaults the large blocks are unmapped and mapped again, and the page faults that follow cost
/// a third of a step. Call once at start-up (process-wide; glibc only, a no-op elsewhere).
void keep_freed_memory();

/// Lowers the calling thread's scheduling priority (nice 10 on Linux; threads it starts inherit
/// it), so that long background work (training, rollouts, t-SNE) yields the cores to a window
/// that needs them. Returns false where this is not possible.
bool lower_thread_priority();

/// Peak resident set size of this process so far, in bytes.
std::int64_t peak_rss_bytes();

/// Current resident set size of this process, in bytes (0 if unavailable).
std::int64_t current_rss_bytes();
/// Bytes this process has read through read(2) and pread(2) so far (/proc/self/io's rchar); -1
/// where the kernel does not say. What benchmarks and tests of reading less compare.
std::int64_t bytes_read_so_far();

/// Physical memory of the machine, in bytes.
std::int64_t physical_memory_bytes();

/// The number of hardware threads.
int hardware_threads();

/// "Decision Studio 0.1.0".
std::string studio_version();

/// The time now, UTC, ISO 8601 to the second ("2026-11-25T20:15:00Z"), as files record it.
std::string utc_time_now();

}  // namespace dstudio

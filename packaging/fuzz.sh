#!/usr/bin/env bash
# The fuzz targets of tests/fuzz under AddressSanitizer and UBSan (docs/fuzzing.md). Builds them
# with clang in build/fuzz (only what they need: the core library, not the GUI or LibTorch),
# replays each target's seed corpus and kept crash inputs as tests, then fuzzes each target for a
# fixed time, two at a time, in a copy of its corpus so the tree stays as it is. Prints per target
# the executions, exec/s, coverage (libFuzzer's cov and ft) and the corpus reached.
#
# Fails when a replayed input fails or a target crashes in the project's code; such an input is
# saved in tests/fuzz/crashes/<target>/ and named, and is replayed as a test from then on. Crashes
# of Debian's libhdf5 itself on malformed files are counted and reported apart (tests/fuzz/triage.py
# tells them from the project's by their stacks; docs/fuzzing.md says how).
#
# Environment: DSTUDIO_FUZZ_SECONDS (60 per target; 0: the replays only), DSTUDIO_FUZZ_PARALLEL (2
# targets at a time), DSTUDIO_FUZZ_TARGETS (all), DSTUDIO_JOBS (build jobs).
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
build=build/fuzz
seconds=${DSTUDIO_FUZZ_SECONDS:-60}
parallel=${DSTUDIO_FUZZ_PARALLEL:-2}
read -r -a targets <<<"${DSTUDIO_FUZZ_TARGETS:-pytorch_file checkpoint dataset predict config workspace}"
limits=(-rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10)
max_replays=40  # per target; a timeout's replay takes the whole timeout

# --- build ----------------------------------------------------------------------------------------
mkdir -p build
exec 9>build/fuzz.lock
flock -n 9 || { echo "fuzz: another run is using $build" >&2; exit 1; }
if [[ ! -f $build/CMakeCache.txt ]]; then
  nice cmake -S . -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" -DDSTUDIO_FUZZ=ON -DDSTUDIO_BUILD_GUI=OFF >/dev/null
fi
nice cmake --build "$build" --target fuzz_targets --parallel "${DSTUDIO_JOBS:-$(nproc)}"
echo "fuzz: configured and built in ${SECONDS} s"

export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-$(command -v llvm-symbolizer-14 || command -v llvm-symbolizer || true)}
shm=/dev/shm
[[ -d $shm && -w $shm ]] || shm=${TMPDIR:-/tmp}
tmp=$(mktemp -d "$shm/dstudio-fuzz.XXXXXX")
export DSTUDIO_FUZZ_TMP=$tmp  # the targets' input files, removed below even after crashes
trap 'rm -rf "$tmp"' EXIT
runs=$build/fuzz-runs
rm -rf "$runs"
mkdir -p "$runs"
failed=0

# --- regressions: seeds and kept crash inputs, each a CTest test ----------------------------------
echo "fuzz: replaying the seed corpora and the kept crash inputs"
if (cd "$build" && nice ctest -R '^fuzz_' --parallel "$parallel" --output-on-failure >"fuzz-runs/regressions.log" 2>&1); then
  grep -E "tests passed" "$runs/regressions.log" | sed 's/^/fuzz: /'
else
  failed=1
  echo "fuzz: a replayed input fails ($runs/regressions.log):"
  grep -E "^\s+[0-9]+ - " "$runs/regressions.log" | sed 's/^/fuzz:   /'
fi

if ((seconds <= 0)); then  # replays only
  ((failed)) && { echo "fuzz: FAILED after ${SECONDS} s (logs in $runs)"; exit 1; }
  echo "fuzz: every replay passed (${SECONDS} s)"
  exit 0
fi

# --- fuzzing: each target for $seconds s in a copy of its corpus ----------------------------------
# libFuzzer stops at the first crash, timeout or huge allocation, keeping the input in artifacts/;
# the target is started again on its grown corpus until its time is up, and every input kept is
# replayed and judged below. (Fork mode, which goes on by itself, ran the HDF5 targets 20 to 40
# times slower here.)
fuzz_one() {
  local t=$1 dir=$runs/$1 end=$((SECONDS + seconds)) session=0
  mkdir -p "$dir/corpus" "$dir/artifacts"
  cp tests/fuzz/corpus/"$t"/* "$dir/corpus/"
  while ((end - SECONDS >= 2)); do
    session=$((session + 1))
    nice "$build/bin/fuzz_$t" "$dir/corpus" -max_total_time=$((end - SECONDS)) "${limits[@]}" -print_funcs=0 \
      -print_final_stats=1 -artifact_prefix="$dir/artifacts/" >"$dir/session-$session.log" 2>&1 || true
  done
}
echo "fuzz: ${#targets[@]} targets, ${seconds} s each, $parallel at a time"
for t in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= parallel)); do wait -n || true; done
  fuzz_one "$t" &
done
wait

# --- judging what was found -----------------------------------------------------------------------
summary=$runs/summary.txt
printf '%-13s %11s %8s %6s %6s %14s %8s %8s %9s %9s\n' target executions exec/s cov ft corpus project libhdf5 timeouts ooms >"$summary"
for t in "${targets[@]}"; do
  dir=$runs/$t
  # Executions summed over the sessions; coverage: the most any session reached (each starts from
  # the corpus the previous ones grew).
  read -r execs cov ft <<<"$(cat "$dir"/session-*.log 2>/dev/null | awk '
    /^stat::number_of_executed_units:/ { execs += $2 }
    match($0, /cov: [0-9]+ ft: [0-9]+/) { split(substr($0, RSTART, RLENGTH), f, " "); if (f[2] > cov) cov = f[2]; if (f[4] > ft) ft = f[4] }
    END { printf "%d %d %d", execs, cov, ft }')"
  if ((execs == 0)); then
    echo "fuzz: $t did not run ($dir/session-1.log):"
    tail -5 "$dir/session-1.log" | sed 's/^/fuzz:   /'
    failed=1
    continue
  fi
  files=$(find "$dir/corpus" -type f | wc -l)
  kb=$(find "$dir/corpus" -type f -printf '%s\n' | awk '{ b += $1 } END { printf "%d", b / 1024 }')
  project=0 hdf5=0 timeouts=0 ooms=0 replays=0
  # The causes already kept: a new input of one of them is not kept again.
  declare -A seen=() told=()
  for kept in tests/fuzz/crashes/"$t"/*; do
    [[ -f $kept ]] || continue
    nice "$build/bin/fuzz_$t" "${limits[@]}" "$kept" >"$dir/kept.log" 2>&1 || true
    IFS=$'\t' read -r owner kind where < <(python3 tests/fuzz/triage.py "$dir/kept.log")
    if [[ $owner == project ]]; then seen["$kind ${where:0:80}"]=1; fi
  done
  for input in "$dir"/artifacts/{crash,leak,timeout,oom}-*; do  # not slow-unit-*: slow is not a failure
    [[ -f $input ]] || continue
    name=$(basename "$input")
    case $name in timeout-*) timeouts=$((timeouts + 1)) ;; oom-*) ooms=$((ooms + 1)) ;; esac
    ((replays++ < max_replays)) || continue
    log=$dir/replay-$name.log
    nice "$build/bin/fuzz_$t" "${limits[@]}" "$input" >"$log" 2>&1 || true
    IFS=$'\t' read -r owner kind where < <(python3 tests/fuzz/triage.py "$log")
    case $owner in
      libhdf5)
        hdf5=$((hdf5 + 1))
        mkdir -p "$dir/libhdf5" && cp "$input" "$dir/libhdf5/"
        echo "fuzz: $t: libhdf5's own $kind in $where ($name, not the project's; $log)" ;;
      none)
        echo "fuzz: $t: $name did not fail when replayed alone ($log)" ;;
      *)
        project=$((project + 1))
        failed=1
        key="$kind ${where:0:80}"  # one kept input per cause: the exception's type and code, the frame
        if [[ -z ${seen[$key]:-} ]]; then
          seen[$key]=1
          mkdir -p "tests/fuzz/crashes/$t"
          cp "$input" "tests/fuzz/crashes/$t/$name"
          echo "fuzz: $t: FAILED: $kind in $where; input kept as tests/fuzz/crashes/$t/$name; report: $log"
        elif [[ -z ${told[$key]:-} ]]; then
          told[$key]=1
          echo "fuzz: $t: FAILED again: $kind in $where, a cause kept in tests/fuzz/crashes/$t/ already ($log)"
        fi ;;
    esac
  done
  unset seen told
  printf '%-13s %11s %8s %6s %6s %14s %8s %8s %9s %9s\n' "$t" "$execs" "$((execs / seconds))" "$cov" "$ft" \
    "$files/${kb} KB" "$project" "$hdf5" "$timeouts" "$ooms" >>"$summary"
done
echo
cat "$summary"
echo "(project, libhdf5: inputs that crashed in the project's code and in libhdf5 itself; corpus: files/size reached from the seeds)"
if ((failed)); then
  echo "fuzz: FAILED after ${SECONDS} s (logs in $runs)"
  exit 1
fi
echo "fuzz: no crash in the project's code (${SECONDS} s)"

#!/usr/bin/env bash
# Gives damaged variants of the sample datasets (tests/data/damaged/samples: D4RL gzip-chunked,
# D4RL contiguous, Minari) to the real command line, `dstudio dataset info`, `dataset validate` and
# `train`, and counts what each did. Every run must end in one of two ways: exit 0 with the
# sample's own arrays (the fingerprint info and validate print, the one train records in its
# checkpoint), or exit 1 with a message naming the file. A signal, a run past the time limit, a
# peak resident size over the memory bound, any other exit code, an exit 0 with other arrays (with a
# warning or not), or an exit 1 that does not name the file is a failure: the script lists them and
# exits 1.
# The mutants are those of tests/core/mutation_test.cpp (same seed, same mutations).
#
#   bash packaging/damaged-datasets.sh                 # 1,000 mutants per sample, all three commands
#   bash packaging/damaged-datasets.sh 200 info        # fewer, and only some commands
#
# Environment: B (programs, default build/release/bin), JOBS (parallel runs, default the cores),
# SEED (default 20261126), LIMIT_S (time limit of one run, default 60), LIMIT_MB (peak resident
# size, default 1024), KEEP (a folder for the mutants, each run's result and copies of the
# failures). With KEEP, a stopped run resumes: the mutants are kept and the runs already in
# KEEP/results.jsonl are not repeated. The mutants are taken in an interleaved order (the three
# samples in turn, every command on each), so a partial run covers all of them evenly;
# REPORT_ONLY=1 prints the counts of the runs in KEEP/results.jsonl without starting more.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${B:-build/release/bin}
per_sample=${1:-1000}
shift || true
commands=("$@")
[ ${#commands[@]} -eq 0 ] && commands=(info validate train)
for c in "${commands[@]}"; do
  case $c in info|validate|train) ;; *) echo "damaged-datasets: unknown command '$c' (info, validate, train)" >&2; exit 2 ;; esac
done
for p in dstudio dstudio-probe dataset_mutation_tests; do
  [ -x "$B/$p" ] || { echo "damaged-datasets: $B/$p is missing; build first (bash packaging/build.sh)" >&2; exit 2; }
done
[ -x /usr/bin/time ] || { echo "damaged-datasets: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }

work=${KEEP:-$(mktemp -d /tmp/dstudio-damaged.XXXXXX)}
mkdir -p "$work/mutants"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT

if [ "$(find -L "$work/mutants" -maxdepth 1 -name '*.hdf5' | wc -l)" -ne $((3 * per_sample)) ]; then
  echo "writing $per_sample mutants of each sample (seed ${SEED:-20261126}) to $work/mutants"
  rm -f "$work/mutants"/*.hdf5 "$work/results.jsonl"
  DSTUDIO_MUTANTS=$per_sample DSTUDIO_MUTATION_SEED=${SEED:-20261126} DSTUDIO_MUTANTS_OUT="$work/mutants" \
    "$B/dataset_mutation_tests" --gtest_brief=1 >"$work/mutation-tests.log" 2>&1 || {
    echo "damaged-datasets: the reader's mutation test failed; see $work/mutation-tests.log" >&2
    KEEP=1
  }
fi
grep -h "mutants in" "$work/mutation-tests.log" || true

REPORT_ONLY=${REPORT_ONLY:-} B="$B" WORK="$work" JOBS=${JOBS:-$(nproc)} LIMIT_S=${LIMIT_S:-60} LIMIT_MB=${LIMIT_MB:-1024} \
  python3 - "${commands[@]}" <<'EOF'
import concurrent.futures as cf, glob, json, os, re, shutil, subprocess, sys, tempfile, zipfile

B, work = os.environ["B"], os.environ["WORK"]
jobs, limit_s, limit_mb = int(os.environ["JOBS"]), float(os.environ["LIMIT_S"]), float(os.environ["LIMIT_MB"])
commands = sys.argv[1:]
samples = sorted(glob.glob("tests/data/damaged/samples/*.hdf5"))
fingerprint_re = re.compile(r"xxh3-128:[0-9a-f]{32}")

def run(command, path):
    """One run: (exit code or -signal, seconds, peak kB, stdout, stderr, fingerprint or None)."""
    out_dir = tempfile.mkdtemp(prefix="train-", dir=work) if command == "train" else None
    argv = {"info": [f"{B}/dstudio", "dataset", "info", path],
            "validate": [f"{B}/dstudio", "dataset", "validate", path],
            "train": [f"{B}/dstudio", "train", "--variant", "dt", "--dataset", path, "--steps", "1",
                      "--threads", "1", "--seed", "1", "--out", out_dir]}[command]
    stats = tempfile.NamedTemporaryFile(dir=work, delete=False).name
    try:
        p = subprocess.run(["/usr/bin/time", "-o", stats, "-f", "%e %M %x"] + argv, capture_output=True, text=True,
                           errors="replace", timeout=limit_s * 2, env=dict(os.environ, OMP_NUM_THREADS="1"))
        text = open(stats).read().split()
        # time(1) writes "Command terminated by signal N" before its line when the program died by one.
        signal = re.search(r"terminated by signal (\d+)", open(stats).read())
        seconds, peak_kb = float(text[-3]), int(text[-2])
        code = -int(signal.group(1)) if signal else p.returncode
        fingerprint = None
        if code == 0 and command in ("info", "validate"):
            m = fingerprint_re.search(p.stdout)
            fingerprint = m.group(0) if m else None
        elif code == 0 and command == "train":
            with zipfile.ZipFile(os.path.join(out_dir, "checkpoint.pt")) as z:
                m = re.search(rb'"fingerprint":\s*"(xxh3-128:[0-9a-f]{32})"', z.read("archive/data.pkl"))
                fingerprint = m.group(1).decode() if m else None
        return code, seconds, peak_kb, p.stdout, p.stderr, fingerprint
    except subprocess.TimeoutExpired:
        return "timeout", limit_s * 2, 0, "", "", None
    finally:
        os.unlink(stats)
        if out_dir: shutil.rmtree(out_dir, ignore_errors=True)

originals = {}
for s in samples:
    stem = os.path.splitext(os.path.basename(s))[0]
    code, _, _, out, err, fp = run("info", s)
    if code != 0 or not fp: sys.exit(f"damaged-datasets: the sample {s} does not load: {err.strip()}")
    originals[stem] = fp

by_sample = {}
for path in sorted(glob.glob(os.path.join(work, "mutants", "*.hdf5"))):
    stem = re.sub(r"-\d+$", "", os.path.splitext(os.path.basename(path))[0])
    by_sample.setdefault(stem, []).append(path)
tasks = []
for i in range(max(len(v) for v in by_sample.values())):
    for stem in sorted(by_sample):
        if i < len(by_sample[stem]):
            for c in commands: tasks.append((stem, c, by_sample[stem][i]))
results_path = os.path.join(work, "results.jsonl")
done_before = {}
if os.path.exists(results_path):
    for line in open(results_path):
        try: r = json.loads(line)
        except ValueError: continue  # a line cut by a stop
        done_before[(r["command"], os.path.basename(r["path"]))] = r
print(f"{len(tasks)} runs: {len(tasks) // max(1, len(commands))} mutants x {', '.join(commands)}, {jobs} at a time, "
      f"limits {limit_s:g} s and {limit_mb:g} MB" + (f"; {len(done_before)} done before" if done_before else ""), flush=True)

counts, failures, longest, peak, judged = {}, [], {}, {}, set()
def judge(task, result, named=None):
    """named: the path the run was given (a kept result may come from a folder since moved)."""
    stem, command, path = task
    code, seconds, peak_kb, out, err, fp = result
    key = (stem, command)
    longest[command] = max(longest.get(command, 0.0), seconds)
    peak[command] = max(peak.get(command, 0), peak_kb)
    # info lists warnings and notes in its report ("Warning  ...", "Note  ..."); validate prints both
    # on stderr, train its warnings. The samples have no tail: a note of one is new.
    warned = "warning:" in err or "note:" in err or re.search(r"^(Warning|Note)\s", out, re.M) is not None
    if code == "timeout" or seconds > limit_s: verdict, why = "failure", f"ran {seconds:.1f} s"
    elif isinstance(code, int) and code < 0: verdict, why = "failure", f"died by signal {-code}"
    elif peak_kb > limit_mb * 1024: verdict, why = "failure", f"peak {peak_kb / 1024:.0f} MB"
    elif code == 0 and fp == originals[stem]: verdict, why = ("same arrays, with a warning" if warned else "same arrays"), ""
    elif code == 0: verdict, why = "failure", f"exit 0 with other arrays ({fp}), " + ("warning: " + err.strip()[-200:] if warned else "and no warning")
    elif code == 1 and (named or path) in err: verdict, why = "refused, file named", ""
    elif code == 1: verdict, why = "failure", "exit 1 without naming the file: " + err.strip()[-200:]
    else: verdict, why = "failure", f"exit {code}: " + err.strip()[-200:]
    judged.add((command, path))
    counts.setdefault(key, {}).setdefault(verdict, 0)
    counts[key][verdict] += 1
    if verdict == "failure":
        failures.append(f"{command} {path}: {why}")
        shutil.copy(path, os.path.join(work, "failures-" + os.path.basename(path))) if os.environ.get("KEEP") else None

done = 0
results = open(results_path, "a")
with cf.ThreadPoolExecutor(jobs) as pool:
    futures = {}
    for s, c, p in tasks:
        r = done_before.get((c, os.path.basename(p)))
        if r: judge((s, c, p), (r["code"], r["seconds"], r["peak_kb"], r["out"], r["err"], r["fingerprint"]), r["path"])
        elif not os.environ.get("REPORT_ONLY"): futures[pool.submit(run, c, p)] = (s, c, p)
    for f in cf.as_completed(futures):
        s, c, p = futures[f]
        code, seconds, peak_kb, out, err, fp = f.result()
        # Only what judging needs: the warnings' marks and the end of the message.
        out = "\n".join(l for l in out.splitlines() if l.startswith("Warning"))
        results.write(json.dumps({"command": c, "path": p, "code": code, "seconds": seconds, "peak_kb": peak_kb, "out": out,
                                  "err": err[-2000:], "fingerprint": fp}) + "\n")
        results.flush()
        judge((s, c, p), (code, seconds, peak_kb, out, err, fp))
        done += 1
        if done % 500 == 0: print(f"  {done}/{len(futures)} runs, {len(failures)} failures", flush=True)

kinds = ["same arrays", "same arrays, with a warning", "refused, file named", "failure"]
print()
print("| sample | command | runs | " + " | ".join(kinds) + " |")
print("|---|---|---:|" + "---:|" * len(kinds))
for stem in sorted(originals):
    for c in commands:
        row = counts.get((stem, c), {})
        print(f"| {stem} | {c} | {sum(row.values()):,} | " + " | ".join(f"{row.get(k, 0):,}" for k in kinds) + " |")
total = {k: sum(v.get(k, 0) for v in counts.values()) for k in kinds}
print(f"| all | {', '.join(commands)} | {sum(total.values()):,} | " + " | ".join(f"{total[k]:,}" for k in kinds) + " |")
print()
runs_of = {}
for stem, c, p in tasks:
    if (c, p) in judged: runs_of[p] = runs_of.get(p, 0) + 1
whole = sum(1 for n in runs_of.values() if n == len(commands))
print(f"{whole:,} mutants ({', '.join(f'{sum(1 for p, n in runs_of.items() if n == len(commands) and os.path.basename(p).startswith(st))} {st}' for st in sorted(originals))}) went through {', '.join(commands)}")
for c in commands:
    print(f"{c}: longest run {longest.get(c, 0):.1f} s, largest peak resident size {peak.get(c, 0) / 1024:.0f} MB")
if failures:
    print(f"\n{len(failures)} failures:")
    for f in failures[:50]: print("  " + f)
    sys.exit(1)
print("no failure")
EOF

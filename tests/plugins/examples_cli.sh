#!/usr/bin/env bash
# The example plugins from the command line: they are listed, the recurrent mixer's variant trains,
# checkpoints, resumes and shows its mixing matrix, the analysis runs on it; without the plugin the
# checkpoint names what is missing.
#   examples_cli.sh <dstudio> <folder holding plugins/> <scratch folder>
set -euo pipefail
dstudio=$1
export DSTUDIO_PLUGIN_PATH=$2/plugins
work=$3
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAILED: $*" >&2; exit 1; }

"$dstudio" plugins --json >"$work/plugins.json"
python3 - "$work/plugins.json" <<'PY'
import json, sys
records = {r["name"]: r for r in json.load(open(sys.argv[1]))}
assert records["diagonal-ssm"]["loaded"], records
assert records["diagonal-ssm"]["variants"] == ["dssm"] and records["diagonal-ssm"]["mixers"] == ["diagonal-ssm"], records
assert records["token-distance"]["loaded"] and records["token-distance"]["analyses"] == ["token-distance"], records
PY
# The environment plugin: one more environment in the registry, stepped through it.
"$dstudio" env list --json >"$work/envs.json"
python3 - "$work/envs.json" <<'PY'
import json, sys
envs = json.load(open(sys.argv[1]))
names = [e["name"] for e in envs]
assert len(names) == 17, names  # the studio's sixteen and the plugin's
assert names[:3] == ["hopper", "walker2d", "halfcheetah"], names
assert "pen" in names and "antmaze-large-diverse-v2" in names and "kitchen-mixed-v0" in names, names
assert names[-1] == "inverted-pendulum", names
ip = envs[-1]
assert ip["origin"] == "inverted-pendulum 1.0.0" and ip["observation_dim"] == 4 and ip["action_dim"] == 1, ip
assert ip["observation_names"] == ["cart", "angle", "v_cart", "v_angle"], ip
PY
"$dstudio" plugins --json | python3 -c 'import json,sys; r={x["name"]: x for x in json.load(sys.stdin)}; assert r["inverted-pendulum"]["environments"] == ["inverted-pendulum"], r'
"$dstudio" bench env --env inverted-pendulum --steps 1000 --repeats 1 >"$work/bench-env.txt" 2>&1 \
  || fail "bench env on the plugin's environment: $(tail -3 "$work/bench-env.txt")"
grep -q "inverted-pendulum" "$work/bench-env.txt" || fail "bench env names no inverted-pendulum"

"$dstudio" variants --json >"$work/variants.json"
python3 - "$work/variants.json" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
assert list(v)[:11] == ["dt", "dc", "dc-1filter", "dc-hybrid", "direct-attention", "gdt", "udt", "udc", "dhi", "mlp-bc", "hier"], list(v)
d = v["dssm"]
assert d["mixer"] == "diagonal-ssm" and d["plugin"] == "diagonal-ssm" and d["plugin_version"] == "1.0.0", d
assert d["mixer_options"] == {"gate": 1.0, "timescale_max": 30.0}, d
PY
"$dstudio" analyze --help | grep -q "token-distance .*\[token-distance 1.0.0\]" || fail "analyze --help lists no token-distance"
"$dstudio" analyze token-distance --help | grep -q -- "--windows INT" || fail "token-distance --help has no --windows"

# Train, checkpoint, resume.
"$dstudio" dataset synth --out "$work/synth.hdf5" --transitions 4000 >/dev/null
"$dstudio" train --variant dssm --dataset "$work/synth.hdf5" --steps 6 --out "$work/run" --seed 3 \
  --config '{"hidden": 32, "layers": 2, "context_length": 5, "mixer_options": {"timescale_max": 8}}' \
  --training '{"batch_size": 8, "log_every": 2}' >"$work/train.log" 2>&1 || fail "train: $(tail -3 "$work/train.log")"
"$dstudio" train --resume "$work/run/checkpoint.pt" --steps 10 >"$work/resume.log" 2>&1 || fail "resume: $(tail -3 "$work/resume.log")"
"$dstudio" checkpoint info --json "$work/run/checkpoint.pt" >"$work/info.json"
python3 - "$work/info.json" <<'PY'
import json, sys
i = json.load(open(sys.argv[1]))
assert i["step"] == 10, i["step"]
v = i["variant"]
assert v["variant"] == "dssm" and v["mixer"] == "diagonal-ssm" and v["plugin"] == "diagonal-ssm", v
assert v["mixer_options"]["timescale_max"] == 8.0, v
PY

# Its equivalent mixing matrix through the attention analysis: causal, rows of a decaying kernel.
"$dstudio" analyze attention --checkpoint "$work/run/checkpoint.pt" --windows 4 --out "$work/attention" --formats png --json \
  >"$work/attention.json" 2>"$work/attention.err" || fail "attention: $(cat "$work/attention.err")"
python3 - "$work/attention.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
text = "diagonal recurrence: M[i][j] = (1 - lambda) lambda^(i-j) for j <= i, per channel, averaged over channels (the gate is left out)"
found = []
def walk(v):
    if isinstance(v, dict):
        if "derivation" in v: found.append(v["derivation"])
        for x in v.values(): walk(x)
    elif isinstance(v, list):
        for x in v: walk(x)
walk(s)
assert found and all(d == text for d in found), found  # captioned by the plugin's own text
PY
python3 - "$work/attention/attention_layer1.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
labels, values = rows[0][1:], [[float(x) if x not in ("", "nan") else float("nan") for x in r[1:]] for r in rows[1:]]
T = len(labels)
assert T == 15, T
for i in range(T):
    for j in range(i + 1, T):
        assert values[i][j] != values[i][j] or values[i][j] == 0.0, (i, j, values[i][j])  # nothing above the diagonal
    # The recurrence forgets: each row decays from the query back, with 0 < M <= 1 and a row sum < 1.
    row = [values[i][j] for j in range(i + 1)]
    assert all(0.0 < x <= 1.0 for x in row), row
    assert all(row[j] <= row[j + 1] + 1e-9 for j in range(i)), row
    assert sum(row) < 1.0 + 1e-6, sum(row)
PY
"$dstudio" analyze token-distance --checkpoint "$work/run/checkpoint.pt" --windows 4 --out "$work/distance" --formats png --json \
  >"$work/distance.json" 2>"$work/distance.err" || fail "token-distance: $(cat "$work/distance.err")"
python3 - "$work/distance.json" "$work/distance" <<'PY'
import json, os, sys
s = json.load(open(sys.argv[1]))
assert s["analysis"] == "token-distance" and s["windows"] == 4, s
assert [l["mixer"] for l in s["layers"]] == ["diagonal-ssm", "diagonal-ssm"], s["layers"]
for l in s["layers"]:
    assert 0.0 <= l["mean_distance_steps"] <= 4.0 and 0.0 < l["nearest_state_share"] <= 1.0, l
for f in ["summary.json", "token_distance.csv", "mass_by_distance.csv", "attention_by_distance.png", "nearest_state_share.png"]:
    assert os.path.getsize(os.path.join(sys.argv[2], f)) > 0, f
PY
"$dstudio" analyze token-distance --checkpoint "$work/run/checkpoint.pt" --windows 0 --out "$work/bad" 2>"$work/bad.err" && fail "--windows 0 accepted"
grep -q -- "--windows" "$work/bad.err" || fail "--windows 0: $(cat "$work/bad.err")"
[[ ! -e "$work/bad" ]] || fail "a refused analysis made its folder"

# Without the plugin: the checkpoint names what is missing, and the studio's own variants still work.
set +e
DSTUDIO_PLUGIN_PATH= "$dstudio" checkpoint info "$work/run/checkpoint.pt" >/dev/null 2>"$work/missing.err"
code=$?
set -e
[[ $code == 1 ]] || fail "checkpoint info without the plugin exited $code"
grep -q "plugin 'diagonal-ssm 1.0.0'" "$work/missing.err" || fail "no plugin named: $(cat "$work/missing.err")"
DSTUDIO_PLUGIN_PATH= "$dstudio" variants --json | python3 -c "import json,sys; v=json.load(sys.stdin); assert 'dssm' not in v and 'dt' in v"
echo "example plugins: listed, trained, resumed, inspected, analysed; missing plugin named"

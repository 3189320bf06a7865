#!/usr/bin/env bash
# Remakes the seed corpora in tests/fuzz/corpus/ (committed; run this only to change them).
# Usage: make_corpus.sh [FUZZ_MAKE_SEEDS]. Takes:
#   the files the project's own writers make (fuzz_make_seeds, built here in build/fuzz, which
#   packaging/fuzz.sh configures), torch.save files and predict inputs from tests/data, a small
#   checkpoint trained by `dstudio train` (build/release, when it is built) and the description
#   JSON ("meta" record) of each shipped checkpoint in resources/checkpoints.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
corpus=$top/tests/fuzz/corpus
seeds=${1:-}
dstudio=${DSTUDIO_CLI:-$top/build/release/bin/dstudio}
if [[ -z $seeds ]]; then
  cmake --build "$top/build/fuzz" --target fuzz_make_seeds >/dev/null
  seeds=$top/build/fuzz/bin/fuzz_make_seeds
fi

rm -rf "$corpus"
mkdir -p "$corpus"/{pytorch_file,checkpoint,dataset,predict,config,workspace}
ASAN_OPTIONS=detect_leaks=0 "$seeds" "$corpus"

cp "$top"/tests/data/pytorch_file/*.pt "$top"/tests/data/corl_dt/a_state_dict.pt "$corpus/pytorch_file/"
cp "$top"/tests/data/corl_dt/a_inputs.h5 "$top"/tests/data/corl_dt/a_inputs_nomask.h5 "$corpus/predict/"

# The description each shipped checkpoint holds: a pickled string after the key "meta".
python3 - "$top/resources/checkpoints" "$corpus/checkpoint" <<'PY'
import pathlib, struct, sys, zipfile
for pt in sorted(pathlib.Path(sys.argv[1]).glob("*.pt")):
    z = zipfile.ZipFile(pt)
    pkl = z.read(next(n for n in z.namelist() if n.endswith("/data.pkl")))
    at = pkl.index(b"meta") + len(b"meta")
    at = pkl.index(b"X", at)  # BINUNICODE: 'X', a 4-byte length, the UTF-8 text
    n, = struct.unpack("<I", pkl[at + 1:at + 5])
    (pathlib.Path(sys.argv[2]) / f"description-{pt.stem}.json").write_bytes(pkl[at + 5:at + 5 + n])
PY

# A small sealed checkpoint, trained for one step on a tiny synthetic dataset.
if [[ -x $dstudio ]]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  "$dstudio" dataset synth --out "$work/tiny.hdf5" --transitions 300 >/dev/null
  "$dstudio" train --variant dt --dataset "$work/tiny.hdf5" --steps 1 --threads 1 --out "$work/run" \
    --config '{"hidden": 4, "layers": 1, "context_length": 2, "max_ep_len": 20, "mlp_ratio": 1}' \
    --training '{"batch_size": 1, "warmup_steps": 1, "checkpoint_every": 0}' >/dev/null
  cp "$work/run/checkpoint.pt" "$corpus/checkpoint/tiny-dt.pt"
else
  echo "make_corpus: $dstudio is not built: no checkpoint seed" >&2
fi
du -sh "$corpus"/* "$corpus"

"""What the DAPG converters share: where hand_dapg's files are read and how the results are written.

convert-dapg-policies.py and convert-dapg-demos.py read pickles from one commit of
aravindr93/hand_dapg and write JSON documents into the source tree: one key a line and one list
item a line, so that a diff shows which part changed, each file written whole or not at all.
"""

import json
import subprocess
import sys

HAND_DAPG = "aravindr93/hand_dapg"
HAND_DAPG_COMMIT = "9a1de23df6574e1b94e1da742e3326eb1f61c013"  # master, 2019-11-18


def git_show(clone, commit, path):
    """The bytes of `path` at `commit` in the git clone `clone` (bare or not); exits if absent."""
    try:
        return subprocess.run(["git", "-C", str(clone), "show", f"{commit}:{path}"],
                              check=True, capture_output=True).stdout
    except subprocess.CalledProcessError as e:
        sys.exit(f"{clone}: cannot read {commit}:{path}: {e.stderr.decode().strip()}")


def document_text(document, list_key):
    """`document` as JSON, one key a line and the items of `document[list_key]` one a line."""
    lines = []
    for key, value in document.items():
        if key == list_key:
            inner = ",\n".join("    " + json.dumps(item) for item in value)
            lines.append(f"  {json.dumps(key)}: [\n{inner}\n  ]")
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def write_whole(target, text):
    """Writes `text` to `target` through a temporary file renamed over it: never half a file."""
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_suffix(target.suffix + ".tmp")
    temporary.write_text(text)
    temporary.replace(target)

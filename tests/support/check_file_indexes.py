#!/usr/bin/env python3
"""Every source file over 600 lines in app/, core/ and viz/ opens with an index of its sections.

The index, within the file's first 60 lines, in the habit of Dear ImGui's imgui_demo.cpp:

    // Index of this file:
    //   [SECTION] <name one>
    //   [SECTION] <name two>

and the body marks the start of each section with a line of its own, `// [SECTION] <name>`
(indented as the code around it may be). The body's markers must be the index's entries, in the
same order. Prints each problem as `<file>: <problem>` and exits 1, or says how many files it
checked and exits 0.

Usage: check_file_indexes.py SOURCE_ROOT [--skip FILE]...
(FILE relative to SOURCE_ROOT, e.g. app/studio/main_window.cpp)
"""

import argparse
import os
import sys

FOLDERS = ("app", "core", "viz")
EXTENSIONS = (".cpp", ".h")
MOST_LINES = 600  # files longer than this need an index
INDEX_WITHIN = 60  # the index's first line is within this many lines of the top
INDEX_LINE = "// Index of this file:"
ENTRY_PREFIX = "//   [SECTION] "
MARKER_PREFIX = "// [SECTION] "


def long_files(root):
    for folder in FOLDERS:
        for parent, dirs, files in os.walk(os.path.join(root, folder)):
            dirs.sort()
            for name in sorted(files):
                if not name.endswith(EXTENSIONS):
                    continue
                path = os.path.join(parent, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    lines = f.read().splitlines()
                if len(lines) > MOST_LINES:
                    yield os.path.relpath(path, root), lines


def problems_of(lines):
    """The problems of one file's index and markers."""
    start = next((i for i, line in enumerate(lines) if line == INDEX_LINE), None)
    if start is None or start >= INDEX_WITHIN:
        where = "" if start is None else f" (it is on line {start + 1})"
        return [f"no '{INDEX_LINE}' line within its first {INDEX_WITHIN} lines{where}"]
    problems = []
    entries = []
    end = start + 1
    while end < len(lines) and lines[end].startswith(ENTRY_PREFIX):
        name = lines[end][len(ENTRY_PREFIX) :].strip()
        if not name:
            problems.append(f"line {end + 1}: an index entry without a name")
        entries.append(name)
        end += 1
    if not entries:
        problems.append(f"line {start + 1}: the index lists no '{ENTRY_PREFIX.strip()} <name>'")
    for name in sorted({n for n in entries if entries.count(n) > 1}):
        problems.append(f"the index lists '{name}' more than once")
    markers = []
    for i, line in enumerate(lines):
        if start <= i < end:
            continue
        text = line.strip()
        if text.startswith(MARKER_PREFIX):
            markers.append((i + 1, text[len(MARKER_PREFIX) :].strip()))
        elif text.startswith("//") and "[SECTION]" in text:
            problems.append(f"line {i + 1}: not a marker as written: '{text}'")
    names = [name for _, name in markers]
    if names != entries:
        for name in entries:
            if name not in names:
                problems.append(f"the index lists '{name}', which no marker starts")
        for number, name in markers:
            if name not in entries:
                problems.append(f"line {number}: the marker '{name}' is not in the index")
        for name in sorted({n for n in names if names.count(n) > 1}):
            numbers = ", ".join(str(number) for number, n in markers if n == name)
            problems.append(f"lines {numbers}: the marker '{name}' starts more than one section")
        if sorted(names) == sorted(entries):
            problems.append("the markers are not in the index's order: " + ", ".join(names))
        elif not problems:
            problems.append("the markers (" + ", ".join(names) + ") are not the index's entries")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", help="the project's source folder")
    parser.add_argument(
        "--skip", action="append", default=[], metavar="FILE", help="a file not to check"
    )
    args = parser.parse_args()
    skipped = {os.path.normpath(path) for path in args.skip}
    checked = 0
    failures = []
    for path, lines in long_files(args.root):
        if os.path.normpath(path) in skipped:
            continue
        checked += 1
        failures += [f"{path}: {problem}" for problem in problems_of(lines)]
    for failure in failures:
        print(failure)
    if failures:
        return 1
    if checked == 0:
        print(f"no file over {MOST_LINES} lines under {', '.join(FOLDERS)} in {args.root}")
        return 1
    print(f"{checked} files over {MOST_LINES} lines open with an index of their section markers")
    return 0


if __name__ == "__main__":
    sys.exit(main())

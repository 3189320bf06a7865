#!/usr/bin/env python3
"""triage.py on kept sanitizer reports: each file in reports/ is named for the owner its crash
must be given (libhdf5-* or project-*), and the deciding frame must be the named one."""

import pathlib
import subprocess
import sys

here = pathlib.Path(__file__).resolve().parent
expected_where = {
    "libhdf5-stack-smash.log": "H5T__bit_get_d",
    "project-stack-smash.log": "dstudio::data::h5::open_array(dstudio::data::h5::Context const&)",
    "libhdf5-segv.log": "H5F__accum_read",
    "project-overflow.log": "dstudio::data::read_nd_arrays(std::filesystem::__cxx11::path const&)",
}
failures = []
reports = sorted((here / "reports").glob("*.log"))
if sorted(p.name for p in reports) != sorted(expected_where):
    failures.append(f"reports/ holds {[p.name for p in reports]}, expected {sorted(expected_where)}")
for report in reports:
    out = subprocess.run([sys.executable, str(here / "triage.py"), str(report)], capture_output=True, text=True, check=True).stdout
    owner, kind, where = out.rstrip("\n").split("\t")
    want_owner = report.name.split("-")[0]
    if owner != want_owner or where != expected_where.get(report.name):
        failures.append(f"{report.name}: triaged as {owner!r} at {where!r}; expected {want_owner!r} at {expected_where.get(report.name)!r}")
    if not kind:
        failures.append(f"{report.name}: no kind")
for f in failures:
    print(f)
sys.exit(1 if failures else 0)

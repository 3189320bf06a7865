#!/usr/bin/env python3
"""Whose crash is it? Reads the report of one replayed input (a fuzz target run on it alone) and
prints one line, tab-separated: owner, kind, where.

  owner  "project"  the project's code: undefined behaviour (only the project's code is instrumented
                    for UBSan), an exception other than dstudio::Error, a broken property of an
                    accepted input, a leak, or a crash, hang or huge allocation whose innermost frame
                    outside the sanitizer, libFuzzer, libc and libstdc++ is not libhdf5's; also a
                    bad access inside libhdf5 to memory the project allocated or freed;
         "libhdf5"  a crash, hang or huge allocation whose innermost such frame is in libhdf5 (or in
                    zlib below it), on memory libhdf5 allocated itself: Debian's HDF5 1.10.8 crashes
                    on malformed files by itself (docs/fuzzing.md);
         "none"     the input did not fail when replayed alone.
  kind   what the sanitizer or libFuzzer called it (heap-buffer-overflow, timeout, out-of-memory, ...)
  where  the deciding frame, for grouping crashes of one cause.

Usage: triage.py REPLAY_LOG
"""

import re
import sys

# "#3 0x7f.. in H5T_copy (/lib/.../libhdf5_serial.so.103+0x23b4e5) (BuildId: ..)", "#1 0x7f..  (/lib/..+0x..)",
# "#9 0x7f.. in dstudio::data::h5::open_array(...) /work/main/core/src/data/h5.cpp:133:22"
FRAME = re.compile(r"^\s*#\d+ 0x[0-9a-f]+\s+(?:in (?P<func>.+?)(?= /| \(/| \(BuildId|$))?\s*(?P<loc>.*)$")
RUNTIME_FUNCS = ("__sanitizer", "__asan", "__ubsan", "__lsan", "__interceptor", "__interception", "___interceptor",
                 "fuzzer::", "__cxa_", "__gxx_", "std::terminate", "__gnu_cxx::__verbose_terminate_handler",
                 "malloc", "calloc", "realloc", "free", "posix_memalign", "aligned_alloc", "operator new",
                 "operator delete", "raise", "abort", "gsignal", "__GI_", "__pthread_kill", "pthread_kill",
                 "__libc_", "mem", "str", "__mem", "__str",
                 # glibc's fortify and stack-protector checks, named by their source files when
                 # glibc's debug symbols are installed: the caller is the one who overflowed
                 "__fortify_fail", "__stack_chk_fail", "__chk_fail")
RUNTIME_MODULES = ("libc.so", "libstdc++.so", "libgcc_s.so", "libm.so", "ld-linux")
BELOW_HDF5 = ("libz.so", "libsz.so", "libaec.so")


def stacks(lines):
    """The stack traces of a report, in order, each a list of (function, location)."""
    out, current = [], []
    for line in lines:
        m = FRAME.match(line)
        if m:
            current.append((m.group("func") or "", m.group("loc")))
        elif current:
            out.append(current)
            current = []
    if current:
        out.append(current)
    return out


def is_runtime(func, loc):
    if any(m in loc for m in RUNTIME_MODULES):
        return True
    return func.startswith(RUNTIME_FUNCS) and "dstudio" not in func


def shown(frames, i):
    """Frame i by its function, or by module and offset under the nearest named caller."""
    func, loc = frames[i]
    if func:
        return func
    module = re.sub(r"\s*\(BuildId:.*", "", loc).strip("() ").rsplit("/", 1)[-1]
    caller = next((f for f, _ in frames[i + 1:] if f), "")
    return f"{module} under {caller}" if caller else module


def owner_of(stack):
    """'libhdf5' or 'project' for the innermost frame outside the runtime, and that frame."""
    frames = [(f, l) for f, l in stack if not is_runtime(f, l)]
    for i, (func, loc) in enumerate(frames):
        if any(m in loc for m in BELOW_HDF5):
            continue
        return ("libhdf5" if "libhdf5" in loc else "project"), shown(frames, i)
    return "unknown", ""


def main():
    text = open(sys.argv[1], errors="replace").read()
    lines = text.splitlines()
    kind_match = (re.search(r"^SUMMARY: (?:AddressSanitizer|LeakSanitizer|libFuzzer|UndefinedBehaviorSanitizer): ([\w-]+( signal)?)", text, re.M)
                  or re.search(r"ERROR: (?:AddressSanitizer|LeakSanitizer|libFuzzer|UndefinedBehaviorSanitizer): ([\w-]+)", text))
    kind = kind_match.group(1) if kind_match else ""
    if "runtime error:" in text:
        loc = re.search(r"^(\S+): runtime error: (.*)$", text, re.M)
        print(f"project\tundefined-behaviour\t{loc.group(1) if loc else ''}: {loc.group(2) if loc else ''}")
        return
    escaped = re.search(r"^fuzz: an exception that is not a dstudio::Error escaped: (.*)$", text, re.M)
    if escaped:
        print(f"project\texception\t{escaped.group(1)[:160]}")
        return
    broken = re.search(r"^fuzz: an accepted input broke a property: (.*)$", text, re.M)
    if broken:
        print(f"project\tproperty\t{broken.group(1)[:160]}")
        return
    if "detected memory leaks" in text:
        all_stacks = stacks(lines)
        where = owner_of(all_stacks[0])[1] if all_stacks else ""
        print(f"project\tleak\t{where}")
        return
    if not kind:
        print("none\t\t")
        return
    all_stacks = stacks(lines)
    if not all_stacks:
        print(f"unknown\t{kind}\t(no stack)")
        return
    owner, where = owner_of(all_stacks[0])
    # A bad access inside libhdf5 to memory the project allocated or freed is the project's.
    for section in ("allocated by thread", "freed by thread", "previously allocated by thread"):
        at = text.find(section)
        if at >= 0 and owner == "libhdf5":
            sub = stacks(text[at:].splitlines()[1:])
            if sub and owner_of(sub[0])[0] == "project":
                owner, where = "project", f"{where} (on memory {section.split(' by')[0]} by {owner_of(sub[0])[1]})"
    print(f"{owner}\t{kind}\t{where}")


if __name__ == "__main__":
    main()

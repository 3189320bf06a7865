#!/usr/bin/env bash
# man-page.sh PROGRAM OUT.1.gz NAME INCLUDE.h2m
# Writes PROGRAM's man page from its --help and --version with help2man, adding the sections of
# INCLUDE.h2m and, for a program with subcommands, a COMMANDS section holding each subcommand's
# --help (recursively). Compressed as Debian wants (gzip -9n: no name, no time stamp).
set -euo pipefail
prog=$1 out=$2 name=$3 include=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The subcommands a --help text lists: lines "  name   description" under "Subcommands:".
subcommands() {
  awk '/^Subcommands:/ {in_list = 1; next}
       in_list && /^[^ ]/ {in_list = 0}
       in_list && /^  [a-z][a-z0-9-]*( |$)/ {print $1}'
}

# Roff: backslashes and lines starting with a control character are taken literally.
literal() { sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"; }

walk() {
  local path=("$@") sub
  local text
  text=$("$prog" "${path[@]}" --help 2>&1) || true
  printf '.SS "%s"\n.nf\n' "$(basename "$prog") ${path[*]}"
  printf '%s\n' "$text" | literal
  printf '.fi\n'
  for sub in $(printf '%s\n' "$text" | subcommands); do walk "${path[@]}" "$sub"; done
}

cp "$include" "$tmp/include.h2m"
top=$("$prog" --help 2>&1)
if printf '%s\n' "$top" | grep -q '^Subcommands:'; then
  {
    echo '[COMMANDS]'
    echo "Each command's own options (the same text as \\fB$(basename "$prog") COMMAND \\-\\-help\\fR)."
    for sub in $(printf '%s\n' "$top" | subcommands); do walk "$sub"; done
  } >>"$tmp/include.h2m"
fi
help2man --no-info --section=1 --name="$name" --include="$tmp/include.h2m" --output="$tmp/page.1" "$prog"
mkdir -p "$(dirname "$out")"
gzip -9n -c "$tmp/page.1" >"$out.part"
mv "$out.part" "$out"

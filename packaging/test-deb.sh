#!/usr/bin/env bash
# Installs the Debian package in a throwaway root and uses it as a user would:
#   bash packaging/test-deb.sh [PACKAGE.deb]      (default: the one build-deb.sh wrote)
# The throwaway root is an overlay of this machine's / in a private mount namespace: dpkg and apt
# see the machine's packages, and nothing they write reaches it. The source tree (with its build
# folder) is hidden inside, so the installed files alone must do. Checks, in order:
#   dpkg -i, then apt-get -f install has nothing missing to resolve;
#   the desktop entry, icons, MIME type and AppStream metadata are valid and registered;
#   `dstudio dataset default` and `dstudio analyze attention` on a shipped checkpoint;
#   decision-studio started from the desktop entry's Exec line under Xvfb, opening a file;
#   man pages; dpkg -r leaves none of the package's files, dpkg -P none of its folders.
# Needs root and mount namespaces; without them it says so and describes the manual check.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
here="$top/packaging"

if [[ ${1:-} == --inside ]]; then
  # In the throwaway root (chroot): the checks themselves.
  deb=$2
  pkg=decision-studio
  step() { echo "test-deb: $*"; }
  fail() { echo "test-deb: FAILED: $*" >&2; exit 1; }
  export DEBIAN_FRONTEND=noninteractive HOME=/tmp/user XDG_CACHE_HOME=/tmp/user/.cache XDG_CONFIG_HOME=/tmp/user/.config
  export XDG_DATA_HOME=/tmp/user/.local/share
  mkdir -p "$HOME"
  [[ ! -e $DSTUDIO_SOURCE/CMakeLists.txt ]] || fail "the source tree is visible at $DSTUDIO_SOURCE"

  step "dpkg -i $(basename "$deb")"
  dpkg -i "$deb" >/tmp/dpkg-i.log 2>&1 || true
  step "apt-get -f install"
  apt-get -f install -y --no-download >/tmp/apt.log 2>&1 || { cat /tmp/dpkg-i.log /tmp/apt.log; fail "apt-get -f install"; }
  grep -E '^[0-9]+ upgraded, [0-9]+ newly installed' /tmp/apt.log | sed 's/^/test-deb:   /'
  grep -qE '^0 upgraded, 0 newly installed, 0 to remove' /tmp/apt.log || { cat /tmp/apt.log; fail "apt-get had something to resolve"; }
  [[ $(dpkg-query -W -f='${Status}' $pkg) == "install ok installed" ]] || { cat /tmp/dpkg-i.log; fail "$pkg is not installed"; }
  dpkg -L $pkg >/tmp/files.txt

  for prog in dstudio decision-studio decision-viewer; do
    [[ $(command -v $prog) == /usr/bin/$prog ]] || fail "$prog is not /usr/bin/$prog"
    ldd /usr/bin/$prog | grep -q 'not found' && fail "$prog misses a library: $(ldd /usr/bin/$prog | grep 'not found')"
    man -w $prog >/dev/null 2>&1 || [[ -f /usr/share/man/man1/$prog.1.gz ]] || fail "no man page for $prog"
  done
  for reader in dstudio-probe dstudio-plugin-reader; do
    [[ -x $(echo /usr/lib/*/decision-studio/$reader) ]] || fail "the dataset reader $reader is not installed"
  done
  for elf in /usr/bin/dstudio /usr/bin/decision-studio /usr/bin/decision-viewer /usr/lib/*/decision-studio/*.so /usr/lib/*/decision-studio/dstudio-probe /usr/lib/*/decision-studio/dstudio-plugin-reader; do
    ! grep -qF "$DSTUDIO_SOURCE" "$elf" || fail "$elf names the source tree $DSTUDIO_SOURCE"
  done
  step "programs in /usr/bin, their libraries found, no source path in them, man pages there"

  desktop=/usr/share/applications/org.decisionstudio.DecisionStudio.desktop
  desktop-file-validate "$desktop" || fail "desktop-file-validate $desktop"
  appstreamcli validate --no-net --explain /usr/share/metainfo/org.decisionstudio.DecisionStudio.metainfo.xml >/tmp/as.log 2>&1 ||
    { cat /tmp/as.log; fail "appstreamcli validate"; }
  for size in 16 32 48 64 128 256; do
    [[ -s /usr/share/icons/hicolor/${size}x${size}/apps/decision-studio.png ]] || fail "no ${size}px icon"
  done
  [[ -s /usr/share/icons/hicolor/scalable/apps/decision-studio.svg ]] || fail "no scalable icon"
  # shared-mime-info's trigger compiles the MIME type into the database.
  [[ -f /usr/share/mime/application/x-decision-studio-workspace.xml ]] || fail "the workspace MIME type is not registered"
  grep -q 'x-decision-studio-workspace' /usr/share/mime/globs2 || fail "*.dstudio is not in the MIME globs"
  step "desktop entry, AppStream metadata, icons and the workspace MIME type valid and registered"
  guide=/usr/share/decision-studio/guide
  [[ -s $guide/user-guide.md ]] || fail "no user guide in $guide"
  for picture in $(grep -o '](images/[^)]*)' $guide/user-guide.md | sed 's/^](//; s/)$//'); do
    [[ -s $guide/$picture ]] || fail "the user guide's $picture is not installed"
  done
  step "the user guide and its pictures in $guide"

  step "dstudio dataset default"
  dataset=$(dstudio dataset default) || fail "dstudio dataset default"
  [[ -s $dataset ]] || fail "dstudio dataset default printed '$dataset', which is not a file"
  step "  $dataset"
  checkpoint=/usr/share/decision-studio/checkpoints/hopper-medium-dt.pt
  step "dstudio analyze attention --checkpoint $checkpoint"
  dstudio analyze attention --checkpoint "$checkpoint" --out /tmp/attention --formats png >/tmp/analyze.log 2>&1 ||
    { cat /tmp/analyze.log; fail "dstudio analyze attention"; }
  [[ -s /tmp/attention/summary.json && -s /tmp/attention/attention_rollout.png ]] || fail "analyze attention wrote no summary or figure"
  step "  $(tail -1 /tmp/analyze.log)"

  # The desktop entry's Exec line, its %F given the dataset (as a double-click would), and a
  # screenshot asked for so the window closes itself once drawn.
  exec_line=$(sed -n 's/^Exec=//p' "$desktop")
  cmd=${exec_line//%F/$dataset}
  step "under Xvfb: $cmd --screenshot /tmp/studio.png"
  # shellcheck disable=SC2086
  QT_QPA_PLATFORM=xcb timeout 600 xvfb-run -a -s "-screen 0 1600x1000x24" $cmd --screenshot /tmp/studio.png >/tmp/studio.log 2>&1 ||
    { cat /tmp/studio.log; fail "decision-studio from its desktop entry"; }
  [[ -s /tmp/studio.png ]] || fail "the window wrote no screenshot"
  cp /tmp/studio.png "$DSTUDIO_OUT/installed-studio.png"
  step "  the window opened the dataset and drew itself ($(du -k /tmp/studio.png | cut -f1) KiB screenshot)"

  step "dpkg -r $pkg"
  dpkg -r $pkg >/tmp/dpkg-r.log 2>&1 || { cat /tmp/dpkg-r.log; fail "dpkg -r"; }
  left=0
  while read -r f; do
    [[ -f $f || -L $f ]] && { echo "test-deb:   left behind: $f" >&2; left=$((left + 1)); }
  done </tmp/files.txt
  ((left == 0)) || fail "$left files of the package remain after dpkg -r"
  dpkg -P $pkg >/dev/null 2>&1 || true
  for d in /usr/share/decision-studio /usr/lib/*/decision-studio /usr/share/doc/decision-studio /usr/include/dstudio; do
    [[ ! -e $d ]] || fail "$d remains after dpkg -P"
  done
  grep -q 'x-decision-studio-workspace' /usr/share/mime/globs2 && fail "the MIME type remains registered"
  step "removed cleanly: no file of the package left, the MIME type unregistered"
  exit 0
fi

deb=${1:-}
if [[ -z $deb ]]; then
  debs=("$top"/build/release/package/decision-studio_*.deb)
  deb=${debs[0]}
fi
[[ -f $deb ]] || { echo "test-deb: no package at '$deb' (bash packaging/build-deb.sh makes it)" >&2; exit 1; }
deb=$(readlink -f "$deb")
if [[ $(id -u) -ne 0 ]] || ! unshare -m true 2>/dev/null; then
  echo "test-deb: skipped: a throwaway root needs root and mount namespaces (unshare -m)." >&2
  echo "test-deb: the manual check: docs/user-guide.md, 'Checking a package by hand'." >&2
  exit 0
fi

work=$(mktemp -d /tmp/dstudio-deb.XXXXXX)
out="$top/build/release/package"
trap 'rm -rf "$work"' EXIT
# A private mount namespace: the tmpfs, the overlay and the binds vanish with it.
unshare -m --propagation private bash -euo pipefail -c '
  work=$1 deb=$2 script=$3 source=$4 out=$5
  mount -t tmpfs -o size=8g tmpfs "$work"
  mkdir -p "$work"/{upper,scratch,root}
  mount -t overlay overlay -o lowerdir=/,upperdir="$work/upper",workdir="$work/scratch" "$work/root"
  root=$work/root
  mount --rbind /dev "$root/dev"
  mount -t proc proc "$root/proc"
  mount --rbind /sys "$root/sys"
  # The sources and the build folder hidden; the package and this script copied in.
  mount -t tmpfs tmpfs "$root$source"
  mkdir -p "$root/tmp/deb" "$root/tmp/out"
  cp "$deb" "$script" "$root/tmp/deb/"
  mount --bind "$out" "$root/tmp/out"
  DSTUDIO_SOURCE=$source DSTUDIO_OUT=/tmp/out chroot "$root" /bin/bash /tmp/deb/$(basename "$script") --inside /tmp/deb/$(basename "$deb")
' _ "$work" "$deb" "$here/test-deb.sh" "$top" "$out"
echo "test-deb: passed; the installed window's screenshot: $out/installed-studio.png"

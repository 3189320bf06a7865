#!/usr/bin/env bash
# Installs whichever Debian packages in packaging/debian-packages.txt are missing, and makes sure
# an optimised BLAS is the active libblas (LibTorch is about 5x slower on the reference BLAS).
# Idempotent: when everything is present it only reads dpkg's database and returns.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

mapfile -t wanted < <(grep -vE '^\s*(#|$)' "$here/debian-packages.txt" | awk '{print $1}')
missing=()
for pkg in "${wanted[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ $status == "install ok installed" ]] || missing+=("$pkg")
done

if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null; then as_root=(sudo); else
      echo "setup: ${#missing[@]} packages are missing (${missing[*]}); run as root to install them." >&2
      exit 1
    fi
  else
    as_root=()
  fi
  echo "setup: installing ${#missing[@]} missing packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${as_root[@]}" apt-get update -qq
  "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# OpenBLAS registers itself with a higher priority than the reference BLAS; say so if a manual
# choice has overridden that.
blas=$(readlink -f /etc/alternatives/libblas.so.3-x86_64-linux-gnu 2>/dev/null || true)
case "$blas" in
  *openblas*|*blis*|*mkl*) ;;
  *) echo "setup: warning: the active BLAS is '${blas:-none}', not an optimised one;" \
          "LibTorch will be slow (update-alternatives --config libblas.so.3-x86_64-linux-gnu)." >&2 ;;
esac

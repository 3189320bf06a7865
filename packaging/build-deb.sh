#!/usr/bin/env bash
# Builds the Debian package from the Release tree and checks it with lintian:
#   bash packaging/build-deb.sh
# writes build/release/package/decision-studio_<version>-<release>_<arch>.deb, prints its size and
# lintian's report, and fails when lintian finds an error. packaging/test-deb.sh installs it.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$top/packaging/setup.sh"
bash "$top/packaging/build.sh"
cd "$top/build/release"
rm -rf package/_CPack_Packages package/*.deb
echo "build-deb: packing (strip, xz) ..."
cpack --config CPackConfig.cmake -G DEB >cpack.log 2>&1 || { cat cpack.log >&2; exit 1; }
debs=(package/decision-studio_*.deb)
deb=${debs[0]}
[[ -f $deb ]] || { echo "build-deb: cpack wrote no package (cpack.log)" >&2; exit 1; }
installed_kb=$(dpkg-deb -f "$deb" Installed-Size)
echo "build-deb: $PWD/$deb"
echo "build-deb: $(du -k "$deb" | cut -f1) KiB to download, ${installed_kb} KiB installed," \
     "$(dpkg-deb -c "$deb" | grep -vc '^d') files"
echo "build-deb: Depends: $(dpkg-deb -f "$deb" Depends)"
# lintian refuses nothing as root but says so; its report is what matters.
report=$(lintian --tag-display-limit 0 --display-info "$deb" 2>&1 | grep -v 'running with root privileges' || true)
[[ -n $report ]] && printf '%s\n' "$report"
errors=$(printf '%s\n' "$report" | grep -c '^E: ' || true)
warnings=$(printf '%s\n' "$report" | grep -c '^W: ' || true)
echo "build-deb: lintian: $errors errors, $warnings warnings"
((errors == 0))

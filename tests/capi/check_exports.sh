#!/bin/sh
# libbulkscore.so exports the C ABI's bs_* functions and nothing else, and
# its SONAME carries the ABI version. Usage: check_exports.sh LIB ABI_VERSION
set -eu
lib=$1
abi=$2
others=$(nm -D --defined-only "$lib" | awk 'NF >= 3 { print $3 }' | grep -v '^bs_' || true)
if [ -n "$others" ]; then
  echo "check_exports: $lib exports symbols beyond the C ABI:"
  echo "$others" | head -20
  exit 1
fi
count=$(nm -D --defined-only "$lib" | grep -c ' bs_' || true)
[ "$count" -ge 30 ] || { echo "check_exports: only $count bs_ symbols"; exit 1; }
soname=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = "libbulkscore.so.$abi" ] || { echo "check_exports: SONAME $soname, expected libbulkscore.so.$abi"; exit 1; }
echo "check_exports: $count bs_* symbols, nothing else; SONAME $soname"

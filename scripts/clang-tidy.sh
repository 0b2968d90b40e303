#!/usr/bin/env bash
# clang-tidy (the checks in .clang-tidy) over bulkscore's own sources:
# host/, plugins/, bench/, and kernels/*.cpp where the build dir is a CUDA
# build (a CPU-only build has no kernels/ sources; .cu files are never
# checked). tests/ is not checked. Exits non-zero on any finding.
#
#   scripts/clang-tidy.sh BUILD_DIR [FILE_REGEX...]
#
# BUILD_DIR: a build dir with compile_commands.json; when it has none, it is
# configured here (the CPU-only Release configuration scripts/test.sh builds;
# nothing is compiled). FILE_REGEX: check only the sources whose path
# matches (as run-clang-tidy-14 takes them), e.g. 'host/io/'.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
. scripts/env.sh

BUILD="${1:?usage: scripts/clang-tidy.sh BUILD_DIR [FILE_REGEX...]}"
shift
CLANG_TIDY="${CLANG_TIDY:-clang-tidy-14}"
RUN_CLANG_TIDY="${RUN_CLANG_TIDY:-run-clang-tidy-14}"

if [ ! -f "$BUILD/compile_commands.json" ]; then
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DBULKSCORE_CUDA=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
fi

if [ $# -eq 0 ]; then
  set -- "^$ROOT/(host|plugins|bench|kernels)/.*\\.cpp\$"
fi

start=$(date +%s)
# run-clang-tidy-14 prints each file's command line and colours everything;
# keep only the diagnostics, and its exit status (PIPESTATUS).
set +e
"$RUN_CLANG_TIDY" -clang-tidy-binary "$(command -v "$CLANG_TIDY")" -p "$BUILD" -j "$JOBS" -quiet \
  -header-filter="^$ROOT/(host|plugins|bench|kernels)/.*\\.hpp\$" "$@" 2>&1 |
  sed -u -e 's/\x1b\[[0-9;]*m//g' |
  grep -v -E '^[^ ]*clang-tidy[^ ]* --use-color |^[0-9]+ (warning|error)s? generated\.$|^Suppressed [0-9]+ warnings|^Use -header-filter='
status=${PIPESTATUS[0]}
set -e
elapsed=$(($(date +%s) - start))
if [ "$status" -ne 0 ]; then
  echo "clang-tidy: findings (above), ${elapsed} s; fix them or see .clang-tidy" >&2
  exit 1
fi
echo "clang-tidy: clean (${elapsed} s, $JOBS jobs)"

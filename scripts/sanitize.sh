#!/usr/bin/env bash
# Builds a sanitizer tree and runs its tests through ctest.
#
#   scripts/sanitize.sh asan [ctest args...]   ASan+UBSan (GCC, -O1) in build-asan/:
#       the tests labelled unit, integration, reliability or adversarial
#       (the hostile-client tier, tests/adversarial/), except those
#       labelled heavy (model exports) or conformance. scripts/test.sh runs this.
#   scripts/sanitize.sh tsan [ctest args...]   TSan (GCC, -O1) in build-tsan/:
#       the tests labelled concurrency (thread pool, kernels on a pool, the
#       engine placer on a pool, sessions, the op registry).
#
# Only the selected tests and what they depend on are built (no benchmarks).
# GED_ASAN_DIR / GED_TSAN_DIR choose other build directories. Suppressions
# for Debian's uninstrumented libraries are in scripts/sanitizers/; ctest
# passes them to every test (cmake/ged.cmake, ged_sanitizer_env). Results and
# durations: docs/reliability.md.
set -euo pipefail
cd "$(dirname "$0")/.."

kind=${1:-}
shift || true
case "$kind" in
  asan)
    dir=${GED_ASAN_DIR:-build-asan}
    cmake_args=(-DGED_SANITIZE=ON)
    select=(-L 'unit|integration|reliability|adversarial' -LE 'heavy|conformance|asan_excluded')
    title="ASan+UBSan"
    ;;
  tsan)
    dir=${GED_TSAN_DIR:-build-tsan}
    cmake_args=(-DGED_TSAN=ON)
    select=(-L 'concurrency')
    title="TSan"
    ;;
  *)
    echo "usage: scripts/sanitize.sh asan|tsan [ctest args...]" >&2
    exit 1
    ;;
esac

# Debug keeps assertions; the sanitizer options in CMakeLists.txt add -O1 -g1.
if [ ! -f "$dir/build.ninja" ]; then
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DGED_BUILD_BENCH=OFF "${cmake_args[@]}"
else
  cmake -S . -B "$dir" > /dev/null
fi

# The selected tests' executables are targets of the same name (ged_test and
# tests/reliability keep it so); their add_dependencies bring plugins and
# gectl along. Fixtures (model exports, test data) are not targets.
known=$(ninja -C "$dir" -t targets all | sed -n 's/^\([A-Za-z0-9_.-]*\): phony$/\1/p' | sort -u)
selected=$(ctest --test-dir "$dir" -N "${select[@]}" 2>/dev/null | sed -n 's/^ *Test *#[0-9]*: //p' | sort -u)
targets=$(comm -12 <(echo "$known") <(echo "$selected"))
if [ -z "$targets" ]; then
  echo "sanitize.sh: no tests selected in $dir" >&2
  exit 1
fi
echo "sanitize.sh: building $(echo "$targets" | wc -l) test targets in $dir ($title)"
# shellcheck disable=SC2086
cmake --build "$dir" --target $targets -- -j"$(nproc)"

echo "sanitize.sh: running the $title tests in $dir"
ctest --test-dir "$dir" --output-on-failure -j"$(nproc)" "${select[@]}" "$@"

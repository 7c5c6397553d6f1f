#!/usr/bin/env bash
# Runs one libFuzzer target for a given time.
#
#   scripts/fuzz.sh TARGET SECONDS [libFuzzer flags...]
#   TARGET: npy | text_format | graphdef | onnx_import   (fuzz/targets.cmake)
#
# Builds build-fuzz/ (or $GED_FUZZ_DIR) with clang, -DGED_FUZZ=ON: every ged
# library with coverage, ASan and UBSan. The fuzzer starts from the seeds in
# fuzz/corpus/TARGET/ and the past findings in fuzz/regressions/TARGET/, and
# keeps what it learns in build-fuzz/corpus/TARGET/. A crash, leak, timeout
# or violated property is written to build-fuzz/artifacts/TARGET/; to keep
# it as a regression test, copy the file into fuzz/regressions/TARGET/ (the
# ctest test fuzz_regression_TARGET replays it) and fix the cause.
# docs/reliability.md has the results of past runs.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 2 ]; then
  echo "usage: scripts/fuzz.sh TARGET SECONDS [libFuzzer flags...]" >&2
  echo "targets: npy text_format graphdef onnx_import" >&2
  exit 1
fi
target=$1
seconds=$2
shift 2
if [ ! -f "fuzz/${target}_fuzzer.cc" ]; then
  echo "fuzz.sh: unknown target '$target' (no fuzz/${target}_fuzzer.cc)" >&2
  exit 1
fi

dir=${GED_FUZZ_DIR:-build-fuzz}
if [ ! -f "$dir/build.ninja" ]; then
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DGED_FUZZ=ON -DGED_BUILD_TESTS=OFF -DGED_BUILD_BENCH=OFF
fi
cmake --build "$dir" --target "${target}_fuzzer" -- -j"$(nproc)"

# Absolute paths: a harness may change its working directory (service does).
case "$dir" in /*) abs_dir=$dir ;; *) abs_dir=$PWD/$dir ;; esac
corpus="$abs_dir/corpus/$target"
artifacts="$abs_dir/artifacts/$target"
mkdir -p "$corpus" "$artifacts"
dict=()
if [ -f "fuzz/dicts/$target.dict" ]; then dict=(-dict="fuzz/dicts/$target.dict"); fi

supp=$PWD/scripts/sanitizers
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:check_initialization_order=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$supp/lsan.supp:print_suppressions=0:use_tls=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:suppressions=$supp/ubsan.supp}

echo "fuzz.sh: $target for $seconds s (corpus $corpus, findings in $artifacts/)"
status=0
"$dir/bin/${target}_fuzzer" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=4096 \
  -print_final_stats=1 -artifact_prefix="$artifacts/" "${dict[@]}" "$@" \
  "$corpus" "$PWD/fuzz/corpus/$target" "$PWD/fuzz/regressions/$target" || status=$?
if [ "$status" -ne 0 ]; then
  echo "fuzz.sh: $target found a problem (exit $status); inputs in $artifacts/:" >&2
  ls -l "$artifacts" >&2
  exit "$status"
fi
echo "fuzz.sh: $target ran $seconds s without a finding"

#!/usr/bin/env bash
# Sets everything up on a fresh machine and runs every test through ctest:
# first the Release tree (build/, every test), then the ASan+UBSan tree
# (build-asan/, scripts/sanitize.sh asan: unit, integration and reliability
# tests, not conformance or model exports). Both run even when the first
# fails; the closing lines give each tree's ctest verdict, and the exit code
# is non-zero when either failed. docs/reliability.md has the durations.
set -euo pipefail
cd "$(dirname "$0")/.."
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
start=$SECONDS

./scripts/setup.sh

# Static checks first (seconds): include direction (scripts/layers.txt) and
# the format of changed lines (.clang-format). A failure is reported with the
# trees' verdicts at the end; the trees still run.
checks_status=0
/usr/bin/python3 scripts/check_includes.py 2>&1 | tee "$logs/checks" || checks_status=1
./scripts/check_format.sh 2>&1 | tee -a "$logs/checks" || checks_status=1
# Tests wait on events, never on sleeps (tests/sleep_allowlist.txt).
./scripts/check_no_sleeps.sh 2>&1 | tee -a "$logs/checks" || checks_status=1
./scripts/build.sh build -DCMAKE_BUILD_TYPE=Release
/usr/bin/python3 scripts/make_test_models.py --out build/models

release_status=0
ctest --test-dir build --output-on-failure -j"$(nproc)" 2>&1 | tee "$logs/release" || release_status=$?
release_secs=$((SECONDS - start))

asan_status=0
./scripts/sanitize.sh asan 2>&1 | tee "$logs/asan" || asan_status=$?
asan_secs=$((SECONDS - start - release_secs))

verdict() {  # the ctest summary line of a log, or why there is none
  grep -E '[0-9]+% tests passed' "$1" | tail -1 || echo "no ctest summary (the build or configure failed; see above)"
}
echo
echo "== Static checks: $([ "$checks_status" -eq 0 ] && echo passed || echo "FAILED (see the check_includes / check_format / check_no_sleeps lines above)")"
echo "== Release tree (build/), $((release_secs / 60)) min $((release_secs % 60)) s: $(verdict "$logs/release")"
echo "== ASan+UBSan tree (build-asan/), $((asan_secs / 60)) min $((asan_secs % 60)) s: $(verdict "$logs/asan")"
if [ "$checks_status" -ne 0 ] || [ "$release_status" -ne 0 ] || [ "$asan_status" -ne 0 ]; then
  echo "== test.sh: FAILED"
  exit 1
fi
echo "== test.sh: all tests passed"

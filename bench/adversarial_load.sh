#!/usr/bin/env bash
# The tenant-isolation issue's load figure (docs/reliability.md, "Load with
# adversaries"): a daemon with two tenants, `regular` and `mallory`;
#   run A: REGULAR clients of `regular` alone (ged_load lives, outputs checked);
#   run B: the same clients plus ADVERSARIES clients of `mallory` sending the
#          attacks of tests/load/adversary.h at random (canary file, graph_key
#          hijack, quotas, bounds, bad tokens, queue floods).
# Each run gets a fresh daemon. It prints both runs' JSON, the regular
# clients' throughput ratio B/A, their unexpected errors in B (any code,
# RESOURCE_EXHAUSTED included), the attacks' surprises and leaks, and the
# daemon's RSS in B: the maximum over the first and the second half (sampled
# every second from /proc). Exit 0 when B meets the issue's figure: zero
# unexpected errors, ratio >= 0.70, no surprise or leak, second-half RSS max
# <= first-half max + 16 MiB.
#
# Usage: bench/adversarial_load.sh [SECONDS per run, default 600] [REGULAR, default 28] [ADVERSARIES, default 4]
# Needs the Release tree (build/bin/ged, build/bin/ged_load).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
regular=${2:-28}
adversaries=${3:-4}
bin=build/bin
work=$(mktemp -d)
ged_pid=""
trap '[ -n "$ged_pid" ] && kill "$ged_pid" 2>/dev/null; rm -rf "$work"' EXIT

regular_token=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
mallory_token=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
head -c 48 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/canary.txt"
sha() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }
cat > "$work/ged.yaml" <<EOF
cache_dir: $work/cache
tenants:
  - {name: regular, token_sha256: $(sha "$regular_token"), max_sessions: 1024, max_concurrent_runs: 64}
  - {name: mallory, token_sha256: $(sha "$mallory_token"), max_sessions: 64, max_concurrent_runs: 8, max_queued_calls: 8, max_memory_bytes: 268435456}
EOF

start_daemon() {
  rm -f "$work/ready.json"
  "$bin/ged" --config "$work/ged.yaml" --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 \
    --ready-file "$work/ready.json" --log-level warn > "$work/ged.log" 2>&1 &
  ged_pid=$!
  for _ in $(seq 300); do [ -s "$work/ready.json" ] && break; sleep 0.1; done
  [ -s "$work/ready.json" ] || { echo "adversarial_load: ged did not start" >&2; cat "$work/ged.log" >&2; exit 1; }
  address=$(/usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['grpc'])" "$work/ready.json")
}
stop_daemon() {
  kill -TERM "$ged_pid"
  wait "$ged_pid" || true
  ged_pid=""
}

echo "adversarial_load: run A, $regular regular clients, ${seconds} s" >&2
start_daemon
"$bin/ged_load" --address "$address" --token "$regular_token" --clients "$regular" --duration "$seconds" \
  --graph-key load-mlp --progress 60 > "$work/a.json" || true
stop_daemon

echo "adversarial_load: run B, $regular regular + $adversaries adversaries, ${seconds} s" >&2
start_daemon
: > "$work/rss.txt"
(
  t0=$SECONDS
  while kill -0 "$ged_pid" 2>/dev/null; do
    rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$ged_pid/status" 2>/dev/null || true)
    [ -n "$rss" ] && echo "$((SECONDS - t0)) $rss" >> "$work/rss.txt"
    sleep 1
  done
) &
sampler=$!
b_status=0
"$bin/ged_load" --address "$address" --token "$regular_token" --clients "$regular" --duration "$seconds" \
  --graph-key load-mlp --adversaries "$adversaries" --adversary-token "$mallory_token" \
  --canary "$work/canary.txt" --progress 60 > "$work/b.json" || b_status=$?
alive=0
kill -0 "$ged_pid" 2>/dev/null && alive=1
stop_daemon
wait "$sampler" 2>/dev/null || true

echo "run A: $(cat "$work/a.json")"
echo "run B: $(cat "$work/b.json")"
/usr/bin/python3 - "$work/a.json" "$work/b.json" "$work/rss.txt" "$seconds" "$alive" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
b = json.load(open(sys.argv[2]))
seconds = float(sys.argv[4])
alive = sys.argv[5] == "1"
samples = [tuple(map(int, l.split())) for l in open(sys.argv[3]) if l.strip()]
half = seconds / 2
first = max((kb for t, kb in samples if t <= half), default=0) / 1024
second = max((kb for t, kb in samples if t > half), default=0) / 1024
runs = lambda d: d["rpcs"].get("RunGraph", {}).get("ok", 0) / d["seconds"]
ratio = runs(b) / runs(a) if runs(a) else 0.0
ok = (alive and b["unexpected_errors"] == 0 and b["wrong_outputs"] == 0 and ratio >= 0.70
      and b.get("surprises", 1) == 0 and b.get("leaks", 1) == 0 and second <= first + 16)
print(f"regular RunGraph/s: A {runs(a):.0f}, B {runs(b):.0f} (B/A {ratio:.3f}, goal >= 0.70)")
print(f"regular unexpected errors in B: {b['unexpected_errors']}, wrong outputs: {b['wrong_outputs']}")
print(f"attacks: {b.get('attacks_total', 0)}, surprises: {b.get('surprises')}, leaks: {b.get('leaks')}")
print(f"daemon RSS in B: max {first:.1f} MiB over the first half, {second:.1f} MiB over the second "
      f"(goal <= first + 16); daemon alive at the end: {alive}")
print("adversarial_load: " + ("PASSED" if ok else "FAILED"))
sys.exit(0 if ok else 1)
PY

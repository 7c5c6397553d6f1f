#!/usr/bin/env bash
# The compiled-model cache in direct mode: resnet50 (~100 MB of ONNX) cold
# against a hit, for the three ways a model gets compiled (docs/perf.md,
# "Cache direct mode"):
#   - `gectl compile -o OUT` as a whole process: cold (--no-cache), miss
#     (empty cache: import, compile, store, keep OUT as the entry's export)
#     and hit (hash the file, find the direct entry, reflink or copy the
#     export to OUT);
#   - `gectl run`'s compile phase: `gectl bench --iterations 1`'s compile_ms
#     (opening the model: import + compile, or the hit and the executor's
#     load), cold and hit;
#   - the daemon's AddGraph + CompileGraph timed from a client
#     (build/bin/daemon_compile_bench), cold (first round on an empty cache)
#     and hit (the rounds after it).
# Each gectl figure is the median of RUNS runs (`/usr/bin/time -f %e` for
# whole processes); `--timings` gives the breakdown of gectl compile.
# Usage: bench/cache_bench.sh [RUNS, default 5]
# Needs the Release tree (build/). resnet50 is exported here, for the
# benchmark only (torchvision, random seeded weights), into
# build/bench-models/ once.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
bin=build/bin
gectl=$bin/gectl
model=build/bench-models/resnet50.onnx
work=$(mktemp -d)
ged_pid=
trap '[ -n "$ged_pid" ] && kill "$ged_pid" 2>/dev/null; rm -rf "$work"' EXIT

if [ ! -s "$model" ]; then
  mkdir -p "$(dirname "$model")"
  /usr/bin/python3 - "$model" <<'PY'
import sys
import torch
import torchvision
torch.manual_seed(0)
net = torchvision.models.resnet50(weights=None).eval()
torch.onnx.export(net, torch.randn(1, 3, 224, 224), sys.argv[1], opset_version=17,
                  input_names=["input"], output_names=["output"])
PY
fi

median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
# wall NAME ARGS...: the wall seconds of one whole gectl process.
wall() {
  /usr/bin/time -f %e -o "$work/time.txt" "$gectl" "$@" > "$work/out.txt" 2>&1
  cat "$work/time.txt"
}

echo "== gectl compile -o OUT (whole process, s)"
for _ in $(seq "$runs"); do wall compile "$model" -o "$work/out.gem" --no-cache; done | median | sed 's/^/cold: /'
for _ in $(seq "$runs"); do
  rm -rf "$work/cache"
  wall compile "$model" -o "$work/out.gem" --cache-dir "$work/cache"
done | median | sed 's/^/miss: /'
for _ in $(seq "$runs"); do wall compile "$model" -o "$work/out.gem" --cache-dir "$work/cache"; done |
  median | sed 's/^/hit: /'
"$gectl" compile "$model" -o "$work/out.gem" --cache-dir "$work/cache" --timings | sed 's/^/  /'

echo "== gectl run's compile phase (gectl bench compile_ms)"
compile_ms() { "$gectl" bench "$model" --iterations 1 --warmup 0 --threads 2 "$@" | sed 's/.*"compile_ms": *\([0-9.]*\).*/\1/'; }
for _ in $(seq "$runs"); do compile_ms --no-cache; done | median | sed 's/^/cold ms: /'
for _ in $(seq "$runs"); do compile_ms --cache-dir "$work/cache"; done | median | sed 's/^/hit ms: /'

echo "== daemon AddGraph + CompileGraph (from a client)"
"$bin/ged" --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 --ready-file "$work/ready.json" \
  --cache-dir "$work/daemon-cache" --log-level warn > "$work/ged.log" 2>&1 &
ged_pid=$!
for _ in $(seq 300); do [ -s "$work/ready.json" ] && break; sleep 0.1; done
address=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["grpc"])' "$work/ready.json")
"$bin/daemon_compile_bench" "$address" "$model" $((runs + 1))
uptime

#!/usr/bin/env bash
# The compiled-model cache: a cold compile of resnet50 against a cache hit
# (the Cache issue's benchmark; results in docs/perf.md).
#   - cold: `gectl compile --no-cache` (import, compile, write the .gem);
#   - miss: the first compile with the cache (cold + key + store);
#   - hit:  the same command again (import, key, read + check + load, write).
# Each figure is the median of RUNS runs; `--timings` gives the breakdown
# (hashing = the cache key, reading, checking the checksums, loading the
# .gem) and /usr/bin/time -v the whole command (wall clock, peak RSS).
# Usage: bench/cache_bench.sh [RUNS, default 5]
# Needs the Release tree (build/). resnet50 is exported here, for the
# benchmark only (torchvision, random seeded weights; ~100 MB), into
# build/bench-models/ once.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
gectl=build/bin/gectl
model=build/bench-models/resnet50.onnx
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

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

# run NAME ARGS...: one timed gectl compile; appends "NAME key=value..." to $work/results.
run() {
  local name=$1
  shift
  /usr/bin/time -v "$gectl" compile "$model" -o "$work/out.gem" --timings "$@" > "$work/out.txt" 2> "$work/time.txt"
  local wall rss
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, a, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + a[i]; print s}' "$work/time.txt")
  rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' "$work/time.txt")
  local t
  t=$(grep '^timings:' "$work/out.txt" | sed -e 's/timings: //' -e 's/ s//g' -e 's/, /;/g')
  echo "$name;wall $wall;rss_mib $rss;$t" >> "$work/results"
}

for _ in $(seq "$runs"); do run cold --no-cache; done
for _ in $(seq "$runs"); do
  rm -rf "$work/cache"
  run miss --cache-dir "$work/cache"
done
for _ in $(seq "$runs"); do run hit --cache-dir "$work/cache"; done

# Medians per kind and field.
/usr/bin/python3 - "$work/results" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    fields = line.strip().split(";")
    kind = fields[0]
    values = {}
    for f in fields[1:]:
        name, _, value = f.rpartition(" ")
        values[name] = float(value)
    rows.setdefault(kind, []).append(values)
keys = ["wall", "rss_mib", "import", "hash", "cache read", "verify", "load", "compile total", "hit total", "write"]
print("| run | " + " | ".join(keys) + " |")
print("|---" * (len(keys) + 1) + "|")
for kind in ("cold", "miss", "hit"):
    cells = []
    for k in keys:
        vals = [r[k] for r in rows.get(kind, []) if k in r]
        cells.append(f"{statistics.median(vals):.3f}" if vals else "-")
    print(f"| {kind} | " + " | ".join(cells) + " |")
PY
uptime

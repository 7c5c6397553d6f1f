#!/usr/bin/env bash
# Gears against the dynamic executor (issue 10; results in docs/perf.md).
# For resnet18 with a dynamic batch and the 2-layer transformer with a
# dynamic sequence length (scripts/make_test_models.py), compiles three .gem:
#   - gears:   the model's gear flags (meta.json "gear_flags"): static branches;
#   - hybrid:  the same plus --compile_hybrid_mode: other sizes run the dynamic graph;
#   - dynamic: no gears: the dynamic graph on the DynamicExecutor;
# then `gectl bench` each at every size it accepts (gears: the gears only)
# and prints one Markdown row per (model, variant, size): p50 and p90 in ms.
# One intra-op thread everywhere (the machine is shared; two threads make
# OpenMP barriers stall whenever another process takes a core).
# Usage: bench/gears_bench.sh [ITERATIONS, default 20]
# Needs the Release tree (build/) with build/models.
set -euo pipefail
cd "$(dirname "$0")/.."
iterations=${1:-20}
gectl=build/bin/gectl
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

row() {  # model variant size shape gem
  local json
  json=$("$gectl" bench "$5" --shape "$4" --iterations "$iterations" --warmup 3 --seed 1 --threads 1)
  /usr/bin/python3 -c 'import json,sys; j=json.loads(sys.argv[5]); a=sys.argv; print("| %s | %s | %s | %.2f | %.2f |" % (a[1], a[2], a[3], j["p50_ms"], j["p90_ms"]))' \
    "$1" "$2" "$3" "$4" "$json"
}

bench_model() {  # model input shape-template(with N) gear-sizes other-sizes
  local model=$1 input=$2 template=$3 gears=$4 others=$5
  local dir=build/models/$model
  local flags
  flags=$(/usr/bin/python3 -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["gear_flags"]))' \
    "$dir/meta.json")
  mapfile -t flag_list <<<"$flags"
  "$gectl" compile "$dir/model.onnx" -o "$work/$model.gears.gem" --no-cache --threads 1 "${flag_list[@]}" >/dev/null
  "$gectl" compile "$dir/model.onnx" -o "$work/$model.hybrid.gem" --no-cache --threads 1 "${flag_list[@]}" \
    --compile_hybrid_mode >/dev/null
  "$gectl" compile "$dir/model.onnx" -o "$work/$model.dynamic.gem" --no-cache --threads 1 >/dev/null
  for n in $gears; do row "$model" gears "$n" "$input=${template//N/$n}" "$work/$model.gears.gem"; done
  for n in $gears $others; do row "$model" hybrid "$n" "$input=${template//N/$n}" "$work/$model.hybrid.gem"; done
  for n in $gears $others; do row "$model" dynamic "$n" "$input=${template//N/$n}" "$work/$model.dynamic.gem"; done
}

echo "| model | variant | size | p50 ms | p90 ms |"
echo "|---|---|---|---|---|"
bench_model resnet18_dynbatch input "N,3,224,224" "1 4 8" "3"
bench_model transformer_dynseq src "2,N,64" "8 16 32" "24"

#!/usr/bin/env bash
# The daemon's latency and throughput against in-process execution (the
# Daemon issue's benchmark; results in docs/perf.md):
#   - RunGraph round trip of a tiny graph (Relu of f32[1,16]), one client;
#   - resnet18 batch 1 throughput with 1, 4 and 16 concurrent clients;
#   - the same two models in process with `gectl bench`.
# Usage: bench/daemon_bench.sh [SECONDS per daemon run, default 10]
# Needs the Release tree (build/) and the test models (build/models).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
bin=build/bin
resnet=build/models/resnet18_op17/model.onnx
work=$(mktemp -d)
trap 'kill "$ged_pid" 2>/dev/null || true; rm -rf "$work"' EXIT

/usr/bin/python3 - "$work/tiny.onnx" <<'PY'
import sys
import onnx
from onnx import TensorProto, helper
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])
graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "tiny", [x], [y])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
PY

"$bin/ged" --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 --ready-file "$work/ready.json" \
  --log-level warn > "$work/ged.log" 2>&1 &
ged_pid=$!
for _ in $(seq 100); do [ -s "$work/ready.json" ] && break; sleep 0.1; done
address=$(/usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['grpc'])" "$work/ready.json")

field() {  # field JSON_FILE PYTHON_EXPR_ON_d
  /usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"
}
row() {  # label json
  printf '| %s | %s | %.3f | %.3f | %.0f |\n' "$1" "$(field "$2" 'd["clients"]')" \
    "$(field "$2" 'd["rpcs"]["RunGraph"]["p50_ms"]')" "$(field "$2" 'd["rpcs"]["RunGraph"]["p99_ms"]')" \
    "$(field "$2" 'd["rpcs"]["RunGraph"]["ok"] / d["seconds"]')"
}

echo "| workload | clients | p50 ms | p99 ms | runs/s |"
echo "|---|---|---|---|---|"
"$bin/ged_load" --address "$address" --mode runs --graph tiny --clients 1 --duration "$seconds" \
  --progress 0 > "$work/tiny.json"
row "tiny over RunGraph" "$work/tiny.json"
for clients in 1 4 16; do
  "$bin/ged_load" --address "$address" --mode runs --model "$resnet" --clients "$clients" \
    --duration "$seconds" --progress 0 > "$work/resnet_$clients.json"
  row "resnet18 b1 over RunGraph" "$work/resnet_$clients.json"
done
kill -TERM "$ged_pid"; wait "$ged_pid" || true

inproc() {  # label model iterations
  "$bin/gectl" bench "$2" --iterations "$3" --warmup 10 > "$work/inproc.json"
  printf '| %s | 1 | %.3f | %.3f | %.0f |\n' "$1" "$(field "$work/inproc.json" 'd["p50_ms"]')" \
    "$(field "$work/inproc.json" 'd["p99_ms"]')" "$(field "$work/inproc.json" '1000.0 / d["p50_ms"]')"
}
inproc "tiny in process (gectl bench)" "$work/tiny.onnx" 20000
inproc "resnet18 b1 in process (gectl bench)" "$resnet" 100

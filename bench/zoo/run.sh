#!/usr/bin/env bash
# The zoo benchmark of issue 20: ged (`gectl bench`, default options) against
# ONNX Runtime 1.30 on every model of build/zoo, alternating, medians; rewrites
# the marked block at the top of docs/perf.md (see bench/zoo/run.py).
#
#   bench/zoo/run.sh [--threads 1,2] [--batches 1,N] [--rounds 3] [--models a,b] [--no-docs]
#
# Builds the zoo (bench/zoo/make_models.py build/zoo) when build/zoo has no
# manifest, and needs build/bin/gectl and onnxruntime-node under build/ort:
#   mkdir -p build/ort && (cd build/ort && ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node@1.30)
# Defaults (2 threads, batches 1 and 4, 3 rounds) finish within an hour on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ ! -f build/zoo/manifest.json ]; then
  /usr/bin/python3 bench/zoo/make_models.py build/zoo
fi
exec /usr/bin/python3 bench/zoo/run.py --command "bench/zoo/run.sh $*" "$@"

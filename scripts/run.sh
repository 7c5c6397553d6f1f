#!/usr/bin/env bash
# Sets everything up on a fresh machine and runs the main job: gectl on the
# bundled sample model.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh build -DCMAKE_BUILD_TYPE=Release
echo "running: build/bin/gectl run examples/models/sample_cnn.onnx"
build/bin/gectl run examples/models/sample_cnn.onnx

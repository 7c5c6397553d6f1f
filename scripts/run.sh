#!/usr/bin/env bash
# Sets everything up on a fresh machine and runs the main job: gectl on the
# bundled sample model, in process, compiled into the compiled-model cache
# the daemon uses by default ($XDG_CACHE_HOME/ged, else ~/.cache/ged); then
# starts the ged daemon on its defaults (gRPC 127.0.0.1:50051, metrics
# 127.0.0.1:9464), runs the same model through it (a cache hit: no
# compile), and prints the gectl line to try it. The daemon keeps
# running in the background; its pid and log are printed.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh build -DCMAKE_BUILD_TYPE=Release
echo "compiling the sample model into the cache: build/bin/gectl compile examples/models/sample_cnn.onnx"
build/bin/gectl compile examples/models/sample_cnn.onnx -o build/sample_cnn.gem
echo "running: build/bin/gectl run examples/models/sample_cnn.onnx"
build/bin/gectl run examples/models/sample_cnn.onnx

if build/bin/gectl health --remote 127.0.0.1:50051 --timeout 2 >/dev/null 2>&1; then
  echo "a ged daemon already serves 127.0.0.1:50051"
else
  ready=$(mktemp -u /tmp/ged-ready.XXXXXX)
  log=/tmp/ged.log
  nohup build/bin/ged --ready-file "$ready" >"$log" 2>&1 &
  pid=$!
  for _ in $(seq 1 100); do
    [ -f "$ready" ] && break
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "ged failed to start:" >&2
      cat "$log" >&2
      exit 1
    fi
    sleep 0.1
  done
  echo "ged started: pid $pid, log $log, $(cat "$ready")"
  echo "stop it with: kill $pid"
fi
echo "running: build/bin/gectl run --remote 127.0.0.1:50051 examples/models/sample_cnn.onnx"
build/bin/gectl run --remote 127.0.0.1:50051 examples/models/sample_cnn.onnx
echo
echo "try it:  build/bin/gectl run --remote 127.0.0.1:50051 examples/models/sample_cnn.onnx"
echo "         build/bin/gectl status;  curl -s 127.0.0.1:9464/metrics | grep ^ged_"
echo "         build/bin/gectl cache ls    (the compiled-model cache the daemon shares)"

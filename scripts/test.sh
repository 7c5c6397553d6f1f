#!/usr/bin/env bash
# Sets everything up on a fresh machine and runs every test through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh build -DCMAKE_BUILD_TYPE=Release
/usr/bin/python3 scripts/make_test_models.py --out build/models
cd build
ctest --output-on-failure -j"$(nproc)"

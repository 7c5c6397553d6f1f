#!/usr/bin/env bash
# Installs every package ged needs to build, test and run, from Debian's
# archive. Idempotent: packages already present are skipped quickly.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git clang clang-format libclang-rt-14-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libspdlog-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
  libonnx-dev libdnnl-dev ocl-icd-opencl-dev libcivetweb-dev civetweb nlohmann-json3-dev
  libcli11-dev libyaml-cpp-dev libssl-dev openssl libhiredis-dev redis-server libjemalloc2
  python3 python3-onnx python3-numpy python3-torch python3-torchvision
  python3-grpcio python3-protobuf
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"

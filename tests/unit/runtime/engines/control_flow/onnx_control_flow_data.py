#!/usr/bin/python3
"""Copies ONNX's backend node tests of control flow into OUT_DIR.

Usage: onnx_control_flow_data.py OUT_DIR

Generates the node tests with python3-onnx's generator (no network) and
keeps, as they are (model.onnx and test_data_set_0/*.pb), the tests whose
models use If, Loop or Scan anywhere: If, Loop and Scan themselves and the
function expansions built on Loop (Range, SequenceMap). Writes the kept
names to OUT_DIR/manifest.txt. Exits with 77 (ctest's skip code) when onnx
is not installed.
"""
import os
import runpy
import shutil
import sys
import tempfile

try:
    import numpy as np
    import onnx
except ImportError:
    sys.exit(77)

CONTROL_FLOW = {"If", "Loop", "Scan"}


def generate(data_dir):
    # onnx 1.12's generator uses aliases numpy 1.24 removed.
    for alias, value in (("float", float), ("int", int), ("bool", bool), ("object", object)):
        if not hasattr(np, alias):
            setattr(np, alias, value)
    saved = sys.argv
    sys.argv = ["onnx", "generate-data", "-o", data_dir]
    try:
        runpy.run_module("onnx.backend.test.cmd_tools", run_name="__main__")
    finally:
        sys.argv = saved


def uses_control_flow(graph):
    for node in graph.node:
        if node.op_type in CONTROL_FLOW and node.domain in ("", "ai.onnx"):
            return True
        for attr in node.attribute:
            if attr.HasField("g") and uses_control_flow(attr.g):
                return True
    return False


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    kept = []
    with tempfile.TemporaryDirectory() as data_dir:
        generate(data_dir)
        node_root = os.path.join(data_dir, "node")
        for test in sorted(os.listdir(node_root)):
            source = os.path.join(node_root, test)
            try:
                model = onnx.load(os.path.join(source, "model.onnx"))
            except Exception:
                continue
            if not uses_control_flow(model.graph):
                continue
            target = os.path.join(out_dir, test)
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(source, target)
            kept.append(test)
    with open(os.path.join(out_dir, "manifest.txt"), "w") as f:
        f.write("\n".join(kept) + "\n")


if __name__ == "__main__":
    main()

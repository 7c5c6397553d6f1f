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
import shutil
import sys
import tempfile

try:
    import onnx
except ImportError:
    sys.exit(77)

# The generator (with its numpy 1.24 workaround) is shared with the node
# tests' fixture: tests/testing/onnx_node_tests.py.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "testing"))
from onnx_node_tests import generate  # noqa: E402

CONTROL_FLOW = {"If", "Loop", "Scan"}


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

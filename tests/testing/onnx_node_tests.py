#!/usr/bin/python3
"""Turns ONNX's backend node tests into files the C++ kernel tests read.

Usage: onnx_node_tests.py OUT_DIR

Generates the backend tests with python3-onnx's generator (no network).
Copies every `node` and `simple` test as generated (model.onnx plus
test_data_set_*/{input,output}_N.pb) to OUT_DIR/backend/{node,simple} for
the whole-path conformance runner (tests/conformance). For the kernel
tests, keeps the single-node models of the default domain and writes each
test's tensors as .npy files plus OUT_DIR/manifest.txt, one block per test:

    test <name> <op type> <since_version of the op at the model's opset>
    attr <name> int <v> | float <v> | string <v> | ints <n> <v...> |
         floats <n> <v...> | tensor <npy path>
    input <npy path> [bf16] | input none
    output <npy path> [bf16] | output none
    end

numpy has no bfloat16, so bf16 tensors are stored as uint16 bits and
marked. Exits with 77 (ctest's skip code) when onnx is not installed.
"""
import glob
import os
import runpy
import shutil
import sys
import tempfile

try:
    import numpy as np
    import onnx
    from onnx import defs, numpy_helper
except ImportError:
    sys.exit(77)


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


def attr_line(a, test_dir):
    t = onnx.AttributeProto
    if a.type == t.INT:
        return f"attr {a.name} int {a.i}"
    if a.type == t.FLOAT:
        return f"attr {a.name} float {a.f!r}"
    if a.type == t.STRING:
        return f"attr {a.name} string {a.s.decode()}"
    if a.type == t.INTS:
        return f"attr {a.name} ints {len(a.ints)} " + " ".join(str(v) for v in a.ints)
    if a.type == t.FLOATS:
        return f"attr {a.name} floats {len(a.floats)} " + " ".join(repr(v) for v in a.floats)
    if a.type == t.TENSOR:
        path = save(a.t, os.path.join(test_dir, f"attr_{a.name}.npy"))
        return path and f"attr {a.name} tensor {path}"
    return None


def save(tensor_proto, path, declared=None):
    """Saves a TensorProto as .npy; returns '<path>[ bf16]' or None.

    `declared` is the element type the model declares for the value: onnx
    1.12's test data stores some bfloat16 values as uint16 protos."""
    array = numpy_helper.to_array(tensor_proto)
    if array.dtype == object:
        return None
    np.save(path, array)
    bf16 = onnx.TensorProto.BFLOAT16
    if tensor_proto.data_type == bf16 or (declared == bf16 and array.dtype == np.uint16):
        return path + " bf16"
    return path


def read_proto(path):
    proto = onnx.TensorProto()
    with open(path, "rb") as f:
        proto.ParseFromString(f.read())
    return proto


def convert(test_dir, out_dir):
    """The manifest block of one test, or None when it cannot be used."""
    model = onnx.load(os.path.join(test_dir, "model.onnx"))
    if len(model.graph.node) != 1:
        return None
    node = model.graph.node[0]
    if node.domain not in ("", "ai.onnx"):
        return None
    opset = [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")][0]
    since = defs.get_schema(node.op_type, opset).since_version
    name = os.path.basename(test_dir)
    case_dir = os.path.join(out_dir, name)
    os.makedirs(case_dir, exist_ok=True)
    block = [f"test {name} {node.op_type} {since}"]
    for a in node.attribute:
        line = attr_line(a, case_dir)
        if line is None:
            return None
        block.append(line)
    data = os.path.join(test_dir, "test_data_set_0")
    by_index = lambda p: int(p.rsplit("_", 1)[1][:-3])
    inputs = sorted(glob.glob(os.path.join(data, "input_*.pb")), key=by_index)
    outputs = sorted(glob.glob(os.path.join(data, "output_*.pb")), key=by_index)
    graph_inputs = {i.name: k for k, i in enumerate(model.graph.input)}
    graph_outputs = {o.name: k for k, o in enumerate(model.graph.output)}
    declared = {v.name: v.type.tensor_type.elem_type
                for v in list(model.graph.input) + list(model.graph.output)}
    for k, value in enumerate(node.input):
        if value == "":
            block.append("input none")
            continue
        path = save(read_proto(inputs[graph_inputs[value]]), os.path.join(case_dir, f"in{k}.npy"),
                    declared.get(value))
        if path is None:
            return None
        block.append(f"input {path}")
    for k, value in enumerate(node.output):
        if value not in graph_outputs:
            block.append("output none")
            continue
        path = save(read_proto(outputs[graph_outputs[value]]), os.path.join(case_dir, f"out{k}.npy"),
                    declared.get(value))
        if path is None:
            return None
        block.append(f"output {path}")
    block.append("end")
    return block


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory() as data_dir:
        generate(data_dir)
        lines = []
        node_root = os.path.join(data_dir, "node")
        for test in sorted(os.listdir(node_root)):
            try:
                block = convert(os.path.join(node_root, test), out_dir)
            except Exception:  # sequences, optionals and other forms the kernels' tests skip
                block = None
            if block:
                lines.extend(block)
        backend_dir = os.path.join(out_dir, "backend")
        shutil.rmtree(backend_dir, ignore_errors=True)
        for kind in ("node", "simple"):
            shutil.copytree(os.path.join(data_dir, kind), os.path.join(backend_dir, kind))
    with open(os.path.join(out_dir, "manifest.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes the Triton-layout repository of the dynamic-batching benchmark
(bench/serving/batching.sh, issue 23): one MLP of 2048-wide layers with
seeded weights, served twice with the same instance count and
max_batch_size, with and without dynamic_batching:

  OUT/mlp_batched/{config.pbtxt, 1/model.onnx}
  OUT/mlp_plain/{config.pbtxt, 1/model.onnx}

  make_mlp_repo.py OUT [--layers 4] [--width 2048] [--max-batch 16]
                       [--delay-us 2000] [--instances 1]
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def mlp(width, layers, seed):
    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    prev = "x"
    for i in range(layers):
        w = (rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32)
        b = (rng.standard_normal(width) * 0.01).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
        out = "y" if i == layers - 1 else f"h{i}"
        gemm = f"g{i}" if i < layers - 1 else out
        nodes.append(helper.make_node("Gemm", [prev, f"w{i}", f"b{i}"], [gemm]))
        if i < layers - 1:
            nodes.append(helper.make_node("Relu", [gemm], [out]))
        prev = out
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", width])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", width])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    return model


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--width", type=int, default=2048)
    ap.add_argument("--max-batch", type=int, default=16)
    ap.add_argument("--delay-us", type=int, default=2000)
    ap.add_argument("--instances", type=int, default=1)
    args = ap.parse_args()
    model = mlp(args.width, args.layers, seed=2026)
    for name, batching in (("mlp_batched", True), ("mlp_plain", False)):
        os.makedirs(os.path.join(args.out, name, "1"), exist_ok=True)
        onnx.save(model, os.path.join(args.out, name, "1", "model.onnx"))
        config = [f'name: "{name}"', 'platform: "onnxruntime_onnx"', f"max_batch_size: {args.max_batch}",
                  f"instance_group [{{ count: {args.instances} kind: KIND_CPU }}]"]
        if batching:
            config.append(f"dynamic_batching {{ max_queue_delay_microseconds: {args.delay_us} }}")
        with open(os.path.join(args.out, name, "config.pbtxt"), "w") as f:
            f.write("\n".join(config) + "\n")


if __name__ == "__main__":
    main()

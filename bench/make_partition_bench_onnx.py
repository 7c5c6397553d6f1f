#!/usr/bin/python3
"""Writes a large synthetic ONNX model for timing `gectl partition`.

The model has two element-wise streams with residual-style skip
connections: one on input `x` with a static shape [8] and one on input `y`
with a dynamic shape ["n"]. Segments of 4..64 nodes extend one stream or
the other, so the partitioner sees static and dynamic regions interleaved.
Both streams end in outputs. Nothing here is committed data: run it to
produce the file (see docs/perf.md).

    /usr/bin/python3 bench/make_partition_bench_onnx.py --nodes 1000000 --output /tmp/partition_1m.onnx
"""

import argparse
import random

import onnx
from onnx import TensorProto, helper


def build(nodes, seed):
    rng = random.Random(seed)
    unary = ["Relu", "Neg", "Exp", "Sigmoid"]
    streams = {"x": ["x"], "y": ["y"]}
    graph_nodes = []
    made = 0
    while made < nodes:
        stream = "y" if rng.random() < 0.3 else "x"
        values = streams[stream]
        for _ in range(rng.randint(4, 64)):
            if made >= nodes:
                break
            name = "n%d" % made
            out = "v%d" % made
            if len(values) > 1 and rng.random() < 0.25:
                back = 1 + rng.randrange(min(24, len(values) - 1))
                graph_nodes.append(helper.make_node("Add", [values[-1], values[-1 - back]], [out], name=name))
            else:
                graph_nodes.append(helper.make_node(rng.choice(unary), [values[-1]], [out], name=name))
            values.append(out)
            made += 1
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8]),
              helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"])]
    outputs = [helper.make_tensor_value_info(streams["x"][-1], TensorProto.FLOAT, [8]),
               helper.make_tensor_value_info(streams["y"][-1], TensorProto.FLOAT, ["n"])]
    graph = helper.make_graph(graph_nodes, "partition_bench", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="ged-bench")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    model = build(args.nodes, args.seed)
    with open(args.output, "wb") as f:
        f.write(model.SerializeToString())
    print("wrote %s: %d nodes" % (args.output, len(model.graph.node)))


if __name__ == "__main__":
    main()

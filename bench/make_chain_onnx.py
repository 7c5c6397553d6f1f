#!/usr/bin/python3
"""Writes a chain of tiny element-wise ops on a 1-element tensor as ONNX.

Per-op overhead benchmark of the executors (seeds/04, issue 6): every
node is a unary element-wise op (Relu, Neg, Abs, alternating) on a float
tensor of shape [1], each reading the previous node's output, so the run
time divided by the node count is the executor's cost per op plus the
kernel's cost on one element. Nothing here is committed data: run it to
produce the file (see docs/perf.md).

    /usr/bin/python3 bench/make_chain_onnx.py --nodes 10000 --output /tmp/chain_10k.onnx
    /usr/bin/python3 bench/make_chain_onnx.py --nodes 10000 --op Identity --output /tmp/identity_10k.onnx

`--op Identity` isolates the executor: ge_local runs Identity as a view,
so the kernel does almost nothing. A binary op (`--op Add`, `Mul`, `Sub`,
`Max`, `Min`) takes the previous value and a 1-element constant (0 for Add
and Sub, 1 for Mul, the value itself for Max and Min), so the value stays
put.
"""

import argparse

import onnx
from onnx import TensorProto, helper


BINARY = {"Add": 0.0, "Sub": 0.0, "Mul": 1.0, "Max": None, "Min": None}


def build(nodes, op):
    ops = [op] if op else ["Relu", "Neg", "Abs"]
    graph_nodes = []
    initializers = []
    prev = "x"
    if op in BINARY and BINARY[op] is not None:
        initializers.append(helper.make_tensor("c", TensorProto.FLOAT, [1], [BINARY[op]]))
    for i in range(nodes):
        out = "v%d" % i
        if op in BINARY:
            second = "c" if BINARY[op] is not None else prev
            graph_nodes.append(helper.make_node(op, [prev, second], [out], name="n%d" % i))
        else:
            graph_nodes.append(helper.make_node(ops[i % len(ops)], [prev], [out], name="n%d" % i))
        prev = out
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])]
    outputs = [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1])]
    graph = helper.make_graph(graph_nodes, "chain", inputs, outputs, initializer=initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="ged-bench")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10000)
    parser.add_argument("--op", default="", help="one op type for every node (default: Relu, Neg, Abs in turn)")
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    model = build(args.nodes, args.op)
    with open(args.output, "wb") as f:
        f.write(model.SerializeToString())
    print("wrote %s: %d nodes" % (args.output, len(model.graph.node)))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Writes held-out element-wise chain models for element-wise fusion (ONNX, static shapes).

The zoo's chain_10k_static (bench/zoo/make_models.py) is what the fusion was measured on;
these variants differ from it in every axis the fusion cares about, so a figure on them is
not tuned to the zoo model. Each is a set of independent chains, 10 ops in 20 on average
binary, each binary op with its own constant; values stay bounded (Tanh or Sigmoid before
anything whose domain is limited):

  wide3d     x f32[2,3,40]; constants of shapes [40], [3,1], [1], [] and [2,3,40]
             (broadcasting), LeakyRelu / HardSigmoid / Elu / Exp / Erf / Sqrt / Log in the mix
  activations  x f32[16] and f32[200]; SiLU x*sigmoid(x), hard-swish x*hardsigmoid(x) and
             GELU 0.5x(1+erf(x/sqrt 2)) blocks (values read twice) between Add/Mul by constants
  scalars    x f32[1], [3], [5], [8]; every constant a rank-0 scalar or f32[1]

    /usr/bin/python3 bench/make_eltwise_variants.py --out /tmp/variants [--ops 6000]

Writes each model's inputs beside it (uniform in [-1, 1), KIND_NAME.npy) and prints one line
per model: its path, op count and NAME=FILE.npy feeds for `gectl bench --input` and
`bench/ort_run.js --input` (compare their --output-dir files for the error).
"""

import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper

UNARY_SAFE = ["Relu", "Neg", "Abs", "Sigmoid", "Tanh", "Sin", "Cos", "Softsign", "LeakyRelu", "HardSigmoid",
              "Elu", "HardSwish", "Erf"]
BINARY = ["Add", "Sub", "Mul", "Div", "Max", "Min"]


class Builder:
    def __init__(self, rng):
        self.rng, self.nodes, self.inits, self.count = rng, [], [], 0

    def name(self, prefix):
        self.count += 1
        return "%s%d" % (prefix, self.count)

    def const(self, dims, lo, hi):
        c = (self.rng.random(dims) * (hi - lo) + lo).astype(np.float32)
        n = self.name("c")
        self.inits.append(helper.make_tensor(n, TensorProto.FLOAT, list(dims), c.flatten().tolist()))
        return n

    def op(self, op, inputs, **attrs):
        out = self.name("v")
        self.nodes.append(helper.make_node(op, inputs, [out], name=self.name("n"), **attrs))
        return out

    def unary(self, x):
        op = UNARY_SAFE[self.rng.integers(len(UNARY_SAFE))]
        attrs = {}
        if op == "LeakyRelu":
            attrs["alpha"] = float(self.rng.random() * 0.3)
        if op == "HardSigmoid":
            attrs = {"alpha": 0.2, "beta": 0.5}
        return self.op(op, [x], **attrs)

    def binary(self, x, cdims):
        op = BINARY[self.rng.integers(len(BINARY))]
        lo, hi = {"Add": (-0.5, 0.5), "Sub": (-0.5, 0.5), "Mul": (0.5, 1.5), "Div": (0.5, 1.5)}.get(op, (-1, 1))
        c = self.const(cdims, lo, hi)
        return self.op(op, [c, x] if self.rng.random() < 0.3 and op != "Div" else [x, c])

    def bounded_domain(self, x):
        """Exp, Sqrt or Log behind a Tanh / Sigmoid."""
        kind = self.rng.integers(3)
        if kind == 0:
            return self.op("Exp", [self.op("Tanh", [x])])
        if kind == 1:
            return self.op("Sqrt", [self.op("Sigmoid", [x])])
        return self.op("Log", [self.op("Sigmoid", [x])])


def chain(b, x, ops, cshapes, special):
    start = len(b.nodes)
    while len(b.nodes) - start < ops:
        r = b.rng.random()
        if r < 0.5:
            x = b.binary(x, cshapes[b.rng.integers(len(cshapes))])
        elif r < 0.6 and special:
            x = special(b, x)
        else:
            x = b.unary(x)
    return b.op("Tanh", [x])


def activation_block(b, x):
    kind = b.rng.integers(3)
    if kind == 0:  # SiLU
        return b.op("Mul", [x, b.op("Sigmoid", [x])])
    if kind == 1:  # hard-swish as torch exports it before opset 14
        return b.op("Mul", [x, b.op("HardSigmoid", [x], alpha=1.0 / 6, beta=0.5)])
    half = b.const([], 0.5, 0.5)  # GELU
    inner = b.op("Erf", [b.op("Div", [x, b.const([], 1.4142135, 1.4142135)])])
    return b.op("Mul", [b.op("Mul", [x, half]), b.op("Add", [inner, b.const([], 1.0, 1.0)])])


def build(kind, ops, seed):
    b = Builder(np.random.default_rng(seed))
    if kind == "wide3d":
        inputs = [("x", [2, 3, 40])]
        plan = [("x", [[40], [3, 1], [1], [], [2, 3, 40]], lambda bb, v: bb.bounded_domain(v))]
    elif kind == "activations":
        inputs = [("x16", [16]), ("x200", [200])]
        plan = [("x16", [[16], [1]], activation_block), ("x200", [[200], []], activation_block)]
    else:
        inputs = [("x1", [1]), ("x3", [3]), ("x5", [5]), ("x8", [8])]
        plan = [(n, [[], [1]], None) for n, _ in inputs]
    outputs = []
    for name, cshapes, special in plan:
        y = chain(b, name, ops // len(plan), cshapes, special)
        outputs.append((y, dict(inputs)[name]))
    graph = helper.make_graph(
        b.nodes, kind, [helper.make_tensor_value_info(n, TensorProto.FLOAT, d) for n, d in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, d) for n, d in outputs], initializer=b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], producer_name="ged-bench")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model, inputs


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--ops", type=int, default=6000)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for i, kind in enumerate(["wide3d", "activations", "scalars"]):
        model, inputs = build(kind, args.ops, args.seed + i)
        path = os.path.join(args.out, kind + ".onnx")
        onnx.save(model, path)
        feeds = []
        for n, dims in inputs:
            data = os.path.join(args.out, "%s_%s.npy" % (kind, n))
            np.save(data, np.random.default_rng(args.seed).uniform(-1, 1, dims).astype(np.float32))
            feeds.append("%s=%s" % (n, data))
        print("%s %d %s" % (path, len(model.graph.node), " ".join(feeds)))


if __name__ == "__main__":
    main()

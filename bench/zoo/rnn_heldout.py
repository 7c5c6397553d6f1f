#!/usr/bin/python3
"""Held-out recurrent models: a zoo directory of LSTM/GRU/RNN shapes the zoo does not have.

    /usr/bin/python3 bench/zoo/rnn_heldout.py OUT [--only NAME,NAME]
    bench/zoo/run.py --zoo OUT --batches 1,4,8,16 --threads 1,2 --rounds 3 --no-docs --results OUT/r.json

Writes OUT/<name>.onnx, OUT/manifest.json in make_models.py's format (run.py times
them against ONNX Runtime and reports max |ged - ORT|) and batch-1 inputs with
torch references for the torch exports. The class issue 20 asks ged to cover:
LSTM, GRU and RNN (tanh and relu); hidden sizes 32 to 512 (multiples of 16 and
not); sequence lengths 1 to 128 (each model's own dynamic dim, fed the value in
its name); one, two and three stacked layers; bidirectional; initial states as
graph inputs; and, built with onnx.helper since torch exports no such node,
sequence_lens (lengths 1..steps, per batch row) and GRU with
linear_before_reset=0 (ONNX Runtime takes layout 0 only). Weights are seeded per model (torch.manual_seed / numpy
default_rng). Opset 17; Debian's torch 1.13 and onnx 1.12.
"""
import argparse
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_models import inputs_for as zoo_inputs_for, write_zoo  # noqa: E402

OPSET = 17
DIM_VALUES = {"batch": 1, "s1": 1, "s8": 8, "s16": 16, "s24": 24, "s30": 30, "s40": 40, "s48": 48, "s64": 64,
              "s128": 128}
MODELS = {}


def model(name):
    def register(fn):
        MODELS[name] = fn
        return fn
    return register


def inputs_for(specs, batch):
    return zoo_inputs_for(specs, batch, DIM_VALUES)


class Seq(nn.Module):
    """A recurrent layer stack (batch-first), then a Linear on every step or on the last one."""

    def __init__(self, rnn, out_features, last=False, states=0):
        super().__init__()
        width = rnn.hidden_size * (2 if rnn.bidirectional else 1)
        self.rnn, self.fc, self.last, self.states = rnn, nn.Linear(width, out_features), last, states

    def forward(self, x, *init):
        y, state = self.rnn(x, init if len(init) > 1 else init[0]) if init else self.rnn(x)
        y = self.fc(y[:, -1] if self.last else y)
        if not self.states:
            return y
        return (y,) + (tuple(state) if isinstance(state, tuple) else (state,))


def export_torch(net, specs, outs_batch_axis, path):
    """outs_batch_axis: the batch axis of every output (dynamic)."""
    net.eval()
    args = tuple(torch.from_numpy(a) for a in inputs_for(specs, 2))
    axes = {n: {i: d for i, d in enumerate(dims) if isinstance(d, str)} for n, _, dims, _ in specs}
    out_names = ["out%d" % i for i in range(len(outs_batch_axis))]
    for o, a in zip(out_names, outs_batch_axis):
        axes[o] = {a: "batch"}
    torch.onnx.export(net, args, path, opset_version=OPSET, input_names=[s[0] for s in specs],
                      output_names=out_names, dynamic_axes=axes, do_constant_folding=True)

    def reference(arrays):
        with torch.no_grad():
            outs = net(*[torch.from_numpy(a) for a in arrays])
        outs = outs if isinstance(outs, tuple) else (outs,)
        return [o.numpy() for o in outs]
    return reference


def torch_model(name, rnn, inp, steps, out=10, last=False, states=0):
    @model(name)
    def build(path):
        torch.manual_seed(len(name))
        net = Seq(rnn(), out, last, states)
        specs = [("x", "float32", ["batch", steps, inp], {"kind": "uniform"})]
        layers = net.rnn.num_layers * (2 if net.rnn.bidirectional else 1)
        for i in range(states):
            specs.append(("h%d" % i, "float32", [layers, "batch", net.rnn.hidden_size], {"kind": "uniform"}))
        return specs, export_torch(net, specs, [0] + [1] * states, path)


torch_model("lstm_h32_s128", lambda: nn.LSTM(16, 32, batch_first=True), 16, "s128")
torch_model("lstm_h64_s1_2l", lambda: nn.LSTM(32, 64, num_layers=2, batch_first=True), 32, "s1", last=True)
torch_model("lstm_h256_s64_2l", lambda: nn.LSTM(128, 256, num_layers=2, batch_first=True), 128, "s64", last=True)
torch_model("lstm_h512_s16", lambda: nn.LSTM(256, 512, batch_first=True), 256, "s16", last=True)
torch_model("lstm_bidir_h128_s64_2l", lambda: nn.LSTM(64, 128, num_layers=2, bidirectional=True, batch_first=True),
            64, "s64")
torch_model("lstm_h96_s24_states", lambda: nn.LSTM(40, 96, batch_first=True), 40, "s24", states=2)
torch_model("lstm_h100_s30_3l", lambda: nn.LSTM(30, 100, num_layers=3, batch_first=True), 30, "s30", last=True)
torch_model("gru_h64_s128", lambda: nn.GRU(32, 64, batch_first=True), 32, "s128")
torch_model("gru_h256_s48_2l", lambda: nn.GRU(128, 256, num_layers=2, batch_first=True), 128, "s48", last=True)
torch_model("gru_bidir_h384_s16_state", lambda: nn.GRU(96, 384, bidirectional=True, batch_first=True), 96, "s16",
            states=1)
torch_model("gru_h48_s8", lambda: nn.GRU(24, 48, batch_first=True), 24, "s8")
torch_model("rnn_tanh_h128_s64_2l", lambda: nn.RNN(64, 128, num_layers=2, batch_first=True), 64, "s64", last=True)
torch_model("rnn_relu_bidir_h200_s24",
            lambda: nn.RNN(50, 200, nonlinearity="relu", bidirectional=True, batch_first=True), 50, "s24")


def onnx_model(name, op, inp, hidden, steps, bidir=False, layout=0, lbr=None, initial_h=False):
    """One recurrent node with sequence_lens (1..steps per row) and optionally initial_h, by onnx.helper."""
    @model(name)
    def build(path):
        rng = np.random.default_rng(len(name))
        gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
        dirs = 2 if bidir else 1
        s = 1.0 / np.sqrt(hidden)
        w = lambda *shape: numpy_helper.from_array(rng.uniform(-s, s, shape).astype(np.float32))  # noqa: E731
        inits = []
        for n, shape in (("W", [dirs, gates * hidden, inp]), ("R", [dirs, gates * hidden, hidden]),
                         ("B", [dirs, 2 * gates * hidden])):
            t = w(*shape)
            t.name = n
            inits.append(t)
        inits.append(numpy_helper.from_array(np.ones([1], np.int32), "one"))
        x_dims = ["batch", steps, inp] if layout else [steps, "batch", inp]
        specs = [("x", "float32", x_dims, {"kind": "uniform"}),
                 ("lens", "int32", ["batch"], {"kind": "int", "high": DIM_VALUES[steps]})]
        h_dims = ["batch", dirs, hidden] if layout else [dirs, "batch", hidden]
        if initial_h:
            specs.append(("h0", "float32", h_dims, {"kind": "uniform"}))
        nodes = [helper.make_node("Add", ["lens", "one"], ["lens1"])]
        attrs = {"hidden_size": hidden, "direction": "bidirectional" if bidir else "forward", "layout": layout}
        if lbr is not None:
            attrs["linear_before_reset"] = lbr
        ins = ["x", "W", "R", "B", "lens1"] + (["h0"] if initial_h else [])
        nodes.append(helper.make_node(op, ins, ["y", "y_h"], **attrs))
        inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT if d == "float32" else TensorProto.INT32, dims)
                  for n, d, dims, _ in specs]
        outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("y", "y_h")]
        graph = helper.make_graph(nodes, name, inputs, outputs, inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        m.ir_version = 8
        m = onnx.shape_inference.infer_shapes(m, strict_mode=True)  # validates the node
        onnx.save(m, path)
        return specs, None


onnx_model("lstm_lens_bidir_h128_s40", "LSTM", 64, 128, "s40", bidir=True)
onnx_model("gru_lbr0_lens_h80_s30_state", "GRU", 48, 80, "s30", lbr=0, initial_h=True)
onnx_model("lstm_lens_h64_s24_state", "LSTM", 32, 64, "s24", initial_h=True)
onnx_model("rnn_lens_h256_s16", "RNN", 128, 256, "s16")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    torch.set_num_threads(1)
    names = args.only.split(",") if args.only else list(MODELS)
    write_zoo(args.out, names, {name: (fn, False) for name, fn in MODELS.items()}, DIM_VALUES)


if __name__ == "__main__":
    main()

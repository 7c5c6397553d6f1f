#!/usr/bin/python3
"""A second set of held-out recurrent models (session 13), kept apart from rnn_heldout.py's.

    /usr/bin/python3 bench/zoo/rnn_heldout2.py OUT [--only NAME,NAME]
    bench/zoo/run.py --zoo OUT --batches 1,8,16 --threads 1,2 --rounds 1 --no-docs

Same manifest format (make_models.write_zoo) and helpers as rnn_heldout.py. The shapes
the first set has not: a GRU decoder step (one step, hidden 512, input 768, as a seq2seq
decoder runs it), an LSTM of hidden 1024 over 4 steps (R of 16 MB), 200-step GRU and
LSTM (hidden 64 and 100, bidirectional), a hidden size off the eight-lane vectors
(hidden 100, 36), GRU with linear_before_reset=0 and 1 by onnx.helper without
sequence_lens, bidirectional, with initial_h, and a 2-layer LSTM with both initial
states at 2 steps. Weights are seeded per model.
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
import rnn_heldout as rh  # noqa: E402
from make_models import write_zoo  # noqa: E402

rh.DIM_VALUES.update({"s2": 2, "s4": 4, "s200": 200})
FIRST = set(rh.MODELS)

rh.torch_model("gru_dec_step_h512", lambda: nn.GRU(768, 512, batch_first=True), 768, "s1", states=1)
rh.torch_model("lstm_h1024_s4", lambda: nn.LSTM(256, 1024, batch_first=True), 256, "s4", last=True)
rh.torch_model("gru_h64_s200", lambda: nn.GRU(40, 64, batch_first=True), 40, "s200", last=True)
rh.torch_model("lstm_bidir_h100_s200", lambda: nn.LSTM(80, 100, bidirectional=True, batch_first=True), 80,
               "s200", last=True)
rh.torch_model("lstm_h36_s2_2l_states", lambda: nn.LSTM(20, 36, num_layers=2, batch_first=True), 20, "s2",
               states=2)


def gru_helper(name, inp, hidden, steps, lbr, bidir):
    """One GRU node without sequence_lens, with initial_h, by onnx.helper."""
    @rh.model(name)
    def build(path):
        rng = np.random.default_rng(len(name) + 13)
        dirs = 2 if bidir else 1
        s = 1.0 / np.sqrt(hidden)
        inits = []
        for n, shape in (("W", [dirs, 3 * hidden, inp]), ("R", [dirs, 3 * hidden, hidden]),
                         ("B", [dirs, 6 * hidden])):
            inits.append(numpy_helper.from_array(rng.uniform(-s, s, shape).astype(np.float32), n))
        specs = [("x", "float32", [steps, "batch", inp], {"kind": "uniform"}),
                 ("h0", "float32", [dirs, "batch", hidden], {"kind": "uniform"})]
        attrs = {"hidden_size": hidden, "direction": "bidirectional" if bidir else "forward",
                 "linear_before_reset": lbr}
        node = helper.make_node("GRU", ["x", "W", "R", "B", "", "h0"], ["y", "y_h"], **attrs)
        inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, dims) for n, _, dims, _ in specs]
        outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("y", "y_h")]
        m = helper.make_model(helper.make_graph([node], name, inputs, outputs, inits),
                              opset_imports=[helper.make_opsetid("", rh.OPSET)])
        m.ir_version = 8
        m = onnx.shape_inference.infer_shapes(m, strict_mode=True)
        onnx.save(m, path)
        return specs, None


gru_helper("gru_lbr0_bidir_h100_s48", 64, 100, "s48", 0, True)
gru_helper("gru_lbr1_h256_s24", 128, 256, "s24", 1, False)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    torch.set_num_threads(1)
    mine = [n for n in rh.MODELS if n not in FIRST]
    names = args.only.split(",") if args.only else mine
    write_zoo(args.out, names, {name: (rh.MODELS[name], False) for name in mine}, rh.DIM_VALUES)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Builds a second held-out zoo of control-flow models (Loop, Scan, If, sequences).

    /usr/bin/python3 bench/zoo/make_heldout_loops2.py OUT [--only NAME,NAME]

Hand-built with onnx.helper like make_heldout_loops.py: small bodies, so the time per
run is mostly the executor's per-iteration cost. Same format as the zoo
(make_models.write_zoo): `bench/zoo/run.sh --zoo OUT --no-docs ...` times it against
ONNX Runtime.

- beam_search: 60 steps of a beam-4 decoder: LogSoftmax over 256 tokens plus the beam
  scores, TopK over the flattened beam x vocab, the surviving beams' states gathered;
  the tokens and beam indices are scan outputs.
- scan_lstm_rev: an LSTM cell as a Scan over 200 steps in reverse, two state tensors
  (h, c).
- loop_seq_out: 100 iterations each keeping the positive entries of a tanh layer
  (NonZero, Gather: another length each time) in a carried sequence
  (SequenceInsert), joined after the loop (ConcatFromSequence).
- scan_if: a Scan over 200 steps whose body chooses by an If on the sign of the
  step's input sum.
- aside_scan_loop: a Scan over 50 steps whose body refines the state by an inner Loop
  of 5 iterations (kept aside: measured only at the end).
- aside_seq_window: a sliding window of 8 rows held as a sequence: each of 150
  iterations appends a row computed from the window's mean and erases the first
  (kept aside).
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_models as zoo  # noqa: E402
# The first loop set's builders (importing it registers its models: cleared below).
from make_heldout_loops import const, save, vi  # noqa: E402

zoo.MODELS.clear()
model = zoo.model
F32, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
RNG = np.random.default_rng(11)


def weights(name, shape, scale):
    return const(name, (RNG.standard_normal(shape) * scale).astype(np.float32))


def seq_vi(name, elem, shape):
    return helper.make_tensor_sequence_value_info(name, elem, shape)


@model("beam_search")
def beam_search(path):
    beam, vocab, hidden, steps = 4, 256, 32, 60
    body = helper.make_graph(
        [helper.make_node("MatMul", ["h_in", "W"], ["logits"]),
         helper.make_node("LogSoftmax", ["logits"], ["logp"], axis=1),
         helper.make_node("Add", ["logp", "scores_in"], ["total"]),
         helper.make_node("Reshape", ["total", "flat_shape"], ["flat"]),
         helper.make_node("TopK", ["flat", "k"], ["best", "best_idx"], axis=1),
         helper.make_node("Reshape", ["best_idx", "beam_shape"], ["idx"]),
         helper.make_node("Div", ["idx", "vocab"], ["from_beam"]),
         helper.make_node("Mod", ["idx", "vocab"], ["token"]),
         helper.make_node("Gather", ["h_in", "from_beam"], ["h_sel"], axis=0),
         helper.make_node("Gather", ["E", "token"], ["emb"], axis=0),
         helper.make_node("MatMul", ["h_sel", "U"], ["hu"]),
         helper.make_node("Add", ["hu", "emb"], ["pre"]),
         helper.make_node("Tanh", ["pre"], ["h_out"]),
         helper.make_node("Reshape", ["best", "score_shape"], ["scores_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Identity", ["token"], ["token_scan"]),
         helper.make_node("Identity", ["from_beam"], ["beam_scan"])],
        "body",
        [vi("i", I64, []), vi("cond_in", BOOL, []), vi("h_in", F32, [beam, hidden]), vi("scores_in", F32, [beam, 1])],
        [vi("cond_out", BOOL, []), vi("h_out", F32, [beam, hidden]), vi("scores_out", F32, [beam, 1]),
         vi("token_scan", I64, [beam]), vi("beam_scan", I64, [beam])],
        [const("flat_shape", np.array([1, beam * vocab], np.int64)), const("k", np.array([beam], np.int64)),
         const("beam_shape", np.array([beam], np.int64)), const("vocab", np.array(vocab, np.int64)),
         const("score_shape", np.array([beam, 1], np.int64))])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "h0", "s0"], ["h", "scores", "tokens", "beams"], body=body)],
        "beam_search", [vi("h0", F32, [beam, hidden])],
        [vi("h", F32, [beam, hidden]), vi("scores", F32, [beam, 1]), vi("tokens", I64, [steps, beam]),
         vi("beams", I64, [steps, beam])],
        [const("M", np.array(steps, np.int64)), const("s0", np.array([[0.0], [-1e4], [-1e4], [-1e4]], np.float32)),
         weights("W", [hidden, vocab], 0.4), weights("E", [vocab, hidden], 0.5), weights("U", [hidden, hidden], 0.2)])
    save(graph, path)
    return [("h0", "float32", [beam, hidden], {"kind": "uniform"})], None


@model("scan_lstm_rev")
def scan_lstm_rev(path):
    steps, inputs, hidden = 200, 16, 32
    body = helper.make_graph(
        [helper.make_node("MatMul", ["x_t", "Wx"], ["xw"]),
         helper.make_node("MatMul", ["h_in", "Wh"], ["hw"]),
         helper.make_node("Add", ["xw", "hw"], ["s"]),
         helper.make_node("Add", ["s", "b"], ["gates"]),
         helper.make_node("Split", ["gates"], ["gi", "gf", "gg", "go"], axis=1),
         helper.make_node("Sigmoid", ["gi"], ["i"]),
         helper.make_node("Sigmoid", ["gf"], ["f"]),
         helper.make_node("Tanh", ["gg"], ["g"]),
         helper.make_node("Sigmoid", ["go"], ["o"]),
         helper.make_node("Mul", ["f", "c_in"], ["fc"]),
         helper.make_node("Mul", ["i", "g"], ["ig"]),
         helper.make_node("Add", ["fc", "ig"], ["c_out"]),
         helper.make_node("Tanh", ["c_out"], ["tc"]),
         helper.make_node("Mul", ["o", "tc"], ["h_out"]),
         helper.make_node("Identity", ["h_out"], ["y_t"])],
        "body", [vi("h_in", F32, [1, hidden]), vi("c_in", F32, [1, hidden]), vi("x_t", F32, [1, inputs])],
        [vi("h_out", F32, [1, hidden]), vi("c_out", F32, [1, hidden]), vi("y_t", F32, [1, hidden])])
    graph = helper.make_graph(
        [helper.make_node("Scan", ["h0", "c0", "x"], ["h", "c", "ys"], body=body, num_scan_inputs=1,
                          scan_input_directions=[1])],
        "scan_lstm_rev", [vi("x", F32, [steps, 1, inputs])],
        [vi("h", F32, [1, hidden]), vi("c", F32, [1, hidden]), vi("ys", F32, [steps, 1, hidden])],
        [const("h0", np.zeros((1, hidden), np.float32)), const("c0", np.zeros((1, hidden), np.float32)),
         weights("Wx", [inputs, 4 * hidden], 0.3), weights("Wh", [hidden, 4 * hidden], 0.2),
         weights("b", [4 * hidden], 0.1)])
    save(graph, path)
    return [("x", "float32", [steps, 1, inputs], {"kind": "uniform"})], None


@model("loop_seq_out")
def loop_seq_out(path):
    width, steps = 64, 100
    body = helper.make_graph(
        [helper.make_node("MatMul", ["x_in", "W"], ["xw"]),
         helper.make_node("Tanh", ["xw"], ["x_out"]),
         helper.make_node("Reshape", ["x_out", "flat"], ["row"]),
         helper.make_node("Greater", ["row", "thr"], ["pos"]),
         helper.make_node("NonZero", ["pos"], ["nz"]),
         helper.make_node("Reshape", ["nz", "flat"], ["where"]),
         helper.make_node("Gather", ["row", "where"], ["piece"], axis=0),
         helper.make_node("SequenceInsert", ["seq_in", "piece"], ["seq_out"]),
         helper.make_node("Shape", ["piece"], ["count"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body",
        [vi("i", I64, []), vi("cond_in", BOOL, []), vi("x_in", F32, [1, width]), seq_vi("seq_in", F32, [None])],
        [vi("cond_out", BOOL, []), vi("x_out", F32, [1, width]), seq_vi("seq_out", F32, [None]),
         vi("count", I64, [1])],
        [const("flat", np.array([-1], np.int64)), const("thr", np.float32(0.05))])
    graph = helper.make_graph(
        [helper.make_node("SequenceEmpty", [], ["seq0"], dtype=F32),
         helper.make_node("Loop", ["M", "", "x", "seq0"], ["x_final", "seq", "counts"], body=body),
         helper.make_node("ConcatFromSequence", ["seq"], ["kept"], axis=0)],
        "loop_seq_out", [vi("x", F32, [1, width])],
        [vi("x_final", F32, [1, width]), vi("kept", F32, [None]), vi("counts", I64, [steps, 1])],
        [const("M", np.array(steps, np.int64)), weights("W", [width, width], 0.1)])
    save(graph, path)
    return [("x", "float32", [1, width], {"kind": "uniform"})], None


@model("scan_if")
def scan_if(path):
    steps, width = 200, 32
    then_b = helper.make_graph(
        [helper.make_node("Mul", ["s_in", "decay"], ["sd"]), helper.make_node("Add", ["sd", "x_t"], ["s_then"])],
        "then", [], [vi("s_then", F32, [1, width])], [const("decay", np.float32(0.9))])
    else_b = helper.make_graph(
        [helper.make_node("Sub", ["s_in", "x_t"], ["sx"]), helper.make_node("Tanh", ["sx"], ["s_else"])],
        "else", [], [vi("s_else", F32, [1, width])])
    body = helper.make_graph(
        [helper.make_node("ReduceSum", ["x_t"], ["sum"], keepdims=0),
         helper.make_node("Greater", ["sum", "zero"], ["positive"]),
         helper.make_node("If", ["positive"], ["s_out"], then_branch=then_b, else_branch=else_b),
         helper.make_node("Identity", ["s_out"], ["y_t"])],
        "body", [vi("s_in", F32, [1, width]), vi("x_t", F32, [1, width])],
        [vi("s_out", F32, [1, width]), vi("y_t", F32, [1, width])], [const("zero", np.float32(0.0))])
    graph = helper.make_graph(
        [helper.make_node("Scan", ["s0", "x"], ["s", "ys"], body=body, num_scan_inputs=1)],
        "scan_if", [vi("x", F32, [steps, 1, width])], [vi("s", F32, [1, width]), vi("ys", F32, [steps, 1, width])],
        [const("s0", np.zeros((1, width), np.float32))])
    save(graph, path)
    return [("x", "float32", [steps, 1, width], {"kind": "uniform"})], None


@model("aside_scan_loop")
def aside_scan_loop(path):
    steps, width, inner = 50, 24, 5
    inner_body = helper.make_graph(
        [helper.make_node("MatMul", ["r_in", "W"], ["rw"]),
         helper.make_node("Add", ["rw", "x_t"], ["pre"]),
         helper.make_node("Tanh", ["pre"], ["r_out"]),
         helper.make_node("Identity", ["c_in"], ["c_out"])],
        "inner", [vi("j", I64, []), vi("c_in", BOOL, []), vi("r_in", F32, [1, width])],
        [vi("c_out", BOOL, []), vi("r_out", F32, [1, width])])
    body = helper.make_graph(
        [helper.make_node("Loop", ["K", "", "s_in"], ["s_out"], body=inner_body),
         helper.make_node("Identity", ["s_out"], ["y_t"])],
        "body", [vi("s_in", F32, [1, width]), vi("x_t", F32, [1, width])],
        [vi("s_out", F32, [1, width]), vi("y_t", F32, [1, width])])
    graph = helper.make_graph(
        [helper.make_node("Scan", ["s0", "x"], ["s", "ys"], body=body, num_scan_inputs=1)],
        "aside_scan_loop", [vi("x", F32, [steps, 1, width])],
        [vi("s", F32, [1, width]), vi("ys", F32, [steps, 1, width])],
        [const("s0", np.zeros((1, width), np.float32)), const("K", np.array(inner, np.int64)),
         weights("W", [width, width], 0.3)])
    save(graph, path)
    return [("x", "float32", [steps, 1, width], {"kind": "uniform"})], None


@model("aside_seq_window")
def aside_seq_window(path):
    window, width, steps = 8, 16, 150
    body = helper.make_graph(
        [helper.make_node("ConcatFromSequence", ["win_in"], ["win_rows"], axis=0),
         helper.make_node("ReduceMean", ["win_rows"], ["mean"], axes=[0], keepdims=1),
         helper.make_node("MatMul", ["mean", "W"], ["mw"]),
         helper.make_node("Tanh", ["mw"], ["row"]),
         helper.make_node("SequenceInsert", ["win_in", "row"], ["grown"]),
         helper.make_node("SequenceErase", ["grown", "first"], ["win_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Identity", ["row"], ["row_scan"])],
        "body", [vi("i", I64, []), vi("cond_in", BOOL, []), seq_vi("win_in", F32, [1, width])],
        [vi("cond_out", BOOL, []), seq_vi("win_out", F32, [1, width]), vi("row_scan", F32, [1, width])],
        [const("first", np.array(0, np.int64))])
    graph = helper.make_graph(
        [helper.make_node("SplitToSequence", ["x"], ["win0"], axis=0, keepdims=1),
         helper.make_node("Loop", ["M", "", "win0"], ["win", "rows"], body=body),
         helper.make_node("ConcatFromSequence", ["win"], ["last"], axis=0)],
        "aside_seq_window", [vi("x", F32, [window, width])],
        [vi("last", F32, [window, width]), vi("rows", F32, [steps, 1, width])],
        [const("M", np.array(steps, np.int64)), weights("W", [width, width], 0.5)])
    save(graph, path)
    return [("x", "float32", [window, width], {"kind": "uniform"})], None


def main():
    import argparse
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--only", default="", help="comma-separated model names (default: all)")
    args = parser.parse_args()
    names = [n for n in zoo.MODELS if not args.only or n in args.only.split(",")]
    zoo.write_zoo(args.out, names, zoo.MODELS, {})


if __name__ == "__main__":
    main()

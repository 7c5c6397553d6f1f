#!/usr/bin/python3
"""Builds a held-out zoo of control-flow models: Loop, Scan and If with small bodies.

    /usr/bin/python3 bench/zoo/make_heldout_loops.py OUT [--only NAME,NAME]

Hand-built with onnx.helper (no torch), so each body is a handful of small ops and the
time per run is mostly the executor's per-iteration cost: binding a body's inputs,
running its nodes, checking what it returns. Same format as the zoo
(make_models.write_zoo): `bench/zoo/run.sh --zoo OUT --no-docs ...` times it against
ONNX Runtime and reports the largest difference from ORT's outputs.

- greedy_decode: a 200-step greedy decoder (MatMul to 512 logits, ArgMax, embedding
  Gather, a tanh cell); the tokens are a scan output and also a loop-carried tensor
  grown by Concat, as scripted torch decoders write it.
- scan_rnn: an Elman RNN as Scan over 300 steps of [1, 32] (hidden 64).
- while_cond: a Loop without a trip count that runs until a data-dependent sum
  passes a bound (about 400 iterations on the seeded input).
- nested_if: 300 iterations of an If (even / odd iteration) holding another If.
- paste_concat: torchvision's paste-masks shape: 60 iterations, each building a
  [1, 256, 256] mask from zeros around a resized patch and Concat-ing it to the
  carried result.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_models as zoo  # noqa: E402

zoo.MODELS.clear()
model = zoo.model
F32, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
RNG = np.random.default_rng(7)


def const(name, value):
    return numpy_helper.from_array(np.asarray(value), name)


def weights(name, shape, scale):
    return const(name, (RNG.standard_normal(shape) * scale).astype(np.float32))


def save(graph, path):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", zoo.OPSET)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


@model("greedy_decode")
def greedy_decode(path):
    hidden, vocab, steps = 64, 512, 200
    body = helper.make_graph(
        [helper.make_node("MatMul", ["h_in", "W"], ["logits"]),
         helper.make_node("ArgMax", ["logits"], ["token"], axis=1, keepdims=0),
         helper.make_node("Gather", ["E", "token"], ["emb"], axis=0),
         helper.make_node("MatMul", ["h_in", "U"], ["hu"]),
         helper.make_node("Add", ["hu", "emb"], ["pre"]),
         helper.make_node("Tanh", ["pre"], ["h_out"]),
         helper.make_node("Unsqueeze", ["token", "axis0"], ["token_row"]),
         helper.make_node("Concat", ["tokens_in", "token_row"], ["tokens_out"], axis=1),
         helper.make_node("Equal", ["token", "eos"], ["is_eos"]),
         helper.make_node("Cast", ["is_eos"], ["is_eos_i"], to=I64),
         helper.make_node("ReduceMax", ["is_eos_i"], ["any_eos"], keepdims=0),
         helper.make_node("Cast", ["any_eos"], ["any_eos_b"], to=BOOL),
         helper.make_node("Not", ["any_eos_b"], ["cond_out"]),
         helper.make_node("Identity", ["token"], ["token_scan"])],
        "body",
        [vi("i", I64, []), vi("cond_in", BOOL, []), vi("h_in", F32, [1, hidden]), vi("tokens_in", I64, [1, None])],
        [vi("cond_out", BOOL, []), vi("h_out", F32, [1, hidden]), vi("tokens_out", I64, [1, None]),
         vi("token_scan", I64, [1])],
        [const("axis0", np.array([0], np.int64)), const("eos", np.array([-1], np.int64))])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "go", "h0", "tokens0"], ["h", "tokens", "token_steps"], body=body)],
        "greedy_decode", [vi("h0", F32, [1, hidden])],
        [vi("h", F32, [1, hidden]), vi("tokens", I64, [1, None]), vi("token_steps", I64, [None, 1])],
        [const("M", np.array(steps, np.int64)), const("go", np.array(True)),
         const("tokens0", np.zeros((1, 0), np.int64)), weights("W", [hidden, vocab], 0.3),
         weights("E", [vocab, hidden], 0.5), weights("U", [hidden, hidden], 0.2)])
    save(graph, path)
    return [("h0", "float32", [1, hidden], {"kind": "uniform"})], None


@model("scan_rnn")
def scan_rnn(path):
    steps, inputs, hidden = 300, 32, 64
    body = helper.make_graph(
        [helper.make_node("MatMul", ["x_t", "Wx"], ["xw"]),
         helper.make_node("MatMul", ["h_in", "Wh"], ["hw"]),
         helper.make_node("Add", ["xw", "hw"], ["s"]),
         helper.make_node("Add", ["s", "b"], ["pre"]),
         helper.make_node("Tanh", ["pre"], ["h_out"]),
         helper.make_node("Identity", ["h_out"], ["y_t"])],
        "body", [vi("h_in", F32, [1, hidden]), vi("x_t", F32, [1, inputs])],
        [vi("h_out", F32, [1, hidden]), vi("y_t", F32, [1, hidden])])
    graph = helper.make_graph(
        [helper.make_node("Scan", ["h0", "x"], ["h", "ys"], body=body, num_scan_inputs=1)],
        "scan_rnn", [vi("x", F32, [steps, 1, inputs])],
        [vi("h", F32, [1, hidden]), vi("ys", F32, [steps, 1, hidden])],
        [const("h0", np.zeros((1, hidden), np.float32)), weights("Wx", [inputs, hidden], 0.2),
         weights("Wh", [hidden, hidden], 0.15), weights("b", [hidden], 0.1)])
    save(graph, path)
    return [("x", "float32", [steps, 1, inputs], {"kind": "uniform"})], None


@model("while_cond")
def while_cond(path):
    width = 16
    body = helper.make_graph(
        [helper.make_node("Mul", ["x_in", "decay"], ["xd"]),
         helper.make_node("Sin", ["x_in"], ["sx"]),
         helper.make_node("Mul", ["sx", "mix"], ["sxm"]),
         helper.make_node("Add", ["xd", "sxm"], ["x_out"]),
         helper.make_node("Abs", ["x_out"], ["ax"]),
         helper.make_node("ReduceSum", ["ax"], ["step_sum"], keepdims=0),
         helper.make_node("Add", ["total_in", "step_sum"], ["total_out"]),
         helper.make_node("Less", ["total_out", "bound"], ["cond_out"])],
        "body", [vi("i", I64, []), vi("cond_in", BOOL, []), vi("x_in", F32, [1, width]), vi("total_in", F32, [])],
        [vi("cond_out", BOOL, []), vi("x_out", F32, [1, width]), vi("total_out", F32, [])],
        [const("decay", np.float32(0.999)), const("mix", np.float32(0.01)), const("bound", np.float32(2000.0))])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["", "go", "x", "zero"], ["x_final", "total"], body=body)],
        "while_cond", [vi("x", F32, [1, width])], [vi("x_final", F32, [1, width]), vi("total", F32, [])],
        [const("go", np.array(True)), const("zero", np.float32(0.0))])
    save(graph, path)
    return [("x", "float32", [1, width], {"kind": "uniform"})], None


@model("nested_if")
def nested_if(path):
    width = 32

    def branch(name, nodes, out, inits=()):
        return helper.make_graph(nodes, name, [], [vi(out, F32, [1, width])], list(inits))

    inner_then = branch("inner_then", [helper.make_node("Mul", ["x_in", "two"], ["a2"]),
                                       helper.make_node("Sub", ["a2", "one"], ["inner_t"])], "inner_t",
                        [const("two", np.float32(2.0)), const("one", np.float32(1.0))])
    inner_else = branch("inner_else", [helper.make_node("Tanh", ["x_in"], ["inner_e"])], "inner_e")
    outer_then = branch("outer_then", [helper.make_node("Mod", ["i", "three"], ["m3"]),
                                       helper.make_node("Equal", ["m3", "zero_i"], ["is3"]),
                                       helper.make_node("If", ["is3"], ["outer_t"], then_branch=inner_then,
                                                        else_branch=inner_else)], "outer_t",
                        [const("three", np.int64(3)), const("zero_i", np.int64(0))])
    outer_else = branch("outer_else", [helper.make_node("Mul", ["x_in", "half"], ["outer_e"])], "outer_e",
                        [const("half", np.float32(0.5))])
    body = helper.make_graph(
        [helper.make_node("Mod", ["i", "two_i"], ["m2"]),
         helper.make_node("Equal", ["m2", "zero_i2"], ["even"]),
         helper.make_node("If", ["even"], ["x_out"], then_branch=outer_then, else_branch=outer_else),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body", [vi("i", I64, []), vi("cond_in", BOOL, []), vi("x_in", F32, [1, width])],
        [vi("cond_out", BOOL, []), vi("x_out", F32, [1, width])],
        [const("two_i", np.int64(2)), const("zero_i2", np.int64(0))])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "x"], ["y"], body=body)],
        "nested_if", [vi("x", F32, [1, width])], [vi("y", F32, [1, width])],
        [const("M", np.array(300, np.int64))])
    save(graph, path)
    return [("x", "float32", [1, width], {"kind": "uniform"})], None


@model("paste_concat")
def paste_concat(path):
    side, boxes, patch = 256, 60, 28
    body = helper.make_graph(
        [helper.make_node("Unsqueeze", ["i", "axis0"], ["off"]),                   # [1]: the box's offset
         helper.make_node("Gather", ["patches", "off"], ["p"], axis=0),           # [1, 1, 28, 28]
         helper.make_node("Mul", ["off", "two"], ["grow"]),
         helper.make_node("Add", ["grow", "size_base"], ["size"]),                # its side
         helper.make_node("Concat", ["one_1", "one_1", "size", "size"], ["rsize"], axis=0),
         helper.make_node("Resize", ["p", "", "", "rsize"], ["r4"], mode="linear"),
         helper.make_node("Squeeze", ["r4", "axis0"], ["r"]),                     # [1, size, size]
         helper.make_node("Concat", ["one_1", "off", "side_1"], ["top_shape"], axis=0),
         helper.make_node("ConstantOfShape", ["top_shape"], ["top"]),
         helper.make_node("Add", ["off", "size"], ["used"]),
         helper.make_node("Sub", ["side_1", "used"], ["rest"]),
         helper.make_node("Concat", ["one_1", "rest", "side_1"], ["bottom_shape"], axis=0),
         helper.make_node("ConstantOfShape", ["bottom_shape"], ["bottom"]),
         helper.make_node("Concat", ["one_1", "size", "off"], ["left_shape"], axis=0),
         helper.make_node("ConstantOfShape", ["left_shape"], ["left"]),
         helper.make_node("Concat", ["one_1", "size", "rest"], ["right_shape"], axis=0),
         helper.make_node("ConstantOfShape", ["right_shape"], ["right"]),
         helper.make_node("Concat", ["left", "r", "right"], ["row"], axis=2),
         helper.make_node("Concat", ["top", "row", "bottom"], ["mask"], axis=1),
         helper.make_node("Concat", ["res_in", "mask"], ["res_out"], axis=0),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body", [vi("i", I64, []), vi("cond_in", BOOL, []), vi("res_in", F32, [None, side, side])],
        [vi("cond_out", BOOL, []), vi("res_out", F32, [None, side, side])],
        [const("two", np.array([2], np.int64)), const("size_base", np.array([patch * 2], np.int64)),
         const("axis0", np.array([0], np.int64)),
         const("one_1", np.array([1], np.int64)), const("side_1", np.array([side], np.int64))])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "res0"], ["masks"], body=body)],
        "paste_concat", [vi("patches", F32, [boxes, 1, patch, patch])], [vi("masks", F32, [None, side, side])],
        [const("M", np.array(boxes, np.int64)), const("res0", np.zeros((0, side, side), np.float32))])
    save(graph, path)
    return [("patches", "float32", [boxes, 1, patch, patch], {"kind": "uniform"})], None


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

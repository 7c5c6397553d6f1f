#!/usr/bin/python3
"""Builds a third held-out zoo of control-flow models: Loop, Scan and If with batch dims.

    /usr/bin/python3 bench/zoo/make_heldout_loops3.py OUT [--only NAME,NAME]

Hand-built with onnx.helper (opset 17) like make_heldout_loops2.py, but most models take
a dynamic batch dim, so their bodies are typed only once the loop's inputs are known.
Same format as the zoo (make_models.write_zoo): `bench/zoo/run.py --zoo OUT --no-docs
--batches 1,8 ...` times it against ONNX Runtime.

- convlstm_scan: a ConvLSTM cell (3x3 convolution over [x_t, h], four gates) as a Scan
  over 8 frames of [batch, 4, 16, 16], hidden 8 channels.
- raft_refine: RAFT-like iterative refinement: a Loop of 10 iterations of a
  convolutional GRU update of a [batch, 16, 24, 32] state and a flow field refined by a
  convolution of it (a large body: convolutions dominate).
- beam_topk: beam search over a batch: 40 steps of a beam-4 decoder, TopK per batch row
  over beam x vocab, the surviving beams' states gathered by row offsets.
- scan_multi_axis: a Scan with two scan inputs on different axes ([T, batch, 16] forward,
  [batch, T, 16] reversed) and two scan outputs (one stacked on axis 1, one reversed).
- tiny_loop: a Loop of 2000 iterations of a four-op body on [batch, 8] (the
  per-iteration overhead alone).
- big_body_loop: a Loop of 6 iterations of an MLP block (MatMul 256 -> 512 -> 256, GELU's
  tanh form, a residual and LayerNormalization) on [batch, 16, 256].
- aside_rnnt_greedy: an RNN-T-like greedy decoder: a Loop over up to 60 symbols whose
  body gathers the encoder frame, runs a joint network and ArgMax, and by an If either
  advances the frame (blank) or updates the prediction network's state (kept aside:
  measured only at the end).
- aside_loop_in_if: a Loop of 30 iterations whose body runs, by an If on the sign of a
  running sum, one of two inner Loops of 4 iterations (kept aside).
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
RNG = np.random.default_rng(23)
B = "batch"


def weights(name, shape, scale):
    return const(name, (RNG.standard_normal(shape) * scale).astype(np.float32))


def i64(name, value):
    return const(name, np.array(value, np.int64))


def uniform(name, dims):
    return (name, "float32", dims, {"kind": "uniform"})


@model("convlstm_scan")
def convlstm_scan(path):
    steps, cin, hidden, hw = 8, 4, 8, 16
    body = helper.make_graph(
        [helper.make_node("Concat", ["x_t", "h_in"], ["xh"], axis=1),
         helper.make_node("Conv", ["xh", "Wc", "bc"], ["gates"], pads=[1, 1, 1, 1]),
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
         helper.make_node("ReduceMean", ["h_out"], ["y_t"], axes=[2, 3], keepdims=0)],
        "body",
        [vi("h_in", F32, [B, hidden, hw, hw]), vi("c_in", F32, [B, hidden, hw, hw]), vi("x_t", F32, [B, cin, hw, hw])],
        [vi("h_out", F32, [B, hidden, hw, hw]), vi("c_out", F32, [B, hidden, hw, hw]), vi("y_t", F32, [B, hidden])])
    graph = helper.make_graph(
        [helper.make_node("Slice", ["x", "s0", "s1", "s2"], ["x0"]),  # [1, batch, ...]: the state's batch
         helper.make_node("Squeeze", ["x0", "ax0"], ["x0s"]),
         helper.make_node("ReduceSum", ["x0s", "ax123"], ["bsum"], keepdims=1),
         helper.make_node("Mul", ["bsum", "zero"], ["bzero"]),
         helper.make_node("Expand", ["bzero", "state_shape"], ["h0"]),
         helper.make_node("Identity", ["h0"], ["c0"]),
         helper.make_node("Scan", ["h0", "c0", "x"], ["h", "c", "ys"], body=body, num_scan_inputs=1)],
        "convlstm_scan", [vi("x", F32, [steps, B, cin, hw, hw])],
        [vi("h", F32, [B, hidden, hw, hw]), vi("ys", F32, [steps, B, hidden])],
        [i64("s0", [0]), i64("s1", [1]), i64("s2", [0]), i64("ax0", [0]), i64("ax123", [1, 2, 3]),
         const("zero", np.array(0, np.float32)), i64("state_shape", [1, hidden, hw, hw]),
         weights("Wc", [4 * hidden, cin + hidden, 3, 3], 0.15), weights("bc", [4 * hidden], 0.1)])
    save(graph, path)
    return [uniform("x", [steps, B, cin, hw, hw])], None


@model("raft_refine")
def raft_refine(path):
    iters, hid, ctx, h, w = 10, 16, 8, 24, 32
    body = helper.make_graph(
        [helper.make_node("Concat", ["h_in", "flow_in", "ctx"], ["hx"], axis=1),
         helper.make_node("Conv", ["hx", "Wz", "bz"], ["zp"], pads=[1, 1, 1, 1]),
         helper.make_node("Sigmoid", ["zp"], ["z"]),
         helper.make_node("Conv", ["hx", "Wr", "br"], ["rp"], pads=[1, 1, 1, 1]),
         helper.make_node("Sigmoid", ["rp"], ["r"]),
         helper.make_node("Mul", ["r", "h_in"], ["rh"]),
         helper.make_node("Concat", ["rh", "flow_in", "ctx"], ["rhx"], axis=1),
         helper.make_node("Conv", ["rhx", "Wq", "bq"], ["qp"], pads=[1, 1, 1, 1]),
         helper.make_node("Tanh", ["qp"], ["q"]),
         helper.make_node("Sub", ["q", "h_in"], ["qh"]),
         helper.make_node("Mul", ["z", "qh"], ["zqh"]),
         helper.make_node("Add", ["h_in", "zqh"], ["h_out"]),
         helper.make_node("Conv", ["h_out", "Wf", "bf"], ["delta"], pads=[1, 1, 1, 1]),
         helper.make_node("Add", ["flow_in", "delta"], ["flow_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body",
        [vi("i", I64, []), vi("cond_in", BOOL, []), vi("h_in", F32, [B, hid, h, w]), vi("flow_in", F32, [B, 2, h, w])],
        [vi("cond_out", BOOL, []), vi("h_out", F32, [B, hid, h, w]), vi("flow_out", F32, [B, 2, h, w])])
    graph = helper.make_graph(
        [helper.make_node("Slice", ["feat", "c0", "c1", "c_ax"], ["h0p"]),
         helper.make_node("Tanh", ["h0p"], ["h0"]),
         helper.make_node("Slice", ["feat", "c1", "c2", "c_ax"], ["ctx"]),
         helper.make_node("Slice", ["feat", "c2", "c3", "c_ax"], ["flow0"]),
         helper.make_node("Loop", ["M", "", "h0", "flow0"], ["h", "flow"], body=body)],
        "raft_refine", [vi("feat", F32, [B, hid + ctx + 2, h, w])],
        [vi("h", F32, [B, hid, h, w]), vi("flow", F32, [B, 2, h, w])],
        [i64("M", iters), i64("c0", [0]), i64("c1", [hid]), i64("c2", [hid + ctx]), i64("c3", [hid + ctx + 2]),
         i64("c_ax", [1]),
         weights("Wz", [hid, hid + 2 + ctx, 3, 3], 0.08), weights("bz", [hid], 0.1),
         weights("Wr", [hid, hid + 2 + ctx, 3, 3], 0.08), weights("br", [hid], 0.1),
         weights("Wq", [hid, hid + 2 + ctx, 3, 3], 0.08), weights("bq", [hid], 0.1),
         weights("Wf", [2, hid, 3, 3], 0.05), weights("bf", [2], 0.01)])
    save(graph, path)
    return [uniform("feat", [B, hid + ctx + 2, h, w])], None


@model("beam_topk")
def beam_topk(path):
    beam, vocab, hidden, steps = 4, 128, 32, 40
    body = helper.make_graph(
        [helper.make_node("MatMul", ["h_in", "W"], ["logits"]),           # [batch*beam, vocab]
         helper.make_node("LogSoftmax", ["logits"], ["logp"], axis=1),
         helper.make_node("Add", ["logp", "scores_in"], ["total"]),        # scores_in [batch*beam, 1]
         helper.make_node("Reshape", ["total", "flat_shape"], ["flat"]),   # [batch, beam*vocab]
         helper.make_node("TopK", ["flat", "k"], ["best", "best_idx"], axis=1),
         helper.make_node("Div", ["best_idx", "vocab"], ["from_beam"]),    # [batch, beam]
         helper.make_node("Mod", ["best_idx", "vocab"], ["token"]),
         helper.make_node("Add", ["from_beam", "row_base"], ["rows2"]),    # + batch index * beam
         helper.make_node("Reshape", ["rows2", "col_shape"], ["rows"]),
         helper.make_node("Reshape", ["token", "col_shape"], ["tok"]),
         helper.make_node("Gather", ["h_in", "rows"], ["h_sel"], axis=0),
         helper.make_node("Gather", ["E", "tok"], ["emb"], axis=0),
         helper.make_node("MatMul", ["h_sel", "U"], ["hu"]),
         helper.make_node("Add", ["hu", "emb"], ["pre"]),
         helper.make_node("Tanh", ["pre"], ["h_out"]),
         helper.make_node("Reshape", ["best", "score_shape"], ["scores_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Identity", ["token"], ["token_scan"])],
        "body",
        [vi("i", I64, []), vi("cond_in", BOOL, []), vi("h_in", F32, [None, hidden]), vi("scores_in", F32, [None, 1]),
         vi("row_base", I64, [B, 1])],
        [vi("cond_out", BOOL, []), vi("h_out", F32, [None, hidden]), vi("scores_out", F32, [None, 1]),
         vi("row_base_out", I64, [B, 1]), vi("token_scan", I64, [B, beam])],
        [i64("flat_shape", [-1, beam * vocab]), i64("k", [beam]), i64("vocab", vocab), i64("col_shape", [-1]),
         i64("score_shape", [-1, 1])])
    # row_base is carried unchanged (an Identity keeps ONNX's output names distinct).
    body.node.append(helper.make_node("Identity", ["row_base"], ["row_base_out"]))
    graph = helper.make_graph(
        [helper.make_node("Shape", ["h0"], ["h0_shape"]),
         helper.make_node("Slice", ["h0_shape", "z1", "o1"], ["nb"]),           # [batch]
         helper.make_node("Squeeze", ["nb", "z1"], ["nbs"]),
         helper.make_node("Range", ["zs", "nbs", "ones"], ["bidx"]),
         helper.make_node("Mul", ["bidx", "beam_c"], ["base"]),
         helper.make_node("Unsqueeze", ["base", "o1"], ["row_base"]),            # [batch, 1]
         helper.make_node("Tile", ["h0", "tile_rep"], ["h_tiled"]),             # [batch, beam*hidden]
         helper.make_node("Reshape", ["h_tiled", "h_shape"], ["h_init"]),        # [batch*beam, hidden]
         helper.make_node("Reshape", ["h0", "row_shape"], ["h0_rows"]),
         helper.make_node("ReduceSum", ["h0_rows", "o1"], ["hsum"], keepdims=1),  # [batch, 1]
         helper.make_node("Mul", ["hsum", "zero"], ["hzero"]),
         helper.make_node("Add", ["hzero", "s_row"], ["s_b"]),                   # [batch, beam]
         helper.make_node("Reshape", ["s_b", "score_col"], ["s0"]),
         helper.make_node("Loop", ["M", "", "h_init", "s0", "row_base"], ["h", "scores", "rb", "tokens"],
                          body=body)],
        "beam_topk", [vi("h0", F32, [B, hidden])],
        [vi("h", F32, [None, hidden]), vi("scores", F32, [None, 1]), vi("tokens", I64, [steps, B, beam])],
        [i64("M", steps), i64("z1", [0]), i64("o1", [1]), i64("zs", 0), i64("ones", 1), i64("beam_c", beam),
         i64("tile_rep", [1, beam]), i64("h_shape", [-1, hidden]), i64("row_shape", [-1, hidden]),
         i64("score_col", [-1, 1]), const("zero", np.array(0, np.float32)),
         const("s_row", np.array([[0.0, -1e4, -1e4, -1e4]], np.float32)),
         weights("W", [hidden, vocab], 0.4), weights("E", [vocab, hidden], 0.5), weights("U", [hidden, hidden], 0.2)])
    save(graph, path)
    return [uniform("h0", [B, hidden])], None


@model("scan_multi_axis")
def scan_multi_axis(path):
    steps, width, hidden = 60, 16, 32
    body = helper.make_graph(
        [helper.make_node("Concat", ["a_t", "b_t", "h_in"], ["abh"], axis=1),
         helper.make_node("MatMul", ["abh", "W"], ["zr"]),
         helper.make_node("Add", ["zr", "bias"], ["zrb"]),
         helper.make_node("Split", ["zrb"], ["zp", "cp"], axis=1),
         helper.make_node("Sigmoid", ["zp"], ["z"]),
         helper.make_node("Tanh", ["cp"], ["cand"]),
         helper.make_node("Sub", ["cand", "h_in"], ["d"]),
         helper.make_node("Mul", ["z", "d"], ["zd"]),
         helper.make_node("Add", ["h_in", "zd"], ["h_out"]),
         helper.make_node("Identity", ["h_out"], ["y_t"]),
         helper.make_node("ReduceMax", ["h_out"], ["m_t"], axes=[1], keepdims=0)],
        "body", [vi("h_in", F32, [B, hidden]), vi("a_t", F32, [B, width]), vi("b_t", F32, [B, width])],
        [vi("h_out", F32, [B, hidden]), vi("y_t", F32, [B, hidden]), vi("m_t", F32, [B])])
    graph = helper.make_graph(
        [helper.make_node("ReduceSum", ["b", "ax12"], ["bs"], keepdims=0),       # [batch]
         helper.make_node("Unsqueeze", ["bs", "o1"], ["bsu"]),
         helper.make_node("Mul", ["bsu", "zero"], ["bz"]),
         helper.make_node("Expand", ["bz", "h_shape"], ["h0"]),
         helper.make_node("Scan", ["h0", "a", "b"], ["h", "ys", "ms"], body=body, num_scan_inputs=2,
                          scan_input_axes=[0, 1], scan_input_directions=[0, 1],
                          scan_output_axes=[1, 0], scan_output_directions=[0, 1])],
        "scan_multi_axis", [vi("a", F32, [steps, B, width]), vi("b", F32, [B, steps, width])],
        [vi("h", F32, [B, hidden]), vi("ys", F32, [B, steps, hidden]), vi("ms", F32, [steps, B])],
        [i64("ax12", [1, 2]), i64("o1", [1]), const("zero", np.array(0, np.float32)), i64("h_shape", [1, hidden]),
         weights("W", [2 * width + hidden, 2 * hidden], 0.2), weights("bias", [2 * hidden], 0.1)])
    save(graph, path)
    return [uniform("a", [steps, B, width]), uniform("b", [B, steps, width])], None


@model("tiny_loop")
def tiny_loop(path):
    steps, width = 2000, 8
    body = helper.make_graph(
        [helper.make_node("Mul", ["x_in", "decay"], ["xd"]),
         helper.make_node("Add", ["xd", "step"], ["xs"]),
         helper.make_node("Sin", ["xs"], ["xn"]),
         helper.make_node("Add", ["xn", "xd"], ["x_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body", [vi("i", I64, []), vi("cond_in", BOOL, []), vi("x_in", F32, [B, width])],
        [vi("cond_out", BOOL, []), vi("x_out", F32, [B, width])],
        [const("decay", np.array(0.5, np.float32))])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "x"], ["y"], body=body)],
        "tiny_loop", [vi("x", F32, [B, width])], [vi("y", F32, [B, width])],
        [i64("M", steps), weights("step", [width], 0.3)])
    save(graph, path)
    return [uniform("x", [B, width])], None


@model("big_body_loop")
def big_body_loop(path):
    iters, seq, d, ff = 6, 16, 256, 512
    body = helper.make_graph(
        [helper.make_node("MatMul", ["x_in", "W1"], ["a"]),
         helper.make_node("Add", ["a", "b1"], ["ab"]),
         helper.make_node("Mul", ["ab", "ab"], ["a2"]),
         helper.make_node("Mul", ["a2", "ab"], ["a3"]),
         helper.make_node("Mul", ["a3", "c044"], ["a3c"]),
         helper.make_node("Add", ["ab", "a3c"], ["inner"]),
         helper.make_node("Mul", ["inner", "c_sqrt"], ["inner2"]),
         helper.make_node("Tanh", ["inner2"], ["t"]),
         helper.make_node("Add", ["t", "one"], ["t1"]),
         helper.make_node("Mul", ["ab", "t1"], ["g1"]),
         helper.make_node("Mul", ["g1", "half"], ["gelu"]),
         helper.make_node("MatMul", ["gelu", "W2"], ["m"]),
         helper.make_node("Add", ["m", "x_in"], ["res"]),
         helper.make_node("LayerNormalization", ["res", "gamma", "beta"], ["x_out"], axis=-1),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body", [vi("i", I64, []), vi("cond_in", BOOL, []), vi("x_in", F32, [B, seq, d])],
        [vi("cond_out", BOOL, []), vi("x_out", F32, [B, seq, d])],
        [const("c044", np.array(0.044715, np.float32)), const("c_sqrt", np.array(0.7978846, np.float32)),
         const("one", np.array(1.0, np.float32)), const("half", np.array(0.5, np.float32))])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "x"], ["y"], body=body)],
        "big_body_loop", [vi("x", F32, [B, seq, d])], [vi("y", F32, [B, seq, d])],
        [i64("M", iters), weights("W1", [d, ff], 0.06), weights("b1", [ff], 0.02), weights("W2", [ff, d], 0.04),
         const("gamma", (1 + 0.1 * RNG.standard_normal(d)).astype(np.float32)), weights("beta", [d], 0.05)])
    save(graph, path)
    return [uniform("x", [B, seq, d])], None


@model("aside_rnnt_greedy")
def aside_rnnt_greedy(path):
    frames, enc_dim, pred_dim, joint, vocab, symbols = 40, 32, 32, 48, 64, 60
    # The If's branches: a symbol updates the prediction state (embedding + tanh cell);
    # blank advances the frame.
    symbol = helper.make_graph(
        [helper.make_node("Gather", ["E", "token"], ["emb"], axis=0),
         helper.make_node("MatMul", ["p_in", "Up"], ["pu"]),
         helper.make_node("Add", ["pu", "emb"], ["pe"]),
         helper.make_node("Tanh", ["pe"], ["p_new"]),
         helper.make_node("Identity", ["t_in"], ["t_same"])],
        "symbol", [], [vi("p_new", F32, [1, pred_dim]), vi("t_same", I64, [])])
    blank = helper.make_graph(
        [helper.make_node("Add", ["t_in", "one"], ["t_next"]),
         helper.make_node("Min", ["t_next", "last"], ["t_clamped"]),
         helper.make_node("Identity", ["p_in"], ["p_same"])],
        "blank", [], [vi("p_same", F32, [1, pred_dim]), vi("t_clamped", I64, [])])
    body = helper.make_graph(
        [helper.make_node("Gather", ["enc", "t_in"], ["f"], axis=0),          # [1, enc_dim]
         helper.make_node("MatMul", ["f", "We"], ["fe"]),
         helper.make_node("MatMul", ["p_in", "Wp"], ["pp"]),
         helper.make_node("Add", ["fe", "pp"], ["jp"]),
         helper.make_node("Tanh", ["jp"], ["j"]),
         helper.make_node("MatMul", ["j", "Wo"], ["lo"]),
         helper.make_node("Add", ["lo", "bo"], ["logits"]),
         helper.make_node("ArgMax", ["logits"], ["tok1"], axis=1, keepdims=0),
         helper.make_node("Squeeze", ["tok1"], ["token"]),
         helper.make_node("Equal", ["token", "blank_id"], ["is_blank"]),
         helper.make_node("If", ["is_blank"], ["p_out", "t_out"], then_branch=blank, else_branch=symbol),
         helper.make_node("Less", ["t_out", "last"], ["more"]),
         helper.make_node("Identity", ["token"], ["token_scan"])],
        "body",
        [vi("i", I64, []), vi("cond_in", BOOL, []), vi("p_in", F32, [1, pred_dim]), vi("t_in", I64, [])],
        [vi("more", BOOL, []), vi("p_out", F32, [1, pred_dim]), vi("t_out", I64, []), vi("token_scan", I64, [])],
        [i64("one", 1), i64("last", frames - 1), i64("blank_id", 0)])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "go", "p0", "t0"], ["p", "t", "tokens"], body=body)],
        "aside_rnnt_greedy", [vi("enc", F32, [frames, 1, enc_dim])],
        [vi("p", F32, [1, pred_dim]), vi("t", I64, []), vi("tokens", I64, [None])],
        [i64("M", symbols), const("go", np.array(True)), const("p0", np.zeros((1, pred_dim), np.float32)),
         i64("t0", 0), weights("We", [enc_dim, joint], 0.3), weights("Wp", [pred_dim, joint], 0.3),
         weights("Wo", [joint, vocab], 0.4), weights("E", [vocab, pred_dim], 0.5),
         const("bo", np.array([2.0] + [0.0] * (vocab - 1), np.float32)),
         weights("Up", [pred_dim, pred_dim], 0.3)])
    save(graph, path)
    return [uniform("enc", [frames, 1, enc_dim])], None


@model("aside_loop_in_if")
def aside_loop_in_if(path):
    outer, inner, width = 30, 4, 24

    def inner_loop(name, act):
        return helper.make_graph(
            [helper.make_node("MatMul", ["r_in", "W" + name], ["rw"]),
             helper.make_node("Add", ["rw", "x_in"], ["pre"]),
             helper.make_node(act, ["pre"], ["r_out"]),
             helper.make_node("Identity", ["c_in"], ["c_out"])],
            "inner_" + name, [vi("j", I64, []), vi("c_in", BOOL, []), vi("r_in", F32, [B, width])],
            [vi("c_out", BOOL, []), vi("r_out", F32, [B, width])])

    then_branch = helper.make_graph(
        [helper.make_node("Loop", ["K", "", "x_in"], ["y_a"], body=inner_loop("a", "Tanh"))],
        "then", [], [vi("y_a", F32, [B, width])])
    else_branch = helper.make_graph(
        [helper.make_node("Loop", ["K", "", "x_in"], ["y_b"], body=inner_loop("b", "Sigmoid"))],
        "else", [], [vi("y_b", F32, [B, width])])
    body = helper.make_graph(
        [helper.make_node("ReduceSum", ["x_in"], ["s"], keepdims=0),
         helper.make_node("Greater", ["s", "zero"], ["pos"]),
         helper.make_node("If", ["pos"], ["y"], then_branch=then_branch, else_branch=else_branch),
         helper.make_node("Sub", ["y", "shift"], ["x_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body", [vi("i", I64, []), vi("cond_in", BOOL, []), vi("x_in", F32, [B, width])],
        [vi("cond_out", BOOL, []), vi("x_out", F32, [B, width])],
        [const("zero", np.array(0, np.float32))])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "x"], ["y"], body=body)],
        "aside_loop_in_if", [vi("x", F32, [B, width])], [vi("y", F32, [B, width])],
        [i64("M", outer), i64("K", inner), weights("Wa", [width, width], 0.3), weights("Wb", [width, width], 0.3),
         weights("shift", [width], 0.2)])
    save(graph, path)
    return [uniform("x", [B, width])], None


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

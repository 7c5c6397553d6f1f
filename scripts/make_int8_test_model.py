#!/usr/bin/env python3
"""Writes the quantized test model (QDQ form) and its reference output.

OUT/resnet_block_int8_op13/ holds model.onnx, inputs/input.npy,
expected/output.npy and meta.json, as scripts/make_test_models.py writes
its models (tests/integration/int8_models_test.cc reads them). Everything
is seeded, so every run writes the same files; a stamp keyed by this
script's contents skips the work when it is done.

Run with Debian's interpreter:
    /usr/bin/python3 scripts/make_int8_test_model.py --out build/models
"""
import argparse
import hashlib
import json
import os

import numpy as np
import torch


# A quantized residual block in ONNX's QDQ form (what bench/quantize.py
# writes for ResNets), built by hand so that no quantizer or calibration
# runtime is needed: Q(image) -> Conv+Relu -> MaxPool -> Conv+Relu -> Conv,
# + the MaxPool's output -> Relu -> GlobalAveragePool -> Gemm, per-channel
# s8 weights within 7 bits, u8 activations whose scales come from the float
# block's ranges on the test input. The expected output is the QDQ graph
# evaluated as ONNX defines it (float convolutions of the dequantized
# values); int8 kernels may differ from it by one step of an activation,
# which the tolerance covers.
def int8_block_graph(out_dir, name="resnet_block_int8_op13"):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(21)
    x = rng.uniform(-1, 1, (1, 3, 32, 32)).astype(np.float32)
    f = torch.nn.functional
    weights = {"c1": rng.normal(0, 0.3, (16, 3, 3, 3)), "c2": rng.normal(0, 0.1, (16, 16, 3, 3)),
               "c3": rng.normal(0, 0.1, (16, 16, 3, 3))}
    biases = {k: rng.normal(0, 0.1, (16,)) for k in weights}
    fc_w, fc_b = rng.normal(0, 0.3, (10, 16)).astype(np.float32), rng.normal(0, 0.1, (10,)).astype(np.float32)
    wq, ws = {}, {}
    for k, w in weights.items():
        ws[k] = (np.abs(w).reshape(16, -1).max(axis=1) / 63).astype(np.float32)
        wq[k] = np.clip(np.rint(w / ws[k].reshape(-1, 1, 1, 1)), -63, 63).astype(np.int8)
    fs = (np.abs(fc_w).max(axis=1) / 63).astype(np.float32)
    fq = np.clip(np.rint(fc_w / fs.reshape(-1, 1)), -63, 63).astype(np.int8)

    def q_params(t):
        lo, hi = min(float(t.min()), 0.0), max(float(t.max()), 0.0)
        scale = np.float32((hi - lo) / 255.0)
        return scale, np.uint8(np.clip(np.rint(-lo / scale), 0, 255))

    def qdq(t, p):  # QuantizeLinear then DequantizeLinear, in f32 as ONNX defines them
        q = np.clip(np.rint(t.numpy() / p[0]) + p[1], 0, 255)
        return torch.from_numpy(((q - p[1]) * p[0]).astype(np.float32))

    def conv(t, k, xs):
        w = torch.from_numpy(wq[k].astype(np.float32) * ws[k].reshape(-1, 1, 1, 1))
        bias_scale = (np.float64(xs) * ws[k].astype(np.float64)).astype(np.float32)
        bq = np.rint(biases[k] / bias_scale).astype(np.int32)
        b = torch.from_numpy((bq * bias_scale).astype(np.float32))
        return f.conv2d(t, w, b, padding=1), bq, bias_scale

    # Scales from the block itself (the first pass), then the QDQ evaluation.
    params = {}
    for stage in ("calibrate", "evaluate"):
        t = torch.from_numpy(x)
        def p(key, v):
            if stage == "calibrate":
                params[key] = q_params(v)
            return params[key]
        xin = qdq(t, p("x", t))
        y1 = torch.relu(conv(xin, "c1", params["x"][0])[0]); y1q = qdq(y1, p("y1", y1))
        pool = f.max_pool2d(y1q, 3, 2, 1)
        y2 = torch.relu(conv(pool, "c2", params["y1"][0])[0]); y2q = qdq(y2, p("y2", y2))
        y3 = conv(y2q, "c3", params["y2"][0])[0]; y3q = qdq(y3, p("y3", y3))
        s = torch.relu(y3q + pool); sq = qdq(s, p("s", s))
        g = sq.mean(dim=(2, 3))
        gq = qdq(g, p("g", g))
        out = gq @ torch.from_numpy(fq.astype(np.float32) * fs.reshape(-1, 1)).T + torch.from_numpy(fc_b)

    nodes, inits = [], []
    def init(n, a):
        inits.append(numpy_helper.from_array(np.asarray(a), n))
        return n
    def qdq_nodes(src, key):
        init(key + "_s", params[key][0]); init(key + "_z", params[key][1])
        nodes.append(helper.make_node("QuantizeLinear", [src, key + "_s", key + "_z"], [key + "_q"]))
        nodes.append(helper.make_node("DequantizeLinear", [key + "_q", key + "_s", key + "_z"], [key + "_dq"]))
        return key + "_dq"
    def conv_nodes(src, k, xs, out):
        _, bq, bias_scale = conv(torch.zeros(1, wq[k].shape[1], 3, 3), k, xs)
        init(k + "_w", wq[k]); init(k + "_ws", ws[k]); init(k + "_wz", np.zeros(16, np.int8))
        init(k + "_b", bq); init(k + "_bs", bias_scale); init(k + "_bz", np.zeros(16, np.int32))
        nodes.append(helper.make_node("DequantizeLinear", [k + "_w", k + "_ws", k + "_wz"], [k + "_wd"], axis=0))
        nodes.append(helper.make_node("DequantizeLinear", [k + "_b", k + "_bs", k + "_bz"], [k + "_bd"], axis=0))
        nodes.append(helper.make_node("Conv", [src, k + "_wd", k + "_bd"], [out], pads=[1, 1, 1, 1]))
    xd = qdq_nodes("input", "x")
    conv_nodes(xd, "c1", params["x"][0], "c1_out")
    nodes.append(helper.make_node("Relu", ["c1_out"], ["y1"]))
    y1d = qdq_nodes("y1", "y1")
    nodes.append(helper.make_node("MaxPool", [y1d], ["pool"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    # The pool's output reuses y1's parameters (so the pair around it cancels).
    nodes.append(helper.make_node("QuantizeLinear", ["pool", "y1_s", "y1_z"], ["pool_q"]))
    nodes.append(helper.make_node("DequantizeLinear", ["pool_q", "y1_s", "y1_z"], ["pool_dq"]))
    pd = "pool_dq"
    conv_nodes(pd, "c2", params["y1"][0], "c2_out")
    nodes.append(helper.make_node("Relu", ["c2_out"], ["y2"]))
    y2d = qdq_nodes("y2", "y2")
    conv_nodes(y2d, "c3", params["y2"][0], "y3")
    y3d = qdq_nodes("y3", "y3")
    nodes.append(helper.make_node("Add", [y3d, pd], ["sum"]))
    nodes.append(helper.make_node("Relu", ["sum"], ["s"]))
    sd = qdq_nodes("s", "s")
    nodes.append(helper.make_node("GlobalAveragePool", [sd], ["gap"]))
    nodes.append(helper.make_node("Flatten", ["gap"], ["g"]))
    gd = qdq_nodes("g", "g")
    init("fc_w", fq); init("fc_ws", fs); init("fc_wz", np.zeros(10, np.int8)); init("fc_b", fc_b)
    nodes.append(helper.make_node("DequantizeLinear", ["fc_w", "fc_ws", "fc_wz"], ["fc_wd"], axis=0))
    nodes.append(helper.make_node("Gemm", [gd, "fc_wd", "fc_b"], ["output"], transB=1))
    graph = helper.make_graph(nodes, "resnet_block_int8",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 32, 32])],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 10])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    d = os.path.join(out_dir, name)
    os.makedirs(os.path.join(d, "inputs"), exist_ok=True)
    os.makedirs(os.path.join(d, "expected"), exist_ok=True)
    onnx.save(m, os.path.join(d, "model.onnx"))
    np.save(os.path.join(d, "inputs", "input.npy"), x)
    np.save(os.path.join(d, "expected", "output.npy"), out.numpy())
    # One step of the last activation moves a logit by about max|fc_w| * g's scale.
    atol = float(4 * np.abs(fc_w).max() * params["g"][0] + 1e-4)
    with open(os.path.join(d, "meta.json"), "w") as fh:
        json.dump({"inputs": ["input"], "outputs": ["output"], "atol": atol, "opset": 13}, fh, indent=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    with open(__file__, "rb") as f:
        stamp = hashlib.sha256(f.read()).hexdigest()
    stamp_path = os.path.join(args.out, "resnet_block_int8_op13", ".stamp")
    if os.path.exists(stamp_path) and open(stamp_path).read() == stamp:
        return
    int8_block_graph(args.out)
    with open(stamp_path, "w") as f:
        f.write(stamp)


if __name__ == "__main__":
    main()

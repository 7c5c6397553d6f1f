#!/usr/bin/python3
"""Quantizes an fp32 ONNX model into ONNX's QDQ form (issue 21 item 4).

    /usr/bin/python3 bench/quantize.py IN.onnx OUT.onnx --calibration N
        [--seed S] [--weight-bits 7|8] [--chunk C] [--ort-dir build/ort]

Static quantization, the form ONNX Runtime's quantizer writes (its own
quantizer is not packaged here; this is an independent implementation):

- weights of Conv (per output channel, DequantizeLinear axis 0), MatMul and
  Gemm (per column of the product's B) become s8 initializers, symmetric
  (zero point 0), scale max|w| / qmax; a Conv's bias becomes int32 at scale
  x_scale * w_scale[c];
- activations become u8, asymmetric, per tensor: every float tensor read by
  a Conv, MatMul, Gemm, Add or MaxPool gets a QuantizeLinear ->
  DequantizeLinear pair after its producer, with scale and zero point from
  the min / max (extended to 0) seen over N calibration inputs; a MaxPool's
  output reuses its input's parameters (so the pair around it cancels).

Calibration inputs are seeded: input i of sample s is uniform in [-1, 1)
from numpy's default_rng(seed + s) (integer inputs are not supported). The
activations come from ONNX Runtime (onnxruntime-node under --ort-dir, run by
bench/ort_run.js) on a copy of the model that outputs every tensor.

--weight-bits 7 (the default) keeps weights within [-64, 63]: on CPUs
without VNNI (AVX2, AVX-512 without VNNI) the u8 x s8 instruction both
oneDNN and ONNX Runtime use (vpmaddubsw) saturates a pair of products in
int16 when weights use the full s8 range, which ONNX Runtime's quantizer
avoids the same way (its reduce_range). --weight-bits 8 uses [-127, 127]
(ged then splits each convolution's input in two to stay exact).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

QUANTIZED_CONSUMERS = {"Conv", "MatMul", "Gemm", "Add", "MaxPool"}
HERE = os.path.dirname(os.path.abspath(__file__))


def safe(name):
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)


def float_inputs(model):
    inits = {i.name for i in model.graph.initializer}
    out = []
    for i in model.graph.input:
        if i.name in inits:
            continue
        t = i.type.tensor_type
        if t.elem_type != TensorProto.FLOAT:
            sys.exit(f"quantize.py: input {i.name} is not float32")
        dims = [d.dim_value if d.dim_value > 0 else 1 for d in t.shape.dim]
        dynamic_batch = len(t.shape.dim) > 0 and t.shape.dim[0].dim_value <= 0
        out.append((i.name, dims, dynamic_batch))
    return out


def tensors_to_quantize(model):
    """Float activations read by a quantized consumer (not initializers)."""
    inits = {i.name for i in model.graph.initializer}
    names = []
    for node in model.graph.node:
        if node.op_type not in QUANTIZED_CONSUMERS:
            continue
        reads = node.input[:1] if node.op_type in ("Conv", "Gemm", "MaxPool") else node.input[:2]
        for name in reads:
            if name and name not in inits and name not in names:
                names.append(name)
    return names


def calibrate(model, names, count, seed, chunk, ort_dir):
    """Per tensor (min, max) over `count` seeded inputs, by ONNX Runtime."""
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    existing = {o.name for o in probe.graph.output}
    for name in names:
        if name not in existing:
            probe.graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    inputs = float_inputs(model)
    if not all(dynamic for _, _, dynamic in inputs):
        chunk = 1  # a static batch dim: one sample per run
    ranges = {name: [np.inf, -np.inf] for name in names}
    env = dict(os.environ, NODE_PATH=os.path.join(os.path.abspath(ort_dir), "node_modules"))
    with tempfile.TemporaryDirectory() as tmp:
        probe_path = os.path.join(tmp, "probe.onnx")
        onnx.save(probe, probe_path)
        for start in range(0, count, chunk):
            batch = list(range(start, min(count, start + chunk)))
            args = ["node", os.path.join(HERE, "ort_run.js"), probe_path, "--iterations", "1", "--warmup", "0",
                    "--output-dir", os.path.join(tmp, "out")]
            for k, (name, dims, _) in enumerate(inputs):
                arrays = [(np.random.default_rng(seed + s).random(size=dims) * 2 - 1).astype(np.float32) for s in batch]
                # One input per sample, stacked along the batch dim.
                stacked = np.concatenate(arrays, axis=0) if len(dims) > 0 else arrays[0]
                path = os.path.join(tmp, f"in_{k}.npy")
                np.save(path, stacked)
                args += ["--input", f"{name}={path}"]
            subprocess.run(args, check=True, env=env, stdout=subprocess.DEVNULL)
            for name in names:
                v = np.load(os.path.join(tmp, "out", safe(name) + ".npy"))
                ranges[name][0] = min(ranges[name][0], float(v.min()))
                ranges[name][1] = max(ranges[name][1], float(v.max()))
            shutil.rmtree(os.path.join(tmp, "out"))
    return ranges


def u8_params(lo, hi):
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = (hi - lo) / 255.0 if hi > lo else 1.0
    zero = int(np.clip(np.round(-lo / scale), 0, 255))
    return np.float32(scale), np.uint8(zero)


def quantize_weights(w, axis, qmax):
    """Symmetric s8 per channel along `axis`: (q, scales)."""
    moved = np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)
    amax = np.abs(moved).max(axis=1)
    scales = np.where(amax > 0, amax / qmax, 1.0).astype(np.float32)
    shape = [1] * w.ndim
    shape[axis] = -1
    q = np.clip(np.round(w / scales.reshape(shape)), -qmax, qmax).astype(np.int8)
    return q, scales


class Builder:
    def __init__(self, model):
        self.model = model
        self.graph = model.graph
        self.inits = {i.name: i for i in self.graph.initializer}
        self.new_nodes = {}  # node index -> nodes to insert before it
        self.counter = 0

    def unique(self, base):
        self.counter += 1
        return f"{safe(base)}_q{self.counter}"

    def add_init(self, name, array):
        self.graph.initializer.append(numpy_helper.from_array(array, name))
        return name

    def dq(self, q_name, scale_name, zero_name, out_name, axis=None):
        attrs = {} if axis is None else {"axis": axis}
        return helper.make_node("DequantizeLinear", [q_name, scale_name, zero_name], [out_name],
                                name=self.unique("dq"), **attrs)


def quantize(model, ranges, weight_bits):
    b = Builder(model)
    graph = model.graph
    qmax = 63 if weight_bits == 7 else 127
    params = {name: u8_params(*ranges[name]) for name in ranges}
    # A MaxPool's output shares its input's parameters.
    for node in graph.node:
        if node.op_type == "MaxPool" and node.output[0] in params and node.input[0] in params:
            params[node.output[0]] = params[node.input[0]]
    nodes = list(graph.node)
    del graph.node[:]
    producer_index = {}
    for idx, node in enumerate(nodes):
        for o in node.output:
            producer_index[o] = idx
    renamed = {}  # float tensor -> its DQ output
    after = {}    # node index -> Q/DQ nodes after it
    before_all = []
    for name, (scale, zero) in params.items():
        s = b.add_init(b.unique(name + "_scale"), np.array(scale, dtype=np.float32))
        z = b.add_init(b.unique(name + "_zero_point"), np.array(zero, dtype=np.uint8))
        q_out, dq_out = b.unique(name + "_quantized"), b.unique(name + "_dequantized")
        pair = [helper.make_node("QuantizeLinear", [name, s, z], [q_out], name=b.unique("q")),
                b.dq(q_out, s, z, dq_out)]
        if name in producer_index:
            after.setdefault(producer_index[name], []).extend(pair)
        else:
            before_all.extend(pair)
        renamed[name] = (dq_out, scale)
    out = list(before_all)
    for idx, node in enumerate(nodes):
        quantized_reads = node.op_type in QUANTIZED_CONSUMERS
        for i, name in enumerate(node.input):
            if name in renamed and quantized_reads:
                node.input[i] = renamed[name][0]
        if node.op_type in ("Conv", "MatMul", "Gemm") and node.input[1] in b.inits:
            w = numpy_helper.to_array(b.inits[node.input[1]])
            if node.op_type == "Conv":
                axis = 0
            elif node.op_type == "Gemm":
                axis = 0 if any(a.name == "transB" and a.i for a in node.attribute) else 1
            else:
                axis = w.ndim - 1
            q, scales = quantize_weights(w, axis, qmax)
            qn = b.add_init(b.unique(node.input[1] + "_s8"), q)
            sn = b.add_init(b.unique(node.input[1] + "_scale"), scales)
            zn = b.add_init(b.unique(node.input[1] + "_zero_point"), np.zeros(scales.shape, dtype=np.int8))
            wd = b.unique(node.input[1] + "_dequantized")
            out.append(b.dq(qn, sn, zn, wd, axis=axis))
            node.input[1] = wd
            x_name = next((k for k, v in renamed.items() if v[0] == node.input[0]), None)
            if node.op_type == "Conv" and len(node.input) > 2 and node.input[2] in b.inits and x_name is not None:
                bias = numpy_helper.to_array(b.inits[node.input[2]]).astype(np.float64)
                bias_scale = (np.float64(renamed[x_name][1]) * scales.astype(np.float64)).astype(np.float32)
                bq = np.round(bias / bias_scale).astype(np.int32)
                bqn = b.add_init(b.unique(node.input[2] + "_int32"), bq)
                bsn = b.add_init(b.unique(node.input[2] + "_scale"), bias_scale)
                bzn = b.add_init(b.unique(node.input[2] + "_zero_point"), np.zeros(bq.shape, dtype=np.int32))
                bd = b.unique(node.input[2] + "_dequantized")
                out.append(b.dq(bqn, bsn, bzn, bd, axis=0))
                node.input[2] = bd
        out.append(node)
        out.extend(after.get(idx, []))
    graph.node.extend(out)
    # Drop the float initializers nothing reads any more.
    used = {i for n in graph.node for i in n.input} | {o.name for o in graph.output}
    keep = [i for i in graph.initializer if i.name in used]
    del graph.initializer[:]
    graph.initializer.extend(keep)
    return model


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--calibration", type=int, required=True, help="number of seeded calibration inputs")
    p.add_argument("--seed", type=int, default=5000)
    p.add_argument("--weight-bits", type=int, choices=(7, 8), default=7)
    p.add_argument("--chunk", type=int, default=4, help="calibration inputs per ONNX Runtime run")
    p.add_argument("--ort-dir", default=os.path.join(HERE, "..", "build", "ort"))
    args = p.parse_args()
    if args.calibration < 1:
        sys.exit("quantize.py: --calibration must be at least 1")
    model = onnx.load(args.input)
    names = tensors_to_quantize(model)
    ranges = calibrate(model, names, args.calibration, args.seed, args.chunk, args.ort_dir)
    quantize(model, ranges, args.weight_bits)
    onnx.checker.check_model(model)
    onnx.save(model, args.output)
    counts = {}
    for n in model.graph.node:
        counts[n.op_type] = counts.get(n.op_type, 0) + 1
    print(f"quantize.py: {len(names)} activations calibrated on {args.calibration} inputs; nodes {counts}")


if __name__ == "__main__":
    main()

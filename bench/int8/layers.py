#!/usr/bin/python3
"""Per-layer comparison of a QDQ model between ged and ONNX Runtime.

    /usr/bin/python3 bench/int8/layers.py MODEL.onnx [--samples 8] [--seed 7000]
        [--gectl build/bin/gectl] [--ort-dir build/ort] [--input-name image]

Every QuantizeLinear output of MODEL (the int8 activations both runtimes
compute, whatever they fuse) and every graph output becomes an output of a
copy of the model; both runtimes run that copy on --samples seeded inputs
(numpy default_rng(seed + i), uniform in [-1, 1), stacked along the batch
dim) and each tensor is compared: how many elements differ, by how much at
most, in graph order, so the first layer that departs from ONNX Runtime is
the first line with a non-zero count. Prints one JSON object last.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnx.shape_inference

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))


def safe(name):
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)


def run(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), r.stderr[-3000:]))
    return r.stdout


def probe_model(model):
    """A copy of `model` that also outputs every QuantizeLinear result."""
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    names = [o.name for o in probe.graph.output]
    # Types and shapes from ONNX's inference (ged's importer wants shapes).
    inferred = {v.name: v for v in onnx.shape_inference.infer_shapes(model).graph.value_info}
    for node in probe.graph.node:
        if node.op_type == "QuantizeLinear" and node.output[0] not in names and node.output[0] in inferred:
            names.append(node.output[0])
            probe.graph.output.append(inferred[node.output[0]])
    return probe, names


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model")
    p.add_argument("--samples", type=int, default=8)
    p.add_argument("--seed", type=int, default=7000)
    p.add_argument("--gectl", default=os.path.join(ROOT, "build", "bin", "gectl"))
    p.add_argument("--ort-dir", default=os.path.join(ROOT, "build", "ort"))
    p.add_argument("--input-name", default="image")
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    env = dict(os.environ, NODE_PATH=os.path.join(os.path.abspath(args.ort_dir), "node_modules"))
    model = onnx.load(args.model)
    probe, names = probe_model(model)
    dims = [d.dim_value if d.dim_value > 0 else 1 for d in
            next(i for i in model.graph.input if i.name == args.input_name).type.tensor_type.shape.dim]
    report = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "probe.onnx")
        onnx.save(probe, path)
        x = np.concatenate([(np.random.default_rng(args.seed + i).random(dims) * 2 - 1).astype(np.float32)
                            for i in range(args.samples)])
        xin = os.path.join(tmp, "x.npy")
        np.save(xin, x)
        ged_dir, ort_dir = os.path.join(tmp, "ged"), os.path.join(tmp, "ort")
        run([args.gectl, "--no-cache", "run", path, "--input", f"{args.input_name}={xin}", "--output-dir", ged_dir])
        run(["node", os.path.join(ROOT, "bench", "ort_run.js"), path, "--input", f"{args.input_name}={xin}",
             "--iterations", "1", "--warmup", "0", "--threads", str(args.threads), "--output-dir", ort_dir], env)
        for name in names:
            g = np.load(os.path.join(ged_dir, safe(name) + ".npy")).astype(np.float64)
            o = np.load(os.path.join(ort_dir, safe(name) + ".npy")).astype(np.float64)
            d = np.abs(g - o)
            row = {"tensor": name, "elements": int(d.size), "differ": int((d > 0).sum()),
                   "max_diff": float(d.max()) if d.size else 0.0}
            if np.issubdtype(g.dtype, np.floating) and g.ndim == 2:
                row["top1_agree"] = float((g.argmax(1) == o.argmax(1)).mean())
            report.append(row)
            print("%-70s differ %8d / %-9d max %g" % (name[:70], row["differ"], row["elements"], row["max_diff"]))
    print(json.dumps({"model": args.model, "samples": args.samples, "tensors": report}))


if __name__ == "__main__":
    main()

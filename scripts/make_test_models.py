#!/usr/bin/env python3
"""Exports the test models with torch and writes their reference outputs.

For each model, OUT/<name>/ holds model.onnx, inputs/<input>.npy,
expected/<output>.npy and meta.json (input/output names and the tolerance the
tests use). Weights are random but seeded, so every run writes the same
files; a stamp keyed by this script's contents and the torch version skips
work that is already done.

Run with Debian's interpreter: /usr/bin/python3 scripts/make_test_models.py --out build/models
"""
import argparse
import hashlib
import json
import os
import sys
import warnings

import numpy as np
import torch
import torchvision

MODELS = {}


def model(name, atol, opsets=(13, 17)):
    def register(fn):
        for opset in opsets:
            MODELS[f"{name}_op{opset}"] = (fn, opset, atol)
        return fn
    return register


@model("resnet18", atol=1e-4)
def resnet18():
    torch.manual_seed(0)
    net = torchvision.models.resnet18(weights=None)
    return net, {"input": torch.randn(1, 3, 224, 224)}


@model("mobilenet_v2", atol=1e-4)
def mobilenet_v2():
    torch.manual_seed(1)
    net = torchvision.models.mobilenet_v2(weights=None)
    return net, {"input": torch.randn(1, 3, 224, 224)}


@model("transformer", atol=1e-3)
def transformer():
    torch.manual_seed(2)
    layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128,
                                             dropout=0.1, batch_first=True)
    net = torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
    return net, {"src": torch.randn(2, 16, 64)}


def export(name, fn, opset, atol, out_dir):
    net, inputs = fn()
    net.eval()
    d = os.path.join(out_dir, name)
    os.makedirs(os.path.join(d, "inputs"), exist_ok=True)
    os.makedirs(os.path.join(d, "expected"), exist_ok=True)
    args = tuple(inputs.values())
    with torch.no_grad():
        outputs = net(*args)
    if isinstance(outputs, torch.Tensor):
        outputs = (outputs,)
    output_names = [f"output{i}" if len(outputs) > 1 else "output" for i in range(len(outputs))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(net, args, os.path.join(d, "model.onnx"), opset_version=opset,
                          input_names=list(inputs.keys()), output_names=output_names,
                          do_constant_folding=True)
    for k, v in inputs.items():
        np.save(os.path.join(d, "inputs", f"{k}.npy"), v.numpy())
    for k, v in zip(output_names, outputs):
        np.save(os.path.join(d, "expected", f"{k}.npy"), v.numpy())
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump({"inputs": list(inputs.keys()), "outputs": output_names, "atol": atol,
                   "opset": opset}, f, indent=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--only", nargs="*", help="model names to export (default: all)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    with open(__file__, "rb") as f:
        stamp = hashlib.sha256(f.read() + torch.__version__.encode()).hexdigest()
    for name, (fn, opset, atol) in sorted(MODELS.items()):
        if args.only and name not in args.only:
            continue
        stamp_path = os.path.join(args.out, name, ".stamp")
        if os.path.exists(stamp_path) and open(stamp_path).read() == stamp:
            continue
        print(f"make_test_models: exporting {name}", file=sys.stderr)
        export(name, fn, opset, atol, args.out)
        with open(stamp_path, "w") as f:
            f.write(stamp)


if __name__ == "__main__":
    main()

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


# Models with a dynamic axis, for gears (gectl compile --dynamic_batch_size /
# --dynamic_dims): exported once with the axis free, with torch's outputs for
# several sizes of it: inputs/<input>_<size>.npy, expected/<output>_<size>.npy.
# meta.json lists the sizes ("sizes") and the gear flags the tests use.
DYNAMIC_MODELS = {}


def dynamic_model(name, atol, opset, axis_name, sizes, gear_flags):
    def register(fn):
        DYNAMIC_MODELS[name] = (fn, opset, atol, axis_name, sizes, gear_flags)
        return fn
    return register


@dynamic_model("resnet18_dynbatch", atol=1e-4, opset=17, axis_name="batch", sizes=(1, 3, 4, 8),
               gear_flags=["--dynamic_batch_size", "1,4,8"])
def resnet18_dynbatch():
    torch.manual_seed(0)
    net = torchvision.models.resnet18(weights=None)
    # input name -> (make(size), dynamic axis)
    return net, {"input": (lambda n: torch.randn(n, 3, 224, 224), 0)}


@dynamic_model("transformer_dynseq", atol=1e-3, opset=17, axis_name="seq", sizes=(8, 16, 32),
               gear_flags=["--input_shape", "src:2,-1,64", "--dynamic_dims", "2,8;2,16;2,32"])
def transformer_dynseq():
    torch.manual_seed(2)
    layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128,
                                             dropout=0.1, batch_first=True)
    net = torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
    return net, {"src": (lambda n: torch.randn(2, n, 64), 1)}


def export_dynamic(name, spec, out_dir):
    fn, opset, atol, axis_name, sizes, gear_flags = spec
    net, makers = fn()
    net.eval()
    d = os.path.join(out_dir, name)
    os.makedirs(os.path.join(d, "inputs"), exist_ok=True)
    os.makedirs(os.path.join(d, "expected"), exist_ok=True)
    output_names = None
    for size in sizes:
        torch.manual_seed(1000 + size)
        inputs = {k: make(size) for k, (make, _) in makers.items()}
        with torch.no_grad():
            outputs = net(*inputs.values())
        if isinstance(outputs, torch.Tensor):
            outputs = (outputs,)
        if output_names is None:
            output_names = [f"output{i}" if len(outputs) > 1 else "output" for i in range(len(outputs))]
            dynamic_axes = {k: {axis: axis_name} for k, (_, axis) in makers.items()}
            # Outputs keep the inputs' dynamic axis at the same position.
            first_axis = next(iter(makers.values()))[1]
            dynamic_axes.update({k: {first_axis: axis_name} for k in output_names})
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch.onnx.export(net, tuple(inputs.values()), os.path.join(d, "model.onnx"),
                                  opset_version=opset, input_names=list(makers.keys()),
                                  output_names=output_names, dynamic_axes=dynamic_axes,
                                  do_constant_folding=True)
        for k, v in inputs.items():
            np.save(os.path.join(d, "inputs", f"{k}_{size}.npy"), v.numpy())
        for k, v in zip(output_names, outputs):
            np.save(os.path.join(d, "expected", f"{k}_{size}.npy"), v.numpy())
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump({"inputs": list(makers.keys()), "outputs": output_names, "atol": atol,
                   "opset": opset, "sizes": list(sizes), "gear_flags": gear_flags}, f, indent=1)


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
    jobs = [(name, lambda n=name, m=m: export(n, *m, args.out)) for name, m in sorted(MODELS.items())]
    jobs += [(name, lambda n=name, m=m: export_dynamic(n, m, args.out))
             for name, m in sorted(DYNAMIC_MODELS.items())]
    for name, job in jobs:
        if args.only and name not in args.only:
            continue
        stamp_path = os.path.join(args.out, name, ".stamp")
        if os.path.exists(stamp_path) and open(stamp_path).read() == stamp:
            continue
        print(f"make_test_models: exporting {name}", file=sys.stderr)
        job()
        with open(stamp_path, "w") as f:
            f.write(stamp)


if __name__ == "__main__":
    main()

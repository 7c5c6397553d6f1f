#!/usr/bin/env python3
"""Exports the end-to-end benchmark models of docs/perf.md with torch.

OUT/<name>_b<batch>.onnx for resnet18, resnet50, mobilenet_v2 (3x224x224 images)
and a BERT-base sized encoder (12 layers, hidden 768, 12 heads, FFN 3072, GELU,
sequence 128), at batch 1 and 8, opset 17, weights random but seeded. The shapes
are static: each batch is its own file, as atc would compile it. Files that
already exist are kept.

Run with Debian's interpreter:
    /usr/bin/python3 bench/make_bench_models.py --out build/bench_models
"""
import argparse
import os
import warnings

import torch
import torchvision


def resnet18():
    return torchvision.models.resnet18(weights=None), (3, 224, 224)


def resnet50():
    return torchvision.models.resnet50(weights=None), (3, 224, 224)


def mobilenet_v2():
    return torchvision.models.mobilenet_v2(weights=None), (3, 224, 224)


def bert_base():
    layer = torch.nn.TransformerEncoderLayer(d_model=768, nhead=12, dim_feedforward=3072, dropout=0.0,
                                             activation="gelu", batch_first=True)
    net = torch.nn.TransformerEncoder(layer, num_layers=12, enable_nested_tensor=False)
    # The 12 layers start as copies of one; perturb each so that they hold distinct weights
    # (the exporter would otherwise keep one copy of identical initializers).
    with torch.no_grad():
        for p in net.parameters():
            p.add_(torch.randn_like(p) * 0.02)
    return net, (128, 768)


MODELS = {"resnet18": resnet18, "resnet50": resnet50, "mobilenet_v2": mobilenet_v2, "bert_base": bert_base}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated subset of " + ",".join(MODELS))
    parser.add_argument("--batches", default="1,8")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name in args.models.split(","):
        for batch in (int(b) for b in args.batches.split(",")):
            path = os.path.join(args.out, f"{name}_b{batch}.onnx")
            if os.path.exists(path):
                continue
            torch.manual_seed(0)
            net, shape = MODELS[name]()
            net.eval()
            x = torch.randn(batch, *shape)
            with warnings.catch_warnings():  # not under no_grad: torch's fused encoder path has no export
                warnings.simplefilter("ignore")
                torch.onnx.export(net, (x,), path + ".tmp", opset_version=17, input_names=["input"],
                                  output_names=["output"], do_constant_folding=True)
            os.replace(path + ".tmp", path)
            print(f"wrote {path}")


if __name__ == "__main__":
    main()

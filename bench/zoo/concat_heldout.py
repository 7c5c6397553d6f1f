#!/usr/bin/env python3
"""Held-out concat-of-convolution-branches models: ged against ONNX Runtime.

Builds small torch models of the class SqueezeNet, Inception and DenseNet belong to
(seeded weights, exported by torch.onnx at opset 17 with a dynamic batch dim), none of
them a zoo model:

- fire: SqueezeNet-style fire modules with other widths and input sizes, MaxPool with
  ceil_mode on odd and even sizes, a 1x1 classifier and global average pooling;
- inception: four branches (1x1; 1x1 -> 3x3; 1x1 -> 3x3 -> 3x3; 3x3 average pool with
  and without count_include_pad -> 1x1), BatchNorm folded or not, joined by a Concat,
  a stride-2 reduction block with a MaxPool branch;
- dense: DenseNet-style blocks (BatchNorm -> ReLU -> 1x1 -> BatchNorm -> ReLU -> 3x3,
  every layer's input the Concat of all earlier feature maps), transitions with a 2x2
  average pool, growth rates 12 and 24, a stem MaxPool with padding.

Each model runs through `gectl run` (default options) and ONNX Runtime (bench/ort_run.js)
on the same inputs at batch 1 and 3; prints the max |ged - ORT| per model, checked
against the tolerance times the largest |ORT| value (the outputs are logits of about 0.1). With --threads T the CPU time per run of
both (bench/zoo/cpu_time.py's method: task-clock of two process lengths) is printed too.

    bench/zoo/concat_heldout.py [--gectl build/bin/gectl] [--out build/concat_heldout]
                                [--tolerance 1e-4] [--threads 1]

Exits non-zero when a model fails to run or differs by more than the tolerance.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from heldout_common import compare_with_ort  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Fire(nn.Module):
    def __init__(self, cin, squeeze, e1, e3):
        super().__init__()
        self.squeeze = nn.Sequential(nn.Conv2d(cin, squeeze, 1), nn.ReLU())
        self.e1 = nn.Sequential(nn.Conv2d(squeeze, e1, 1), nn.ReLU())
        self.e3 = nn.Sequential(nn.Conv2d(squeeze, e3, 3, padding=1), nn.ReLU())

    def forward(self, x):
        s = self.squeeze(x)
        return torch.cat([self.e1(s), self.e3(s)], 1)


def fire_net(widths, classes):
    layers = [nn.Conv2d(3, widths[0], 3, stride=2), nn.ReLU(), nn.MaxPool2d(3, 2, ceil_mode=True)]
    cin = widths[0]
    for i, w in enumerate(widths[1:]):
        layers.append(Fire(cin, w // 8, w // 2, w // 2))
        cin = w
        if i % 2 == 1:
            layers.append(nn.MaxPool2d(3, 2, ceil_mode=True))
    layers += [nn.Dropout(0.5), nn.Conv2d(cin, classes, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten()]
    return nn.Sequential(*layers)


def conv_bn(cin, cout, k, stride=1, padding=0):
    return nn.Sequential(nn.Conv2d(cin, cout, k, stride, padding, bias=False), nn.BatchNorm2d(cout), nn.ReLU())


class InceptionBlock(nn.Module):
    def __init__(self, cin, b1, b3r, b3, d3r, d3, pool, include_pad):
        super().__init__()
        self.b1 = conv_bn(cin, b1, 1)
        self.b3 = nn.Sequential(conv_bn(cin, b3r, 1), conv_bn(b3r, b3, 3, padding=1))
        self.d3 = nn.Sequential(conv_bn(cin, d3r, 1), conv_bn(d3r, d3, 3, padding=1), conv_bn(d3, d3, 3, padding=1))
        self.pool = nn.Sequential(nn.AvgPool2d(3, 1, 1, count_include_pad=include_pad), conv_bn(cin, pool, 1))

    def forward(self, x):
        return torch.cat([self.b1(x), self.b3(x), self.d3(x), self.pool(x)], 1)


class Reduction(nn.Module):
    def __init__(self, cin, c3):
        super().__init__()
        self.b3 = conv_bn(cin, c3, 3, stride=2)
        self.pool = nn.MaxPool2d(3, 2)

    def forward(self, x):
        return torch.cat([self.b3(x), self.pool(x)], 1)


def inception_net():
    return nn.Sequential(
        conv_bn(3, 32, 3, stride=2), conv_bn(32, 64, 3, padding=1), nn.MaxPool2d(3, 2),
        InceptionBlock(64, 32, 48, 64, 32, 48, 24, False),   # 168
        InceptionBlock(168, 64, 48, 64, 48, 64, 40, True),   # 232
        Reduction(232, 96),                                   # 328
        InceptionBlock(328, 96, 64, 96, 64, 96, 48, False),  # 336
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(336, 10))


class DenseLayer(nn.Module):
    def __init__(self, cin, growth):
        super().__init__()
        self.f = nn.Sequential(nn.BatchNorm2d(cin), nn.ReLU(), nn.Conv2d(cin, 4 * growth, 1, bias=False),
                               nn.BatchNorm2d(4 * growth), nn.ReLU(), nn.Conv2d(4 * growth, growth, 3, padding=1,
                                                                                bias=False))

    def forward(self, feats):
        return self.f(torch.cat(feats, 1))


class DenseBlock(nn.Module):
    def __init__(self, cin, layers, growth):
        super().__init__()
        self.layers = nn.ModuleList(DenseLayer(cin + i * growth, growth) for i in range(layers))

    def forward(self, x):
        feats = [x]
        for layer in self.layers:
            feats.append(layer(feats))
        return torch.cat(feats, 1)


def dense_net(growth, blocks, stem):
    layers = [nn.Conv2d(3, stem, 7, 2, 3, bias=False), nn.BatchNorm2d(stem), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    c = stem
    for i, n in enumerate(blocks):
        layers.append(DenseBlock(c, n, growth))
        c += n * growth
        if i + 1 < len(blocks):
            layers += [nn.BatchNorm2d(c), nn.ReLU(), nn.Conv2d(c, c // 2, 1, bias=False), nn.AvgPool2d(2, 2)]
            c //= 2
    layers += [nn.BatchNorm2d(c), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c, 10)]
    return nn.Sequential(*layers)


def randomize(model, seed):
    """Seeded weights and BatchNorm statistics far from the identity."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.copy_(torch.rand(m.num_features, generator=g) * 0.2 - 0.1)
                m.running_var.copy_(torch.rand(m.num_features, generator=g) * 0.5 + 0.5)
                m.weight.copy_(torch.rand(m.num_features, generator=g) + 0.5)
                m.bias.copy_(torch.rand(m.num_features, generator=g) * 0.2 - 0.1)
    return model.eval()


MODELS = [
    ("fire_narrow_odd", lambda: fire_net([48, 96, 96, 192, 192, 256], 20), [1, 3, 199, 199]),
    ("fire_wide_even", lambda: fire_net([96, 128, 128, 256, 256, 384, 384, 512], 100), [1, 3, 160, 160]),
    ("inception_blocks", inception_net, [1, 3, 149, 149]),
    ("dense_k12", lambda: dense_net(12, [4, 6, 8], 24), [1, 3, 128, 128]),
    ("dense_k24", lambda: dense_net(24, [6, 12], 48), [1, 3, 96, 112]),
]


def export(name, build, dims, out_dir, seed):
    torch.manual_seed(seed)
    model = randomize(build(), seed)
    path = os.path.join(out_dir, name + ".onnx")
    torch.onnx.export(model, torch.zeros(dims), path, opset_version=17, input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    return path


def task_clock_ms(cmd, env):
    r = subprocess.run(["perf", "stat", "-x,", "-e", "task-clock"] + cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError(r.stderr[-400:])
    return next(float(line.split(",")[0]) for line in r.stderr.splitlines() if "task-clock" in line)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gectl", default=os.path.join(ROOT, "build", "bin", "gectl"))
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "concat_heldout"))
    parser.add_argument("--ort-dir", default=os.path.join(ROOT, "build", "ort", "node_modules"))
    parser.add_argument("--tolerance", type=float, default=1e-4)
    parser.add_argument("--threads", type=int, default=0, help="also CPU time per run at this many threads")
    parser.add_argument("--lo", type=int, default=5)
    parser.add_argument("--hi", type=int, default=35)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    env = dict(os.environ, NODE_PATH=args.ort_dir)
    failed = 0
    for seed, (name, build, dims) in enumerate(MODELS, start=1):
        path = export(name, build, dims, args.out, seed)
        for batch in (1, 3):
            x = np.random.default_rng(batch).uniform(-1, 1, [batch] + dims[1:]).astype(np.float32)
            data = os.path.join(args.out, "%s_b%d" % (name, batch))
            row = dict({"model": name, "batch": batch},
                       **compare_with_ort(args.gectl, path, x, data, env, args.tolerance, scale_floor=1e-6))
            failed += 0 if row.get("ok") else 1
            if "error" in row:
                print(json.dumps(row), flush=True)
                continue
            feed = ["--input", "x=" + os.path.join(data, "x.npy")]
            if args.threads > 0 and batch == 1:
                common = feed + ["--threads", str(args.threads), "--warmup", "1"]
                ms = {}
                for who, base in (("ged_ms", [args.gectl, "--no-cache", "bench", path]),
                                  ("ort_ms", ["node", os.path.join(ROOT, "bench", "ort_run.js"), path])):
                    lo = task_clock_ms(base + common + ["--iterations", str(args.lo)], env)
                    hi = task_clock_ms(base + common + ["--iterations", str(args.hi)], env)
                    ms[who] = round((hi - lo) / (args.hi - args.lo), 3)
                row.update(ms)
                row["ratio"] = round(ms["ged_ms"] / ms["ort_ms"], 3) if ms["ort_ms"] > 0 else None
            print(json.dumps(row), flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

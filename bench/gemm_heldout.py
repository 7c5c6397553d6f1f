#!/usr/bin/python3
"""Held-out correctness of the GEMM-bound paths against ONNX Runtime.

    /usr/bin/python3 bench/gemm_heldout.py [--out DIR] [--gectl build/bin/gectl] [--threads 1,2]

Exports small MLPs and transformer encoders that are not in the zoo (other widths,
heads, sequence lengths, activations; seeded weights, torch 1.13, opset 17, dynamic
batch and sequence dims), feeds each seeded inputs of several shapes, and runs them
on ged (`gectl bench --output-dir`, default options, and with the shapes made static
by `--input-shape`, the form per-shape static plans compile) and on ONNX Runtime
(bench/ort_run.js). Prints the largest absolute difference per case and fails when one
exceeds 1e-4 times the output's largest magnitude (at least 1e-4): row counts on both
sides of the packed GEMM's bounds, panel tails, GELU / ReLU / Tanh post-ops, fused
attention with and without a mask.
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import torch
from torch import nn

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Mlp(nn.Module):
    def __init__(self, widths, act):
        super().__init__()
        layers = []
        for a, b in zip(widths[:-1], widths[1:]):
            layers += [nn.Linear(a, b), act()]
        self.net = nn.Sequential(*layers[:-1])

    def forward(self, x):
        return self.net(x)


class Encoder(nn.Module):
    """torch's TransformerEncoderLayer (GELU, batch first), unmasked."""

    def __init__(self, dim, heads, depth):
        super().__init__()
        layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim if dim < 100 else 2 * dim, dropout=0.0,
                                           activation="gelu", batch_first=True)
        self.enc = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)

    def forward(self, x, pad):
        return self.enc(x) + 0.0 * pad.sum()


class MaskedBlock(nn.Module):
    """A post-norm block with its own attention and an additive padding mask."""

    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.qkv, self.proj = heads, nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.n1, self.n2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 3 * dim), nn.GELU(), nn.Linear(3 * dim, dim))

    def forward(self, x, pad):
        b, n, d = x.shape
        m = (pad.unsqueeze(1).unsqueeze(2) * -10000.0)
        qkv = self.qkv(x).reshape(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = (qkv[0] @ qkv[1].transpose(-2, -1)) / float(d // self.heads) ** 0.5 + m
        y = (a.softmax(-1) @ qkv[2]).transpose(1, 2).reshape(b, n, d)
        x = self.n1(x + self.proj(y))
        return self.n2(x + self.mlp(x))


# name, module builder, input specs (name, trailing dims), batches, seqs
CASES = [
    ("mlp_relu_300", lambda: Mlp([100, 300, 300, 37], nn.ReLU), [("x", [100])], [1, 3, 70], [None]),
    ("mlp_gelu_wide", lambda: Mlp([40, 400, 40], nn.GELU), [("x", [40])], [2, 5, 130], [None]),
    ("mlp_tanh_tail", lambda: Mlp([33, 50, 17, 5], nn.Tanh), [("x", [33])], [1, 13, 300], [None]),
    ("enc_d48_h3", lambda: Encoder(48, 3, 2), [("x", [None, 48]), ("pad", [None])], [1, 3], [7, 19]),
    ("enc_d160_h5", lambda: Encoder(160, 5, 1), [("x", [None, 160]), ("pad", [None])], [1, 4], [61]),
    ("block_d96_h8_mask", lambda: MaskedBlock(96, 8), [("x", [None, 96]), ("pad", [None])], [2], [50, 130]),
]


def export(name, build, specs, out):
    torch.manual_seed(11)
    model = build().eval()
    path = os.path.join(out, name + ".onnx")
    dummy, names, axes = [], [], {}
    for input_name, dims in specs:
        shape = [2] + [5 if d is None else d for d in dims]
        dummy.append(torch.rand(shape))
        names.append(input_name)
        axes[input_name] = {0: "batch"}
        for i, d in enumerate(dims):
            if d is None:
                axes[input_name][i + 1] = "seq"
    with torch.no_grad():
        torch.onnx.export(model, tuple(dummy), path, input_names=names, output_names=["y"], dynamic_axes=axes,
                          opset_version=17)
    return path


def run_json(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError("%s failed: %s" % (cmd[0], (r.stderr or r.stdout).strip().splitlines()[-1:]))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default=os.path.join(ROOT, "build", "gemm_heldout"))
    p.add_argument("--gectl", default=os.path.join(ROOT, "build", "bin", "gectl"))
    p.add_argument("--ort-dir", default=os.path.join(ROOT, "build", "ort", "node_modules"))
    p.add_argument("--threads", default="1,2")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    env = dict(os.environ, NODE_PATH=args.ort_dir)
    rng = np.random.default_rng(5)
    worst, failed = 0.0, 0
    for name, build, specs, batches, seqs in CASES:
        path = export(name, build, specs, args.out)
        for b in batches:
            for s in seqs:
                feeds, shapes = [], []
                for input_name, dims in specs:
                    shape = [b] + [s if d is None else d for d in dims]
                    value = rng.uniform(-1, 1, shape).astype(np.float32)
                    if input_name == "pad":
                        value = (rng.uniform(0, 1, shape) < 0.2).astype(np.float32)
                        value[:, 0] = 0  # every row keeps a token
                    f = os.path.join(args.out, "%s_%d_%s_%s.npy" % (name, b, s, input_name))
                    np.save(f, value)
                    feeds += ["--input", "%s=%s" % (input_name, f)]
                    shapes.append("%s:%s" % (input_name, ",".join(map(str, shape))))
                ort_dir = os.path.join(args.out, "ort")
                run_json(["node", os.path.join(ROOT, "bench", "ort_run.js"), path, "--threads", "1", "--warmup", "0",
                          "--iterations", "1", "--output-dir", ort_dir] + feeds, env)
                want = np.load(os.path.join(ort_dir, "y.npy"))
                for t in args.threads.split(","):
                    for form, extra in (("dynamic", []), ("static", ["--input-shape", ";".join(shapes)])):
                        ged_dir = os.path.join(args.out, "ged")
                        run_json([args.gectl, "--no-cache", "bench", path, "--threads", t, "--warmup", "1",
                                  "--iterations", "2", "--output-dir", ged_dir] + feeds + extra)
                        got = np.load(os.path.join(ged_dir, "y.npy"))
                        err = float(np.max(np.abs(got - want))) if got.shape == want.shape else float("inf")
                        bound = 1e-4 * max(1.0, float(np.max(np.abs(want))))
                        ok = err <= bound
                        failed += 0 if ok else 1
                        worst = max(worst, err)
                        print("%-16s batch %-3d seq %-4s threads %s %-7s max err %.2e %s" %
                              (name, b, s if s else "-", t, form, err, "ok" if ok else "FAIL"))
    print("worst %.2e, %d failed" % (worst, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

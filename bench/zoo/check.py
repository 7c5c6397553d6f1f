#!/usr/bin/python3
"""The zoo's correctness subset (ctest `zoo_correctness`, label heavy): ged against torch.

    /usr/bin/python3 bench/zoo/check.py --gectl build/bin/gectl --out build/zoo_ci

Builds the `ci` models of make_models.py (small ones: a CNN, a UNet with
ConvTranspose and Resize, a tiny encoder with a dynamic sequence, a
bidirectional GRU, a LayerNorm/SiLU MLP, the 10,000-op element-wise chain)
into OUT unless OUT/manifest.json already lists them, runs each once through
`gectl run --input ... --output-dir` with default options, and compares every
output with the reference make_models.py computed by torch (numpy for the
chain) at generation time: |ged - ref| <= ATOL + RTOL * |ref|. ONNX Runtime is
not needed (it is a benchmark yardstick, not a CI dependency). Exits non-zero
naming each model and output that differs.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ATOL, RTOL = 1e-4, 1e-3


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gectl", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    manifest_path = os.path.join(args.out, "manifest.json")
    if not os.path.exists(manifest_path):
        subprocess.run([sys.executable, os.path.join(HERE, "make_models.py"), args.out, "--subset", "ci"], check=True)
    with open(manifest_path) as f:
        models = {n: m for n, m in json.load(f)["models"].items() if m["ci"]}
    failures = []
    for name, entry in sorted(models.items()):
        data = os.path.join(args.out, "data", name + "_b1")
        out_dir = os.path.join(data, "ged_check")
        cmd = [args.gectl, "--no-cache", "run", os.path.join(args.out, entry["file"]), "--output-dir", out_dir]
        for i, spec in enumerate(entry["inputs"]):
            cmd += ["--input", "%s=%s" % (spec["name"], os.path.join(data, "in_%d.npy" % i))]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            failures.append("%s: gectl run failed: %s" % (name, r.stderr.strip()[-300:]))
            continue
        import onnx
        outputs = [o.name for o in onnx.load(os.path.join(args.out, entry["file"])).graph.output]
        for i in range(entry["references"]):
            ref = np.load(os.path.join(data, "ref_%d.npy" % i))
            got_path = os.path.join(out_dir, outputs[i] + ".npy")
            got = np.load(got_path)
            if got.shape != ref.shape:
                failures.append("%s output %s: shape %s, torch %s" % (name, outputs[i], got.shape, ref.shape))
                continue
            err = np.abs(got.astype(np.float64) - ref)
            bound = ATOL + RTOL * np.abs(ref.astype(np.float64))
            if (err > bound).any() or np.isnan(got).any() != np.isnan(ref).any():
                failures.append("%s output %s: max |ged - ref| %.3g at %s" % (
                    name, outputs[i], float(err.max()), np.unravel_index(int(err.argmax()), err.shape)))
        print("%-20s checked %d output(s)" % (name, entry["references"]), flush=True)
    if failures:
        print("\n".join(failures), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""End-to-end latency of ged against ONNX Runtime, alternating the two.

For every model of bench/make_bench_models.py and every batch: compile it once
with `gectl compile` (the .gem is what `gectl bench` times, so a round does not
pay compilation), then ROUNDS rounds, each running `gectl bench MODEL.gem` and
`node bench/ort_run.js MODEL.onnx` once (which one goes first alternates). Each
run is a fresh process reporting its p50 and peak RSS; the table gives the
median over the rounds of each, and the ratio of the medians (ged / ORT, lower
is better). Both get the same intra-op thread count and the same kind of input
(float32 uniform in [-1, 1), seeded).

ONNX Runtime is npm's onnxruntime-node, installed under build/ort (a yardstick
only, see ../shared/TOOLCHAIN.md):
    mkdir -p build/ort && (cd build/ort && ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node@1.30)
    /usr/bin/python3 bench/make_bench_models.py --out build/bench_models
    /usr/bin/python3 bench/ort_compare.py --rounds 20 --threads 2
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

import onnx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def input_shapes(path):
    model = onnx.load(path, load_external_data=False)
    initializers = {t.name for t in model.graph.initializer}
    shapes = {}
    for value in model.graph.input:
        if value.name in initializers:
            continue
        dims = [d.dim_value for d in value.type.tensor_type.shape.dim]
        if any(d <= 0 for d in dims):
            sys.exit(f"{path}: input '{value.name}' has a dynamic dim; export with static shapes")
        shapes[value.name] = dims
    return shapes


def run_json(cmd, env=None):
    result = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit(f"failed ({result.returncode}): {' '.join(cmd)}\n{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="resnet18,resnet50,mobilenet_v2,bert_base")
    parser.add_argument("--batches", default="1,8")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--iterations", type=int, default=10, help="timed runs inside each process")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--model-dir", default=os.path.join(ROOT, "build", "bench_models"))
    parser.add_argument("--gectl", default=os.path.join(ROOT, "build", "bin", "gectl"))
    parser.add_argument("--ort-dir", default=os.path.join(ROOT, "build", "ort", "node_modules"))
    parser.add_argument("--option", action="append", default=[], help="KEY=VALUE passed to gectl compile")
    args = parser.parse_args()

    env = dict(os.environ, NODE_PATH=args.ort_dir)
    rows = []
    for name in args.models.split(","):
        for batch in (int(b) for b in args.batches.split(",")):
            onnx_path = os.path.join(args.model_dir, f"{name}_b{batch}.onnx")
            gem_path = os.path.join(args.model_dir, f"{name}_b{batch}.gem")
            shapes = input_shapes(onnx_path)
            compile_cmd = [args.gectl, "compile", onnx_path, "-o", gem_path, "--threads", str(args.threads)]
            for option in args.option:
                compile_cmd += ["--option", option]
            subprocess.run(compile_cmd, check=True, capture_output=True)
            ged_cmd = [args.gectl, "bench", gem_path, "--iterations", str(args.iterations), "--warmup",
                       str(args.warmup), "--threads", str(args.threads)]
            ort_cmd = ["node", os.path.join(ROOT, "bench", "ort_run.js"), onnx_path, "--iterations",
                       str(args.iterations), "--warmup", str(args.warmup), "--threads", str(args.threads)]
            for input_name, dims in shapes.items():
                ort_cmd += ["--shape", f"{input_name}={','.join(map(str, dims))}"]
            ged, ort = [], []
            for i in range(args.rounds):
                if i % 2 == 0:
                    ged.append(run_json(ged_cmd))
                    ort.append(run_json(ort_cmd, env))
                else:
                    ort.append(run_json(ort_cmd, env))
                    ged.append(run_json(ged_cmd))
            med = lambda runs, key: statistics.median(r[key] for r in runs)  # noqa: E731
            row = {"model": name, "batch": batch, "ged_p50_ms": med(ged, "p50_ms"), "ort_p50_ms": med(ort, "p50_ms"),
                   "ged_rss_mb": med(ged, "peak_rss_mb"), "ort_rss_mb": med(ort, "peak_rss_mb")}
            row["ratio"] = row["ged_p50_ms"] / row["ort_p50_ms"]
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)

    print(f"| model | batch | ged p50 ms | ORT p50 ms | ged/ORT | ged peak RSS MiB | ORT peak RSS MiB |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['batch']} | {r['ged_p50_ms']:.2f} | {r['ort_p50_ms']:.2f} | {r['ratio']:.3f} | "
              f"{r['ged_rss_mb']:.0f} | {r['ort_rss_mb']:.0f} |")


if __name__ == "__main__":
    main()

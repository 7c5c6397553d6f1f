#!/usr/bin/python3
"""Several input shapes in one process, as a server sees them: ged against ONNX Runtime.

    /usr/bin/python3 bench/zoo/dyn_shapes.py --zoo OUT --models a,b --dim seq=32,64,128
        [--threads 2] [--rounds 3] [--gem] [--batch 1]

For each model of a zoo (make_models.py's format, e.g. make_heldout_dyn.py's), the inputs of
every value of the one dim given (the manifest's values for the other dims) are written as
.npy, and one `gectl --log-level info --no-cache bench MODEL` process (MODEL.onnx, or with
--gem a .gem compiled from it first) and one `node bench/ort_run.js MODEL.onnx` process each
run all the sets in turn (input sets: --input repeated per name), ROUNDS times alternating
which goes first. Each process warms up 3 runs per set, then times about a second of runs.
Printed per model: per-set p50 of each (medians over rounds) and their ratio, peak RSS of
each process, and the plans ged compiled (the log's "JIT stage ... compiled a slice" lines)
and recompilations ("JIT recompiles").
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from zoo_inputs import make_input  # noqa: E402


def run(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    if r.returncode != 0:
        raise RuntimeError("%s: %s" % (cmd[0], (r.stderr or r.stdout).strip()[-400:]))
    return json.loads(r.stdout.strip().splitlines()[-1]), r.stderr


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--zoo", required=True)
    p.add_argument("--models", required=True)
    p.add_argument("--dim", required=True, help="NAME=V1,V2,...: the dim whose values make the sets")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--gem", action="store_true")
    p.add_argument("--gectl", default=os.path.join(ROOT, "build", "bin", "gectl"))
    p.add_argument("--ort-dir", default=os.path.join(ROOT, "build", "ort", "node_modules"))
    args = p.parse_args()
    with open(os.path.join(args.zoo, "manifest.json")) as f:
        manifest = json.load(f)
    dim, _, values = args.dim.partition("=")
    values = [int(v) for v in values.split(",")]
    env = dict(os.environ, NODE_PATH=args.ort_dir)
    for name in args.models.split(","):
        entry = manifest["models"][name]
        onnx_path = os.path.join(args.zoo, entry["file"])
        feeds = []
        for v in values:
            dims = dict(manifest["dim_values"], **{dim: v})
            data = os.path.join(args.zoo, "data", "%s_b%d_%s%d" % (name, args.batch, dim, v))
            os.makedirs(data, exist_ok=True)
            for i, spec in enumerate(entry["inputs"]):
                path = os.path.join(data, "in_%d.npy" % i)
                np.save(path, make_input(spec["dtype"], spec["dims"], spec["gen"], spec["seed"], args.batch, dims))
                feeds += ["--input", "%s=%s" % (spec["name"], path)]
        model = onnx_path
        if args.gem:
            model = os.path.join(args.zoo, "gem_t%d" % args.threads, name + ".gem")
            os.makedirs(os.path.dirname(model), exist_ok=True)
            subprocess.run([args.gectl, "--no-cache", "compile", onnx_path, "-o", model, "--threads",
                            str(args.threads)], check=True, capture_output=True)
        warmup = 3 * len(values)
        iterations = 10 * len(values)
        ged_rounds, ort_rounds, plans, recompiles = [], [], [], []
        for r in range(args.rounds):
            common = ["--threads", str(args.threads), "--warmup", str(warmup), "--iterations", str(iterations)] + feeds
            ged_cmd = [args.gectl, "--log-level", "info", "--no-cache", "bench", model] + common
            ort_cmd = ["node", os.path.join(ROOT, "bench", "ort_run.js"), onnx_path] + common
            order = [("ged", ged_cmd), ("ort", ort_cmd)] if r % 2 else [("ort", ort_cmd), ("ged", ged_cmd)]
            for who, cmd in order:
                res, err = run(cmd, env if who == "ort" else None)
                if who == "ged":
                    ged_rounds.append(res)
                    plans.append(err.count("compiled a slice"))
                    recompiles.append(err.count("JIT recompiles"))
                else:
                    ort_rounds.append(res)
            if r == 0:
                slower = max(ged_rounds[0]["mean_ms"], ort_rounds[0]["mean_ms"], 1e-3)
                iterations = len(values) * max(10, min(200, int(1000.0 / slower / len(values))))
        med = statistics.median
        row = {"model": name, "gem": args.gem, "batch": args.batch, "threads": args.threads, "dim": dim,
               "values": values, "plans": plans, "recompiles": recompiles,
               "ged_rss_mb": med(x["peak_rss_mb"] for x in ged_rounds),
               "ort_rss_mb": med(x["peak_rss_mb"] for x in ort_rounds), "sets": []}
        for k, v in enumerate(values):
            g = med(x["sets"][k]["p50_ms"] for x in ged_rounds)
            o = med(x["sets"][k]["p50_ms"] for x in ort_rounds)
            row["sets"].append({dim: v, "ged_p50_ms": round(g, 3), "ort_p50_ms": round(o, 3), "ratio": round(g / o, 3)})
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()

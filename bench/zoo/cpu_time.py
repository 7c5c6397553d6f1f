#!/usr/bin/env python3
"""Per-run CPU time of ged builds (and ONNX Runtime) on zoo models, for loaded machines.

Wall-clock latency on a shared machine measures the scheduler; the CPU a process spends
does not depend on how long it waited. For each model and each command this runs one
process of LO and one of HI timed iterations under `perf stat -e task-clock` and prints
(CPU(HI) - CPU(LO)) / (HI - LO) in ms: the CPU time of one run, without start-up and
compilation. Cache interference from other processes still inflates it somewhat. The inputs
are those bench/zoo/run.py saved under ZOO/data/<model>_b<batch> when they exist (any dtype
and dynamic dim), else random ones of the manifest's shapes (float inputs, batch dim only).

    bench/zoo/cpu_time.py --models resnet18,squeezenet1_1 --gectl build/bin/gectl \\
        --gectl OTHER/build/bin/gectl [--ort] [--threads 1] [--batch 1]

Prints one JSON line per model: {model, <label>: ms, ...}; labels are the gectl paths
(and "ort").
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def task_clock_ms(cmd, env):
    r = subprocess.run(["perf", "stat", "-x,", "-e", "task-clock"] + cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit("%s failed: %s" % (" ".join(cmd), r.stderr[-800:]))
    for line in r.stderr.splitlines():
        if "task-clock" in line:
            return float(line.split(",")[0])
    sys.exit("perf printed no task-clock for %s" % " ".join(cmd))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", required=True, help="comma-separated zoo model names")
    parser.add_argument("--gectl", action="append", default=[], help="a gectl binary (repeatable)")
    parser.add_argument("--ort", action="store_true", help="also ONNX Runtime (bench/ort_run.js)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--lo", type=int, default=3)
    parser.add_argument("--hi", type=int, default=13)
    parser.add_argument("--zoo", default=os.path.join(ROOT, "build", "zoo"))
    parser.add_argument("--ort-dir", default=os.path.join(ROOT, "build", "ort", "node_modules"))
    args = parser.parse_args()
    if args.hi <= args.lo:
        sys.exit("--hi must exceed --lo")
    with open(os.path.join(args.zoo, "manifest.json")) as f:
        manifest = json.load(f)["models"]
    env = dict(os.environ, NODE_PATH=args.ort_dir)
    commands = [(g, [g, "--no-cache", "bench"]) for g in (args.gectl or [os.path.join(ROOT, "build", "bin", "gectl")])]
    if args.ort:
        commands.append(("ort", ["node", os.path.join(ROOT, "bench", "ort_run.js")]))
    for name in args.models.split(","):
        entry = manifest.get(name)
        if entry is None:
            sys.exit("no model %s in %s" % (name, args.zoo))
        shapes = []
        data = os.path.join(args.zoo, "data", "%s_b%d" % (name, args.batch))
        saved = [os.path.join(data, "in_%d.npy" % i) for i in range(len(entry["inputs"]))]
        if all(os.path.exists(p) for p in saved):  # the inputs run.py wrote (any dtype, any dynamic dim)
            for spec, p in zip(entry["inputs"], saved):
                shapes += ["--input", "%s=%s" % (spec["name"], p)]
        for spec in entry["inputs"] if not shapes else []:
            if spec["dtype"] != "float32" or any(isinstance(d, str) and d != "batch" for d in spec["dims"]):
                sys.exit("%s: only float inputs with at most a batch dim are supported here "
                         "(or run bench/zoo/run.py on it first: its saved inputs are used)" % name)
            dims = [args.batch if d == "batch" else d for d in spec["dims"]]
            shapes += ["--shape", "%s=%s" % (spec["name"], ",".join(str(d) for d in dims))]
        path = os.path.join(args.zoo, entry["file"])
        row = {"model": name}
        for label, base in commands:
            ms = {}
            for n in (args.lo, args.hi):
                cmd = base + [path, "--threads", str(args.threads), "--warmup", "2", "--iterations", str(n)] + shapes
                ms[n] = task_clock_ms(cmd, env)
            row[label] = round((ms[args.hi] - ms[args.lo]) / (args.hi - args.lo), 2)
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()

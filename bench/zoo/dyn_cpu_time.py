#!/usr/bin/python3
"""CPU time per run and peak RSS of a dynamic-dim model fed many shapes in turn, for loaded machines.

    /usr/bin/python3 bench/zoo/dyn_cpu_time.py --zoo OUT --models gpt_past_dyn --dim past=1-64
        [--gectl build/bin/gectl] [--gectl OTHER] [--ort] [--threads 1] [--lo 1] [--hi 4]
        [--option ge.jitMaxRecompiles=64]

As a decoder sees them: one input set per value of the dim (`--dim NAME=V1,V2,...` or
`NAME=A-B`), the other dims at the manifest's values, and each process runs every set in
turn (gectl bench / bench/ort_run.js input sets). For each command, one process runs
LO x SETS and one HI x SETS timed runs (after one warm-up round of the sets, so the first
sighting of each shape, and a plan's compile, is in the warm-up) under `perf stat -e
task-clock`; printed: (CPU(HI) - CPU(LO)) / ((HI - LO) x SETS), the CPU time of one run in
ms, the whole LO process's CPU time (start-up, compiles, warm-up included: the cold cost),
and the HI process's peak RSS. dyn_shapes.py gives wall-clock per set instead.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from zoo_inputs import make_input  # noqa: E402


def measure(cmd, env, cwd):
    r = subprocess.run(["perf", "stat", "-x,", "-e", "task-clock"] + cmd, capture_output=True, text=True, env=env,
                       cwd=cwd, timeout=3600)
    if r.returncode != 0:
        sys.exit("%s failed: %s" % (" ".join(cmd[:3]), r.stderr[-800:]))
    ms = None
    for line in r.stderr.splitlines():
        if "task-clock" in line:
            ms = float(line.split(",")[0])
    lines = r.stdout.strip().splitlines()
    if not lines:
        sys.exit("%s printed nothing: %s" % (" ".join(cmd[:3]), r.stderr[-800:]))
    result = json.loads(lines[-1])
    return ms, result.get("peak_rss_mb")


def values_of(text):
    out = []
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-")
            out += list(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--zoo", required=True)
    p.add_argument("--models", required=True)
    p.add_argument("--dim", required=True, help="NAME=V1,V2,... or NAME=A-B")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--lo", type=int, default=1)
    p.add_argument("--hi", type=int, default=4)
    p.add_argument("--gectl", action="append", default=[])
    p.add_argument("--option", action="append", default=[], help="KEY=VALUE for every gectl (repeatable)")
    p.add_argument("--ort", action="store_true")
    p.add_argument("--ort-dir", default=os.path.join(ROOT, "build", "ort", "node_modules"))
    args = p.parse_args()
    args.zoo = os.path.abspath(args.zoo)
    args.gectl = [os.path.abspath(g) for g in args.gectl]
    with open(os.path.join(args.zoo, "manifest.json")) as f:
        manifest = json.load(f)
    dim, _, text = args.dim.partition("=")
    values = values_of(text)
    env = dict(os.environ, NODE_PATH=args.ort_dir)
    gectls = args.gectl or [os.path.join(ROOT, "build", "bin", "gectl")]
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
                if not os.path.exists(path):
                    np.save(path, make_input(spec["dtype"], spec["dims"], spec["gen"], spec["seed"], args.batch, dims))
                # Relative to the zoo (the processes run there): node crashes on an argv of 30K.
                feeds += ["--input", "%s=%s" % (spec["name"], os.path.relpath(path, args.zoo))]
        sets = len(values)
        commands = []
        for g in gectls:
            opts = []
            for o in args.option:
                opts += ["--option", o]
            commands.append((g, [g, "--no-cache", "bench", onnx_path] + opts))
        if args.ort:
            commands.append(("ort", ["node", os.path.join(ROOT, "bench", "ort_run.js"), onnx_path]))
        row = {"model": name, "dim": dim, "sets": sets, "threads": args.threads}
        for label, base in commands:
            cpu, rss = {}, None
            for n in (args.lo, args.hi):
                cmd = base + ["--threads", str(args.threads), "--warmup", str(sets), "--iterations",
                              str(n * sets)] + feeds
                cpu[n], rss = measure(cmd, env, args.zoo)
            row[label] = {"ms_per_run": round((cpu[args.hi] - cpu[args.lo]) / ((args.hi - args.lo) * sets), 3),
                          "lo_process_ms": round(cpu[args.lo]), "peak_rss_mb": rss}
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""CPU time per inference of ged against ONNX Runtime at 1 thread, for loaded hosts.

    /usr/bin/python3 bench/cpu_time_compare.py MODEL.onnx NAME=D0,D1,... [--rounds 3] [--runs 10]
        [--base-lib DIR] [--gectl build/bin/gectl]
    /usr/bin/python3 bench/cpu_time_compare.py MODEL.onnx --input NAME=FILE.npy [--input ...] ...

On a shared machine the wall-clock p50 of a 1-thread run moves by 30 % between runs
(the process waits for a core); its CPU time moves much less. Each measurement runs
`gectl bench MODEL.gem --iterations RUNS` and `--iterations 2` (and `node
bench/ort_run.js` alike) and takes the difference of the children's user + sys CPU
time over RUNS - 2: loading, compiling and warm-up cancel out. With --base-lib DIR a
third column runs the same gectl with DIR first on LD_LIBRARY_PATH (e.g. main's
libge_cpu_dense.so, to A/B one engine library). The variants alternate within each
round (the order flips every round); the medians over the rounds are printed. Not for
more than one thread: OpenMP's spinning workers count as CPU time there. Inputs are
random (the shape form, one float input) or given as .npy files (--input, repeatable:
integer ids, several inputs, a held-out zoo's data/<model>_b1 or run.py's batch files).
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model")
    parser.add_argument("shape", nargs="?", help="NAME=D0,D1,... of the (float) input")
    parser.add_argument("--input", action="append", default=[], help="NAME=FILE.npy (repeatable)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--base-lib", default=None)
    parser.add_argument("--gectl", default=os.path.join(ROOT, "build/bin/gectl"))
    parser.add_argument("--ort-dir", default=os.path.join(ROOT, "build/ort"))
    args = parser.parse_args()
    if args.runs <= 2:
        sys.exit("--runs must be above 2")
    if bool(args.shape) == bool(args.input):
        sys.exit("give either the shape or --input NAME=FILE.npy")
    feed = ["--shape", args.shape] if args.shape else [x for i in args.input for x in ("--input", i)]
    envs = {"ged": dict(os.environ), "ort": dict(os.environ, NODE_PATH=os.path.join(args.ort_dir, "node_modules"))}
    if args.base_lib:
        envs["base"] = dict(os.environ, LD_LIBRARY_PATH=args.base_lib)
    gems = {}
    for name in envs:
        if name == "ort":
            continue
        gems[name] = f"/tmp/cpu_time_compare_{os.getpid()}_{name}.gem"
        subprocess.run([args.gectl, "--no-cache", "compile", args.model, "-o", gems[name]], env=envs[name], check=True,
                       capture_output=True)

    def command(name, runs):
        common = feed + ["--iterations", str(runs), "--warmup", "1", "--threads", "1"]
        if name == "ort":
            return ["node", os.path.join(ROOT, "bench/ort_run.js"), args.model] + common
        return [args.gectl, "bench", gems[name]] + common

    def cpu(name, runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(command(name, runs), env=envs[name], check=True, capture_output=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime

    times = {name: [] for name in envs}
    order = list(envs)
    for r in range(args.rounds):
        for name in order if r % 2 == 0 else order[::-1]:
            times[name].append((cpu(name, args.runs) - cpu(name, 2)) / (args.runs - 2) * 1000)
    for gem in gems.values():
        os.remove(gem)
    med = {name: statistics.median(v) for name, v in times.items()}
    cells = [f"{name} {med[name]:.1f}" for name in envs]
    ratios = [f"{name}/ORT {med[name] / med['ort']:.3f}" for name in envs if name != "ort"]
    what = args.shape or " ".join(args.input)
    print(f"{os.path.basename(args.model)} {what}: CPU ms per inference " + ", ".join(cells) + "; " +
          ", ".join(ratios) + f" ({args.rounds} rounds)")
    print("  rounds:", {name: [round(x, 1) for x in v] for name, v in times.items()})


if __name__ == "__main__":
    main()

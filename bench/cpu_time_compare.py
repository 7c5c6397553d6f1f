#!/usr/bin/env python3
"""CPU time per inference of ged against ONNX Runtime at 1 thread, for loaded hosts.

    /usr/bin/python3 bench/cpu_time_compare.py MODEL.onnx NAME=D0,D1,... [NAME=FILE.npy ...] [--rounds 3]
        [--runs 10] [--base-lib DIR] [--gectl build/bin/gectl]

Each input is NAME=D0,D1,... (random floats) or NAME=FILE.npy (e.g. the zoo's
build/zoo/data/<model>_b<batch>/in_<i>.npy, for integer ids and masks).

On a shared machine the wall-clock p50 of a 1-thread run moves by 30 % between runs
(the process waits for a core); its CPU time moves much less. Each measurement runs
`gectl --no-cache bench MODEL.onnx --iterations RUNS` and `--iterations 2` (and `node
bench/ort_run.js` alike) and takes the difference of the children's user + sys CPU
time over RUNS - 2: loading, compiling and warm-up cancel out. The model is run as
the zoo runs it (bench/zoo/run.py): a model with unknown dims gets a static plan for
its inputs' shapes. --gem runs a compiled MODEL.gem instead (`gectl compile`), which
holds the dynamic form only: for dynamic models that times the dynamic executor
(encoder_tiny at batch 8: 3.6-4.0 ms against 1.7 ms from the .onnx). With --base-lib DIR a
third column runs the same gectl with DIR first on LD_LIBRARY_PATH (e.g. main's
libge_cpu_dense.so, to A/B one engine library). The variants alternate within each
round (the order flips every round); the medians over the rounds are printed. Not for
more than one thread: OpenMP's spinning workers count as CPU time there.
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
    parser.add_argument("inputs", nargs="+", help="NAME=D0,D1,... (random floats) or NAME=FILE.npy, per input")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--base-lib", default=None)
    parser.add_argument("--gectl", default=os.path.join(ROOT, "build/bin/gectl"))
    parser.add_argument("--ort-dir", default=os.path.join(ROOT, "build/ort"))
    parser.add_argument("--gem", action="store_true", help="time a compiled .gem (the dynamic form) instead")
    args = parser.parse_args()
    if args.runs <= 2:
        sys.exit("--runs must be above 2")
    envs = {"ged": dict(os.environ), "ort": dict(os.environ, NODE_PATH=os.path.join(args.ort_dir, "node_modules"))}
    if args.base_lib:
        envs["base"] = dict(os.environ, LD_LIBRARY_PATH=args.base_lib)
    gems = {}
    for name in envs:
        if name == "ort" or not args.gem:
            continue
        gems[name] = f"/tmp/cpu_time_compare_{os.getpid()}_{name}.gem"
        subprocess.run([args.gectl, "--no-cache", "compile", args.model, "-o", gems[name]], env=envs[name], check=True,
                       capture_output=True)

    def command(name, runs):
        common = ["--iterations", str(runs), "--warmup", "1", "--threads", "1"]
        for spec in args.inputs:
            common += ["--input" if spec.endswith(".npy") else "--shape", spec]
        if name == "ort":
            return ["node", os.path.join(ROOT, "bench/ort_run.js"), args.model] + common
        if args.gem:
            return [args.gectl, "bench", gems[name]] + common
        return [args.gectl, "--no-cache", "bench", args.model] + common

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
    print(f"{os.path.basename(args.model)} {' '.join(args.inputs)}: CPU ms per inference " + ", ".join(cells) + "; " +
          ", ".join(ratios) + f" ({args.rounds} rounds)")
    print("  rounds:", {name: [round(x, 1) for x in v] for name, v in times.items()})


if __name__ == "__main__":
    main()

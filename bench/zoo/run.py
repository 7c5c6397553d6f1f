#!/usr/bin/python3
"""Times the zoo (make_models.py) on ged and ONNX Runtime side by side; bench/zoo/run.sh runs it.

For every model, batch and thread count: the inputs are written once as .npy
(OUT/data/<model>_b<batch>/in_<i>.npy) and fed to both. ROUNDS rounds each run
one `gectl --no-cache bench MODEL.onnx` process (default options: only
--threads and --input) and one `node bench/ort_run.js MODEL.onnx` process
(intraOpNumThreads = threads, interOpNumThreads 1, default optimization level),
alternating which goes first. Each process compiles cold (ged without its
cache; ORT creates its session), warms up 3 runs, then times ITERATIONS runs and
reports its p50 and peak RSS; the table gives medians over the rounds. The
first round also saves both outputs; "max err" is the largest absolute
difference between them (ints must match exactly), "vs torch" the same against
the reference make_models.py computed, where there is one (batch 1).

ITERATIONS is chosen per model from round 1 (10 runs each) so that a process
times about a second of runs of the slower of the two (10 to 300). A model ged or ORT fails on
is reported with the first line of the error and counted as failed.

The table, with the command, date, commit, CPU and the load average before and
after, replaces the block between `<!-- zoo:begin -->` and `<!-- zoo:end -->`
in docs/perf.md (--no-docs leaves it); all numbers also go to OUT/results.json
(or --results FILE). `--render A.json,B.json [--note TEXT]` runs nothing and
rewrites the block from saved runs (e.g. a 2-thread and a 1-thread run).

`--dim NAME=VALUE` (repeated) feeds a dynamic dim another value than the manifest's (inputs
then go to OUT/data/<model>_b<batch>_<NAME><VALUE>..., and there is no torch reference to
compare with); `--gem` times ged on a compiled model: `gectl --no-cache compile MODEL.onnx -o
OUT/gem_t<threads>/MODEL.gem --threads T` once, then `gectl bench MODEL.gem` (compile_ms is
then the loading).
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from zoo_inputs import make_input  # noqa: E402

BEGIN, END = "<!-- zoo:begin -->", "<!-- zoo:end -->"
CHAIN_OPS = 10000


def sanitize(name):
    out = "".join(c if c.isalnum() or c in "._-" else "_" for c in (name or "output"))
    return "_" * len(out) if out in (".", "..") else out


def run_json(cmd, env=None, timeout=900):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timed out after %d s" % timeout
    if r.returncode != 0:
        lines = [ln for ln in (r.stderr or r.stdout).strip().splitlines() if ln.strip()]
        return None, (lines[-1] if lines else "exit %d" % r.returncode)[:200]
    return json.loads(r.stdout.strip().splitlines()[-1]), None


def write_inputs(zoo, name, entry, batch, dim_values, suffix=""):
    data = os.path.join(zoo, "data", "%s_b%d%s" % (name, batch, suffix))
    os.makedirs(data, exist_ok=True)
    files = []
    for i, spec in enumerate(entry["inputs"]):
        path = os.path.join(data, "in_%d.npy" % i)
        if not os.path.exists(path):
            np.save(path, make_input(spec["dtype"], spec["dims"], spec["gen"], spec["seed"], batch, dim_values))
        files.append((spec["name"], path))
    return data, files


def output_names(onnx_path):
    import onnx
    m = onnx.load(onnx_path, load_external_data=False)
    return [o.name for o in m.graph.output]


def max_error(names, dir_a, dir_b):
    """Largest |a - b| over the outputs in both directories; a string when they cannot be compared."""
    worst = 0.0
    for n in names:
        pa, pb = os.path.join(dir_a, sanitize(n) + ".npy"), os.path.join(dir_b, sanitize(n) + ".npy")
        if not (os.path.exists(pa) and os.path.exists(pb)):
            return "missing %s" % n
        a, b = np.load(pa), np.load(pb)
        if a.shape != b.shape:
            return "shape %s vs %s" % (list(a.shape), list(b.shape))
        if a.size == 0:
            continue
        if a.dtype.kind in "iub" or b.dtype.kind in "iub":
            bad = int(np.count_nonzero(a != b))
            if bad:
                return "%d ints differ" % bad
            continue
        a, b = a.astype(np.float64), b.astype(np.float64)
        nan = np.isnan(a) != np.isnan(b)
        if nan.any():
            return "NaN mismatch"
        d = np.abs(np.where(np.isnan(a), 0, a) - np.where(np.isnan(b), 0, b))
        worst = max(worst, float(d.max()))
    return worst


def torch_error(names, zoo, name, out_dir, references):
    if not references:
        return None
    ref_dir = os.path.join(zoo, "data", name + "_b1")
    tmp = {}
    for i, n in enumerate(names[:references]):
        tmp[n] = os.path.join(ref_dir, "ref_%d.npy" % i)
    worst = 0.0
    for n, ref in tmp.items():
        out = os.path.join(out_dir, sanitize(n) + ".npy")
        if not os.path.exists(out):
            return "missing %s" % n
        a, b = np.load(out), np.load(ref)
        if a.shape != b.shape:
            return "shape %s vs %s" % (list(a.shape), list(b.shape))
        if a.size:
            worst = max(worst, float(np.abs(a.astype(np.float64) - b.astype(np.float64)).max()))
    return worst


def fmt_err(e):
    if e is None:
        return "–"
    return e if isinstance(e, str) else "%.1e" % e


def machine():
    """The CPU's model name with its widest vector ISA (oneDNN, ged's own kernels and ORT all
    pick their code paths by it, so figures from an AVX2 and an AVX-512 host differ), the
    number of CPUs and the commit."""
    cpu = "unknown CPU"
    flags = set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and cpu == "unknown CPU":
                    cpu = line.split(":", 1)[1].strip()
                elif line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else None
    if isa:
        cpu += " (" + isa + ")"
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    return cpu, os.cpu_count(), commit


def bench_one(args, env, name, entry, batch, threads, dim_values):
    onnx_path = os.path.join(args.zoo, entry["file"])
    suffix = "".join("_%s%s" % kv for kv in sorted(args.dim_overrides.items()))
    data, files = write_inputs(args.zoo, name, entry, batch, dim_values, suffix)
    ged_model = onnx_path
    if args.gem:
        gem_dir = os.path.join(args.zoo, "gem_t%d" % threads)
        os.makedirs(gem_dir, exist_ok=True)
        ged_model = os.path.join(gem_dir, name + ".gem")
        r = subprocess.run([args.gectl, "--no-cache", "compile", onnx_path, "-o", ged_model, "--threads",
                            str(threads)], capture_output=True, text=True)
        if r.returncode != 0:
            return {"model": name, "batch": batch, "threads": threads,
                    "error": "ged compile: " + (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]}
    feeds = []
    for input_name, path in files:
        feeds += ["--input", "%s=%s" % (input_name, path)]
    out_ged = os.path.join(data, "ged_t%d" % threads)
    out_ort = os.path.join(data, "ort_t%d" % threads)
    ged, ort, error = [], [], None
    iterations = 10
    for r in range(args.rounds):
        common = ["--threads", str(threads), "--warmup", "3", "--iterations", str(iterations)] + feeds
        ged_cmd = [args.gectl, "--no-cache", "bench", ged_model] + common
        ort_cmd = ["node", os.path.join(ROOT, "bench", "ort_run.js"), onnx_path] + common
        if r == 0:
            ged_cmd += ["--output-dir", out_ged]
            ort_cmd += ["--output-dir", out_ort]
        order = [("ort", ort_cmd), ("ged", ged_cmd)] if r % 2 == 0 else [("ged", ged_cmd), ("ort", ort_cmd)]
        for who, cmd in order:
            if args.nice:
                cmd = ["nice", "-n", str(args.nice)] + cmd
            res, err = run_json(cmd, env if who == "ort" else None)
            if err:
                error = "%s: %s" % (who, err)
                break
            (ged if who == "ged" else ort).append(res)
        if error:
            break
        if r == 0:  # about a second of timed runs for the slower of the two
            slower = max(ort[0]["p50_ms"], ged[0]["p50_ms"], 1e-3)
            iterations = max(10, min(300, int(1000.0 / slower)))
    row = {"model": name, "batch": batch, "threads": threads}
    if error:
        row["error"] = error
        return row
    med = lambda runs, key: statistics.median(x[key] for x in runs)  # noqa: E731
    for who, runs in (("ged", ged), ("ort", ort)):
        row[who + "_p50_ms"] = med(runs, "p50_ms")
        row[who + "_rss_mb"] = med(runs, "peak_rss_mb")
        row[who + "_compile_ms"] = med(runs, "compile_ms")
    row["ratio"] = row["ged_p50_ms"] / row["ort_p50_ms"]
    row["rss_ratio"] = row["ged_rss_mb"] / row["ort_rss_mb"]
    row["iterations"] = iterations
    names = output_names(onnx_path)
    row["max_err"] = max_error(names, out_ged, out_ort)
    if batch == 1 and not args.dim_overrides:
        row["torch_err"] = torch_error(names, args.zoo, name, out_ged, entry.get("references", 0))
    if name.startswith("chain_"):
        row["ged_ns_per_op"] = row["ged_p50_ms"] * 1e6 / CHAIN_OPS
        row["ort_ns_per_op"] = row["ort_p50_ms"] * 1e6 / CHAIN_OPS
    return row


def table(rows):
    lines = ["| model | batch | thr | ged p50 ms | ORT p50 ms | ged/ORT | ged RSS MiB | ORT RSS MiB | RSS ratio "
             "| ged compile ms | ORT create ms | max err vs ORT | vs torch |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append("| %s | %d | %d | failed: %s |||||||||| " % (r["model"], r["batch"], r["threads"],
                                                                       r["error"].replace("|", "/")))
            continue
        lines.append("| %s | %d | %d | %.3f | %.3f | **%.2f** | %.0f | %.0f | %.2f | %.0f | %.0f | %s | %s |" % (
            r["model"], r["batch"], r["threads"], r["ged_p50_ms"], r["ort_p50_ms"], r["ratio"], r["ged_rss_mb"],
            r["ort_rss_mb"], r["rss_ratio"], r["ged_compile_ms"], r["ort_compile_ms"], fmt_err(r["max_err"]),
            fmt_err(r.get("torch_err"))))
    return lines


def summary(rows):
    out = []
    for b in sorted({r["batch"] for r in rows}):
        for t in sorted({r["threads"] for r in rows}):
            sel = [r for r in rows if r["batch"] == b and r["threads"] == t]
            ok = [r for r in sel if "error" not in r]
            if not sel:
                continue
            ratios = sorted(r["ratio"] for r in ok)
            line = "batch %d, %d thread(s): %d models, %d failed" % (b, t, len(sel), len(sel) - len(ok))
            if ratios:
                line += ("; median ged/ORT %.2f, %d above 1.25 (worst %.2f, %s), peak RSS above 1.5x ORT on %d" % (
                    statistics.median(ratios), sum(x > 1.25 for x in ratios), ratios[-1],
                    max(ok, key=lambda r: r["ratio"])["model"], sum(r["rss_ratio"] > 1.5 for r in ok)))
            chains = [r for r in ok if "ged_ns_per_op" in r]
            if chains:
                line += "; " + ", ".join("%s %.0f ns/op (ORT %.0f)" % (r["model"], r["ged_ns_per_op"], r["ort_ns_per_op"])
                                         for r in chains)
            out.append("- " + line)
    return out


def rewrite_docs(path, block):
    text = open(path).read() if os.path.exists(path) else ""
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        text = head + BEGIN + "\n" + block + "\n" + END + tail
    else:  # first run: the block opens the page, after its title line
        lines = text.splitlines(keepends=True)
        title = lines[0] if lines and lines[0].startswith("# ") else ""
        text = title + ("\n" if title else "") + BEGIN + "\n" + block + "\n" + END + "\n" + "".join(lines[1 if title else 0:])
    with open(path, "w") as f:
        f.write(text)


def run_header(run, dim_values):
    return ("`%s` — %s, commit %s, %s, %d cores; ONNX Runtime 1.30 (npm onnxruntime-node, CPU provider). "
            "Load average (1/5/15 min) %.1f/%.1f/%.1f before and %.1f/%.1f/%.1f after; %.0f minutes. "
            "Medians of %d round(s), ged and ORT alternating; p50 of each process's timed runs; compile is cold "
            "(`gectl --no-cache bench`, ORT's session creation); errors are max |ged − ORT| (ints exact) and "
            "max |ged − torch| at batch 1. Dynamic dims: seq %s, steps %s. Lower ged/ORT is better." % (
                run["command"], run["date"], run["commit"], run["cpu"], run["cores"], *run["load_before"],
                *run["load_after"], run["minutes"], run["rounds"], dim_values.get("seq"), dim_values.get("steps")))


def render(runs, dim_values, note):
    block = ["## Zoo: ged against ONNX Runtime (issue 20)", ""]
    for run in runs:
        block += [run_header(run, dim_values), ""]
    if note:
        block += [note, ""]
    rows = [r for run in runs for r in run["rows"]]
    return "\n".join(block + summary(rows) + [""] + table(rows))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", default="2", help="comma-separated thread counts")
    parser.add_argument("--batches", default="1,4", help="comma-separated batches; models without a batch dim run at 1")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--models", default="", help="comma-separated subset (default: the whole manifest)")
    parser.add_argument("--zoo", default=os.path.join(ROOT, "build", "zoo"))
    parser.add_argument("--gectl", default=os.path.join(ROOT, "build", "bin", "gectl"))
    parser.add_argument("--ort-dir", default=os.path.join(ROOT, "build", "ort", "node_modules"))
    parser.add_argument("--docs", default=os.path.join(ROOT, "docs", "perf.md"))
    parser.add_argument("--no-docs", action="store_true")
    parser.add_argument("--nice", type=int, default=0, help="run both under nice -n N (negative needs privileges)")
    parser.add_argument("--note", default="", help="a sentence on the conditions, printed under the command line")
    parser.add_argument("--results", default="", help="write this run's rows here (default: ZOO/results.json)")
    parser.add_argument("--render", default="",
                        help="run nothing: rewrite the docs block from these comma-separated results files")
    parser.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE",
                        help="feed dynamic dim NAME this value instead of the manifest's (repeatable)")
    parser.add_argument("--gem", action="store_true", help="time ged on a .gem compiled from each model")
    parser.add_argument("--command", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()

    with open(os.path.join(args.zoo, "manifest.json")) as f:
        manifest = json.load(f)
    dim_values = dict(manifest.get("dim_values") or {})
    args.dim_overrides = {}
    for d in args.dim:
        k, _, v = d.partition("=")
        if not v.isdigit():
            sys.exit("--dim %s: expected NAME=VALUE with an integer value" % d)
        args.dim_overrides[k] = int(v)
    dim_values.update(args.dim_overrides)
    if args.render:
        runs = []
        for path in args.render.split(","):
            with open(path) as f:
                runs.append(json.load(f))
        text = render(runs, dim_values, args.note)
        print(text)
        if not args.no_docs:
            rewrite_docs(args.docs, text)
        return
    models = manifest["models"]
    names = args.models.split(",") if args.models else sorted(models)
    for n in names:
        if n not in models:
            sys.exit("%s is not in %s/manifest.json" % (n, args.zoo))
    if not os.path.isdir(os.path.join(args.ort_dir, "onnxruntime-node")):
        sys.exit("no onnxruntime-node under %s: mkdir -p build/ort && (cd build/ort && "
                 "ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node@1.30)" % args.ort_dir)
    env = dict(os.environ, NODE_PATH=args.ort_dir)
    threads = [int(t) for t in args.threads.split(",")]
    batches = [int(b) for b in args.batches.split(",")]
    load_before, start = os.getloadavg(), time.time()
    rows = []
    for b in batches:
        for t in threads:
            for n in names:
                if b != 1 and not models[n]["batched"]:
                    continue
                row = bench_one(args, env, n, models[n], b, t, dim_values)
                rows.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
    cpu, cores, commit = machine()
    run = {"command": args.command or "bench/zoo/run.sh", "date": datetime.date.today().isoformat(),
           "commit": commit, "cpu": cpu, "cores": cores, "load_before": load_before,
           "load_after": os.getloadavg(), "minutes": (time.time() - start) / 60, "rounds": args.rounds, "rows": rows}
    with open(args.results or os.path.join(args.zoo, "results.json"), "w") as f:
        json.dump(run, f, indent=1)
    text = render([run], dim_values, args.note)
    print(text)
    if not args.no_docs:
        rewrite_docs(args.docs, text)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Rows worth a second look in bench/zoo/run.py results files: the held-out re-runs.

For each results file (run.py --results F) of a zoo directory, prints the rows whose ged/ORT
p50 exceeds --ratio (1.15), whose peak RSS exceeds --rss (1.3) times ORT's, that failed, or
whose outputs differ from ORT's by more than --rel (1e-3) relative: per output, max |ged - ORT|
over max |ORT| (ints must match exactly), read from the outputs run.py saved
(ZOO/data/<model>_b<batch>/{ged,ort}_t<threads>/). Then each (batch, threads) column's median
ged/ORT, and a JSON line per flagged row (--json) for bench/zoo/cpu_time.py re-checks.

    bench/zoo/heldout_report.py --zoo build/heldout/heldout7 [--results F] [--ratio 1.15]

F may also be run.py's stderr (the rows printed so far, for a run stopped early).
"""
import argparse
import json
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import output_names, sanitize  # noqa: E402


def relative_error(zoo, entry, row):
    """Largest per-output max |ged - ORT| / max |ORT|; a string when they cannot be compared."""
    data = os.path.join(zoo, "data", "%s_b%d" % (row["model"], row["batch"]))
    worst = 0.0
    for n in output_names(os.path.join(zoo, entry["file"])):
        pa = os.path.join(data, "ged_t%d" % row["threads"], sanitize(n) + ".npy")
        pb = os.path.join(data, "ort_t%d" % row["threads"], sanitize(n) + ".npy")
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
                return "%d of %d ints differ" % (bad, a.size)
            continue
        a, b = a.astype(np.float64), b.astype(np.float64)
        if (np.isnan(a) != np.isnan(b)).any():
            return "NaN mismatch"
        a, b = np.nan_to_num(a, nan=0.0), np.nan_to_num(b, nan=0.0)
        scale = float(np.abs(b).max())
        d = float(np.abs(a - b).max())
        worst = max(worst, d / scale if scale > 0 else d)
    return worst


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--zoo", required=True)
    parser.add_argument("--results", help="default: ZOO/results.json")
    parser.add_argument("--ratio", type=float, default=1.15)
    parser.add_argument("--rss", type=float, default=1.3)
    parser.add_argument("--rel", type=float, default=1e-3)
    parser.add_argument("--json", action="store_true", help="also one JSON line per flagged row")
    args = parser.parse_args()
    with open(os.path.join(args.zoo, "manifest.json")) as f:
        manifest = json.load(f)["models"]
    with open(args.results or os.path.join(args.zoo, "results.json")) as f:
        text = f.read()
    try:
        run = json.loads(text)
    except ValueError:  # a run's stderr (one JSON row a line): the rows of a run not finished
        run = {"rows": [json.loads(ln) for ln in text.splitlines() if ln.startswith("{")]}
    rows = run["rows"] if isinstance(run, dict) else run
    name = os.path.basename(os.path.normpath(args.zoo))
    print("## %s: %d rows, load %s -> %s" % (name, len(rows), run.get("load_before"), run.get("load_after")))
    flagged = []
    for r in rows:
        why = []
        if "error" in r:
            why.append("failed: " + r["error"])
        else:
            rel = relative_error(args.zoo, manifest[r["model"]], r)
            r["rel_err"] = rel
            if r["ratio"] > args.ratio:
                why.append("ratio %.2f" % r["ratio"])
            if r["rss_ratio"] > args.rss:
                why.append("rss %.2f" % r["rss_ratio"])
            if isinstance(rel, str) or rel > args.rel:
                why.append("rel err %s" % (rel if isinstance(rel, str) else "%.1e" % rel))
        if why:
            flagged.append(r)
            print("| %s | %s | b%d %dt | %s | %s |" % (
                name, r["model"], r["batch"], r["threads"],
                "%.3f / %.3f (%.2f)" % (r["ged_p50_ms"], r["ort_p50_ms"], r["ratio"]) if "ratio" in r else "-",
                "; ".join(why)))
    for b in sorted({r["batch"] for r in rows}):
        for t in sorted({r["threads"] for r in rows}):
            ok = [r["ratio"] for r in rows if r["batch"] == b and r["threads"] == t and "ratio" in r]
            if ok:
                print("- b%d %dt: %d rows, median %.2f, max %.2f" % (b, t, len(ok), statistics.median(ok), max(ok)))
    if args.json:
        for r in flagged:
            print(json.dumps({k: r.get(k) for k in ("model", "batch", "threads", "ratio", "rss_ratio", "rel_err",
                                                    "error")}))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The dynamic-batching benchmark of issue 23: an MLP of 2048-wide layers
(bench/serving/make_mlp_repo.py) served by one ged twice, with and without
dynamic_batching (same instance count and max_batch_size), loaded by
`gectl perf` at batch 1 with N concurrent clients, the two alternating for
--rounds rounds. Reports each side's median throughput and p99, the ratio,
and the p99 bound of the issue: max_queue_delay + 2 x the run time of a full
batch, taken from ged's own statistics of the batched runs (compute time of
batches of max_batch_size rows, ModelStatistics through gectl perf), with
gectl bench's in-process time at that many rows beside it.

  bench/serving/batching.py [--concurrency 16] [--rounds 3] [--interval-ms 3000]
                            [--threads 2] [--layers 4] [--out DIR]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.path.join(ROOT, "build", "bin")


def start_ged(repo, work, threads):
    ready = os.path.join(work, "ready.json")
    log = open(os.path.join(work, "ged.log"), "w")
    proc = subprocess.Popen(
        [os.path.join(BIN, "ged"), "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0",
         "--ready-file", ready, "--model-repository", repo, "--cache-dir", os.path.join(work, "cache"),
         "--devices", f"cpu:0={threads}"],
        stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"ged exited with {proc.returncode}; see {log.name}")
        if os.path.exists(ready) and os.path.getsize(ready) > 0:
            with open(ready) as f:
                return proc, json.load(f)["grpc"]
        time.sleep(0.2)
    proc.kill()
    sys.exit("ged did not become ready within 300 s")


def perf(address, model, concurrency, interval_ms, work):
    out = os.path.join(work, f"{model}.json")
    r = subprocess.run([os.path.join(BIN, "gectl"), "perf", "-m", model, "-u", address, "--concurrency-range",
                        str(concurrency), "-p", str(interval_ms), "-f", out], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"gectl perf -m {model} failed ({r.returncode}): {r.stderr}")
    with open(out) as f:
        return json.load(f)["rows"][0]


def full_batch_ms(model_path, rows, threads):
    r = subprocess.run([os.path.join(BIN, "gectl"), "--no-cache", "bench", model_path, "--shape", f"x={rows},2048",
                        "--threads", str(threads), "--iterations", "30", "--warmup", "5"],
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])["p50_ms"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--interval-ms", type=int, default=3000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--max-batch", type=int, default=16)
    ap.add_argument("--delay-us", type=int, default=8000)
    ap.add_argument("--out", help="keep the repository, logs and JSON here")
    args = ap.parse_args()
    work = args.out or tempfile.mkdtemp(prefix="ged-batching-")
    os.makedirs(work, exist_ok=True)
    repo = os.path.join(work, "repo")
    subprocess.run([sys.executable, os.path.join(ROOT, "bench", "serving", "make_mlp_repo.py"), repo,
                    "--layers", str(args.layers), "--max-batch", str(args.max_batch), "--delay-us",
                    str(args.delay_us)], check=True)
    load_before = os.getloadavg()
    proc, address = start_ged(repo, work, args.threads)
    rows = {"mlp_plain": [], "mlp_batched": []}
    try:
        for _ in range(args.rounds):
            for model in ("mlp_plain", "mlp_batched"):
                rows[model].append(perf(address, model, args.concurrency, args.interval_ms, work))
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    batch_ms = full_batch_ms(os.path.join(repo, "mlp_plain", "1", "model.onnx"), args.max_batch, args.threads)
    one_ms = full_batch_ms(os.path.join(repo, "mlp_plain", "1", "model.onnx"), 1, args.threads)
    load_after = os.getloadavg()
    full = [b for r in rows["mlp_batched"] for b in r.get("server", {}).get("batches", [])
            if b["rows"] == args.max_batch]
    daemon_batch_ms = (sum(b["compute_infer_us"] * b["count"] for b in full) / sum(b["count"] for b in full) / 1000
                       if full else None)
    summary = {}
    for model, rs in rows.items():
        summary[model] = {
            "throughput_infer_per_sec": statistics.median(r["throughput_infer_per_sec"] for r in rs),
            "p50_us": statistics.median(r["p50_us"] for r in rs),
            "p99_us": statistics.median(r["p99_us"] for r in rs),
            "errors": sum(r["errors"] for r in rs),
            "stable": all(r["stable"] for r in rs),
            "rows_per_batch": statistics.median(
                r["server"]["inference_count"] / max(1, r["server"]["execution_count"]) for r in rs if "server" in r),
        }
    ratio = summary["mlp_batched"]["throughput_infer_per_sec"] / summary["mlp_plain"]["throughput_infer_per_sec"]
    bound_us = args.delay_us + 2 * (daemon_batch_ms if daemon_batch_ms else batch_ms) * 1000
    result = {"concurrency": args.concurrency, "rounds": args.rounds, "layers": args.layers, "width": 2048,
              "max_batch_size": args.max_batch, "max_queue_delay_us": args.delay_us, "threads": args.threads,
              "models": summary, "throughput_ratio": ratio, "full_batch_run_ms_in_daemon": daemon_batch_ms, "full_batch_run_ms_gectl_bench": batch_ms, "one_row_run_ms": one_ms,
              "p99_bound_us": bound_us, "p99_within_bound": summary["mlp_batched"]["p99_us"] <= bound_us,
              "load_before": load_before, "load_after": load_after}
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""resnet18 batch 1 call latency: ged.torch.compile (through gRPC and through
shared memory) against eager torch and the in-process C++ path (`gectl bench`
on the same exported ONNX). Results in docs/perf.md.

Usage (Release tree built):
    /usr/bin/python3 bench/torch_bench.py [--iterations 100] [--warmup 10]

Starts its own ged (127.0.0.1 port 0, --shared-memory) and prints a Markdown
table: p50, p90, p99 and mean per call, in milliseconds. Every path gets the
same intra-op thread count (--threads, default 1: torch.set_num_threads, the
daemon's device `cpu:0=N`, `gectl bench --threads N`), which keeps the
comparison steady on a small shared machine.
"""

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(ROOT, "build", "python"), os.path.join(ROOT, "client", "python"),
                os.path.join(ROOT, "tests", "python")]

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torchvision  # noqa: E402

import ged  # noqa: E402
import ged.torch  # noqa: E402
from daemon import Daemon  # noqa: E402


def percentiles(seconds):
    ms = np.array(seconds) * 1e3
    return {"p50_ms": np.percentile(ms, 50), "p90_ms": np.percentile(ms, 90), "p99_ms": np.percentile(ms, 99),
            "mean_ms": ms.mean()}


def timed(fn, x, iterations, warmup):
    for _ in range(warmup):
        fn(x)
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        fn(x)
        times.append(time.perf_counter() - start)
    return percentiles(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1, help="intra-op threads of every path")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None).eval()
    x = torch.randn(1, 3, 224, 224)
    rows = []
    with torch.no_grad():
        rows.append(("eager torch (in process)", timed(model, x, args.iterations, args.warmup)))

    daemon = Daemon("--shared-memory", "--log-level", "warn", "--devices", f"cpu:0={args.threads}")
    transport = []
    try:
        # The transport alone: Relu on a tensor of resnet18's input size.
        relu = relu_model(list(x.shape))
        xn = x.numpy()
        for label, shm in (("RunGraph over gRPC", False), ("RunGraph over shared memory", True)):
            with ged.Client(daemon.address, shared_memory=shm).session() as s:
                g = s.add_graph(relu)
                g.compile()
                transport.append((label, timed(lambda a: g.run([a]), xn, args.iterations * 5, args.warmup)))
        for label, shm in (("ged.torch.compile over gRPC", False), ("ged.torch.compile over shared memory", True)):
            compiled = ged.torch.compile(model, (x,), client=ged.Client(daemon.address, shared_memory=shm))
            with torch.no_grad():
                assert torch.allclose(compiled(x), model(x), rtol=0, atol=1e-4)
            rows.append((label, timed(compiled, x, args.iterations, args.warmup)))
            compiled.close()
    finally:
        daemon.stop()

    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "resnet18.onnx")
        buffer = io.BytesIO()
        torch.onnx.export(model, (x,), buffer, input_names=["input_0"], output_names=["output_0"],
                          opset_version=ged.torch.OPSET, do_constant_folding=True)
        with open(path, "wb") as f:
            f.write(buffer.getvalue())
        out = subprocess.run([os.path.join(ROOT, "build", "bin", "gectl"), "bench", path, "--iterations",
                              str(args.iterations), "--warmup", str(args.warmup), "--threads", str(args.threads)],
                             check=True, capture_output=True, text=True).stdout
        rows.append(("C++ in process (gectl bench)", json.loads(out.strip().splitlines()[-1])))

    print(f"resnet18 batch 1, {args.iterations} calls after {args.warmup} warm-up calls, "
          f"{args.threads} intra-op thread(s), {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}\n")
    print("| path | p50 ms | p90 ms | p99 ms | mean ms |")
    print("|---|---|---|---|---|")
    for label, r in rows:
        print(f"| {label} | {r['p50_ms']:.2f} | {r['p90_ms']:.2f} | {r['p99_ms']:.2f} | {r['mean_ms']:.2f} |")
    print(f"\nTransport: Relu of f32{list(x.shape)} (588 KiB in, 588 KiB out), {args.iterations * 5} calls\n")
    print("| path | p50 ms | p90 ms | p99 ms | mean ms |")
    print("|---|---|---|---|---|")
    for label, r in transport:
        print(f"| {label} | {r['p50_ms']:.3f} | {r['p90_ms']:.3f} | {r['p99_ms']:.3f} | {r['mean_ms']:.3f} |")


def relu_model(shape):
    from onnx import TensorProto, helper
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu", [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A PyTorch model on the ged daemon, end to end.

Start a daemon (shared memory makes local calls cheaper), then run this:

    build/bin/ged --shared-memory &
    PYTHONPATH=build/python:client/python /usr/bin/python3 examples/python/torch_resnet18.py

It compiles torchvision's resnet18 with ged.torch.compile (export to ONNX,
AddGraph, CompileGraph on the daemon), calls it like the module, and checks
the result against eager PyTorch. The daemon's address comes from --address,
else $GED_ADDRESS, else 127.0.0.1:50051.
"""

import argparse
import time

import torch
import torchvision

import ged
import ged.torch


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--address", help="the daemon's HOST:PORT")
    parser.add_argument("--batch", type=int, default=1)
    args = parser.parse_args()

    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None).eval()
    x = torch.randn(args.batch, 3, 224, 224)

    client = ged.Client(args.address)
    start = time.perf_counter()
    fast = ged.torch.compile(model, (x,), client=client, dynamic_batch=True)
    print(f"compiled on {client.address} in {time.perf_counter() - start:.2f} s "
          f"(shared memory: {client.uses_shared_memory})")

    start = time.perf_counter()
    y = fast(x)
    elapsed = time.perf_counter() - start
    with torch.no_grad():
        expected = model(x)
    print(f"one call: {elapsed * 1e3:.1f} ms; output {tuple(y.shape)}; "
          f"max |ged - eager| = {(y - expected).abs().max().item():.2e}")
    print("top-5 classes:", y[0].topk(5).indices.tolist())

    # Another batch size reuses the graph (dynamic_batch=True).
    x4 = torch.randn(4, 3, 224, 224)
    with torch.no_grad():
        print(f"batch 4: max |ged - eager| = {(fast(x4) - model(x4)).abs().max().item():.2e}")
    fast.close()


if __name__ == "__main__":
    main()

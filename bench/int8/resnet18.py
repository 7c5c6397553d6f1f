#!/usr/bin/python3
"""int8 ResNet-18 (issue 21's Done means): agreement with ONNX Runtime and speed.

    /usr/bin/python3 bench/int8/resnet18.py [--gectl build/bin/gectl] [--work build/int8]
        [--samples 200] [--calibration 16] [--rounds 5] [--iterations 30] [--threads 2]
        [--skip-agreement] [--skip-timing]

1. Builds torchvision's resnet18 (seeded weights, batch dim dynamic) with
   bench/zoo/make_models.py unless WORK/resnet18.onnx exists, and quantizes it
   with bench/quantize.py (QDQ form, per-channel s8 weights, u8 activations
   calibrated on --calibration seeded inputs) into WORK/resnet18_int8.onnx.
2. Agreement: --samples seeded inputs (numpy default_rng(7000 + i), uniform in
   [-1, 1), 1x3x224x224 each), run in batches of 20 by `gectl run` and by ONNX
   Runtime (bench/ort_run.js) on the int8 model: the fraction of inputs whose
   top-1 class agrees, and the cosine similarity of each input's logits (min
   and mean).
3. Speed at batch 1 on --threads threads (static batch-1 copies of both
   models, WORK/*_b1.onnx, for ged and ORT alike): --rounds rounds, each timing in turn
   ged fp32, ged int8 and ORT int8 (then ORT fp32) for --iterations runs
   (`gectl --no-cache bench`, `node bench/ort_run.js`, seeded inputs); prints
   the per-round p50s and their medians, and the ratios the issue asks for:
   ged fp32 / ged int8 (>= 1.5) and ged int8 / ORT int8 (<= 1.25).
Prints one JSON object last.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))


def run(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), r.stderr[-2000:]))
    return r.stdout


def prepare(args):
    fp32 = os.path.join(args.work, "resnet18.onnx")
    int8 = os.path.join(args.work, "resnet18_int8.onnx")
    if not os.path.exists(fp32):
        run([sys.executable, os.path.join(ROOT, "bench", "zoo", "make_models.py"), args.work, "--only", "resnet18"])
    if not os.path.exists(int8):
        print(run([sys.executable, os.path.join(ROOT, "bench", "quantize.py"), fp32, int8,
                   "--calibration", str(args.calibration), "--ort-dir", args.ort_dir]).strip())
    return fp32, int8


def static_batch1(path):
    """A copy of `path` whose batch dim is 1 (ged compiles it as a static
    graph: the static executor hands kernels their constant weights at
    load, so the int8 kernels decide their paths and pack once there)."""
    import onnx
    out = path.replace(".onnx", "_b1.onnx")
    if not os.path.exists(out):
        m = onnx.load(path)
        for v in list(m.graph.input) + list(m.graph.output):
            dims = v.type.tensor_type.shape.dim
            if dims and dims[0].dim_param:
                dims[0].ClearField("dim_param")
                dims[0].dim_value = 1
        onnx.save(m, out)
    return out


def logits_of(out_dir):
    files = [f for f in os.listdir(out_dir) if f.endswith(".npy")]
    if len(files) != 1:
        sys.exit("expected one output in %s, got %s" % (out_dir, files))
    return np.load(os.path.join(out_dir, files[0])).astype(np.float64)


def agreement(args, model, env):
    agree, cosines = 0, []
    with tempfile.TemporaryDirectory() as tmp:
        for start in range(0, args.samples, 20):
            batch = range(start, min(args.samples, start + 20))
            x = np.concatenate([(np.random.default_rng(7000 + i).random((1, 3, 224, 224)) * 2 - 1).astype(np.float32)
                                for i in batch])
            path = os.path.join(tmp, "x.npy")
            np.save(path, x)
            ged_dir, ort_dir = os.path.join(tmp, "ged"), os.path.join(tmp, "ort")
            run([args.gectl, "--no-cache", "run", model, "--input", "image=" + path, "--output-dir", ged_dir])
            run(["node", os.path.join(ROOT, "bench", "ort_run.js"), model, "--input", "image=" + path,
                 "--iterations", "1", "--warmup", "0", "--threads", str(args.threads), "--output-dir", ort_dir], env)
            g, o = logits_of(ged_dir), logits_of(ort_dir)
            agree += int((g.argmax(axis=1) == o.argmax(axis=1)).sum())
            for a, b in zip(g, o):
                cosines.append(float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b))))
            for d in (ged_dir, ort_dir):
                for f in os.listdir(d):
                    os.remove(os.path.join(d, f))
    return {"samples": args.samples, "top1_agreement": agree / args.samples,
            "cosine_min": min(cosines), "cosine_mean": statistics.mean(cosines)}


def timing(args, fp32, int8, env):
    fp32, int8 = static_batch1(fp32), static_batch1(int8)
    common = ["--shape", "image=1,3,224,224", "--threads", str(args.threads), "--warmup", "5",
              "--iterations", str(args.iterations)]
    runs = {"ged_fp32": [], "ged_int8": [], "ort_int8": [], "ort_fp32": []}
    for r in range(args.rounds):
        for key, cmd in (("ged_fp32", [args.gectl, "--no-cache", "bench", fp32] + common),
                         ("ged_int8", [args.gectl, "--no-cache", "bench", int8] + common),
                         ("ort_int8", ["node", os.path.join(ROOT, "bench", "ort_run.js"), int8] + common),
                         ("ort_fp32", ["node", os.path.join(ROOT, "bench", "ort_run.js"), fp32] + common)):
            p50 = json.loads(run(cmd, env).strip().splitlines()[-1])["p50_ms"]
            runs[key].append(p50)
            print("round %d %s p50 %.2f ms" % (r, key, p50), flush=True)
    med = {k: statistics.median(v) for k, v in runs.items()}
    return {"rounds": runs, "median_p50_ms": med,
            "ged_fp32_over_ged_int8": med["ged_fp32"] / med["ged_int8"],
            "ged_int8_over_ort_int8": med["ged_int8"] / med["ort_int8"],
            "loadavg_after": os.getloadavg()}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gectl", default=os.path.join(ROOT, "build", "bin", "gectl"))
    p.add_argument("--work", default=os.path.join(ROOT, "build", "int8"))
    p.add_argument("--ort-dir", default=os.path.join(ROOT, "build", "ort"))
    p.add_argument("--samples", type=int, default=200)
    p.add_argument("--calibration", type=int, default=16)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--iterations", type=int, default=30)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--skip-agreement", action="store_true")
    p.add_argument("--skip-timing", action="store_true")
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    env = dict(os.environ, NODE_PATH=os.path.join(os.path.abspath(args.ort_dir), "node_modules"))
    fp32, int8 = prepare(args)
    result = {"threads": args.threads, "calibration": args.calibration}
    if not args.skip_agreement:
        result["agreement"] = agreement(args, int8, env)
        print(json.dumps(result["agreement"]), flush=True)
    if not args.skip_timing:
        result["timing"] = timing(args, fp32, int8, env)
    print(json.dumps(result))


if __name__ == "__main__":
    main()

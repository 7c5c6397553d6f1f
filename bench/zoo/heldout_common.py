"""What the held-out checks share: run one model on one input through ged and ONNX Runtime
and compare the outputs (bench/zoo/conv_heldout.py, bench/zoo/concat_heldout.py).

`gectl --no-cache run` (default options) and `node bench/ort_run.js` (one run, no warm-up)
each write their outputs as .npy files under DATA/ged and DATA/ort; the result is the
largest absolute difference over the outputs, the largest |ORT| value (floored at
`scale_floor`) and whether the difference is within `tolerance` times that scale.
"""
import os
import subprocess

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def max_error(a, b):
    if a.shape != b.shape:
        return float("inf")
    return float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))) if a.size else 0.0


def compare_with_ort(gectl, path, x, data, env, tolerance, scale_floor):
    """Runs `path` on input `x` (named "x") through both; a dict with max_err, max_abs and
    ok, or with error (the failing side's stderr tail)."""
    os.makedirs(data, exist_ok=True)
    np.save(os.path.join(data, "x.npy"), x)
    feed = ["--input", "x=" + os.path.join(data, "x.npy")]
    runs = {"ged": [gectl, "--no-cache", "run", path] + feed + ["--output-dir", os.path.join(data, "ged")],
            "ort": ["node", os.path.join(ROOT, "bench", "ort_run.js"), path] + feed +
                   ["--iterations", "1", "--warmup", "0", "--output-dir", os.path.join(data, "ort")]}
    outs = {}
    for who, cmd in runs.items():
        r = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if r.returncode != 0:
            return {"error": "%s: %s" % (who, r.stderr[-400:])}
        d = os.path.join(data, who)
        outs[who] = {f: np.load(os.path.join(d, f)) for f in sorted(os.listdir(d))}
    err = max(max_error(outs["ged"].get(f, np.zeros(0)), outs["ort"][f]) for f in outs["ort"])
    scale = max(scale_floor, max(float(np.max(np.abs(v))) if v.size else 0.0 for v in outs["ort"].values()))
    return {"max_err": err, "max_abs": scale, "ok": err <= tolerance * scale}

#!/usr/bin/python3
"""Conv -> BatchNormalization -> Relu, exported unfolded as ONNX, compiles to
one fused convolution: the engines' optimizers run before placement
(cpu_dense.OptimizeOriginalGraph folds the BatchNormalization into the Conv
and fuses the Relu). Checked on `gectl partition --report json` and
`gectl dump --compiled`; with ge.disable_passes naming that optimizer the
BatchNormalization stays, both compilations compute the same outputs, and
ge.disable_passes naming an unknown or a required pass is refused with the
name in the error.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

GECTL = sys.argv[1]
FOLD = "cpu_dense.OptimizeOriginalGraph"


def make_model(path):
    rng = np.random.default_rng(7)
    inits = [
        numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "w"),
        numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "b"),
        numpy_helper.from_array(rng.uniform(0.5, 1.5, 8).astype(np.float32), "scale"),
        numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "bias"),
        numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "mean"),
        numpy_helper.from_array(rng.uniform(0.5, 2.0, 8).astype(np.float32), "var"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["n"], epsilon=1e-5),
        helper.make_node("Relu", ["n"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "conv_bn_relu",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 16, 16])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, path)


def gectl(*args, expect=0):
    proc = subprocess.run([GECTL, "--no-cache", *args], capture_output=True, text=True, check=False)
    if proc.returncode != expect:
        sys.exit(f"gectl {' '.join(args)} exited {proc.returncode} (expected {expect}): {proc.stderr}")
    return proc


def ops_of_report(report):
    return [n["op"] for n in json.loads(report)["nodes"]]


def compute_ops(text_form):
    ops = []
    for line in text_form.splitlines():
        if "=" in line and "(" in line and not line.strip().startswith(("graph", "attr", "#")):
            ops.append(line.split("=", 1)[1].strip().split("(", 1)[0].strip())
    return [o for o in ops if o not in ("Data", "Const", "NetOutput", "NoOp")]


def main():
    failures = []

    def check(cond, what):
        print(("ok   " if cond else "FAIL ") + what)
        if not cond:
            failures.append(what)

    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "conv_bn_relu.onnx")
        make_model(model)
        disable = ["--option", f"ge.disable_passes={FOLD}"]

        folded = ops_of_report(gectl("partition", "--report", "json", model).stdout)
        check("BatchNormalization" not in folded, f"partition report has no BatchNormalization: {folded}")
        # One fused convolution (a TransData may follow it: cpu_dense's blocked
        # layout back to the plain one the output needs).
        dump = [op for op in compute_ops(gectl("dump", "--compiled", model).stdout) if op != "TransData"]
        check(dump == ["_DenseFused"], f"compiled graph is one fused convolution: {dump}")

        kept = ops_of_report(gectl("partition", "--report", "json", model, *disable).stdout)
        check("BatchNormalization" in kept, f"with {FOLD} disabled the report keeps BatchNormalization: {kept}")
        dump = compute_ops(gectl("dump", "--compiled", model, *disable).stdout)
        check("BatchNormalization" in dump, f"with {FOLD} disabled the compiled graph keeps it: {dump}")

        # The same numbers either way (folding reorders float arithmetic).
        outs = {}
        for name, extra in (("folded", []), ("unfolded", disable)):
            out_dir = os.path.join(tmp, name)
            gectl("run", model, "--seed", "3", "--output-dir", out_dir, *extra)
            outs[name] = np.load(os.path.join(out_dir, "y.npy"))
        err = float(np.max(np.abs(outs["folded"] - outs["unfolded"])))
        check(err <= 1e-4 * max(1.0, float(np.max(np.abs(outs["unfolded"])))), f"outputs agree (max diff {err:g})")

        for name, why in (("NoSuchPass", "unknown pass 'NoSuchPass'"), ("EnginePlacer", "'EnginePlacer'")):
            proc = gectl("partition", model, "--option", f"ge.disable_passes={name}", expect=1)
            check(why in proc.stderr, f"ge.disable_passes={name} refused naming it: {proc.stderr.strip()}")
        proc = gectl("dump", "--compiled", model, "--option", "ge.disable_passes=MemoryPlanning", expect=1)
        check("required" in proc.stderr and "MemoryPlanning" in proc.stderr,
              f"a required pass is refused: {proc.stderr.strip()}")

        listing = gectl("opt", "--list-passes").stdout
        check(FOLD in listing, f"gectl opt --list-passes lists {FOLD}")
        lines = {l.split()[0]: l for l in listing.splitlines() if l.strip()}
        check("required" in lines.get("EnginePlacer", ""), "EnginePlacer is listed as required")
        check("optional" in lines.get(FOLD, ""), f"{FOLD} is listed as optional")

        text = gectl("opt", "--passes", f"InferShapesPass,{FOLD}", model).stdout
        check("BatchNormalization" not in text and "_DenseFused" in text, "gectl opt runs the fold on the ONNX model")
    sys.stdout.flush()
    if failures:
        sys.exit(f"{len(failures)} check(s) failed")


if __name__ == "__main__":
    main()

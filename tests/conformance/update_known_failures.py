#!/usr/bin/python3
"""Rewrites known_failures.txt from an onnx_conformance run's output.

Usage: onnx_conformance > run.txt; update_known_failures.py run.txt [LIST]

Keeps the reason of every listed test that still fails, drops tests that
now pass, and adds new failures with a reason derived from the error (edit
those by hand when the derived one is not the real reason).
"""
import re
import sys


def derive(error):
    m = re.search(r"op '([^']+)' \(domain '([^']+)', opset (\d+)\) is not supported", error)
    if m:
        op, domain, opset = m.groups()
        if domain != "ai.onnx":
            return f"{op} is in domain {domain} (training preview ops): out of scope"
        return f"no {op} (opset {opset}) in ged yet: schema and host_cpu kernel missing"
    m = re.search(r"the model uses opset (\d+) of the default ONNX domain", error)
    if m:
        return f"model uses opset {m.group(1)}; ged imports opsets 1..17 only"
    m = re.search(r"opset (\d+) gives (\S+), which changed by opset 7", error)
    if m:
        return f"{m.group(2).rstrip(',')} (opset {m.group(1)}) changed by opset 7: ged reads pre-7 ops only where they did not change"
    if "training_mode" in error:
        return "training mode: ged's kernels are inference only"
    return "unclassified: " + error[:200]


def main():
    run_path = sys.argv[1]
    list_path = sys.argv[2] if len(sys.argv) > 2 else __file__.rsplit("/", 1)[0] + "/known_failures.txt"
    known, header = {}, []
    with open(list_path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                header.append(line)
                continue
            name, _, reason = line.partition(" ")
            known[name] = reason.strip()
    failing = {}
    with open(run_path) as f:
        for line in f:
            m = re.match(r"FAIL (\S+): (.*?)( \[not in known failures\])?$", line.rstrip("\n"))
            if m:
                failing[m.group(1)] = m.group(2)
    with open(list_path, "w") as f:
        f.write("\n".join(header) + "\n" if header else "")
        for name in sorted(failing):
            f.write(f"{name} {known.get(name) or derive(failing[name])}\n")


if __name__ == "__main__":
    main()

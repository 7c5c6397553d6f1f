#!/usr/bin/python3
"""The golden pass tests: every tests/passes/<pass>/<case>.in.txt runs
through `gectl opt --passes <pass>` and its output must equal
<case>.out.txt byte for byte (ged's text form, base/ir/text_format.h).

An input may start with header comments:
  # passes: A,B         the passes to run (default: the directory's name)
  # option: KEY=VALUE   a compile option (repeatable)
A new case is two files; no C++ and no CMake change. --update rewrites the
.out.txt files from gectl's output (review the diff before committing).
"""
import argparse
import difflib
import os
import subprocess
import sys


def header(text):
    passes, options = None, []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("#"):
            break
        body = line[1:].strip()
        if body.startswith("passes:"):
            passes = body[len("passes:"):].strip()
        elif body.startswith("option:"):
            options.append(body[len("option:"):].strip())
    return passes, options


def run_case(gectl, pass_dir, case_in, update):
    case = case_in[: -len(".in.txt")]
    with open(case_in, encoding="utf-8") as f:
        passes, options = header(f.read())
    passes = passes or os.path.basename(pass_dir)
    cmd = [gectl, "opt", "--passes", passes, case_in]
    for o in options:
        cmd += ["--option", o]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    name = os.path.relpath(case, os.path.dirname(pass_dir))
    if proc.returncode != 0:
        print(f"FAIL {name}: {' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()}")
        return False
    expected_path = case + ".out.txt"
    if update:
        with open(expected_path, "w", encoding="utf-8") as f:
            f.write(proc.stdout)
        print(f"UPDATED {name}")
        return True
    if not os.path.exists(expected_path):
        print(f"FAIL {name}: no {os.path.basename(expected_path)}")
        return False
    with open(expected_path, encoding="utf-8") as f:
        expected = f.read()
    if proc.stdout != expected:
        diff = difflib.unified_diff(expected.splitlines(True), proc.stdout.splitlines(True),
                                    expected_path, "gectl opt output")
        print(f"FAIL {name}:\n{''.join(diff)}")
        return False
    print(f"ok   {name} ({passes})")
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gectl", required=True)
    parser.add_argument("--update", action="store_true")
    parser.add_argument("root", nargs="?", default=os.path.dirname(os.path.abspath(__file__)))
    args = parser.parse_args()
    listing = subprocess.run([args.gectl, "opt", "--list-passes"], capture_output=True, text=True, check=False)
    if listing.returncode != 0:
        print(f"FAIL gectl opt --list-passes: {listing.stderr.strip()}")
        return 1
    known = {line.split()[0] for line in listing.stdout.splitlines() if line.strip()}
    ok, cases = True, 0
    for pass_name in sorted(os.listdir(args.root)):
        pass_dir = os.path.join(args.root, pass_name)
        if not os.path.isdir(pass_dir) or pass_name.startswith("__"):
            continue
        if pass_name not in known:
            print(f"FAIL {pass_name}: not a pass of gectl opt --list-passes (engine not built?)")
            ok = False
            continue
        inputs = sorted(f for f in os.listdir(pass_dir) if f.endswith(".in.txt"))
        outputs = sorted(f for f in os.listdir(pass_dir) if f.endswith(".out.txt"))
        if not inputs:
            print(f"FAIL {pass_name}: a pass directory without cases")
            ok = False
        for out in outputs:
            if out[: -len(".out.txt")] + ".in.txt" not in inputs:
                print(f"FAIL {pass_name}/{out}: an expected output without its input")
                ok = False
        for case_in in inputs:
            cases += 1
            ok = run_case(args.gectl, pass_dir, os.path.join(pass_dir, case_in), args.update) and ok
    print(f"{cases} case(s)")
    return 0 if ok and cases > 0 else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Include-direction check: no file includes a header of a layer above its own.

Reads the layer list from scripts/layers.txt (see its header for the format),
maps every project file under the listed directories to its module (the
longest matching path prefix), and checks each `#include "..."` of a project
header against the modules the file's module may include. Tests, benchmarks
and fuzzers are not checked (they may reach into any layer they exercise).

Exceptions (`allow FILE -> HEADER : reason` lines) are the known backlog; the
check also fails when an exception no longer matches any include, so that
the list only shrinks.

Usage: scripts/check_includes.py [--root DIR] [--layers FILE]
Exit status 0 when clean, 1 with one line per violation otherwise.
"""
import argparse
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCE_SUFFIXES = ('.h', '.cc', '.cpp', '.hpp')
UNCHECKED_TOP = {'tests', 'bench', 'fuzz', 'build', 'build-asan', 'build-fuzz', 'build-tsan'}


class Layers:
    def __init__(self, path):
        self.modules = {}  # name -> (prefixes, allowed module names)
        self.prefix_to_module = {}
        self.order = []
        self.exceptions = {}  # (file, header) -> reason
        self._parse(path)

    def _parse(self, path):
        with open(path) as f:
            for number, raw in enumerate(f, 1):
                line = raw.split('#', 1)[0].strip()
                if not line:
                    continue
                where = f'{path}:{number}'
                if line.startswith('module '):
                    head, sep, tail = line[len('module '):].partition(':')
                    prefixes = head.split()
                    deps = tail.split()
                    if not sep or not prefixes or not deps or deps[0] != 'may':
                        sys.exit(f'{where}: expected "module DIR [DIR...] : may [DEP...]"')
                    name = prefixes[0]
                    if name in self.modules:
                        sys.exit(f'{where}: module {name} declared twice')
                    for dep in deps[1:]:
                        if dep not in self.prefix_to_module:
                            sys.exit(f'{where}: module {name} may include {dep}, which is not declared above it '
                                     '(the list reads bottom-up)')
                    allowed = {self.prefix_to_module[d] for d in deps[1:]} | {name}
                    self.modules[name] = (prefixes, allowed)
                    self.order.append(name)
                    for prefix in prefixes:
                        self.prefix_to_module[prefix] = name
                elif line.startswith('allow '):
                    body, sep, reason = line[len('allow '):].partition(':')
                    parts = [p.strip() for p in body.split('->')]
                    if not sep or len(parts) != 2 or not reason.strip():
                        sys.exit(f'{where}: expected "allow FILE -> HEADER : reason"')
                    self.exceptions[(parts[0], parts[1])] = reason.strip()
                else:
                    sys.exit(f'{where}: unknown line "{line}"')

    def module_of(self, path):
        """The module of a project path (longest prefix at a / or . boundary)."""
        best = None
        for prefix, name in self.prefix_to_module.items():
            if path == prefix or path.startswith(prefix + '/') or path.startswith(prefix + '.'):
                if best is None or len(prefix) > len(best[0]):
                    best = (prefix, name)
        return best[1] if best else None


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--root', default=os.path.dirname(here))
    parser.add_argument('--layers', default=os.path.join(here, 'layers.txt'))
    args = parser.parse_args()
    layers = Layers(args.layers)

    violations = []
    used_exceptions = set()
    checked = 0
    for top in sorted(os.listdir(args.root)):
        if top.startswith('.') or top in UNCHECKED_TOP or not os.path.isdir(os.path.join(args.root, top)):
            continue
        for dirpath, dirnames, filenames in os.walk(os.path.join(args.root, top)):
            dirnames.sort()
            for filename in sorted(filenames):
                if not filename.endswith(SOURCE_SUFFIXES):
                    continue
                path = os.path.relpath(os.path.join(dirpath, filename), args.root)
                module = layers.module_of(path)
                if module is None:
                    violations.append(f'{path}: in no module of {args.layers} (add its directory there)')
                    continue
                allowed = layers.modules[module][1]
                checked += 1
                with open(os.path.join(args.root, path), errors='replace') as f:
                    for number, line in enumerate(f, 1):
                        match = INCLUDE.match(line)
                        if not match:
                            continue
                        header = match.group(1)
                        target = layers.module_of(header)
                        if target is None or target in allowed:
                            continue
                        if (path, header) in layers.exceptions:
                            used_exceptions.add((path, header))
                            continue
                        violations.append(f'{path}:{number}: includes "{header}" of module {target}, '
                                          f'which module {module} may not include (scripts/layers.txt)')
    for (path, header) in sorted(set(layers.exceptions) - used_exceptions):
        violations.append(f'{args.layers}: the exception {path} -> {header} no longer matches an include: remove it')
    for v in violations:
        print(v)
    if violations:
        print(f'check_includes: {len(violations)} problem(s) in {checked} files', file=sys.stderr)
        return 1
    print(f'check_includes: {checked} files follow scripts/layers.txt ({len(layers.exceptions)} listed exceptions)')
    return 0


if __name__ == '__main__':
    sys.exit(main())

#!/usr/bin/env bash
# Format check for the lines a change touches: `git clang-format --diff`
# against BASE (default: the commit that introduced .clang-format, so every
# line written since follows it; older lines are left as they are until
# someone edits them). Fails with the diff clang-format wants, and how to
# apply it. Usage: scripts/check_format.sh [BASE]
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v git-clang-format > /dev/null; then
  echo "check_format: git-clang-format not found (Debian: clang-format); skipped"
  exit 0
fi
base=${1:-$(git log --format=%H --diff-filter=A -1 -- .clang-format 2> /dev/null || true)}
if [ -z "$base" ] || ! git cat-file -e "$base^{commit}" 2> /dev/null; then
  echo "check_format: no base commit (a shallow clone?); skipped"
  exit 0
fi
# Committed and uncommitted changes since BASE, C++ only.
out=$(git clang-format --quiet --diff --extensions cc,h "$base" -- 2>&1 || true)
if [ -n "$out" ] && ! grep -q '^no modified files to format' <<< "$out" && ! grep -q 'did not modify any files' <<< "$out"; then
  echo "$out"
  echo "check_format: the lines above do not follow .clang-format; fix with: git clang-format --extensions cc,h $base"
  exit 1
fi
echo "check_format: changed lines since ${base:0:12} follow .clang-format"

#!/bin/sh
# Writes epochsim's outputs for a fixed set of inputs into OUTDIR, one file each, so that two
# builds can be compared byte for byte (`diff -r`) before and after a change that must not move
# any figure (a refactor, a faster engine): every shipped experiment (--json, the first 200 steps
# of the full-epoch ones), a sweep, the import and `trace show` of each validation trace, and
# `model show` of each zoo model.
# Usage: tests/golden/make_golden.sh EPOCHSIM_BINARY OUTDIR
set -eu
bin=$(realpath "$1")
out=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
for f in "$src"/configs/experiments/*.yaml; do
    name=$(basename "$f" .yaml)
    case $name in
    replay-*) "$bin" run "$f" --json "$out/run-$name.json" --quiet ;;
    # an experiment that does not fit in GPU memory (oom-batch) writes its memory report and fails
    *) "$bin" run "$f" --set training.max_steps=200 --json "$out/run-$name.json" --quiet || true ;;
    esac
done
"$bin" run --json "$out/run-default.json" --quiet
"$bin" sweep "$src/configs/sweeps/batch-size.yaml" --set training.max_steps=50 -o "$out/sweep-batch-size.csv" 2>/dev/null
find "$src/tests/data/validation-traces" -name '*.json*' | sort | while read -r t; do
    name=$(basename "$t" | sed 's/[^A-Za-z0-9._-]/_/g')
    # the summary's `output` (a path) and `import` (wall-clock speed) lines differ by nature
    "$bin" import kineto "$t" -o "$out/import-$name.trace" 2>&1 |
        sed '/^output  /d; /^import  /d' >"$out/import-$name.txt" || true
    "$bin" trace show "$out/import-$name.trace" >"$out/show-$name.txt" 2>&1 || true
done
"$bin" model list | awk 'NR > 1 && $1 != "" {print $1}' | while read -r m; do
    "$bin" model show "$m" >"$out/model-$m.txt" 2>&1 || true
done
echo "golden set of $(ls "$out" | wc -l) files in $out"

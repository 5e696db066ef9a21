#!/bin/sh
# Fuzzes each parser for SECONDS (default 60) with libFuzzer: experiment YAML, native msgpack
# trace, Kineto JSON, sequence-length CSV. Builds its own tree (build-fuzz/, clang,
# -DEPOCHSIM_FUZZ=ON) and starts each fuzzer from a copy of its seed corpus plus every input that
# ever crashed. A new crash is copied into tests/fuzz/regressions/<parser>/ (commit it: it then
# runs as an ordinary test) and the script fails. Needs clang and libclang-rt-14-dev
# (`sh .ci/setup --test`).
# Usage: sh tests/fuzz/run.sh [SECONDS]
set -eu
seconds=${1:-60}
cd "$(dirname "$0")/../.."
src=$(pwd)
command -v clang >/dev/null || { echo "run.sh: clang not found (sh .ci/setup --test)" >&2; exit 1; }
CC=clang cmake -S . -B build-fuzz -DEPOCHSIM_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j2 --target fuzz_experiment fuzz_trace fuzz_kineto fuzz_seqlen >/dev/null
seeds_experiment="configs/experiments configs/sweeps tests/data/catalog/gpus"
seeds_trace="tests/fuzz/corpus/trace"
seeds_kineto="tests/data/kineto"
seeds_seqlen="configs/datasets tests/fuzz/corpus/seqlen"
status=0
for parser in experiment trace kineto seqlen; do
    corpus=build-fuzz/corpus/$parser
    crashes=build-fuzz/crashes/$parser
    rm -rf "$corpus" "$crashes"
    mkdir -p "$corpus" "$crashes"
    eval "seeds=\$seeds_$parser"
    for d in $seeds tests/fuzz/regressions/$parser; do
        find "$d" -maxdepth 1 -type f ! -name README.md -exec cp {} "$corpus"/ \;
    done
    # rss_limit: the 2-core, 24 GB CI box runs other work; 2 GB is far above any sane input
    verdict="no crash"
    if ! ./build-fuzz/tests/fuzz_$parser "$corpus" -max_total_time="$seconds" -rss_limit_mb=2048 \
        -timeout=20 -artifact_prefix="$crashes/" -print_final_stats=1 \
        >"build-fuzz/fuzz-$parser.log" 2>&1; then
        status=1
        verdict=CRASH
        for f in "$crashes"/*; do
            [ -f "$f" ] && cp "$f" "tests/fuzz/regressions/$parser/" && echo "new crasher: tests/fuzz/regressions/$parser/$(basename "$f")"
        done
        tail -40 "build-fuzz/fuzz-$parser.log"
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "build-fuzz/fuzz-$parser.log")
    echo "fuzz $parser: ${runs:-?} executions in ${seconds} s, $verdict"
done
exit $status

#!/bin/sh
# README command 1 as a fresh user runs it, who has only the run-time packages: configure with
# cmocka hidden (-DCMAKE_DISABLE_FIND_PACKAGE_cmocka=ON), build, run the built-in default scenario.
# Usage: without_cmocka.sh SOURCE_DIR WORK_DIR
set -eu
src=$1
build=$2/build-without-cmocka
rm -rf "$build"
cmake -S "$src" -B "$build" -DCMAKE_DISABLE_FIND_PACKAGE_cmocka=ON >"$2/without-cmocka.configure.log"
grep -q "cmocka not found: unit tests not built" "$2/without-cmocka.configure.log" || {
    echo "FAIL: configure did not report the unit tests left out" >&2
    exit 1
}
cmake --build "$build" -j2 >"$2/without-cmocka.build.log"
if ls "$build"/tests/core_test_* >/dev/null 2>&1; then
    echo "FAIL: cmocka tests were built although cmocka was hidden" >&2
    exit 1
fi
"$build/epochsim" run --json "$2/without-cmocka.json"
grep -q '"epoch_time_s"' "$2/without-cmocka.json"
rm -rf "$build"
echo "README command 1 without cmocka: configured, built and ran the default scenario"

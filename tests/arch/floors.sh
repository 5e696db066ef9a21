#!/bin/sh
# Fails when an #include runs from a lower floor to a higher one (docs/ARCHITECTURE.md):
#   0 sim/base   1 sim/core   2 models/ traces/ plots/   3 sim/setup   4 sim/app
# A file may include only files of its own floor or below. Prints every offending line.
# Usage: sh tests/arch/floors.sh [SOURCE_DIR]
set -eu
cd "${1:-$(dirname "$0")/../..}"
floor() {
    case $1 in
    sim/base/*) echo 0 ;;
    sim/core/*) echo 1 ;;
    models/* | traces/* | plots/*) echo 2 ;;
    sim/setup/*) echo 3 ;;
    sim/app/*) echo 4 ;;
    *) echo "floors.sh: $1 is on no floor (sim/base, sim/core, models, traces, plots, sim/setup, sim/app)" >&2
       echo 9 ;;
    esac
}
bad=0
files=$(find sim models traces plots -name '*.[ch]' | sort)
[ -n "$files" ] || { echo "floors.sh: no sources found in $(pwd)" >&2; exit 1; }
for f in $files; do
    own=$(floor "$f")
    [ "$own" -eq 9 ] && { bad=1; continue; }
    for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
        case $inc in */*) ;; *) continue ;; esac # a file beside it: same floor
        [ -e "$inc" ] || { echo "$f: includes $inc, which does not exist" >&2; bad=1; continue; }
        to=$(floor "$inc")
        if [ "$to" -gt "$own" ]; then
            echo "$f (floor $own) includes $inc (floor $to): an include may not run upwards" >&2
            bad=1
        fi
    done
done
n=$(echo "$files" | wc -l)
[ "$bad" -eq 0 ] && echo "floors: $n files, no include runs upwards"
exit "$bad"

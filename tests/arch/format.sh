#!/bin/sh
# Fails when a C source or header is not as clang-format (.clang-format at the root) writes it.
# Fix with: git ls-files '*.c' '*.h' | xargs clang-format -i
# Usage: sh tests/arch/format.sh [SOURCE_DIR]
set -eu
cd "${1:-$(dirname "$0")/../..}"
command -v clang-format >/dev/null || { echo "format.sh: clang-format is not installed" >&2; exit 1; }
files=$(git ls-files '*.c' '*.h' 2>/dev/null || find sim models traces plots tests -name '*.[ch]')
[ -n "$files" ] || { echo "format.sh: no sources found in $(pwd)" >&2; exit 1; }
bad=0
for f in $files; do
    clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || { echo "not clang-formatted: $f" >&2; bad=1; }
done
[ "$bad" -eq 0 ] && echo "format: $(echo "$files" | wc -l) files as clang-format writes them"
exit "$bad"

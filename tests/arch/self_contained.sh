#!/bin/sh
# Fails when the project points outside itself (issue 12): a file that names ../shared (the
# steering folder beside a developer's checkout, which a user's clone does not have), or a
# relative Markdown link that leaves the repository or names a file that does not exist.
# Usage: sh tests/arch/self_contained.sh [SOURCE_DIR]
set -eu
cd "${1:-$(dirname "$0")/../..}"
root=$(pwd -P)
bad=0
files=$(git ls-files 2>/dev/null || find . -type f -not -path './.git/*' -not -path './build*')
for f in $files; do
    case $f in tests/arch/self_contained.sh) continue ;; esac
    [ -f "$f" ] || continue
    if grep -I -n '\.\./shared' "$f" >/dev/null 2>&1; then
        grep -I -n '\.\./shared' "$f" | sed "s|^|$f:|" >&2
        bad=1
    fi
done
for md in $(echo "$files" | grep '\.md$'); do
    dir=$(dirname "$md")
    # ](target) links, without http(s), mailto and in-page anchors; drop a #fragment
    for target in $(grep -o '](\([^)]*\))' "$md" | sed 's/^](//; s/)$//; s/#.*//' |
        grep -v -e '^https\?:' -e '^mailto:' -e '^$'); do
        path=$dir/$target
        if [ ! -e "$path" ]; then
            echo "$md: link to $target: no such file" >&2
            bad=1
            continue
        fi
        real=$(cd "$(dirname "$path")" && pwd -P)
        case $real in "$root" | "$root"/*) ;; *)
            echo "$md: link to $target leaves the repository" >&2
            bad=1 ;;
        esac
    done
done
[ "$bad" -eq 0 ] && echo "self-contained: no ../shared, every relative Markdown link stays inside"
exit "$bad"

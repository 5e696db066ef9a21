#!/bin/sh
# `cmake --install` into a temporary prefix, then the installed epochsim runs from there with the
# source tree out of reach: the tree is configured with its compiled-in catalog path pointing at a
# folder that does not exist, so only the installed catalog can serve. Checks the default run, the
# catalog listing, a shipped experiment and a replay experiment (its trace installed beside it).
# Usage: install.sh SOURCE_DIR WORK_DIR
set -eu
src=$1
work=$2/install-test
rm -rf "$work"
mkdir -p "$work"
cmake -S "$src" -B "$work/build" -DBUILD_TESTING=OFF -DEPOCHSIM_CATALOG_DIR=/nonexistent/catalog \
    >"$work/configure.log"
cmake --build "$work/build" -j2 --target epochsim >"$work/build.log"
cmake --install "$work/build" --prefix "$work/prefix" >"$work/install.log"
bin=$work/prefix/bin/epochsim
share=$work/prefix/share/epochsim
cd /
unset EPOCHSIM_CATALOG
"$bin" run --set training.max_steps=5 --json - | grep -q '"epoch_time_s"'
"$bin" hw list | grep -q a100-sxm4-80gb
"$bin" run "$share/configs/experiments/hdd-bound.yaml" --set training.max_steps=5 --quiet
"$bin" run "$share/configs/experiments/replay-resnet50-nw0.yaml" --quiet
"$bin" run "$share/configs/experiments/bert-pretrain-lddl-bins.yaml" --set training.max_steps=1 --quiet
# and the compiled-in path really is out of reach: the build-tree binary cannot find a catalog
if "$work/build/epochsim" run --set training.max_steps=5 >/dev/null 2>&1; then
    echo "FAIL: the build-tree binary found a catalog; the test proves nothing" >&2
    exit 1
fi
rm -rf "$work"
echo "installed epochsim ran from its prefix with its own catalog, experiments and traces"

#!/usr/bin/env bash
# Builds the CAF Savina driver into <target>/odeon-bench/build/caf/.
# Exit 0 when built, 10 when the toolchain (g++, CAF 0.17 headers/libs) is missing,
# else the compiler's status with its output.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../../.." && pwd)"
# Cargo's target directory: the one the runner passes (CARGO_TARGET_DIR), else <repo>/target.
target="${CARGO_TARGET_DIR:-$repo/target}"
case "$target" in /*) ;; *) target="$PWD/$target" ;; esac
out="$target/odeon-bench/build/caf"
cxx="${CXX:-g++}"
if ! command -v "$cxx" >/dev/null 2>&1; then
    echo "caf: $cxx not found (install g++)" >&2
    exit 10
fi
if ! echo '#include "caf/all.hpp"' | "$cxx" -std=c++17 -x c++ -E - >/dev/null 2>&1; then
    echo "caf: the CAF headers (caf/all.hpp) are missing (install libcaf-dev, CAF 0.17)" >&2
    exit 10
fi
if [ "$("$cxx" -print-file-name=libcaf_core.so)" = "libcaf_core.so" ]; then
    echo "caf: libcaf_core.so not found (install libcaf-dev, CAF 0.17)" >&2
    exit 10
fi
mkdir -p "$out/obj"
flags=(-std=c++17 -O3 -DNDEBUG -Wall -Wextra -Werror -pthread)
# Rebuild an object only when its source or the shared header is newer.
objs=()
for src in "$here"/src/*.cpp; do
    obj="$out/obj/$(basename "${src%.cpp}").o"
    objs+=("$obj")
    if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] || [ "$here/src/common.hpp" -nt "$obj" ]; then
        "$cxx" "${flags[@]}" -c "$src" -o "$obj"
    fi
done
bin="$out/savina-caf"
relink=0
[ -f "$bin" ] || relink=1
for obj in "${objs[@]}"; do
    [ "$obj" -nt "$bin" ] && relink=1
done
if [ "$relink" = 1 ]; then
    "$cxx" -pthread -o "$bin" "${objs[@]}" -lcaf_core
fi

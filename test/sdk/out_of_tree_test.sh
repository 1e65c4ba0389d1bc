#!/usr/bin/env bash
# Installs the build into a staging folder, builds examples/out_of_tree_plugin with nothing but
# `pkg-config cohort-sdk` against the installed headers, and has the built `cohort` load and check
# it. Also checks that every plugin exports exactly one dynamic symbol, cohort_plugin_entry.
#   out_of_tree_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
source=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

meson install -C "$build" --destdir "$work/stage" --no-rebuild --quiet >/dev/null
pc=$(find "$work/stage" -name cohort-sdk.pc -print -quit)
[[ -n "$pc" ]] || { echo "cohort-sdk.pc was not installed"; exit 1; }
# The staged tree stands where the real prefix would: point the .pc file's prefix at it.
prefix=$(sed -n 's/^prefix=//p' "$pc")
export PKG_CONFIG_PATH=$(dirname "$pc")
pkgconfig=(pkg-config --define-variable=prefix="$work/stage$prefix")
echo "pkg-config cohort-sdk $("${pkgconfig[@]}" --modversion cohort-sdk): $("${pkgconfig[@]}" --cflags --libs cohort-sdk)"

make -s -C "$source/examples/out_of_tree_plugin" OUT="$work" PKG_CONFIG="${pkgconfig[*]}"
"$build/harness/cohort/cohort" plugin check "$work/quadratic.so" --hparam dim=5 | tee "$work/check.txt"
grep -q '^plugin check passed$' "$work/check.txt"

for plugin in "$work/quadratic.so" $(find "$work/stage" -name '*.so' -path '*cohort/plugins*'); do
  exported=$(nm -D --defined-only "$plugin" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | sort | tr '\n' ' ')
  if [[ "$exported" != "cohort_plugin_entry " ]]; then
    echo "$(basename "$plugin") exports: $exported(expected only cohort_plugin_entry)"
    exit 1
  fi
  echo "$(basename "$plugin") exports only cohort_plugin_entry"
done

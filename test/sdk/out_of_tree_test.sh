#!/usr/bin/env bash
# Installs the build into a staging folder, builds the installed examples (share/cohort/examples:
# the C++ and the C plugin) with nothing but `pkg-config cohort-sdk` against the installed
# headers, and has the built `cohort` load and check them, with docs/sdk.md's C++ plugin (built
# under the examples' warnings, so the page's code keeps compiling as a model author copies it).
# The staged cohort-sdk.pc is used as it is: being relocatable, it points into the stage. Also
# checks that every plugin exports exactly one dynamic symbol, cohort_plugin_entry.
#   out_of_tree_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
source=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

meson install -C "$build" --destdir "$work/stage" --no-rebuild --quiet >/dev/null
pc=$(find "$work/stage" -name cohort-sdk.pc -print -quit)
[[ -n "$pc" ]] || { echo "cohort-sdk.pc was not installed"; exit 1; }
export PKG_CONFIG_PATH=$(dirname "$pc")
flags=$(pkg-config --cflags --libs cohort-sdk)
echo "pkg-config cohort-sdk $(pkg-config --modversion cohort-sdk): $flags"
# Relocatable: the paths it gives lie in the stage, not under the prefix the build was set up for.
include=$(pkg-config --variable=includedir cohort-sdk)
[[ "$(realpath "$include")" == "$(realpath "$work/stage")"/* && -f "$include/cohort/plugin.h" ]] || {
  echo "cohort-sdk.pc points outside the stage: includedir=$include"
  exit 1
}

examples=$(find "$work/stage" -type d -path '*share/cohort/examples' -print -quit)
[[ -n "$examples" ]] || { echo "the examples were not installed"; exit 1; }
cp -r "$examples" "$work/examples"  # built where a model author would copy them
make -s -C "$work/examples/out_of_tree_plugin" OUT="$work"
make -s -C "$work/examples/c_plugin" OUT="$work"
# docs/sdk.md's C++ plugin, as a model author copies it, under the examples' warnings.
awk '/^## In C\+\+/ {found = 1} found && /^```$/ {exit} found && started {print} found && /^```cpp$/ {started = 1}' \
  "$source/docs/sdk.md" >"$work/doc_line.cc"
[[ -s "$work/doc_line.cc" ]] || { echo "docs/sdk.md has no C++ plugin under '## In C++'"; exit 1; }
c++ -std=c++17 -shared -fPIC -fvisibility=hidden -O2 -Wall -Wextra -Wpedantic -Werror \
  -o "$work/doc_line.so" "$work/doc_line.cc" $flags
cohort=$build/harness/cohort/cohort
"$cohort" plugin check "$work/doc_line.so" --hparam slope=2 | tee "$work/check_doc.txt"
grep -q '^plugin check passed$' "$work/check_doc.txt"
"$cohort" plugin check "$work/quadratic.so" --hparam dim=5 | tee "$work/check.txt"
grep -q '^plugin check passed$' "$work/check.txt"
"$cohort" plugin check "$work/line.so" | tee "$work/check_line.txt"
grep -q '^plugin check passed$' "$work/check_line.txt"

# The build tree's uninstalled file, which pkg-config prefers where PKG_CONFIG_PATH names
# meson-uninstalled/: the source tree's headers and version script, no install needed.
uninstalled=$(PKG_CONFIG_PATH=$build/meson-uninstalled pkg-config --cflags --libs cohort-sdk)
echo "pkg-config cohort-sdk (uninstalled): $uninstalled"
mkdir "$work/uninstalled"
PKG_CONFIG_PATH=$build/meson-uninstalled make -s -B -C "$work/examples/out_of_tree_plugin" \
  OUT="$work/uninstalled"
"$cohort" plugin check "$work/uninstalled/quadratic.so" --hparam dim=5 | tee "$work/check_uninstalled.txt"
grep -q '^plugin check passed$' "$work/check_uninstalled.txt"

for plugin in "$work/quadratic.so" "$work/line.so" "$work/doc_line.so" $(find "$work/stage" -name '*.so' -path '*cohort/plugins*'); do
  exported=$(nm -D --defined-only "$plugin" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | sort | tr '\n' ' ')
  if [[ "$exported" != "cohort_plugin_entry " ]]; then
    echo "$(basename "$plugin") exports: $exported(expected only cohort_plugin_entry)"
    exit 1
  fi
  echo "$(basename "$plugin") exports only cohort_plugin_entry"
done

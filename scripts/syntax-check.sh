#!/usr/bin/env bash
# Compiles every translation unit of a configured build tree with -fsyntax-only: the compiler's
# front end (parsing, templates, every warning, errors as its flags make them) without code
# generation or linking. scripts/test.sh runs it for clang 14 over everything (library, tool,
# every test, chaos and bench program): what clang 14 refuses or warns of is found there, while
# object code, linking and running the tests under clang are the libcxx-portable stage's job
# (clang 19). Generated sources are made at configure time (version.hpp, build_config.hpp, the
# unity batches), so the tree needs no build first.
#
#   bash scripts/syntax-check.sh --build DIR [--jobs N]
# DIR must have been configured with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON.
# Exit: 0 when every unit compiles, 1 when one does not (its diagnostics printed), 2 on a usage
# error or a tree without compile commands.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=""
jobs=$(nproc)
while (($#)); do
  case $1 in
    --build) build_dir=${2:?--build needs a directory}; shift ;;
    --jobs) jobs=${2:?--jobs needs a number}; shift ;;
    *) sed -n '/^#   bash/,/^# Exit/p' "$0" >&2; exit 2 ;;
  esac
  shift
done
[ -n "$build_dir" ] || { echo "syntax-check: --build DIR is required" >&2; exit 2; }
commands=$build_dir/compile_commands.json
[ -f "$commands" ] || {
  echo "syntax-check: no $commands (configure with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)" >&2
  exit 2
}

# The compile commands, each turned into a syntax-only one (no object, no dependency file, no
# compiler launcher), one NUL-separated shell command per unit for xargs.
/usr/bin/python3 - "$commands" <<'EOF' >"$build_dir/syntax-check.commands"
import json, shlex, sys

dropped_with_value = {"-o", "-MF", "-MT", "-MQ"}
dropped = {"-MD", "-MMD", "-c"}
for entry in json.load(open(sys.argv[1])):
    args = entry.get("arguments") or shlex.split(entry["command"])
    if "ccache" in args[0].rsplit("/", 1)[-1]:
        args = args[1:]
    kept, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg in dropped_with_value:
            skip = True
        elif arg not in dropped:
            kept.append(arg)
    line = "cd " + shlex.quote(entry["directory"]) + " && " + shlex.join(kept + ["-fsyntax-only"])
    sys.stdout.write(line + "\0")
EOF
count=$(tr -cd '\0' <"$build_dir/syntax-check.commands" | wc -c)
[ "$count" -gt 0 ] || { echo "syntax-check: $commands lists no unit" >&2; exit 2; }

# Each failing unit's diagnostics go to a file of their own, printed whole at the end.
failures=$(mktemp -d)
trap 'rm -rf "$failures"' EXIT
export failures
status=0
xargs -0 -P "$jobs" -n 1 bash -c '
  if ! output=$(bash -c "$1" 2>&1); then
    printf "%s\n%s\n" "$1" "$output" >"$(mktemp "$failures/unit-XXXXXX")"
  elif [ -n "$output" ]; then
    printf "%s\n" "$output"
  fi' syntax-unit <"$build_dir/syntax-check.commands" || status=$?
failed=$(find "$failures" -type f | wc -l)
for file in "$failures"/*; do
  [ -f "$file" ] || continue
  printf '\n== does not compile ==\n'
  cat "$file"
done
if [ "$failed" -gt 0 ] || [ "$status" -ne 0 ]; then
  echo "syntax-check: $failed of $count units do not compile" >&2
  exit 1
fi
echo "syntax-check: all $count units compile ($build_dir)"

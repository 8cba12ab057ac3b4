#!/usr/bin/env bash
# Prints and checks the structure rules for src/ (docs/architecture.md):
#   - no file over 600 lines;
#   - no function over 60 lines (clang-tidy's readability-function-size, LineThreshold 60, over
#     the compile commands of a configured build tree);
#   - src/supervision (the job side of `s3lect run`) includes from src/cli only the pieces it
#     shares with the commands (supervision_uses_from_cli below), never a command's own files.
# Includes against the layer order need no check here: each layer's OBJECT library sees only its
# own and lower layers' headers, so such an include does not compile.
#
# usage: scripts/check-structure.sh [--report] [--build DIR] [--jobs N]
#   --report   print the violations but exit 0
#   --build    the configured build tree whose compile_commands.json to use (default build/debug)
#   --jobs     clang-tidy processes at once (default: nproc)
# Exit: 0 when src/ keeps the rules (or with --report), 1 on a violation, 2 on a usage error or
# a file clang-tidy could not parse (a check that did not run must not pass).
set -euo pipefail
cd "$(dirname "$0")/.."

max_file_lines=600
max_function_lines=60
report_only=0
build_dir=build/debug
jobs=$(nproc)

while (($#)); do
  case $1 in
    --report) report_only=1 ;;
    --build) build_dir=${2:?--build needs a directory}; shift ;;
    --jobs) jobs=${2:?--jobs needs a number}; shift ;;
    -h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "check-structure.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

compile_commands=$build_dir/compile_commands.json
if [[ ! -f $compile_commands ]]; then
  echo "check-structure.sh: no $compile_commands (configure the build tree first)" >&2
  exit 2
fi

violations=0

echo "== files over $max_file_lines lines =="
while read -r lines file; do
  if ((lines > max_file_lines)); then
    echo "$file: $lines lines"
    violations=$((violations + 1))
  fi
done < <(find src -type f \( -name '*.cpp' -o -name '*.hpp' \) -print0 | sort -z |
  xargs -0 wc -l | grep -v ' total$')

echo "== src/supervision including src/cli beyond what it shares with the commands =="
# What `run` parsed, the log output, the signal inbox, the exit codes, and the release the
# guardian has s3lect make for it (the record `release` writes, the lock read before).
supervision_uses_from_cli='console|exit_codes|lock_reader|log_output|release|run|run_options|run_to_completion|signal_inbox'
while IFS= read -r line; do
  echo "$line"
  violations=$((violations + 1))
done < <(grep -HnE '#include "cli/' src/supervision/*.?pp |
  grep -vE "#include \"cli/($supervision_uses_from_cli)\.hpp\"" || true)

echo "== functions over $max_function_lines lines =="
# The translation units of src/, as the build compiles them. Headers of src/ are checked through
# them (HeaderFilterRegex), and a function seen from several units is reported once.
mapfile -t units < <(grep -o '"file": *"[^"]*/src/[^"]*\.cpp"' "$compile_commands" |
  sed 's/.*"\([^"]*\)"$/\1/' | sort -u)
if ((${#units[@]} == 0)); then
  echo "check-structure.sh: $compile_commands lists no unit of src/" >&2
  exit 2
fi
root=$(pwd)/
tidy_config="{Checks: '-*,readability-function-size', HeaderFilterRegex: '^${root}src/',
  CheckOptions: [{key: readability-function-size.LineThreshold, value: $max_function_lines}]}"
tidy_dir=$(mktemp -d)
trap 'rm -rf "$tidy_dir"' EXIT
# One output file per unit: parallel clang-tidy processes writing to one pipe could interleave
# their lines. -w: the build's own warnings (GCC's, with -Werror) are not this check's business.
# A unit clang-tidy cannot parse makes it exit non-zero, and the check fails rather than pass.
tidy_status=0
printf '%s\0' "${units[@]}" |
  xargs -0 -n 1 -P "$jobs" sh -c 'exec clang-tidy --quiet -p "$1" --config="$2" --extra-arg=-w \
    "$4" >"$3/$(printf %s "$4" | tr / _).out" 2>/dev/null' sh "$build_dir" "$tidy_config" \
    "$tidy_dir" || tidy_status=$?
tidy_out=$tidy_dir/all
cat "$tidy_dir"/*.out >"$tidy_out"
# "FILE:LINE:COL: warning: function 'NAME' exceeds recommended size/complexity thresholds", then
# a note "N lines including whitespace and comments (threshold 60)".
found=$(awk -v root="$root" '
  / warning: function .* exceeds recommended size/ {
    location = $1; sub(/:[0-9]+:$/, "", location); sub(root, "", location)
    name = $0; sub(/.*function /, "", name); sub(/ exceeds.*/, "", name)
    next
  }
  location != "" && / note: [0-9]+ lines including/ {
    lines = $0; sub(/.* note: /, "", lines); sub(/ lines.*/, "", lines)
    print location ": " name " " lines " lines"
    location = ""
  }
' "$tidy_out" | sort -u | sort -t: -k1,1 -k2,2n)
if [[ -n $found ]]; then
  echo "$found"
  violations=$((violations + $(wc -l <<<"$found")))
fi
if ((tidy_status != 0)); then
  grep ' error: ' "$tidy_out" | sort -u >&2 || true
  echo "check-structure.sh: clang-tidy failed on some units (errors above, if any)" >&2
  exit 2
fi

echo "== $violations violation(s) =="
if ((violations > 0 && !report_only)); then exit 1; fi
exit 0

#!/usr/bin/env bash
# Keeps DEVELOPERS.md a true map (the repo_developers_map test):
#   - its list of public headers is exactly include/les/*.h: every header is
#     named, and every les*.h it names exists;
#   - every row of its "Where is ..." table names a file that exists and a
#     function that file defines or calls (the name after the last "::"
#     followed by "(", and the class before it, when given).
# Usage: scripts/check-developers-map.sh [repo root]. Exit 1 with a line per
# mismatch.
set -euo pipefail
root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
doc="$root/DEVELOPERS.md"
fail=0
bad() { echo "DEVELOPERS.md: $*"; fail=1; }
trim() { sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' <<< "$1"; }

[ -f "$doc" ] || { echo "no $doc"; exit 1; }

for h in "$root"/include/les/*.h; do
  name=$(basename "$h")
  grep -q -- "$name" "$doc" || bad "public header include/les/$name is not listed"
done
for name in $(grep -oE '\bles(_[a-z0-9]+)*\.h\b' "$doc" | sort -u); do
  [ -f "$root/include/les/$name" ] || bad "names $name, which is not in include/les/"
done

rows=$(awk '/^## Where is/{on=1; next} /^## /{on=0} on && /^\|/' "$doc" | tail -n +3)
[ -n "$rows" ] || bad "has no \"Where is ...\" table"
while IFS='|' read -r _ concept file func _; do
  concept=$(trim "$concept")
  file=$(trim "$file")
  func=$(trim "$func")
  if [ ! -f "$root/$file" ]; then
    bad "\"$concept\": $file does not exist"
    continue
  fi
  short=${func##*::}
  grep -qE "\b${short}\(" "$root/$file" || bad "\"$concept\": $file has no ${short}("
  if [ "$short" != "$func" ]; then
    cls=${func%::*}
    cls=${cls##*::}
    grep -qE "\b${cls}\b" "$root/$file" || bad "\"$concept\": $file does not mention ${cls}"
  fi
done <<< "$rows"
exit $fail

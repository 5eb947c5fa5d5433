#!/usr/bin/env bash
# The standing rule of STYLE.md/TEAM.md: no source or header file under src/,
# include/, bindings/ or tools/ is longer than 600 lines (split it by concept
# instead). Prints every offender with its length and exits 1 if there is one;
# otherwise prints the longest file. usage: check-file-sizes.sh [SOURCE_DIR]
set -euo pipefail
SRC="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
LIMIT=600
cd "$SRC"
FILES="$(find src include bindings tools -type f \( -name '*.c' -o -name '*.cc' -o -name '*.cpp' -o -name '*.h' \
          -o -name '*.hpp' -o -name '*.java' -o -name '*.kt' -o -name '*.swift' -o -name '*.mm' \) | sort)"
BAD=0
while IFS= read -r f; do
  n=$(wc -l < "$f")
  if [ "$n" -gt "$LIMIT" ]; then echo "$f: $n lines (limit $LIMIT)"; BAD=1; fi
done <<< "$FILES"
if [ "$BAD" -ne 0 ]; then echo "split the files above by concept (limit $LIMIT lines)"; exit 1; fi
LONGEST="$(echo "$FILES" | xargs wc -l | grep -v ' total$' | sort -n | tail -1)"
echo "$(echo "$FILES" | wc -l) files under src/ include/ bindings/ tools/, none over $LIMIT lines; longest:$LONGEST"

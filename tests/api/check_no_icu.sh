#!/usr/bin/env bash
# LES does not depend on ICU (issue 18: it makes iOS/Android builds heavy).
# Checks the built artefacts themselves: no NEEDED entry of libles.so (and of
# every other ELF file given, e.g. the les tool and libles_jni.so) names an ICU
# library, and the static libles.a references no ICU symbol (ICU's C API is
# u_*, ubrk_*, ucol_*, unorm*_*, uscript_*, usearch_*, ures_*; in Debian's
# build every one carries a version suffix such as u_charType_72).
# usage: check_no_icu.sh LIBLES_A ELF...
set -euo pipefail
A="$1"; shift
status=0
for f in "$@"; do
  [ -f "$f" ] || { echo "missing: $f"; status=1; continue; }
  needed="$(readelf -d "$f" | awk '/\(NEEDED\)/ {print $NF}' | tr -d '[]')"
  [ -n "$needed" ] || { echo "no NEEDED entries read from $f"; status=1; continue; }
  icu="$(echo "$needed" | grep -i 'icu' || true)"
  if [ -n "$icu" ]; then echo "$f links ICU: $icu"; status=1
  else echo "$f: NEEDED $(echo "$needed" | tr '\n' ' ')(no ICU)"; fi
done
undef="$(nm -u "$A" 2>/dev/null | awk '{print $NF}' | grep -E '^(u|ubrk|ucol|unorm2?|uscript|usearch|ures|uset)_[A-Za-z0-9]+(_[0-9]+)?$' | sort -u || true)"
if [ -n "$undef" ]; then echo "$A references ICU symbols:"; echo "$undef"; status=1
else echo "$A: no ICU symbol referenced"; fi
exit $status

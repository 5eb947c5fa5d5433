#!/usr/bin/env bash
# LES does not depend on ICU (issue 18: it makes iOS/Android builds heavy).
# Checks the built artefacts themselves: no NEEDED entry of libles.so (and of
# every other ELF file given, e.g. the les tool and libles_jni.so) names an ICU
# library, and the static libles.a references no ICU symbol (ICU's C API is
# u_*, ubrk_*, ucol_*, unorm*_*, uscript_*, usearch_*, ures_*; in Debian's
# build every one carries a version suffix such as u_charType_72). With
# LES_NINJA and LES_BUILD_DIR set (a Ninja build), also checks Ninja's record
# of every header each object of the build included: no ICU header
# (.../include/unicode/*.h) anywhere, so a machine without libicu-dev builds it.
# usage: check_no_icu.sh LIBLES_A ELF...
set -euo pipefail
A="$1"; shift
status=0
for f in "$@"; do
  [ -n "$f" ] || continue  # a target the build does not have (e.g. les_jni without JNI) gives ""
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
if [ -n "${LES_NINJA:-}" ] && [ -n "${LES_BUILD_DIR:-}" ]; then
  deps="$("$LES_NINJA" -C "$LES_BUILD_DIR" -t deps)" || { echo "ninja -t deps failed"; exit 1; }
  n_objects="$(echo "$deps" | grep -c '\.o: #deps' || true)"
  [ "$n_objects" -gt 0 ] || { echo "ninja -t deps lists no object in $LES_BUILD_DIR"; status=1; }
  icu_headers="$(echo "$deps" | grep '/include/unicode/' | sort -u || true)"
  if [ -n "$icu_headers" ]; then echo "ICU headers included by the build:"; echo "$icu_headers" | head; status=1
  else echo "ninja deps: $n_objects objects, no ICU header included"; fi
fi
exit $status

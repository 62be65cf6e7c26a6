#!/usr/bin/env bash
# Fails when nbdev-clean + nbdev-export would change anything under nbs/ or fairlib/
# (tracked or untracked-but-not-ignored files), i.e. when the notebooks and the library are out of sync.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
snapshot() {
  git ls-files -co --exclude-standard -- nbs fairlib | sort | while read -r f; do
    [ -f "$f" ] && printf '%s  %s\n' "$(sha256sum < "$f" | cut -c1-64)" "$f"
  done
}
before=$(snapshot)
nbdev-clean >/dev/null
nbdev-export >/dev/null
after=$(snapshot)
if [ "$before" != "$after" ]; then
  echo "SYNC CHECK FAILED: nbdev-clean/nbdev-export changed these files (notebooks and fairlib/ out of sync):"
  diff <(echo "$before") <(echo "$after") | grep '^[<>]' | awk '{print "  " $3}' | sort -u
  echo "Fix: run nbdev-clean && nbdev-export and commit the result (never edit fairlib/*.py by hand)."
  exit 1
fi
echo "sync check: nbs/ and fairlib/ are in sync ($(echo "$after" | wc -l) files)"

#!/usr/bin/env bash
# Find the Chromium that the browser tests drive (tests/chromium.py), or install Debian's `chromium` package.
#
#   bash tools/ensure_chromium.sh        # what `make test` runs first (target `browser`)
#
# Looked for, in order: $CHROMIUM_PATH, /usr/bin/chromium, `chromium` or `chromium-browser` on PATH. When none is
# there it installs Debian's package: as root with apt-get, otherwise with `sudo -n` when sudo works without a
# password. Playwright's own browser download is never used (it needs a host this project does not reach).
# Prints the path it found or installed; fails with one message saying what to do when it can do neither.
set -euo pipefail

find_chromium() {
  local c
  for c in "${CHROMIUM_PATH:-}" /usr/bin/chromium "$(command -v chromium 2>/dev/null || true)" \
           "$(command -v chromium-browser 2>/dev/null || true)"; do
    if [ -n "$c" ] && [ -f "$c" ] && [ -x "$c" ]; then echo "$c"; return 0; fi
  done
  return 1
}

if [ -n "${CHROMIUM_PATH:-}" ] && ! { [ -f "$CHROMIUM_PATH" ] && [ -x "$CHROMIUM_PATH" ]; }; then
  echo "ensure_chromium: CHROMIUM_PATH=$CHROMIUM_PATH is not an executable file" >&2; exit 1
fi
if path=$(find_chromium); then echo "chromium: $path"; exit 0; fi

if [ "$(id -u)" = 0 ]; then as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then as_root=(sudo -n)
else as_root=none; fi
if [ "${as_root[*]-}" = none ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure_chromium: no Chromium found and none can be installed here (needs apt-get as root or password-less" \
       "sudo). Install it (Debian/Ubuntu: sudo apt-get install -y chromium) or set CHROMIUM_PATH to a Chromium" \
       "executable, then run make test again." >&2
  exit 1
fi
echo "chromium: not found; installing Debian's chromium package (apt-get, a few minutes)"
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
if path=$(find_chromium); then echo "chromium: $path (installed)"; exit 0; fi
echo "ensure_chromium: apt-get installed chromium but no executable was found at /usr/bin/chromium or on PATH" >&2
exit 1

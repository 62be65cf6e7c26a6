#!/usr/bin/env bash
# Lint: ruff check on the exported library, tests, benchmarks and tools; ruff format --check and the line length
# on the code cells of the library notebooks (the source; nbs/papers is rendered output and is not formatted).
# Then numpydoc's validator on the public API and the notebooks' rhythm (both fail when things get worse than
# recorded: tools/numpydoc_pending.txt, CEILING in tools/notebook_rhythm.py). `--format-only` skips the ruff check.
# Uses the ruff and python on PATH (`make lint` puts .venv/bin first).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
if [ "${1:-}" != "--format-only" ]; then
  ruff check --no-cache fairlib tests benchmarks tools
fi
mapfile -t nbs < <(git ls-files -co --exclude-standard -- 'nbs/*.ipynb' | grep -v '^nbs/papers/')
ruff format --no-cache --check "${nbs[@]}" tests benchmarks tools
ruff check --no-cache --select E501 "${nbs[@]}"   # line length on the source of the exported code
python tools/check_numpydoc.py --check --summary   # numpydoc's validator on the public API (a ratchet list)
python tools/notebook_rhythm.py --check             # export-cell size, examples after them, long lines
echo "lint: ruff, the notebook format, numpydoc and the notebook rhythm checks passed"

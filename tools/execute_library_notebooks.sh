#!/usr/bin/env bash
# Execute the library notebooks (every notebook under nbs/, its package folders vfr/ mfarm/ llm/ agent/
# mitigation/ runner/ included, but not nbs/papers/) IN PLACE, keeping their outputs, so any git host shows them as
# documentation; then nbdev-clean strips execution counts and metadata.
#
#   tools/execute_library_notebooks.sh                 # every library notebook (what `make docs-nbs` runs)
#   tools/execute_library_notebooks.sh nbs/02a_metrics.ipynb nbs/vfr/06_axis2.ipynb ...   # just these
#
# The executor is nbdev-test's (execnb, `--save`), so the skip rules are the test suite's: cells marked
# `#| eval: false` or flagged `notest` / `slow` (tst_flags in pyproject.toml) are not run and keep no
# output. A notebook whose cell fails is left untouched and the script exits non-zero.
# Outputs must be deterministic so the sync check (tools/check_sync.sh, nbdev-clean + nbdev-export)
# stays meaningful: fixed hash seed, progress bars off, one BLAS thread, single-worker grids. The script
# ends by checking that a second nbdev-clean changes nothing (nbdev-clean is idempotent on outputs).
set -euo pipefail
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"

if [ $# -gt 0 ]; then nbs=("$@"); else
  # folders and files whose name starts with _ or . are skipped, as nbdev-test skips them
  mapfile -t nbs < <(find nbs -name '*.ipynb' -not -path 'nbs/papers/*' | grep -v '/[_.]' | sort)
fi

export PYTHONHASHSEED=0 TQDM_DISABLE=1 MPLBACKEND=Agg
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 FAIRLIB_N_JOBS=1
export FAIRLIB_CACHE_DIR="${FAIRLIB_CACHE_DIR:-$PWD/runs/docs-nbs-cache}"   # a fixed (git-ignored) path, emptied first: no state carried between runs
rm -rf "$FAIRLIB_CACHE_DIR"

digest() { sha256sum "$@" | cut -c1-64; }
failed=()
for nb in "${nbs[@]}"; do
  t0=$(date +%s)
  if nbdev-test --n-workers 0 --save "$nb" >/dev/null; then
    nbdev-clean --fname "$nb" >/dev/null
    echo "executed $nb ($(( $(date +%s) - t0 )) s)"
  else
    failed+=("$nb"); echo "FAILED   $nb (outputs not written)" >&2
  fi
done

# nbdev-clean must be a fixed point on executed notebooks, or check_sync.sh would always fail.
before=$(digest "${nbs[@]}")
for nb in "${nbs[@]}"; do nbdev-clean --fname "$nb" >/dev/null; done
if [ "$before" != "$(digest "${nbs[@]}")" ]; then
  echo "nbdev-clean is not idempotent on these executed notebooks: sync check would fail" >&2; exit 1
fi
if [ ${#failed[@]} -gt 0 ]; then echo "${#failed[@]} notebook(s) failed: ${failed[*]}" >&2; exit 1; fi
echo "library notebooks executed with outputs: ${#nbs[@]}"

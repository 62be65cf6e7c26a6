"""Run a bad-input campaign on the fairlib importable here and print its counts.

    python tools/campaign.py            # the issue-24 campaign (tests/campaign_cases.py): four counts
    python tools/campaign.py --boundary # the boundary campaign (tests/boundary_cases_*.py): five counts per surface
    python tools/campaign.py --boundary --write-docs   # ... and write its table into docs/reliability.md
    PYTHONPATH=/path/to/old/checkout python tools/campaign.py --boundary   # the same cases on an older commit

Counts: clear (the refusal or NaN the contract asks for), legitimate (the correct value), obscure (an exception that
does not name the argument, or where a value was due), silent (a value where a refusal/NaN was due, or a wrong value),
and in the boundary campaign crash (an exception that is not a refusal, or a command that ends with a traceback or an
exit status other than 0, 1 and 2).
"""

import argparse
import collections
import importlib.util
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "reliability.md"
START, END = "<!-- boundary-tally:start -->", "<!-- boundary-tally:end -->"

ap = argparse.ArgumentParser()
ap.add_argument("--cases", default=str(ROOT / "tests" / "campaign_cases.py"))
ap.add_argument(
    "--boundary", action="store_true", help="the boundary campaign of tests/boundary_cases_*.py"
)
ap.add_argument(
    "--write-docs",
    action="store_true",
    help="with --boundary: write the table into docs/reliability.md",
)
ap.add_argument("--list", action="store_true", help="print every case's outcome")
a = ap.parse_args()


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def write_table(table: str) -> None:
    "Replace the table between the tally markers of docs/reliability.md."
    text = DOCS.read_text()
    new = re.sub(
        f"{re.escape(START)}.*?{re.escape(END)}", f"{START}\n{table}\n{END}", text, flags=re.S
    )
    DOCS.write_text(new)


if a.boundary:
    sys.path.insert(0, str(ROOT / "tests"))
    h = _load("boundary_harness", ROOT / "tests" / "boundary_harness.py")
    import fairlib  # noqa: E402

    rows = [(cid, *h.classify(call, contract)) for cid, call, contract in h.all_cases()]
    print(f"fairlib from {Path(fairlib.__file__).parent}: {len(rows)} boundary cases")
    table = h.tally_table([(cid, kind) for cid, kind, _ in rows])
    print(table)
    for cid, kind, detail in rows:
        if a.list or kind not in ("clear", "legitimate"):
            print(f"  [{kind}] {cid}: {detail[:200]}")
    if a.write_docs:
        write_table(table)
        print(f"wrote the table into {DOCS}")
    sys.exit(0)

mod = _load("campaign_cases", a.cases)
import fairlib  # noqa: E402

rows = mod.run_all()
print(f"fairlib from {Path(fairlib.__file__).parent}: {len(rows)} cases")
c = collections.Counter(k for _, k, _ in rows)
for k in ("clear", "legitimate", "obscure", "silent"):
    print(f"  {k:10s} {c.get(k, 0)}")
for cid, k, d in rows:
    if a.list or k in ("obscure", "silent"):
        print(f"  [{k}] {cid}: {d[:150]}")
sys.exit(0)

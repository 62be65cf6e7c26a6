"""Run the bad-input campaign (tests/campaign_cases.py) on the fairlib importable here and print the four counts.

    python tools/campaign.py            # this checkout
    PYTHONPATH=/path/to/old/checkout python tools/campaign.py --cases tests/campaign_cases.py   # an older commit

Counts: clear (the refusal or NaN the contract asks for), legitimate (the correct value), obscure (an exception that
does not name the argument, or where a value was due), silent (a value where a refusal/NaN was due, or a wrong value).
"""

import argparse
import collections
import importlib.util
import sys
from pathlib import Path

ap = argparse.ArgumentParser()
ap.add_argument("--cases", default=str(Path(__file__).resolve().parent.parent / "tests" / "campaign_cases.py"))
ap.add_argument("--list", action="store_true", help="print every case's outcome")
a = ap.parse_args()
spec = importlib.util.spec_from_file_location("campaign_cases", a.cases)
mod = importlib.util.module_from_spec(spec)
sys.modules["campaign_cases"] = mod
spec.loader.exec_module(mod)
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

#!/usr/bin/env python
"""numpydoc's own validator over fairlib's public API (part of `make lint`).

    python tools/check_numpydoc.py            # every public callable: top-level `fairlib` and each subpackage's __all__
    python tools/check_numpydoc.py --summary  # counts per package only
    python tools/check_numpydoc.py --check    # `make lint`: fails on a finding for a callable not listed in
                                              # tools/numpydoc_pending.txt, or on a listed one that is now clean
    python tools/check_numpydoc.py --write-pending   # rewrite that list from today's findings (it may only shrink)

Checked (numpydoc.validate codes): a docstring (GL08), a one-line summary (SS01), known sections in order (GL06, GL07),
every parameter documented with a description and none unknown or out of order (PR01, PR02, PR03, PR07), a Returns
section with a description for functions and methods that return (RT01, RT03), and an Examples section (EX01).
Classes are checked on their class docstring (their constructor's parameters); constants and modules are not
callables and are not checked. Exits 1 listing each finding.
"""

from __future__ import annotations
import argparse
import importlib
import inspect
import sys
import warnings
from pathlib import Path

from numpydoc.validate import validate

PENDING = Path(__file__).with_name("numpydoc_pending.txt")
PACKAGES = (
    "fairlib",
    "fairlib.vfr",
    "fairlib.mfarm",
    "fairlib.agent",
    "fairlib.llm",
    "fairlib.mitigation",
    "fairlib.runner",
)
CHECKS = {"GL06", "GL07", "GL08", "SS01", "PR01", "PR02", "PR03", "PR07", "RT01", "RT03", "EX01"}


def public_callables(package: str):
    "(qualified name, object) of every callable named in `package.__all__`, each object once."
    mod = importlib.import_module(package)
    for name in sorted(getattr(mod, "__all__", [])):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            obj = getattr(mod, name, None)
        if obj is None or not callable(obj) or inspect.ismodule(obj):
            continue
        yield f"{obj.__module__}.{obj.__qualname__}", f"{package}.{name}", obj


def findings(package: str) -> tuple[int, list[str]]:
    n, out, seen = 0, [], set()
    for qual, shown, obj in public_callables(package):
        if qual in seen:
            continue
        seen.add(qual)
        n += 1
        try:
            res = validate(qual)
        except Exception as e:  # noqa: BLE001 -- an object numpydoc cannot import is itself a finding
            out.append(f"{shown}: numpydoc could not validate it ({type(e).__name__}: {e})")
            continue
        for code, msg in res["errors"]:
            if code in CHECKS:
                out.append(f"{shown}: {code} {msg}")
    return n, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--summary", action="store_true", help="counts per package only")
    ap.add_argument(
        "--check", action="store_true", help="fail only on callables not in the pending list"
    )
    ap.add_argument(
        "--write-pending",
        action="store_true",
        help="rewrite the pending list from today's findings",
    )
    ap.add_argument("packages", nargs="*", default=list(PACKAGES))
    a = ap.parse_args(argv)
    every, flagged = [], set()
    for p in a.packages:
        n, out = findings(p)
        names = {f.split(":")[0] for f in out}
        flagged |= names
        every += out
        print(f"{p}: {n} public callables, {len(names)} with findings ({len(out)} findings)")
        if not a.summary and not a.check:
            for f in out:
                print("  " + f)
    if a.write_pending:
        head = "# public callables whose numpydoc sections are not complete yet (tools/check_numpydoc.py --check)\n"
        PENDING.write_text(head + "".join(f"{n}\n" for n in sorted(flagged)), encoding="utf-8")
        print(f"wrote {len(flagged)} names to {PENDING.name}")
        return 0
    if not a.check:
        return 1 if every else 0
    pending = {
        l.strip()
        for l in PENDING.read_text(encoding="utf-8").splitlines()
        if l.strip() and l[0] != "#"
    }
    pending = {n for n in pending if n.rsplit(".", 1)[0] in a.packages}
    new = [f for f in every if f.split(":")[0] not in pending]
    done = sorted(pending - flagged)
    for f in new:
        print("  FAILED (not in the pending list): " + f)
    for n in done:
        print(f"  FAILED: {n} is clean now; remove it from {PENDING.name}")
    print(f"{len(pending & flagged)} public callables still pending (listed in {PENDING.name})")
    return 1 if (new or done) else 0


if __name__ == "__main__":
    sys.exit(main())

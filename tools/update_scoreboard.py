"""The ledger's generated blocks: the scoreboard (claims per kind of evidence and status, counted from
figures/<paper>/claims.csv) in README.md and docs/index.md, and the vocabulary of kinds in docs/ledger.md.

    python tools/update_scoreboard.py              # rewrite the blocks between their markers
    python tools/update_scoreboard.py --check      # exit 1 when a block disagrees with the claims tables / vocabulary
    python tools/update_scoreboard.py --overclaims # also list sentences that claim more than their kind of evidence

The claims tables are written by the paper notebooks (`fairlib.ledger.write_claims`,
`fairlib.scoreboard.collect_claims`);
`tests/test_ledger.py` fails when a committed block and the committed tables disagree, and when the overclaim check
(`fairlib.overclaims.repository_overclaims`) finds a sentence.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fairlib.core import atomic_write
from fairlib.overclaims import repository_overclaims
from fairlib.scoreboard import (
    END,
    EVIDENCE_END,
    EVIDENCE_START,
    START,
    evidence_markdown,
    read_block,
    scoreboard,
    scoreboard_markdown,
    with_block,
)

ROOT = Path(__file__).resolve().parent.parent
# file (relative to the checkout) -> its generated blocks: (start marker, end marker, what writes it)
BLOCKS = {
    "README.md": [(START, END, "scoreboard")],
    "docs/index.md": [(START, END, "scoreboard")],
    "docs/ledger.md": [(EVIDENCE_START, EVIDENCE_END, "evidence")],
}


def blocks(root: Path) -> dict[str, str]:
    "What each kind of block should hold now."
    return {"scoreboard": scoreboard_markdown(scoreboard(root)), "evidence": evidence_markdown()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare only; exit 1 on a difference")
    ap.add_argument(
        "--overclaims", action="store_true", help="list sentences that claim more than their kind"
    )
    ap.add_argument(
        "--root", default=str(ROOT), help="the checkout holding README.md, docs/ and figures/"
    )
    a = ap.parse_args(argv)
    root = Path(a.root)
    want, rc = blocks(root), 0
    for rel, spans in BLOCKS.items():
        path = root / rel
        if not path.is_file():
            continue
        text = new = path.read_text(encoding="utf-8")
        for start, end, kind in spans:
            if a.check:
                if read_block(text, start, end) != want[kind].strip():
                    print(f"{path}: the {kind} block is stale; run tools/update_scoreboard.py")
                    rc = 1
            else:
                new = with_block(new, want[kind], start, end)
        if not a.check:
            if new != text:
                atomic_write(path, new)
                print(f"{path}: blocks rewritten")
            else:
                print(f"{path}: blocks already up to date")
    if a.check and rc == 0:
        print("the generated blocks agree with the claims tables and the vocabulary")
    if a.overclaims:
        for f, n, paper, why, sentence in repository_overclaims(root):
            print(f"{f}:{n}: [{paper or '-'}] {why}: {sentence}")
    return rc


if __name__ == "__main__":
    sys.exit(main())

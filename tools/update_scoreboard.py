"""The reproduction scoreboard in README.md: claims per status per paper, counted from figures/<paper>/claims.csv.

    python tools/update_scoreboard.py           # rewrite the block between the README's scoreboard markers
    python tools/update_scoreboard.py --check   # exit 1 when the README block and the claims tables disagree
    python tools/update_scoreboard.py --overclaims  # also list README lines that say 'reproduced' too early

The claims tables are written by the paper notebooks (`fairlib.ledger.write_claims` / `collect_claims`);
`tests/test_ledger.py` fails when the committed README block and the committed tables disagree.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fairlib.core import atomic_write
from fairlib.ledger import overclaims, readme_scoreboard, scoreboard, scoreboard_markdown, with_scoreboard

ROOT = Path(__file__).resolve().parent.parent


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare only; exit 1 on a difference")
    ap.add_argument("--overclaims", action="store_true", help="list README lines that claim more than the ledger")
    ap.add_argument("--root", default=str(ROOT), help="the checkout holding README.md and figures/")
    a = ap.parse_args(argv)
    root = Path(a.root)
    readme = root / "README.md"
    text = readme.read_text(encoding="utf-8")
    board = scoreboard(root)
    block = scoreboard_markdown(board)
    rc = 0
    if a.check:
        if readme_scoreboard(text) != block.strip():
            print(f"{readme}: the scoreboard block disagrees with the claims tables; run tools/update_scoreboard.py")
            rc = 1
        else:
            print(f"{readme}: the scoreboard block agrees with the claims tables")
    else:
        new = with_scoreboard(text, block)
        if new != text:
            atomic_write(readme, new)
            print(f"{readme}: scoreboard block rewritten")
        else:
            print(f"{readme}: scoreboard block already up to date")
    if a.overclaims:
        for n, paper, line in overclaims(text, board):
            print(f"README.md:{n}: [{paper}] {line}")
    return rc


if __name__ == "__main__":
    sys.exit(main())

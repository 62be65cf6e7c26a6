"""The reproduction machinery: the registry of paper notebooks and their profiles, resumable papermill runs, the run
index page, the write-back of executed notebooks into `nbs/papers/`, and the `fairlib reproduce` command.

The package's public face: every public name of its modules is importable from here (`fairlib.runner.NAME`), so moving
code between its private modules never changes a user's import. It sits above the shared core and the paper packages
and imports only the core. Written by hand (nbdev only creates missing `__init__.py`).
"""
from . import registry
from .registry import *  # noqa: F403
from . import runindex
from .runindex import *  # noqa: F403
from . import writeback
from .writeback import *  # noqa: F403
from . import runs
from .runs import *  # noqa: F403
from . import cli
from .cli import *  # noqa: F403

__all__ = sorted({n for m in (registry, runindex, writeback, runs, cli) for n in m.__all__})

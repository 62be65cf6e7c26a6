"""Mitigation estimators that know no paper: intersectional reweighing, per-cell threshold shifts and greedy refinement (scikit-learn estimators), the parity constraints they hold and the explicit fairness-penalised scorer.

The package's public face: every public name of its modules is importable from here (`fairlib.mitigation.NAME`), so moving
code between its private modules never changes a user's import. Written by hand (nbdev only creates missing `__init__.py`).
"""
from .._compat import resolve as _resolve
from . import validation
from . import parity
from .parity import *  # noqa: F403
from . import cells
from .cells import *  # noqa: F403
from . import reweighing
from .reweighing import *  # noqa: F403
from . import thresholds
from .thresholds import *  # noqa: F403
from . import refinement
from .refinement import *  # noqa: F403

__all__ = sorted({n for m in (parity, cells, reweighing, thresholds, refinement) for n in m.__all__})


def __getattr__(name):
    "Old names of 0.1 (renamed or moved), served with a DeprecationWarning."
    return _resolve(__name__, name)

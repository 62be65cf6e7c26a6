"""mFARM (LLM harm-based fairness metrics on MIMIC-IV ED-triage and opioid tasks): the benchmark, the prompt instrument, the five sub-metrics, mFARM/FAB, their reliability, the experiments and figures.

The package's public face: every public name of its modules is importable from here (`fairlib.mfarm.NAME`), so moving
code between its private modules never changes a user's import. Written by hand (nbdev only creates missing `__init__.py`).
"""
from .._compat import resolve as _resolve
from . import cleaning
from .cleaning import *  # noqa: F403
from . import mimic
from .mimic import *  # noqa: F403
from . import twin_ed
from .twin_ed import *  # noqa: F403
from . import twin_vocab
from .twin_vocab import *  # noqa: F403
from . import twin
from .twin import *  # noqa: F403
from . import benchmark
from .benchmark import *  # noqa: F403
from . import instrument
from .instrument import *  # noqa: F403
from . import matrix
from .matrix import *  # noqa: F403
from . import submetrics
from .submetrics import *  # noqa: F403
from . import score
from .score import *  # noqa: F403
from . import reliability
from .reliability import *  # noqa: F403
from . import experiments
from .experiments import *  # noqa: F403
from . import plots
from .plots import *  # noqa: F403
from . import claims
from .claims import *  # noqa: F403

__all__ = sorted({n for m in (cleaning, mimic, twin_ed, twin_vocab, twin, benchmark, instrument, matrix, submetrics, score, reliability, experiments, plots, claims) for n in m.__all__})


def __getattr__(name):
    "Old names of 0.1 (renamed or moved), served with a DeprecationWarning."
    return _resolve(__name__, name)

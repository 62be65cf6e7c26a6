"""FairMedAgent: trajectories, acceptable-action bands, counterfactual metrics, the instability floor, the vignettes
and conditions, the agent loop with its policies, the studies, the authors' trajectory format and the policy gate.

The package's public face: every public name of its modules is importable from here (`fairlib.agent.NAME`), so moving
code between its private modules never changes a user's import. Written by hand (nbdev only creates missing `__init__.py`).
"""
from .._compat import resolve as _resolve
from . import trajectory
from .trajectory import *  # noqa: F403
from . import bands
from .bands import *  # noqa: F403
from . import metrics
from .metrics import *  # noqa: F403
from . import floor
from .floor import *  # noqa: F403
from . import simulate
from .simulate import *  # noqa: F403
from . import vignettes
from .vignettes import *  # noqa: F403
from . import conditions
from .conditions import *  # noqa: F403
from . import policy_base
from .policy_base import *  # noqa: F403
from . import generative
from .generative import *  # noqa: F403
from . import policies
from .policies import *  # noqa: F403
from . import loop
from .loop import *  # noqa: F403
from . import studies
from .studies import *  # noqa: F403
from . import interchange
from .interchange import *  # noqa: F403
from . import gate
from .gate import *  # noqa: F403
from . import claims
from .claims import *  # noqa: F403

__all__ = sorted({n for m in (trajectory, bands, metrics, floor, simulate, vignettes, conditions, policy_base, generative, policies, loop, studies, interchange, gate, claims) for n in m.__all__})


def __getattr__(name):
    "Old names of 0.1 (renamed or moved), served with a DeprecationWarning."
    return _resolve(__name__, name)

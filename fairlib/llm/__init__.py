"""The shared LLM layer used by mFARM and FairMedAgent: answer cache, scorers, option scoring, CPU kernels, model loading and conversion, the served backend and LoRA fine-tuning.

The package's public face: every public name of its modules is importable from here (`fairlib.llm.NAME`), so moving
code between its private modules never changes a user's import. Written by hand (nbdev only creates missing `__init__.py`).
"""
from .._compat import resolve as _resolve
from . import cache
from .cache import *  # noqa: F403
from . import scorer
from .scorer import *  # noqa: F403
from . import loading
from .loading import *  # noqa: F403
from . import cpu
from .cpu import *  # noqa: F403
from . import transformers
from .transformers import *  # noqa: F403
from . import server
from .server import *  # noqa: F403
from . import finetune
from .finetune import *  # noqa: F403

__all__ = sorted({n for m in (cache, scorer, loading, cpu, transformers, server, finetune) for n in m.__all__})


def __getattr__(name):
    "Old names of 0.1 (renamed or moved), served with a DeprecationWarning."
    return _resolve(__name__, name)

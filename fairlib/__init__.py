"""fairlib: reproducible fairness audits for clinical AI.

`import fairlib as fl` gives what an audit team needs (`fl.audit`, `fl.four_fifths_rule`,
`fl.group_table`, `fl.verdict_flip_rate`, the result classes) and the paper modules as
attributes (`fl.vfr`, `fl.mfarm`, `fl.agent`, `fl.data`, `fl.plots`, ...), imported only when first
used, so `import fairlib` stays light: it never imports torch, transformers or the tree-model
libraries. This file is written by hand (nbdev only creates missing `__init__.py` files).
"""
from ._version import __version__ as __version__

import importlib as _importlib
import importlib.util as _importlib_util

from . import _compat
from .core import FairlibInputError, UnknownMetricError
from .results import Result
from .metrics import MetricValue, AUDIT_METRICS
from .audit import audit, four_fifths_rule, AuditResult, FourFifthsVerdict
from .tables import audit_table, group_table

_compat.install()   # old module paths of 0.1 (fairlib.llm_server, fairlib.data.mimic, ...) keep importing, with a warning

# attributes served by a submodule on first use: name -> (module, attribute or None for the module)
_LAZY = {
    "verdict_flip_rate": ("fairlib.reliability", "verdict_flip_rate"),
    "VFRResult": ("fairlib.reliability", "VFRResult"),
    "vfr_grid": ("fairlib.vfr.axis1", "vfr_grid"),
    "audit_size_plan": ("fairlib.sizeplan", "audit_size_plan"),
    "SizePlanResult": ("fairlib.sizeplan", "SizePlanResult"),
}
# the shared core, the LLM layer and the paper packages; "data", "models" and "prompts" are 0.1 paths (deprecated)
_SUBMODULES = ("agent", "audit", "cli", "config", "core", "data", "handbook", "inputs", "llm", "metrics", "mfarm",
               "mitigation", "models", "plots", "prompts", "published", "reliability", "report", "resample", "results",
               "sizeplan", "stats", "vfr")

__all__ = ["audit", "audit_table", "four_fifths_rule", "group_table", "verdict_flip_rate", "audit_size_plan", "AuditResult",
           "FourFifthsVerdict", "MetricValue", "VFRResult", "SizePlanResult", "vfr_grid", "Result", "FairlibInputError",
           "UnknownMetricError", "AUDIT_METRICS", *_SUBMODULES]


def __getattr__(name):
    "Import paper subpackages and the VFR entry points on first access (PEP 562)."
    if name in _LAZY:
        mod, attr = _LAZY[name]
        value = getattr(_importlib.import_module(mod), attr)
    elif name in _SUBMODULES or (not name.startswith("_") and _importlib_util.find_spec(f"{__name__}.{name}") is not None):
        value = _importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module 'fairlib' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))

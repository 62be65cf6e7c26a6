"""VFR-Audit (Texas-100X, twelve classifiers): the cohort and its synthetic twin, the panel, the three reliability axes, tiers, selection, baselines, robustness protocols, figures and the per-model report.

The package's public face: every public name of its modules is importable from here (`fairlib.vfr.NAME`), so moving
code between its private modules never changes a user's import. Written by hand (nbdev only creates missing `__init__.py`).
"""
from .._compat import resolve as _resolve
from ..reliability import MAX_UNDEFINED_SHARE, METHODS, TAU_VFR, VFRResult, summarise_resamples, verdict_flip_rate  # noqa: F401  (public here in 0.1)
from ..resample import AUDIT_SIZES, AuditData, ResampleSizeWarning, audit_data, draw_counts, draw_counts_bins, draw_subsample_bins, draw_subsample_bins_shared, draw_subsample_counts, index_resample_values, index_subsample_values, metric_at  # noqa: F401  (public here in 0.1)
from . import texas
from .texas import *  # noqa: F403
from . import twin
from .twin import *  # noqa: F403
from . import cohort
from .cohort import *  # noqa: F403
from . import features
from .features import *  # noqa: F403
from . import panel
from .panel import *  # noqa: F403
from . import axis1
from .axis1 import *  # noqa: F403
from . import axis2
from .axis2 import *  # noqa: F403
from . import axis3
from .axis3 import *  # noqa: F403
from . import tiers
from .tiers import *  # noqa: F403
from . import selection
from .selection import *  # noqa: F403
from . import baselines
from .baselines import *  # noqa: F403
from . import robustness
from .robustness import *  # noqa: F403
from . import figures
from .figures import *  # noqa: F403
from . import report
from .report import *  # noqa: F403
from . import claims
from .claims import *  # noqa: F403

__all__ = sorted({n for m in (texas, twin, cohort, features, panel, axis1, axis2, axis3, tiers, selection, baselines, robustness, figures, report, claims) for n in m.__all__} | {'AUDIT_SIZES', 'AuditData', 'MAX_UNDEFINED_SHARE', 'METHODS', 'ResampleSizeWarning', 'TAU_VFR', 'VFRResult', 'audit_data', 'draw_counts', 'draw_counts_bins', 'draw_subsample_bins', 'draw_subsample_bins_shared', 'draw_subsample_counts', 'index_resample_values', 'index_subsample_values', 'metric_at', 'summarise_resamples', 'verdict_flip_rate'})


def __getattr__(name):
    "Old names of 0.1 (renamed or moved), served with a DeprecationWarning."
    return _resolve(__name__, name)

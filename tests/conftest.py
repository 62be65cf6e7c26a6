"""Suite-wide pytest configuration: which tests are `slow`.

`make test` runs every test, slow ones included. `-m "not slow"` gives a quick local loop. A test is
slow when it is marked `@pytest.mark.slow` in its file, when it was measured at >= 10 s on the 2-core
CI machine (`pytest -n 2 --durations=25`, list below), or when it uses a module fixture that costs
that much to build (the fixture's cost lands on whichever of its tests runs first, so all of them
are marked).
"""

import pytest

# module -> fixtures that take >= 10 s to build (measured 2026-12-01, 2 cores, -n 2)
SLOW_FIXTURES = {
    "test_llm_bundled.py": {"smol"},  # loads the bundled GGUF model (73 s)
    "test_vfr_equivalence.py": {"data"},  # audit partition of the synthetic Texas twin (37 s)
    "test_prompts.py": {"ed_test", "op_test"},  # MIMIC twins built into prompt tables (27 s)
    "test_models.py": {"cohort"},  # cohort for fitting the twelve classifiers (13 s)
}
# tests whose own call took >= 10 s in the same measurement
SLOW_TESTS = {
    "test_mfarm_validity.py::test_null_false_alarm_rate",
    "test_texas.py::test_twin_predicts_los_like_the_paper",
    "test_texas.py::test_twin_is_bit_identical_per_seed_and_differs_across_seeds",
    "test_llm.py::test_killed_run_resumes_without_recomputing",
    "test_agent_simulate.py::test_mcnemar_type_one_error_under_no_effect",
    "test_vfr_equivalence.py::test_vfr_distribution_matches_over_seeds",
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        module = item.path.name
        name = f"{module}::{item.originalname or item.name}"
        if name in SLOW_TESTS or SLOW_FIXTURES.get(module, set()) & set(
            getattr(item, "fixturenames", ())
        ):
            item.add_marker(pytest.mark.slow)

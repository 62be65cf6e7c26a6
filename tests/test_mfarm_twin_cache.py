"""The twin benchmark kept on disk between kernels: what a later kernel reads must be exactly what the builders make,
it must not rebuild, and a change of code (the package digest), seed or cohort rules must build afresh."""

import pickle
from unittest import mock

import pandas as pd
import pytest

from fairlib.mfarm import benchmark as B
from fairlib.mfarm.mimic import build_ed_triage
from fairlib.mfarm.twin import TWIN_PRESETS
from fairlib.mfarm.twin_ed import TWIN_SOURCE, synthetic_ed_tables

pytestmark = pytest.mark.slow  # builds the ED twin six times


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("FAIRLIB_CACHE_DIR", str(tmp_path))
    B._cached.cache_clear()
    yield tmp_path
    B._cached.cache_clear()


def fresh_kernel():
    "What a new kernel has: no benchmark built in this process."
    B._cached.cache_clear()


def same(a, b):
    pd.testing.assert_frame_equal(a.cases, b.cases, check_exact=True)
    pd.testing.assert_frame_equal(a.flow, b.flow, check_exact=True)
    assert (a.task, a.source, a.params) == (b.task, b.source, b.params)


def test_a_later_kernel_reads_exactly_what_the_builders_make(cache_dir):
    first = B.load_benchmark("ed_triage", source="synthetic", seed=3)
    files = list((cache_dir / "benchmarks").glob("*.pkl"))
    assert len(files) == 1
    fresh_kernel()
    with mock.patch.object(B, "synthetic_ed_tables", side_effect=AssertionError("rebuilt")):
        second = B.load_benchmark("ed_triage", source="synthetic", seed=3)
    twin_kw, build_kw = TWIN_PRESETS["ed_triage"]
    oracle = build_ed_triage(  # the builders called directly, no cache anywhere
        synthetic_ed_tables(**twin_kw, seed=3),
        seed=3,
        source_label=TWIN_SOURCE.format(module="ED", seed=3),
        rules="fairlib",
        **build_kw,
    )
    same(first, oracle)
    same(second, oracle)


def test_code_seed_and_rules_each_build_afresh(cache_dir):
    B.load_benchmark("ed_triage", source="synthetic", seed=3)
    calls = []
    real = B.synthetic_ed_tables

    def counted(**kw):
        calls.append(kw["seed"])
        return real(**kw)

    with mock.patch.object(B, "synthetic_ed_tables", side_effect=counted):
        for seed, rules, digest in (
            (4, "fairlib", None),
            (3, "paper", None),
            (3, "fairlib", "0" * 64),
        ):
            fresh_kernel()
            with mock.patch.object(B, "_source_digest", return_value=digest or B._source_digest()):
                B.load_benchmark("ed_triage", source="synthetic", seed=seed, rules=rules)
    assert calls == [4, 3, 3]
    assert len(list((cache_dir / "benchmarks").glob("*.pkl"))) == 4


def test_a_damaged_file_is_rebuilt_and_replaced(cache_dir):
    want = B.load_benchmark("ed_triage", source="synthetic", seed=5)
    (f,) = (cache_dir / "benchmarks").glob("*.pkl")
    f.write_bytes(b"not a pickle")
    fresh_kernel()
    same(B.load_benchmark("ed_triage", source="synthetic", seed=5), want)
    same(pickle.loads(f.read_bytes()), want)


def test_real_tables_are_never_written(cache_dir, tmp_path):
    with mock.patch.object(B, "build_ed_triage", return_value="built from the folder") as build:
        assert (
            B._cached("ed_triage", str(tmp_path / "mimic"), 0, "fairlib") == "built from the folder"
        )
    build.assert_called_once()
    assert not (cache_dir / "benchmarks").exists()

"""FairlibInputError crosses a pickle whole: an error raised on a dask or joblib worker reaches the caller with its
type, argument, problem, function and message (Exception's default pickling calls `cls(message)`, which loses the
parts or fails with a TypeError)."""

import pickle

import joblib
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairlib.constraints import FairlibInputError, UnknownMetricError
from fairlib.core import FairlibInputError as CoreFairlibInputError
from fairlib.llm.cache import CorruptCacheError
from fairlib.mitigation.reweighing import _NotFittedError


def _parts(e):
    return type(e), e.argument, e.problem, e.func, str(e), e.args


@pytest.mark.parametrize(
    "cls", [FairlibInputError, UnknownMetricError, CorruptCacheError, _NotFittedError]
)
@pytest.mark.parametrize("func", ["audit", None])
def test_pickle_round_trip_keeps_type_argument_message_and_function(cls, func):
    e = cls("metrics", "unknown metric 'AUC'; known: ['DI', 'SPD']", func)
    back = pickle.loads(pickle.dumps(e))
    assert _parts(back) == _parts(e)
    where = " in audit()" if func else ""
    assert str(back) == f"argument `metrics`{where}: unknown metric 'AUC'; known: ['DI', 'SPD']"
    assert isinstance(back, ValueError)


def test_the_core_re_export_is_the_same_class():
    assert CoreFairlibInputError is FairlibInputError


def test_attributes_set_after_construction_survive():
    e = FairlibInputError("path", "no such file: x.csv", "load_csv")
    e.hint = "check the folder"
    back = pickle.loads(pickle.dumps(e, protocol=pickle.HIGHEST_PROTOCOL))
    assert back.hint == "check the folder" and _parts(back) == _parts(e)


def test_an_unknown_metric_error_stays_a_key_error_with_the_plain_message():
    back = pickle.loads(pickle.dumps(UnknownMetricError("metric", "unknown metric 'X'", "f")))
    assert isinstance(back, KeyError) and isinstance(back, FairlibInputError)
    assert str(back) == "argument `metric` in f(): unknown metric 'X'"  # not KeyError's quoted repr


@given(
    argument=st.text(min_size=1, max_size=20),
    problem=st.text(max_size=80),
    func=st.one_of(st.none(), st.text(min_size=1, max_size=20)),
)
def test_pickle_round_trip_property(argument, problem, func):
    e = FairlibInputError(argument, problem, func)
    assert _parts(pickle.loads(pickle.dumps(e))) == _parts(e)


def _refuse(i):
    raise FairlibInputError("seed", f"must be a non-negative int, got {-i}", "worker_task")


def test_an_error_raised_on_a_joblib_process_worker_keeps_its_type_and_parts():
    # loky runs the task in another process: the error is pickled there and unpickled here
    with pytest.raises(FairlibInputError) as info:
        joblib.Parallel(n_jobs=2, backend="loky")(joblib.delayed(_refuse)(i) for i in (1, 2))
    e = info.value
    assert type(e) is FairlibInputError
    assert e.argument == "seed" and e.func == "worker_task"
    assert e.problem.startswith("must be a non-negative int, got -")
    assert str(e).startswith("argument `seed` in worker_task(): must be a non-negative int")

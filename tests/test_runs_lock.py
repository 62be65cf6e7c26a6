"""Two `fairlib reproduce` runs on one runs folder (issue 24, item 3): the second is refused, naming the folder and
the run that holds it, and the first finishes with every file; the lock goes with its holder, even on an error."""

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

import pandas as pd
import pytest

from fairlib.core import FairlibInputError, folder_lock
from test_cli import _profile, _two_notebook_registry, _wait_for


def _args(reg, tmp_path, runs):
    return [sys.executable, "-m", "fairlib.cli", "reproduce", "--profile", "smoke", "--no-progress",
            "--registry", str(reg), "--params-dir", str(tmp_path), "--runs-dir", str(runs)]  # fmt: skip


@pytest.mark.slow
def test_second_reproduce_on_the_same_runs_folder_is_refused(tmp_path):
    reg = _two_notebook_registry(tmp_path)
    runs = tmp_path / "runs"
    _profile(tmp_path, v=3, sleep=8)
    args = _args(reg, tmp_path, runs)
    first = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert _wait_for(runs / "work" / "demo" / "nb2_started", 240), (
            "first run never reached its second notebook"
        )
        second = subprocess.run(args, capture_output=True, text=True, timeout=120)
        out, err = first.communicate(timeout=240)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
    assert second.returncode == 1, second.stderr[-2000:]
    msg = second.stderr
    assert str(runs) in msg and f"pid {first.pid}" in msg and socket.gethostname() in msg, msg[
        -2000:
    ]
    assert "in use" in msg
    # the refused run touched nothing: the first one finished with all its files
    assert first.returncode == 0, err[-2000:]
    fig = runs / "figures" / "demo"
    assert pd.read_csv(fig / "table_vs_paper.csv")["ours"].tolist() == [3]
    assert (fig / "other.csv").exists() and (fig / "figure_line.png").exists()
    assert (runs / "work" / "demo" / "nb1_runs.txt").read_text().count("run") == 1
    # released on exit: a third run goes ahead
    third = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert third.returncode == 0, third.stderr[-2000:]


_HOLD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from fairlib.core import folder_lock
    with folder_lock(sys.argv[1], "test holder"):
        Path(sys.argv[2]).write_text("held")
        if sys.argv[3] == "raise":
            raise RuntimeError("boom")
        time.sleep(float(sys.argv[3]))
    """
)


def _holder(tmp_path, how):
    ready = tmp_path / f"ready-{how}"
    p = subprocess.Popen([sys.executable, "-c", _HOLD, str(tmp_path / "runs"), str(ready), how],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert _wait_for(ready, 60), p.communicate(timeout=30)
    return p


def test_lock_held_by_another_process_is_refused_with_its_holder(tmp_path):
    p = _holder(tmp_path, "30")
    try:
        with pytest.raises(FairlibInputError, match=r"in use") as e:
            with folder_lock(tmp_path / "runs", "second"):
                pytest.fail("a second holder got the lock")
        msg = str(e.value)
        assert str(tmp_path / "runs") in msg and f"pid {p.pid}" in msg and "test holder" in msg
        assert socket.gethostname() in msg
    finally:
        p.kill()
        p.wait(timeout=30)
    with folder_lock(
        tmp_path / "runs", "after the holder died"
    ):  # the kernel drops a dead holder's lock
        pass


def test_lock_is_released_when_the_holder_raises(tmp_path):
    p = _holder(tmp_path, "raise")
    _, err = p.communicate(timeout=60)
    assert p.returncode != 0 and "boom" in err
    with folder_lock(tmp_path / "runs", "next") as path:
        assert "pid" in path.read_text()  # the new holder noted itself
    t0 = time.time()
    with folder_lock(tmp_path / "runs", "again"):  # and released again on a normal exit
        pass
    assert time.time() - t0 < 5


def test_lock_in_process_refuses_a_nested_second_holder(tmp_path):
    with folder_lock(tmp_path, "outer"):
        with pytest.raises(FairlibInputError, match="in use"):
            with folder_lock(tmp_path, "inner"):
                pass

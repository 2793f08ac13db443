"""Interrupted runs: Ctrl-C exits 130 with one line, killing the parent leaves no worker, no temporary file stays.

Each test runs the real command in a child process whose per-file work (or write)
is slowed down by a small wrapper, so the signal lands while work is in flight.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_util import REPO

SEED = (REPO / "examples" / "seed000.py").read_text(encoding="utf-8")
pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="finds worker processes through /proc")

_WRAPPER = """
import os, signal, sys, time
import codegen.driver.run, npudsl.cli.files
from npudsl.cli import main

signal.signal(signal.SIGINT, signal.default_int_handler)  # as from a terminal, even when started in the background

real_transform, real_fill = codegen.driver.run._transform_one, npudsl.cli.files._fill

def slow_transform(file, target, index):
    time.sleep(60)
    return real_transform(file, target=target, index=index)

def slow_fill(fd, data):
    real_fill(fd, data)
    print("writing", flush=True)
    time.sleep(60)

if sys.argv[1] == "transform":
    codegen.driver.run._transform_one = slow_transform
else:
    npudsl.cli.files._fill = slow_fill
sys.argv = ["npudsl", *sys.argv[2:]]
sys.exit(main())
"""


def _start(tmp_path: Path, slow: str, *args: str) -> subprocess.Popen[str]:
    wrapper = tmp_path / "wrapper.py"
    wrapper.write_text(_WRAPPER, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, str(wrapper), slow, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )


def _children(pid: int) -> set[int]:
    found = set()
    for entry in os.listdir("/proc"):
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except (OSError, ValueError):
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if entry.isdigit() and int(fields[1]) == pid:
            found.add(int(entry))
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"  # a zombie has exited


def _wait_for(condition, seconds: float = 30.0) -> bool:  # noqa: ANN001
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    for i in range(8):
        (tmp_path / "src" / f"m{i}.py").write_text(SEED, encoding="utf-8")
    return tmp_path / "src"


def test_sigkill_of_the_parent_ends_its_workers(tmp_path: Path, folder: Path) -> None:
    run = _start(tmp_path, "transform", "transform", str(folder), "--jobs", "2", "-o", str(tmp_path / "out"))
    workers: set[int] = set()
    try:
        assert _wait_for(lambda: len(_children(run.pid)) >= 2), "no workers started"
        workers = _children(run.pid)
        os.kill(run.pid, signal.SIGKILL)
        run.wait(10)
        assert _wait_for(lambda: not any(_alive(w) for w in workers), 10), "workers outlived their parent"
    finally:
        for worker in workers | _children(run.pid):
            if _alive(worker):
                os.kill(worker, signal.SIGKILL)
        run.kill()
        run.communicate()


def test_ctrl_c_exits_130_with_one_line(tmp_path: Path, folder: Path) -> None:
    run = _start(tmp_path, "transform", "transform", str(folder), "--jobs", "2", "--in-place")
    assert _wait_for(lambda: len(_children(run.pid)) >= 2), "no workers started"
    workers = _children(run.pid)
    os.killpg(run.pid, signal.SIGINT)  # what Ctrl-C sends: the whole foreground process group
    _, err = run.communicate(timeout=30)
    assert run.returncode == 130
    assert err == "npudsl: interrupted\n"
    assert _wait_for(lambda: not any(_alive(w) for w in workers), 10)
    assert sorted(os.listdir(folder)) == [f"m{i}.py" for i in range(8)]


def test_ctrl_c_while_writing_leaves_no_temporary_file(tmp_path: Path, folder: Path) -> None:
    run = _start(tmp_path, "write", "transform", str(folder / "m0.py"), "--in-place")
    assert run.stdout is not None and run.stdout.readline() == "writing\n"
    os.killpg(run.pid, signal.SIGINT)
    _, err = run.communicate(timeout=30)
    assert (run.returncode, err) == (130, "npudsl: interrupted\n")
    assert sorted(os.listdir(folder)) == [f"m{i}.py" for i in range(8)]
    assert (folder / "m0.py").read_text(encoding="utf-8") == SEED

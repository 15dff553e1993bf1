"""Limits per run (activities/sandbox/limits.py, cgroups.py) without a service: their arithmetic, the
cgroup files written and read (on a folder laid out as the kernel's), the stop at a hit, the lines
each place says, and, where no cgroup can be made, the rlimits, on real processes, as root and as
an unprivileged user."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from activities.environments.setup import outcome_text
from activities.runs.outcome import Ending
from activities.sandbox import bubblewrap, cgroups, limits
from activities.sandbox.user_programs import Finished, run_user_program
from isolator.contracts.codebase import Codebase
from isolator.contracts.environment import EnvironmentRef
from isolator.contracts.repository import RepositorySetup
from isolator.contracts.setup import CommandsReport, CommandsRequest
from isolator.settings import load_settings

UID = os.getuid()


def amounts(host_cpus: int = 2, **settings: object) -> limits.Amounts:
    return limits.Amounts.of(load_settings(database_url="unused", **settings), host_cpus)


def test_a_run_gets_all_cpus_but_one_by_default_and_all_runs_together_keep_one_for_the_service() -> None:
    assert [(amounts(cpus).cpus, amounts(cpus).together_cpus) for cpus in (1, 2, 8)] == [(1, 1), (1, 1), (7, 7)]
    assert (amounts(8, sandbox_cpus=2.5).cpus, amounts(8, sandbox_cpus=2.5).together_cpus) == (2.5, 7)
    assert amounts(8, sandbox_cpus=8).together_cpus == 8, "a run may be given every CPU on purpose"
    assert [limits.cpu_quota(cpus) for cpus in (1, 2.5, 0.001)] == [100_000, 250_000, 1000]
    assert str(amounts(8, sandbox_cpus=1.5)) == ("4,096 MiB of memory, 512 processes, 1.5 CPUs; "
                                                 "all runs together, 7 CPUs")


def test_the_limits_are_written_in_each_version_s_files() -> None:
    given = amounts(2, sandbox_memory_mb=1024, sandbox_max_processes=100)
    assert given.cgroup_files(2) == [
        ("memory", "memory.max", str(1 << 30)), ("memory", "memory.swap.max", "0"),
        ("pids", "pids.max", "100"), ("cpu", "cpu.max", "100000 100000"), ("cpu", "cpu.max.burst", "100000")]
    assert given.cgroup_files(1) == [
        ("memory", "memory.limit_in_bytes", str(1 << 30)), ("memory", "memory.memsw.limit_in_bytes", str(1 << 30)),
        ("pids", "pids.max", "100"), ("cpu", "cpu.cfs_period_us", "100000"), ("cpu", "cpu.cfs_quota_us", "100000"),
        ("cpu", "cpu.cfs_burst_us", "100000")]


def test_the_hits_are_read_from_the_events_files() -> None:
    v2_memory = "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 0\n"
    v1_memory = "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n"
    assert [cgroups.counter(v2_memory, "oom_kill"), cgroups.counter(v1_memory, "oom_kill")] == [1, 2]
    assert [cgroups.counter("max 0\n", "max"), cgroups.counter("max 7\n", "max"), cgroups.counter("", "max")] == [0, 7, 0]


def _kernel_folder(folder: Path, controllers: str = "cpu memory pids") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "cgroup.controllers").write_text(controllers + "\n")
    (folder / "cgroup.subtree_control").write_text("\n")
    return folder


def test_v2_the_runs_go_beside_a_worker_whose_own_cgroup_cannot_hand_controllers_down(tmp_path: Path) -> None:
    unit = _kernel_folder(tmp_path / "cg" / "isolator.service")
    _kernel_folder(unit / "main", controllers="cpu pids")  # its memory not handed to it
    _kernel_folder(unit / f"isolator-{UID}")  # the kernel fills a new folder; a plain one is filled here
    mountinfo = f"30 1 0:26 / {tmp_path / 'cg'} rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"

    found = cgroups.find(UID, mountinfo, "0::/isolator.service/main\n")

    assert found == cgroups.Cgroups(2, dict.fromkeys(cgroups.CONTROLLERS, unit / f"isolator-{UID}"))
    assert (unit / "cgroup.subtree_control").read_text() == "+memory +pids +cpu"
    run = cgroups.RunCgroup(found, amounts(2, sandbox_memory_mb=1024).cgroup_files(2))
    [folder] = run.made
    assert [(folder / name).read_text() for name in ("memory.max", "pids.max", "cpu.max")] == [
        str(1 << 30), "512", "100000 100000"]
    assert not (folder / "memory.swap.max").exists(), "a kernel without swap accounting has no such file"
    assert run.joining()[-2:] == [str(folder / "cgroup.procs"), "--"]
    (folder / "memory.events").write_text("oom 0\noom_kill 0\n")
    assert run.hit() is None
    (folder / "memory.events").write_text("oom 1\noom_kill 1\n")
    said = limits.RunLimits((), run, amounts(2, sandbox_memory_mb=1024)).reached()
    assert said == "it used all of its 1,024 MiB of memory (SANDBOX_MEMORY_MB)"


def test_v1_the_runs_go_under_the_worker_s_own_cgroup_in_each_hierarchy(tmp_path: Path) -> None:
    mountinfo = "".join(f"{30 + n} 1 0:{40 + n} / {tmp_path / name} rw - cgroup cgroup rw,{name}\n"
                        for n, name in enumerate(["memory", "pids", "cpu,cpuacct"]))
    own = "9:name=systemd:/\n8:pids:/\n4:memory:/service/abc\n1:cpu,cpuacct:/\n0::/\n"
    for folder in ("memory/service/abc", "pids", "cpu,cpuacct"):
        (tmp_path / folder).mkdir(parents=True)

    found = cgroups.find(UID, mountinfo, own)

    assert found == cgroups.Cgroups(1, {"memory": tmp_path / "memory" / "service" / "abc" / f"isolator-{UID}",
                                        "pids": tmp_path / "pids" / f"isolator-{UID}",
                                        "cpu": tmp_path / "cpu,cpuacct" / f"isolator-{UID}"})
    assert all(folder.is_dir() for folder in found.folders.values())
    with pytest.raises(cgroups.NoCgroups, match="cgroup v2: the worker's cgroup is not mounted here; "
                                                "cgroup v1: no pids hierarchy"):
        cgroups.find(UID, mountinfo.replace("rw,pids", "rw,freezer"), own)


async def test_a_run_that_hits_a_limit_is_stopped_within_a_poll(tmp_path: Path) -> None:
    found = cgroups.Cgroups(2, dict.fromkeys(cgroups.CONTROLLERS, _kernel_folder(tmp_path / f"isolator-{UID}")))
    run = cgroups.RunCgroup(found, [])
    [folder] = run.made
    work = asyncio.ensure_future(asyncio.sleep(30, "ended by itself"))
    guarded = limits.RunLimits((), run, amounts(2, sandbox_max_processes=64))
    enforcing = asyncio.ensure_future(guarded.enforce(work))
    await asyncio.sleep(0.1)
    (folder / "pids.events").write_text("max 3\n")
    started = time.monotonic()

    assert await enforcing == (None, "it reached its limit of 64 processes (SANDBOX_MAX_PROCESSES)")
    assert time.monotonic() - started < limits.POLL_SECONDS + 0.5 and work.cancelled()
    (folder / "pids.events").unlink()
    assert await guarded.enforce(asyncio.sleep(0, 7)) == (7, None)


def test_the_run_s_reply_and_a_set_up_s_report_say_the_limit_in_one_line() -> None:
    said = "it used all of its 4,096 MiB of memory (SANDBOX_MEMORY_MB)"
    ending = Ending(time.monotonic())
    ending.finished(Finished(None, False, 3.0, limit=said))
    assert ending.status == "failed"
    assert ending.summary(None, []).startswith(f"— Stopped after 0.0 s: {said}.")
    environment = EnvironmentRef("e1", Codebase("c1", "project", "/checkout", "main", "host"), "/w/x", "x", "thread", "1")
    report = CommandsReport("failed", 2.0, "make", None, ["cc1: out of memory"], said)
    assert outcome_text(CommandsRequest(environment, RepositorySetup(), None), report).startswith(
        f"Set-up of `x` failed: `make` was stopped: {said}.\n")


@pytest.fixture
def without_cgroups(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def none(uid: int) -> cgroups.Cgroups:
        raise cgroups.NoCgroups("cgroup v2: not mounted; cgroup v1: Read-only file system")

    monkeypatch.setattr(cgroups, "find", none)
    monkeypatch.setattr(limits, "_current", None)
    monkeypatch.setattr(bubblewrap, "_current", bubblewrap.Sandbox(False, None, "open", (), (), tmp_path))


async def test_without_cgroups_each_process_s_data_is_bounded_and_status_says_why(
    without_cgroups: None, tmp_path: Path
) -> None:
    assert shutil.which("prlimit"), "the test needs prlimit: apt-get install util-linux"
    configured = limits.configure(load_settings(database_url="unused", sandbox_memory_mb=64))
    assert configured.status.startswith("Warning: limits per run are off, as this worker may make no cgroup "
                                        "(cgroup v2: not mounted; cgroup v1: Read-only file system): each of a "
                                        "run's processes may hold 64 MiB of data")
    output: list[bytes] = []

    async def keep(chunk: bytes) -> None:
        output.append(chunk)

    greedy = "import sys\ntry:\n    bytearray(256 << 20)\nexcept MemoryError:\n    sys.exit('refused')\nprint('held')"
    finished = await run_user_program([sys.executable, "-c", greedy], tmp_path, dict(os.environ), 60, on_output=keep)
    assert (finished.exit_code, b"".join(output)) == (1, b"refused\n")


def test_without_cgroups_an_unprivileged_worker_s_processes_are_bounded(
    without_cgroups: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    python = shutil.which("python3", path="/usr/bin:/bin")  # one another user may run (not a venv in root's home)
    assert os.geteuid() == 0, "becoming another user needs root (the suite runs as root, as CI does)"
    assert None not in (shutil.which("setpriv"), shutil.which("prlimit"), python), \
        "the test needs setpriv and prlimit (apt-get install util-linux) and a system python3"
    monkeypatch.setattr(limits.os, "getuid", lambda: 65534)
    configured = limits.configure(load_settings(database_url="unused", sandbox_max_processes=16))
    assert configured.status.endswith("and the service user's processes together are held to 16.")
    bomb = ("import subprocess\nstarted = 0\nfor _ in range(100):\n    try:\n"
            "        subprocess.Popen(['sleep', '5']); started += 1\n    except OSError:\n        pass\nprint(started)")
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    result = subprocess.run([*nobody, *configured.prlimit, str(python), "-c", bomb], capture_output=True,
                            text=True, timeout=60, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert int(result.stdout) < 16, "the forks past the user's limit were refused"

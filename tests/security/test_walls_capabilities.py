"""No capability in the sandbox, whoever starts it (issue "Walls", rows 1-3): checked from inside with
the very arguments the service gives bubblewrap, as root (as CI runs) and as an unprivileged user
where this machine lets one make a user namespace; and the worker's start-up check refuses a sandbox
that keeps any."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from activities.sandbox import bubblewrap

ESCAPES = ("mount -o remount,rw / && echo REMOUNTED; umount -l /proc && echo UNMOUNTED; "
           "mount -t tmpfs none /tmp && echo MOUNTED; grep -h '^Cap' /proc/self/status")


def inside(user: str, script: str) -> subprocess.CompletedProcess[str]:
    argv = [bubblewrap.BWRAP, *bubblewrap.base_arguments(own_network=True), "--", "sh", "-c", script]
    if user == "root":
        if os.geteuid() != 0:
            pytest.skip("the worker runs as root here only when the tests do")
    else:
        if os.geteuid() != 0 or shutil.which("setpriv") is None:
            pytest.skip("becoming another user needs root and setpriv")
        argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *argv]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    if user != "root" and "setting up uid map" in result.stderr:
        pytest.skip(f"this machine gives an unprivileged user no user namespace: {result.stderr.strip()}")
    assert result.returncode == 0, result.stderr
    return result


@pytest.mark.parametrize("user", ["root", "nobody"])
def test_a_sandboxed_program_has_no_capability_and_cannot_mount_or_unmount(user: str) -> None:
    result = inside(user, ESCAPES)

    assert "MOUNTED" not in result.stdout, result.stdout
    assert bubblewrap.capabilities_kept(result.stdout) == "", result.stdout


def test_the_worker_refuses_a_sandbox_that_keeps_capabilities(monkeypatch: pytest.MonkeyPatch) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root's bubblewrap keeps capabilities without a user namespace")
    without_user_namespace = bubblewrap.base_arguments

    def as_before(own_network: bool, **view: object) -> list[str]:
        arguments = without_user_namespace(own_network, **view)  # type: ignore[arg-type]
        return [word for word in arguments if word not in ("--unshare-user", "--cap-drop", "ALL")]

    monkeypatch.setattr(bubblewrap, "base_arguments", as_before)

    problem = bubblewrap.probe()

    assert problem is not None and "keeps capabilities (CapEff 000001" in problem, problem


def test_the_capability_sets_are_read_from_a_status_file() -> None:
    status = "Name:\tsh\nCapInh:\t0000000000000000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\n" \
             "CapBnd:\t000001fffeffffff\nCapAmb:\t0000000000000000\n"
    assert bubblewrap.capabilities_kept(status) == "CapBnd 000001fffeffffff"

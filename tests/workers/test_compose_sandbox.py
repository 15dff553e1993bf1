"""The compose worker runs user programs in the sandbox: its image has bubblewrap, and the container
may make the namespaces and the fresh /proc bubblewrap needs, without a capability added."""

from __future__ import annotations

import re

from tests.compose_files import environment, isolator, load_compose, settings_variables
from tests.workers.test_dockerfile import dockerfile_instructions


def test_the_image_installs_bubblewrap() -> None:
    runs = [args for instruction, args in dockerfile_instructions() if instruction == "RUN"]
    assert any(re.search(r"apt-get install\b[^&;|]*\sbubblewrap(\s|$)", run) for run in runs)


def test_the_worker_may_make_the_sandbox_and_stays_unprivileged() -> None:
    worker = isolator(load_compose()["services"], "worker")
    assert set(worker.get("security_opt", [])) >= {"seccomp=unconfined", "apparmor=unconfined",
                                                   "systempaths=unconfined"}
    assert not worker.get("privileged") and not worker.get("cap_add"), "no capability is needed"
    passed = set(environment(worker))
    assert {"SANDBOX", "SANDBOX_NETWORK", "SANDBOX_WRITABLE_PATHS"} <= passed & settings_variables()

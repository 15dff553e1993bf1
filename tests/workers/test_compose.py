"""docker-compose.yml is wired the way the code reads its configuration (the Dockerfile: test_dockerfile.py).

No Docker engine is needed: the compose file is parsed as YAML and checked against the code it
runs: the variables `isolator.settings.Settings` reads, the port `isolator api` listens on, the
search attributes in `isolator.contracts.search_attributes.ALL`.
"""

from __future__ import annotations

import re
import shlex
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import urlsplit

import pytest
from temporalio.api.enums.v1 import IndexedValueType

from isolator.contracts import search_attributes
from tests.compose_files import (
    DOCKERFILE,
    ISOLATOR_COMMANDS,
    POSTGRES_PORT,
    REQUIRED_ENV,
    ROOT,
    TEMPORAL_FRONTEND_PORT,
    TEMPORAL_UI_PORT,
    VARIABLE,
    Service,
    api_listen_port,
    command_words,
    depends_on,
    environment,
    interpolate,
    isolator,
    isolator_services,
    load_compose,
    mounts,
    option_values,
    postgres_name,
    published_ports,
    script,
    search_attribute_invocations,
    search_attribute_step,
    secret_variables,
    settings_variables,
    temporal_name,
    ui_name,
)


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return load_compose()


@pytest.fixture(scope="module")
def services(compose: dict[str, Any]) -> dict[str, Service]:
    return compose["services"]


# ---- docker-compose.yml ------------------------------------------------------------------------


def test_the_required_services_exist(services: dict[str, Service]) -> None:
    postgres_name(services)
    temporal_name(services)
    ui_name(services)
    search_attribute_step(services)
    assert set(isolator_services(services)) == set(ISOLATOR_COMMANDS), "each of migrate, worker, api needs a service"
    for name, service in isolator_services(services).values():
        build = service["build"]
        context = build if isinstance(build, str) else build.get("context", ".")
        assert (ROOT / context / "Dockerfile").resolve() == DOCKERFILE, f"{name} is not built from this Dockerfile"


def test_isolator_services_set_only_variables_that_settings_reads(services: dict[str, Service]) -> None:
    known = settings_variables()
    assert REQUIRED_ENV <= known, "the variables were not derived from Settings"
    for name, service in isolator_services(services).values():
        unknown = set(environment(service)) - known
        assert not unknown, f"{name} sets {sorted(unknown)}, which isolator/settings.py never reads"


def test_production_commands_get_database_and_temporal(services: dict[str, Service]) -> None:
    for name, service in isolator_services(services).values():
        env = environment(service)
        missing = {key for key in REQUIRED_ENV if not env.get(key)}
        assert not missing, f"{name} lacks {sorted(missing)}"


def test_database_url_points_at_the_postgres_service(services: dict[str, Service]) -> None:
    postgres = postgres_name(services)
    postgres_env = environment(services[postgres])
    for name, service in isolator_services(services).values():
        raw = environment(service).get("DATABASE_URL")
        assert raw, f"{name} has no DATABASE_URL"
        url = urlsplit(interpolate(raw, {"POSTGRES_PASSWORD": "pw"}))
        assert url.scheme in {"postgresql", "postgres"}, f"{name}: {raw}"
        assert url.hostname == postgres, f"{name}: DATABASE_URL does not name the `{postgres}` service: {raw}"
        assert url.port == POSTGRES_PORT, f"{name}: DATABASE_URL port is not {POSTGRES_PORT}: {raw}"
        assert url.username == postgres_env.get("POSTGRES_USER", "postgres"), f"{name}: {raw}"
        assert url.path.lstrip("/") == postgres_env.get("POSTGRES_DB", url.username), f"{name}: {raw}"
        password = urlsplit(raw).password or ""
        assert VARIABLE.fullmatch(password), f"{name}: DATABASE_URL holds a literal password"


def test_temporal_address_points_at_the_temporal_service(services: dict[str, Service]) -> None:
    temporal = temporal_name(services)
    port = environment(services[temporal]).get("FRONTEND_GRPC_PORT") or TEMPORAL_FRONTEND_PORT
    expected = f"{temporal}:{port}"
    for name, service in isolator_services(services).values():
        address = interpolate(environment(service).get("TEMPORAL_ADDRESS") or "", {})
        assert address == expected, f"{name}: TEMPORAL_ADDRESS is {address!r}, not {expected!r}"
    assert environment(services[ui_name(services)]).get("TEMPORAL_ADDRESS") == expected, "the UI shows another server"
    for words in search_attribute_invocations(services[search_attribute_step(services)]):
        assert option_values(words, "--address") == [expected], "the search attributes go to another server"


def test_published_ports_match_what_the_processes_listen_on(services: dict[str, Service]) -> None:
    api = isolator(services, "api")
    port = api_listen_port(api)
    pairs = [(published, target) for _, published, target in published_ports(api)]
    assert pairs == [(str(port), port)], f"`isolator api` listens on {port}; the file publishes {pairs}"
    probe = " ".join(command_words(api.get("healthcheck", {}), "test"))
    assert re.search(rf":{port}/(readyz|healthz)\b", probe), f"the API healthcheck does not probe port {port}"

    temporal = services[temporal_name(services)]
    frontend = int(environment(temporal).get("FRONTEND_GRPC_PORT") or TEMPORAL_FRONTEND_PORT)
    pairs = [(published, target) for _, published, target in published_ports(temporal)]
    assert (str(frontend), frontend) in pairs, f"Temporal listens on {frontend}; the file publishes {pairs}"

    ui = services[ui_name(services)]
    ui_port = int(environment(ui).get("TEMPORAL_UI_PORT") or TEMPORAL_UI_PORT)
    pairs = [(published, target) for _, published, target in published_ports(ui)]
    assert (str(ui_port), ui_port) in pairs, f"the UI listens on {ui_port}; the file publishes {pairs}"


def test_admin_tools_registers_exactly_the_project_search_attributes(services: dict[str, Service]) -> None:
    expected = {
        key.name: IndexedValueType.Name(key.indexed_value_type).removeprefix("INDEXED_VALUE_TYPE_").replace("_", "")
        for key in search_attributes.ALL
    }
    step = services[search_attribute_step(services)]
    names: list[str] = []
    types: list[str] = []
    for words in search_attribute_invocations(step):
        names += option_values(words, "--name")
        types += option_values(words, "--type")
    assert len(names) == len(types), "every --name needs its --type"
    assert sorted(names) == sorted(expected), "the names differ from isolator/contracts/search_attributes.ALL"
    for name, kind in zip(names, types):
        assert kind.lower() == expected[name].lower(), f"{name} is registered as {kind}, not {expected[name]}"


def test_search_attributes_go_to_the_namespace_isolator_uses(services: dict[str, Service]) -> None:
    namespaces = {environment(service)["TEMPORAL_NAMESPACE"] for _, service in isolator_services(services).values()}
    assert len(namespaces) == 1, f"the isolator services disagree on TEMPORAL_NAMESPACE: {namespaces}"
    step = services[search_attribute_step(services)]
    for words in search_attribute_invocations(step):
        assert option_values(words, "--namespace") == list(namespaces), "search attributes go to another namespace"
    created = [shlex.split(line) for line in script(step).splitlines() if "namespace create" in line]
    assert created, "the step does not create the namespace"
    assert all(option_values(words, "--namespace") == list(namespaces) for words in created), "another namespace"


def test_worker_workspace_and_worktrees_lie_on_one_named_volume(
    compose: dict[str, Any], services: dict[str, Service]
) -> None:
    worker = isolator(services, "worker")
    env = environment(worker)
    workspace, worktrees = PurePosixPath(env.get("WORKSPACE_PATH") or ""), PurePosixPath(env.get("WORKTREE_BASE") or "")
    assert workspace.is_absolute() and worktrees.is_absolute(), "WORKSPACE_PATH and WORKTREE_BASE must be set"
    assert not workspace.is_relative_to(worktrees) and not worktrees.is_relative_to(workspace), (
        "WORKSPACE_PATH and WORKTREE_BASE must be two separate trees"
    )

    def mount_of(path: PurePosixPath) -> tuple[str | None, str, bool]:
        holding = [mount for mount in mounts(worker) if path.is_relative_to(mount[1])]
        assert holding, f"{path} is on no volume of the worker: it would be lost with the container"
        return max(holding, key=lambda mount: len(PurePosixPath(mount[1]).parts))

    workspace_mount, worktrees_mount = mount_of(workspace), mount_of(worktrees)
    assert workspace_mount == worktrees_mount, "the checkouts and the worktrees are on different mounts"
    source, _, read_only = workspace_mount
    assert source in (compose.get("volumes") or {}), f"{source!r} is not a named volume of this file"
    assert not read_only, "the volume is mounted read-only"


def test_worker_host_is_fixed_and_the_api_registers_codebases_on_it(services: dict[str, Service]) -> None:
    host = environment(isolator(services, "worker")).get("ISOLATOR_HOST")
    assert host and "$" not in host, "the worker's host (and its task queue isolation@host) must be fixed"
    # The API's ISOLATOR_HOST is the default host of new codebases: without it, the API container's
    # random host name would route their git work to a queue no worker listens on.
    assert environment(isolator(services, "api")).get("ISOLATOR_HOST") == host, f"the API's ISOLATOR_HOST is not {host}"


def test_services_start_in_order(services: dict[str, Service]) -> None:
    migrate_name = isolator_services(services)["migrate"][0]
    step = search_attribute_step(services)
    assert depends_on(isolator(services, "migrate")).get(postgres_name(services)) == "service_healthy", (
        "migrate may start before PostgreSQL is ready"
    )
    for command in ("api", "worker"):
        needs = depends_on(isolator(services, command))
        assert needs.get(migrate_name) == "service_completed_successfully", f"{command} may start before migrate ends"
        assert needs.get(step) == "service_completed_successfully", f"{command} may start before the search attributes"
    assert depends_on(services[step]).get(temporal_name(services)) == "service_healthy", f"{step} may run too early"
    assert temporal_name(services) in depends_on(services[ui_name(services)]), "the UI may start before Temporal"


def test_every_awaited_condition_can_be_met(services: dict[str, Service]) -> None:
    for name, service in services.items():
        for target, condition in depends_on(service).items():
            assert target in services, f"{name} depends on an unknown service {target}"
            if condition == "service_healthy":
                check = services[target].get("healthcheck") or {}
                has_check = check.get("test") and not check.get("disable")
                assert has_check, f"{target} has no healthcheck ({name} waits for it)"
            if condition == "service_completed_successfully":
                restart = services[target].get("restart", "no")
                assert restart == "no", f"{target} restarts ({restart!r}), so it never completes ({name} waits for it)"


def test_pulled_images_are_pinned(services: dict[str, Service]) -> None:
    tags = {}
    for name, service in services.items():
        if "build" in service:
            continue
        image = str(service["image"]).split("@")[0]
        repository, _, tag = image.rpartition(":")
        assert repository and "/" not in tag, f"{name}: {image} has no tag"
        # a version, with Prometheus's leading `v` (prom/prometheus:v3.5.0)
        assert re.fullmatch(r"v?\d+\.\d+(\.\d+)?([.-][\w.-]+)?", tag), f"{name}: {image} is not pinned to a version"
        tags[repository] = tag
    # The schema tool must match the server it prepares the database for.
    assert tags.get("temporalio/admin-tools") == tags.get("temporalio/server"), f"admin-tools and server differ: {tags}"


def test_no_secret_is_written_in_the_file(services: dict[str, Service]) -> None:
    secrets = secret_variables()
    assert {"API_TOKEN", "GITHUB_WEBHOOK_SECRET"} <= secrets, "the secrets were not derived from Settings"
    for name, service in isolator_services(services).values():
        for key, value in environment(service).items():
            if key in secrets and value is not None:
                match = VARIABLE.fullmatch(value)
                assert match and match["name"] == key and not (match["op"] or "").endswith("-"), (
                    f"{name}: {key} must come from the environment, not from this file"
                )
    for name, service in services.items():
        for key, value in environment(service).items():
            if re.search(r"PASSWORD|PWD|SECRET|TOKEN", key) and value is not None:
                assert VARIABLE.fullmatch(value), f"{name}: {key} is written in the file"


def test_optional_settings_are_never_set_to_an_empty_string(services: dict[str, Service]) -> None:
    # `${API_TOKEN:-}` would set API_TOKEN="" when unset, and Settings reads "" as a value: an empty
    # API token to compare against, an empty GitHub token to send. Unset must stay unset (`API_TOKEN:`).
    for name, service in isolator_services(services).values():
        for key, value in environment(service).items():
            if value is None:
                continue
            assert value != "", f"{name}: {key} is set to an empty string"
            for match in VARIABLE.finditer(value):
                if (match["op"] or "").endswith("-"):
                    assert match["arg"], f"{name}: {key} becomes an empty string when {match['name']} is unset"

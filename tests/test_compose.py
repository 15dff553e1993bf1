"""docker-compose.yml and the Dockerfile are wired the way the code reads its configuration.

No Docker engine is needed: the compose file is parsed as YAML and checked against the code it
runs: the variables `isolator.settings.Settings` reads, the port `isolator api` listens on, the
search attributes in `workflows.search_attributes.ALL`.
"""

from __future__ import annotations

import inspect
import re
import shlex
import tomllib
from pathlib import Path, PurePosixPath
from typing import Any, get_args
from urllib.parse import urlsplit

import pytest
import yaml
from pydantic import AliasChoices, AliasPath, SecretStr
from temporalio.api.enums.v1 import IndexedValueType

from isolator.settings import Settings
from workers import cli
from workflows import search_attributes

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "Dockerfile"
PYPROJECT = ROOT / "pyproject.toml"

ISOLATOR_COMMANDS = ("migrate", "worker", "api")
# What `isolator migrate|worker|api` need to reach PostgreSQL and Temporal (README, Production).
REQUIRED_ENV = {"DATABASE_URL", "TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE"}
POSTGRES_PORT = 5432  # the postgres image's port unless PGPORT says otherwise
TEMPORAL_FRONTEND_PORT = 7233  # temporalio/server's frontend unless FRONTEND_GRPC_PORT says otherwise
TEMPORAL_UI_PORT = 8080  # temporalio/ui's port unless TEMPORAL_UI_PORT says otherwise

Service = dict[str, Any]


# ---- reading the files -------------------------------------------------------------------------


class _ComposeLoader(yaml.SafeLoader):
    """PyYAML keeps the last of two equal keys; Compose refuses the file. So does this loader."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # `<<: *anchor`: explicit keys may override merged ones
            key = self.construct_object(key_node, deep=True)
            if key in seen:
                raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep)


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.load(COMPOSE.read_text(), Loader=_ComposeLoader)


@pytest.fixture(scope="module")
def services(compose: dict[str, Any]) -> dict[str, Service]:
    return compose["services"]


def command_words(service: Service, key: str = "command") -> list[str]:
    value = service.get(key) or []
    return shlex.split(value) if isinstance(value, str) else [str(word) for word in value]


def isolator_services(services: dict[str, Service]) -> dict[str, tuple[str, Service]]:
    """`isolator <command>` -> (compose name, service), for the services built from this repository."""
    found: dict[str, tuple[str, Service]] = {}
    for name, service in services.items():
        words = command_words(service)
        if "build" in service and words and words[0] in ISOLATOR_COMMANDS:
            assert words[0] not in found, f"`isolator {words[0]}` runs in both {found[words[0]][0]} and {name}"
            found[words[0]] = (name, service)
    return found


def isolator(services: dict[str, Service], command: str) -> Service:
    return isolator_services(services)[command][1]


def services_with_image(services: dict[str, Service], *prefixes: str) -> list[str]:
    return [name for name, service in services.items() if str(service.get("image", "")).startswith(prefixes)]


def only(names: list[str], what: str) -> str:
    assert len(names) == 1, f"expected one {what}, found {names}"
    return names[0]


def postgres_name(services: dict[str, Service]) -> str:
    return only(services_with_image(services, "postgres:"), "PostgreSQL service")


def temporal_name(services: dict[str, Service]) -> str:
    return only(services_with_image(services, "temporalio/server:", "temporalio/auto-setup:"), "Temporal server")


def ui_name(services: dict[str, Service]) -> str:
    return only(services_with_image(services, "temporalio/ui:"), "Temporal UI")


def script(service: Service) -> str:
    """The shell text a service runs (entrypoint and command), with line continuations joined."""
    text = "\n".join(command_words(service, "entrypoint") + command_words(service))
    return text.replace("\\\n", " ")


def search_attribute_step(services: dict[str, Service]) -> str:
    steps = [
        name for name in services_with_image(services, "temporalio/admin-tools:")
        if "search-attribute create" in script(services[name])
    ]
    return only(steps, "admin-tools step creating the search attributes")


def search_attribute_invocations(service: Service) -> list[list[str]]:
    return [shlex.split(line) for line in script(service).splitlines() if "search-attribute create" in line]


def option_values(words: list[str], option: str) -> list[str]:
    values = []
    for index, word in enumerate(words):
        if word == option and index + 1 < len(words):
            values.append(words[index + 1])
        elif word.startswith(option + "="):
            values.append(word.split("=", 1)[1])
    return values


def environment(service: Service) -> dict[str, str | None]:
    """The service's environment; None is a variable passed through from the shell or `.env`."""
    value = service.get("environment") or {}
    if isinstance(value, list):
        pairs = [item.split("=", 1) if "=" in item else [item, None] for item in value]
        return {key: val for key, val in pairs}
    return {key: None if val is None else str(val) for key, val in value.items()}


_VARIABLE = re.compile(r"\$\{(?P<name>\w+)(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\}")


def interpolate(text: str, env: dict[str, str]) -> str:
    """Compose's `${VAR}`, `${VAR:-default}` and `${VAR:?error}`, resolved against `env`."""

    def resolve(match: re.Match[str]) -> str:
        value, op = env.get(match["name"]), match["op"] or ""
        missing = value is None or (op.startswith(":") and value == "")
        if missing and op.endswith("-"):
            return match["arg"]
        if missing and op.endswith("?"):
            raise KeyError(f"{match['name']} is required: {match['arg']}")
        return value or ""

    return _VARIABLE.sub(resolve, text).replace("$$", "$")


def published_ports(service: Service) -> list[tuple[str, str, int]]:
    """(host address, published port, container port) of each published port."""
    result = []
    for port in service.get("ports") or []:
        if isinstance(port, dict):
            result.append((str(port.get("host_ip", "")), str(port.get("published", "")), int(port["target"])))
            continue
        parts = str(port).split("/")[0].rsplit(":", 2)  # rsplit: the address may be `${VAR:-127.0.0.1}`
        parts = [""] * (3 - len(parts)) + parts
        result.append((parts[0], parts[1], int(parts[2])))
    return result


def mounts(service: Service) -> list[tuple[str | None, str, bool]]:
    """(source, target, read only) of each mount; source None for an anonymous volume."""
    result = []
    for volume in service.get("volumes") or []:
        if isinstance(volume, dict):
            source = volume.get("source") if volume.get("type", "volume") == "volume" else "/bind"
            result.append((source, volume["target"], bool(volume.get("read_only", False))))
            continue
        parts = str(volume).split(":")
        if len(parts) == 1:
            result.append((None, parts[0], False))
        else:
            options = parts[2].split(",") if len(parts) > 2 else []
            result.append((parts[0], parts[1], "ro" in options))
    return result


def depends_on(service: Service) -> dict[str, str]:
    value = service.get("depends_on") or {}
    if isinstance(value, list):
        return {name: "service_started" for name in value}
    return {name: (spec or {}).get("condition", "service_started") for name, spec in value.items()}


def settings_variables() -> set[str]:
    """Every environment variable Settings reads, from its fields' validation aliases."""
    prefix = str(Settings.model_config.get("env_prefix") or "")
    names: set[str] = set()
    for field_name, field in Settings.model_fields.items():
        alias = field.validation_alias
        if alias is None:
            names.add(prefix + field_name)
        elif isinstance(alias, str):
            names.add(alias)
        elif isinstance(alias, AliasPath):
            names.add(str(alias.path[0]))
        elif isinstance(alias, AliasChoices):
            for choice in alias.choices:
                names.add(choice if isinstance(choice, str) else str(choice.path[0]))
    return {name.upper() for name in names}


def secret_variables() -> set[str]:
    """The variables of the SecretStr settings: tokens, webhook secrets."""
    secret = {
        name for name, field in Settings.model_fields.items()
        if field.annotation is SecretStr or SecretStr in get_args(field.annotation)
    }
    return {Settings.model_fields[name].validation_alias.choices[0].upper() for name in secret}


def api_listen_port(service: Service) -> int:
    ports = option_values(command_words(service), "--port")
    if ports:
        return int(ports[-1])
    return int(inspect.signature(cli.api).parameters["port"].default.default)  # the typer option's default


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
        assert _VARIABLE.fullmatch(password), f"{name}: DATABASE_URL holds a literal password"


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
    assert sorted(names) == sorted(expected), "the names differ from workflows/search_attributes.ALL"
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
        assert re.fullmatch(r"\d+\.\d+(\.\d+)?([.-][\w.-]+)?", tag), f"{name}: {image} is not pinned to a version"
        tags[repository] = tag
    # The schema tool must match the server it prepares the database for.
    assert tags.get("temporalio/admin-tools") == tags.get("temporalio/server"), f"admin-tools and server differ: {tags}"


def test_no_secret_is_written_in_the_file(services: dict[str, Service]) -> None:
    secrets = secret_variables()
    assert {"API_TOKEN", "GITHUB_WEBHOOK_SECRET"} <= secrets, "the secrets were not derived from Settings"
    for name, service in isolator_services(services).values():
        for key, value in environment(service).items():
            if key in secrets and value is not None:
                match = _VARIABLE.fullmatch(value)
                assert match and match["name"] == key and not (match["op"] or "").endswith("-"), (
                    f"{name}: {key} must come from the environment, not from this file"
                )
    for name, service in services.items():
        for key, value in environment(service).items():
            if re.search(r"PASSWORD|PWD|SECRET|TOKEN", key) and value is not None:
                assert _VARIABLE.fullmatch(value), f"{name}: {key} is written in the file"


def test_optional_settings_are_never_set_to_an_empty_string(services: dict[str, Service]) -> None:
    # `${API_TOKEN:-}` would set API_TOKEN="" when unset, and Settings reads "" as a value: an empty
    # API token to compare against, an empty GitHub token to send. Unset must stay unset (`API_TOKEN:`).
    for name, service in isolator_services(services).values():
        for key, value in environment(service).items():
            if value is None:
                continue
            assert value != "", f"{name}: {key} is set to an empty string"
            for match in _VARIABLE.finditer(value):
                if (match["op"] or "").endswith("-"):
                    assert match["arg"], f"{name}: {key} becomes an empty string when {match['name']} is unset"


# ---- Dockerfile --------------------------------------------------------------------------------


def dockerfile_instructions() -> list[tuple[str, str]]:
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    lines = [line.strip() for line in text.splitlines()]
    return [
        (line.split(None, 1)[0].upper(), line.split(None, 1)[1] if " " in line else "")
        for line in lines if line and not line.startswith("#")
    ]


def test_dockerfile_builds_the_service_on_python_slim_with_git() -> None:
    instructions = dockerfile_instructions()
    bases = [args for instruction, args in instructions if instruction == "FROM"]
    assert bases and bases[-1].split()[0].startswith("python:3.11-slim"), f"not based on python:3.11-slim: {bases}"
    runs = [args for instruction, args in instructions if instruction == "RUN"]
    assert any(re.search(r"apt-get install\b[^&;|]*\sgit(\s|$)", run) for run in runs), "git is not installed"
    assert any(re.search(r"pip install\b[^&;|]*\s\.(\s|$)", run) for run in runs), "the project is not installed"
    assert not re.search(r"\b(curl|wget)\b", DOCKERFILE.read_text()), "nothing is downloaded outside pip and apt"


def test_dockerfile_copies_everything_the_package_build_needs() -> None:
    project = tomllib.loads(PYPROJECT.read_text())
    needed = {"pyproject.toml", project["project"]["readme"]}
    needed |= {pattern.rstrip("*") for pattern in project["tool"]["setuptools"]["packages"]["find"]["include"]}
    copied: set[str] = set()
    for instruction, args in dockerfile_instructions():
        if instruction in {"COPY", "ADD"}:
            words = [word for word in shlex.split(args) if not word.startswith("--")]
            copied |= {word.rstrip("/") for word in words[:-1]}
    assert "." in copied or needed <= copied, f"not copied into the image: {sorted(needed - copied)}"


def test_dockerfile_runs_isolator_as_a_non_root_user() -> None:
    instructions = dockerfile_instructions()
    users = [args.split(":")[0].strip() for instruction, args in instructions if instruction == "USER"]
    assert users and users[-1] not in {"root", "0"}, "the container runs as root"
    entrypoints = [args for instruction, args in instructions if instruction == "ENTRYPOINT"]
    assert entrypoints and yaml.safe_load(entrypoints[-1]) == ["isolator"], "the entrypoint is not `isolator`"

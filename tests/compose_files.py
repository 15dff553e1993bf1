"""Reading docker-compose.yml and the code it must agree with, for tests/test_compose.py.

Plain functions over the parsed YAML: which service runs what, its environment with `${VAR}`
interpolation, its ports, mounts and dependencies, and what `isolator.settings.Settings` reads.
"""

from __future__ import annotations

import inspect
import re
import shlex
from pathlib import Path
from typing import Any, get_args

import yaml
from pydantic import AliasChoices, AliasPath, SecretStr

from isolator.settings import Settings
from workers import cli

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "Dockerfile"
PYPROJECT = ROOT / "pyproject.toml"

ISOLATOR_COMMANDS = ("migrate", "worker", "api")
# What `isolator migrate|worker|api` need to reach PostgreSQL and Temporal (docs/operations.md, Production).
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



def load_compose() -> dict[str, Any]:
    return yaml.load(COMPOSE.read_text(), Loader=_ComposeLoader)


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


VARIABLE = re.compile(r"\$\{(?P<name>\w+)(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\}")


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

    return VARIABLE.sub(resolve, text).replace("$$", "$")


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


"""Reading /metrics in the tests: scraped through the API (or a worker's port) and parsed with
prometheus_client's own parser, into {(sample name, labels): value}; and the metric names that the Grafana
dashboard, the alerts and docs/observability.md use."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Iterable

import httpx
import yaml
from prometheus_client.parser import text_string_to_metric_families

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def parsed(text: str) -> Samples:
    return {(sample.name, frozenset(sample.labels.items())): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


async def scrape(api: httpx.AsyncClient, **headers: str) -> Samples:
    response = await api.get("/metrics", headers=headers)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain"), response.headers
    return parsed(response.text)


def value(samples: Samples, name: str, **labels: str) -> float:
    """The sum of `name`'s samples whose labels include `labels` (0 when none)."""
    wanted = set(labels.items())
    return sum(found for (sample, its), found in samples.items() if sample == name and wanted <= its)


def moved(before: Samples, after: Samples, name: str, **labels: str) -> float:
    return value(after, name, **labels) - value(before, name, **labels)


def label_values(samples: Iterable[tuple[str, frozenset[tuple[str, str]]]]) -> set[str]:
    return {label_value for _, labels in samples for _, label_value in labels}


ROOT = Path(__file__).resolve().parent.parent
DASHBOARD = ROOT / "docs" / "grafana-dashboard.json"
ALERTS = ROOT / "docs" / "prometheus-alerts.yml"
OBSERVABILITY = ROOT / "docs" / "observability.md"


def dashboard_expressions() -> list[str]:
    panels = json.loads(DASHBOARD.read_text())["panels"]
    return [target["expr"] for panel in panels for target in panel.get("targets", [])]


def alert_expressions() -> list[str]:
    return [rule["expr"] for group in yaml.safe_load(ALERTS.read_text())["groups"] for rule in group["rules"]]


def names_in(expressions: Iterable[str], prefix: str) -> set[str]:
    return {name for expression in expressions for name in re.findall(rf"\b{prefix}[a-z0-9_]+", expression)}


def sample_names(text: str) -> set[str]:
    """Every sample name the exposition `text` can carry, its families' samples or not (a family with no
    label values yet has none): a counter's `_total`, a histogram's `_bucket`, `_count` and `_sum`."""
    suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum"), "gauge": ("",)}
    names = set()
    for family in text_string_to_metric_families(text):
        names.update(family.name + suffix for suffix in suffixes.get(family.type, ("",)))
        names.update(sample.name for sample in family.samples)
    return names

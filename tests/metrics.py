"""Reading /metrics in the tests: scraped through the API (or a worker's port) and parsed with
prometheus_client's own parser, into {(sample name, labels): value}."""

from __future__ import annotations

from typing import Iterable

import httpx
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

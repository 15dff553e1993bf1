"""docker-compose.yml's `observability` profile (docs/observability.md), read as YAML as Compose would: each
image named and pinned, Prometheus scraping the api's and the worker's /metrics with METRICS_TOKEN from a
file, the alerts loaded, Grafana with the dashboard of docs/, an OpenTelemetry collector passing traces to
Jaeger; the api and the worker open their /metrics to it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import SecretStr

from isolator.settings import Settings
from tests.compose_files import (
    ROOT,
    Service,
    api_listen_port,
    environment,
    interpolate,
    isolator,
    load_compose,
)
from workers.metrics_server import listen_address

IMAGES = {"prometheus": "prom/prometheus:", "grafana": "grafana/grafana:",
          "otel-collector": "otel/opentelemetry-collector-contrib:", "jaeger": "jaegertracing/jaeger:"}


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return load_compose()


def profile(compose: dict[str, Any]) -> dict[str, Service]:
    return {name: service for name, service in compose["services"].items()
            if "observability" in (service.get("profiles") or [])}


def config(compose: dict[str, Any], service: Service, target: str) -> str:
    """The text a service's config mounted at `target` holds (inline, or a file of the repository)."""
    [source] = [item["source"] for item in service.get("configs", []) if item["target"] == target]
    entry = compose["configs"][source]
    return entry["content"] if "content" in entry else (ROOT / entry["file"]).read_text()


def test_the_profile_runs_prometheus_grafana_a_collector_and_jaeger(compose: dict[str, Any]) -> None:
    services = profile(compose)
    assert set(services) == set(IMAGES)
    for name, prefix in IMAGES.items():
        assert str(services[name]["image"]).startswith(prefix), services[name]["image"]
    for name in ("api", "worker", "postgres", "temporal"):
        assert not compose["services"][name].get("profiles"), f"{name} runs without the profile"


def test_prometheus_scrapes_the_api_and_the_worker_with_the_metrics_token(compose: dict[str, Any]) -> None:
    prometheus = profile(compose)["prometheus"]
    scraping = yaml.safe_load(interpolate(config(compose, prometheus, "/etc/prometheus/prometheus.yml"), {}))
    targets = {target: job for job in scraping["scrape_configs"] for group in job["static_configs"]
               for target in group["targets"]}
    api, worker = isolator(compose["services"], "api"), isolator(compose["services"], "worker")
    worker_port = int(environment(worker)["METRICS_PORT"])
    assert set(targets) == {f"api:{api_listen_port(api)}", f"worker:{worker_port}"}
    [secret] = prometheus["secrets"]
    assert compose["secrets"][secret] == {"environment": "METRICS_TOKEN"}, "the token comes from the environment"
    for job in targets.values():
        assert job.get("metrics_path", "/metrics") == "/metrics"
        assert job["authorization"] == {"credentials_file": f"/run/secrets/{secret}"}
    # the alerts of docs/ are the rules it loads
    [rules] = scraping["rule_files"]
    assert config(compose, prometheus, rules) == (ROOT / "docs" / "prometheus-alerts.yml").read_text()


def test_the_api_and_the_worker_open_their_metrics_to_it(compose: dict[str, Any], settings: Settings) -> None:
    api, worker = isolator(compose["services"], "api"), isolator(compose["services"], "worker")
    for service in (api, worker):
        assert "METRICS_TOKEN" in environment(service) and environment(service)["METRICS_TOKEN"] is None
    worker_env = environment(worker)
    # with API_TOKEN, the worker's /metrics listens beyond its container, for the token only
    assert worker_env["API_TOKEN"] is not None and worker_env["API_TOKEN"].startswith("${API_TOKEN:?")
    assert listen_address(settings.model_copy(update={"api_token": SecretStr("set")})) == "0.0.0.0"
    # Prometheus names them `api` and `worker`: names they answer to (api/hosts.py), whatever ALLOWED_HOSTS adds
    for name, service in (("api", api), ("worker", worker)):
        for given in ({}, {"ALLOWED_HOSTS": "isolator.example.com"}):
            assert name in interpolate(environment(service)["ALLOWED_HOSTS"] or "", given).split(",")


def test_grafana_shows_the_dashboard_of_docs_from_prometheus(compose: dict[str, Any]) -> None:
    grafana = profile(compose)["grafana"]
    sources = yaml.safe_load(config(compose, grafana, "/etc/grafana/provisioning/datasources/prometheus.yml"))
    [source] = sources["datasources"]
    assert source["url"] == "http://prometheus:9090" and source["type"] == "prometheus"
    assert source["uid"] in (ROOT / "docs" / "grafana-dashboard.json").read_text()
    providers = yaml.safe_load(config(compose, grafana, "/etc/grafana/provisioning/dashboards/isolator.yml"))
    folder = Path(providers["providers"][0]["options"]["path"])
    dashboard = config(compose, grafana, str(folder / "isolator.json"))
    assert dashboard == (ROOT / "docs" / "grafana-dashboard.json").read_text()
    assert grafana["secrets"] == ["grafana_admin_password"]
    assert compose["secrets"]["grafana_admin_password"] == {"environment": "GRAFANA_ADMIN_PASSWORD"}


def test_the_collector_passes_traces_to_jaeger(compose: dict[str, Any]) -> None:
    collector = profile(compose)["otel-collector"]
    pipeline = yaml.safe_load(config(compose, collector, "/etc/otelcol/config.yml"))
    assert set(pipeline["receivers"]["otlp"]["protocols"]) == {"grpc", "http"}
    [exporter] = pipeline["service"]["pipelines"]["traces"]["exporters"]
    assert pipeline["exporters"][exporter]["endpoint"] == "jaeger:4317"
    published = {str(port).rsplit(":", 1)[-1] for port in collector["ports"]}
    assert published == {"4317", "4318"}

"""Prometheus metrics of one gateway, in a registry of its own (tests run several gateways)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter(
            "palaestra_http_requests_total", "HTTP requests by status class", ["status"], registry=r
        )
        self.sessions_created = Counter(
            "palaestra_sessions_created_total", "Sessions created", ["env"], registry=r
        )
        self.sessions_active = Gauge("palaestra_sessions_active", "Live sessions", registry=r)
        self.steps = Counter("palaestra_steps_total", "Env steps", ["env"], registry=r)
        self.step_seconds = Histogram(
            "palaestra_step_seconds",
            "Step latency at the gateway, worker included",
            buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30),
            registry=r,
        )
        self.errors = Counter(
            "palaestra_session_errors_total", "Sessions failed, by error", ["type"], registry=r
        )
        self.worker_restarts = Counter(
            "palaestra_worker_restarts_total",
            "Workers that died and were replaced, by backend",
            ["backend"],
            registry=r,
        )
        self.workers_alive = Gauge(
            "palaestra_workers_alive", "Workers running, by backend", ["backend"], registry=r
        )

    def render(self) -> bytes:
        return generate_latest(self.registry)

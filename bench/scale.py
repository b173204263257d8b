"""Backends side by side: the same client code on local worker processes and on Ray actors.

Both gateways host two workers and step the benchmark counter (``palaestra-bench/Overhead-v0``,
so only the platform is measured). For each backend: session start (create + first reset),
a WebSocket step, and pool throughput (``RemoteVectorEnv`` of 1, 2, 4 and 8 sessions stepped as
a batch). The Ray side runs on a real two-node Ray cluster on this machine (both nodes on
127.0.0.1), workers spread one per node. Ratios are against the local backend, measured in the
same run.

Run: ``palaestra bench scale`` or ``python -m palaestra.bench.scale``.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.table import Table

from palaestra.bench.fixtures import ENV_ID
from palaestra.client import RemoteEnv, RemoteVectorEnv
from palaestra.server.runner import gateway_thread
from palaestra.server.settings import Settings

console = Console()
OPTIONS = {"max_steps": 10**9}
POOL_SIZES = (1, 2, 4, 8)


@contextmanager
def ray_gateway() -> Iterator[str]:
    from palaestra.workers.ray import loopback_only

    loopback_only()
    from ray.cluster_utils import Cluster

    head = {"num_cpus": 2, "node_ip_address": "127.0.0.1", "include_dashboard": False}
    cluster = Cluster(initialize_head=True, head_node_args=head)
    cluster.add_node(num_cpus=2, node_ip_address="127.0.0.1")
    settings = Settings(
        backend="ray", ray_address=cluster.address, workers=2, record=False, ray_worker_cpus=0.5
    )
    try:
        with gateway_thread(settings) as url:
            yield url
    finally:
        for node in list(cluster.worker_nodes):
            cluster.remove_node(node)
        cluster.remove_node(cluster.head_node)


def measure(url: str, starts: int, steps: int, batches: int) -> dict[str, Any]:
    start, step = [], []
    for _ in range(starts):
        t = time.perf_counter()
        env = RemoteEnv(ENV_ID, base_url=url, transport="ws", options=OPTIONS)
        env.reset(seed=0)
        start.append(time.perf_counter() - t)
        env.close()
    env = RemoteEnv(ENV_ID, base_url=url, transport="ws", options=OPTIONS)
    env.reset(seed=0)
    for _ in range(steps):
        t = time.perf_counter()
        env.step("add(1)")
        step.append(time.perf_counter() - t)
    env.close()
    throughput = {}
    for size in POOL_SIZES:
        pool = RemoteVectorEnv(ENV_ID, size, base_url=url, options=OPTIONS)
        pool.reset(seed=0)
        t = time.perf_counter()
        for _ in range(batches):
            pool.step(["add(1)"] * size)
        throughput[size] = size * batches / (time.perf_counter() - t)
        pool.close()
    return {"start": start, "step": step, "throughput": throughput}


def main(starts: int = 20, steps: int = 500, batches: int = 100) -> dict[str, Any]:
    results = {}
    with gateway_thread(Settings(workers=2, record=False)) as url:
        results["local"] = measure(url, starts, steps, batches)
    with ray_gateway() as url:
        results["ray"] = measure(url, starts, steps, batches)

    def p50(xs: list[float]) -> float:
        return statistics.median(xs) * 1e3

    local, ray = results["local"], results["ray"]
    table = Table(title="Backends: 2 workers each, the counter env, p50 (one 2-core machine)")
    for col in ("measure", "local processes", "Ray actors (2 nodes)", "Ray / local"):
        table.add_column(col, justify="right")
    for key, label in (("start", "session start (create + reset) ms"), ("step", "step (WS) ms")):
        a, b = p50(local[key]), p50(ray[key])
        table.add_row(label, f"{a:.2f}", f"{b:.2f}", f"{b / a:.2f}x")
    for size in POOL_SIZES:
        a, b = local["throughput"][size], ray["throughput"][size]
        table.add_row(f"pool of {size}, steps/s", f"{a:,.0f}", f"{b:,.0f}", f"{b / a:.2f}x")
    console.print(table)
    return results


if __name__ == "__main__":
    main()

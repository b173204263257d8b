"""Backends side by side: the same client code on local processes, Docker containers, Ray actors.

Each gateway hosts two workers and step the benchmark counter (``palaestra-bench/Overhead-v0``,
so only the platform is measured). For each backend: session start (create + first reset),
a WebSocket step, and pool throughput (``RemoteVectorEnv`` of 1, 2, 4 and 8 sessions stepped as
a batch). The Docker side runs palaestra/core containers on a private ``dockerd
--bridge=none`` (built by docker/build.sh if missing); the Ray side runs on a real two-node Ray
cluster on this machine (both nodes on 127.0.0.1), workers spread one per node. Ratios are
against the local backend, measured in the same run.

Then routing at scale (:func:`measure_routing`): one gateway process with four local workers
holds N live sessions of the counter for N up to 20,000, and a few probe sessions are stepped at
every N (WebSocket, and REST, whose every call looks the session up by id), on the way up and
again on the way down as the fillers are closed, so a change in the machine's load shows. A
step's cost must not grow with the sessions the gateway holds: the ratio to N=100 should stay
near 1.0x. Filler sessions are made 512 at a time with ``POST /v1/pools`` and reset, so they are
live envs in an episode, each with its worker thread and Unix socket. Memory (PSS) of the
gateway alone and of its workers is read at every N.

What limited 20,000 sessions on this machine, and what was changed:

- Open files. The gateway keeps one Unix-socket connection per session, so 20,000 sessions
  need 20,000 descriptors plus its own few dozen, and this machine's hard limit is 20,000 per
  process, which this container cannot raise (root without ``CAP_SYS_RESOURCE``). The gateway
  and the worker host now raise their soft limit to the hard one at start (most systems ship a
  soft limit of 1,024 under a much higher hard one); this benchmark also tries to raise both
  limits to ``max_sessions + 4096`` for the gateway it starts and, where it may not, grows the
  gateway to what fits (19,900 sessions here) and says so.
- The worker's listen backlog (256): a pool's members connect to their worker all at once, and
  a connect past the backlog fails with EAGAIN, which the gateway reports as a 500 (a pool of
  1,024 on two workers fails so). Fillers are therefore made 512 at a time, one request at a
  time (128 connects per worker).
- Threads were not a limit: a worker keeps one thread per session, and with the default 8 MB
  stack 5,000 threads per worker reserve 40 GB of address space but touch only a few pages
  each (reservation is not commitment under the default overcommit policy); each thread takes
  two memory mappings, so ``vm.max_map_count`` (65,530) allows about 32,000 sessions per worker.

Run: ``palaestra bench scale`` or ``python -m palaestra.bench.scale``.
"""

from __future__ import annotations

import asyncio
import functools
import os
import resource
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from palaestra.bench import harness
from palaestra.bench.fixtures import ENV_ID, use_fixtures
from palaestra.bench.harness import console, ms, ratio
from palaestra.client import AsyncClient, Client, RemoteEnv, RemoteVectorEnv
from palaestra.server.runner import gateway_process, gateway_thread
from palaestra.server.settings import Settings

OPTIONS = {"max_steps": 10**9}
POOL_SIZES = (1, 2, 4, 8)
ROUTING_SIZES = (100, 1_000, 5_000, 10_000, 20_000)
ROUTING_WORKERS = 4
PROBES = 4
#: filler sessions per ``POST /v1/pools``, one request at a time: every member opens a Unix
#: connection to its worker at once, and past the worker's listen backlog (256) the connect
#: fails with EAGAIN, which the gateway answers with a 500 (a pool of 1,024 on two workers does)
FILL_BATCH = 512
#: descriptors the gateway holds besides its sessions' sockets, with room to spare
OWN_FDS = 100


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
        for node in reversed(cluster.list_all_nodes()):  # the workers, then the head
            cluster.remove_node(node)


def measure(url: str, starts: int, steps: int, batches: int) -> dict[str, Any]:
    out = harness.Timings("start", "step")
    for _ in range(starts):
        with out.timed("start"):
            env = RemoteEnv(ENV_ID, base_url=url, transport="ws", options=OPTIONS)
            env.reset(seed=0)
        env.close()
    env = RemoteEnv(ENV_ID, base_url=url, transport="ws", options=OPTIONS)
    env.reset(seed=0)
    out["step"] = harness.sample(lambda: env.step("add(1)"), steps)
    env.close()
    throughput = {}
    for size in POOL_SIZES:
        pool = RemoteVectorEnv(ENV_ID, size, base_url=url, options=OPTIONS)
        pool.reset(seed=0)
        batch = ["add(1)"] * size
        seconds = sum(harness.sample(functools.partial(pool.step, batch), batches))
        throughput[size] = size * batches / seconds
        pool.close()
    return {**out, "throughput": throughput}


def _raise_open_files(wanted: int) -> int:
    """Let the gateway started next (it inherits this limit) hold ``wanted`` descriptors: the
    soft limit goes up to the hard one, and both go up to ``wanted`` when the process may raise
    its hard limit (root here). Returns the soft limit in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = max(soft, wanted) if hard == resource.RLIM_INFINITY else max(soft, min(wanted, hard))
    try:
        if hard != resource.RLIM_INFINITY and wanted > hard:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, wanted))
            return wanted
    except (ValueError, OSError):
        pass
    resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return target


async def _fill(url: str, count: int) -> list[str]:
    """``count`` more live counter sessions, in pools of ``FILL_BATCH``; returns the pool ids."""
    full, rest = divmod(count, FILL_BATCH)
    sizes = [FILL_BATCH] * full + ([rest] if rest else [])
    gate = asyncio.Semaphore(1)
    client = AsyncClient(url, timeout=600)

    async def one(size: int) -> str:
        async with gate:
            body = {"env": ENV_ID, "size": size, "options": OPTIONS, "record": False}
            pool = await client.request("POST", "/v1/pools", body)
            await client.request("POST", f"/v1/pools/{pool['pool_id']}/reset", {"seed": 0})
            return str(pool["pool_id"])

    try:
        return list(await asyncio.gather(*(one(size) for size in sizes)))
    finally:
        await client.aclose()


def _probe(probes: list[RemoteEnv], rest: Client, rest_sid: str, steps: int) -> dict[str, Any]:
    out = harness.Timings("ws", "rest")
    for _ in range(steps):
        for env in probes:
            with out.timed("ws"):
                env.step("add(1)")
        with out.timed("rest"):
            rest.step(rest_sid, "add(1)")
    return out


def measure_routing(
    max_sessions: int = 20_000, steps: int = 500, sizes: tuple[int, ...] = ROUTING_SIZES
) -> dict[str, Any]:
    """Step latency on a few probe sessions while the gateway holds N live sessions."""
    limit = _raise_open_files(max_sessions + 4096)
    # the gateway needs a descriptor per session plus a few dozen of its own (10,027 at 10,000
    # sessions here): past the limit, the top size is what fits, and the table says so
    fits = limit - OWN_FDS
    sizes = tuple(dict.fromkeys(min(n, fits) for n in sizes if n <= max_sessions))
    if fits < max_sessions:
        console.print(
            f"[yellow]open-files limit {limit:,} (hard limit, not raisable here): the gateway "
            f"holds at most {fits:,} sessions, not {max_sessions:,}[/]"
        )
    env = {
        "PALAESTRA_MAX_SESSIONS": str(max_sessions + 16),
        "PALAESTRA_MAX_SESSIONS_PER_KEY": str(max_sessions + 16),
        "PALAESTRA_IDLE_TIMEOUT_S": "86400",  # the fillers sit idle for the whole run
    }
    args = ("--workers", str(ROUTING_WORKERS), "--no-record", "--log-level", "warning")
    rows: list[dict[str, Any]] = []
    with gateway_process(*args, env=env) as (url, proc):
        probes = [
            RemoteEnv(ENV_ID, base_url=url, transport="ws", options=OPTIONS, record=False)
            for _ in range(PROBES)
        ]
        for probe in probes:
            probe.reset(seed=0)
        rest = Client(url)
        rest_sid = rest.create_session(ENV_ID, options=OPTIONS, record=False)["session_id"]
        rest.reset(rest_sid, seed=0)
        _probe(probes, rest, rest_sid, 100)  # warm up
        live = PROBES + 1
        stages: list[list[str]] = []  # the pools added to reach each size
        for n in sizes:
            t = time.perf_counter()
            stages.append(asyncio.run(_fill(url, n - live)))
            fill_s, added, live = time.perf_counter() - t, n - live, n
            time.sleep(1.0)  # let the allocators and the reaper settle
            workers = harness.children(proc.pid)
            row: dict[str, Any] = {
                "sessions": n,
                "up": _probe(probes, rest, rest_sid, steps),
                "gateway_mb": harness.pss_mb(proc.pid, tree=False),
                "workers_mb": sum(harness.pss_mb(w) for w in workers),
                "gateway_fds": len(os.listdir(f"/proc/{proc.pid}/fd")),
                "worker_threads": sum(len(os.listdir(f"/proc/{w}/task")) for w in workers),
                "create_per_s": added / fill_s if added > 0 else None,
            }
            rows.append(row)
            console.print(
                f"  up to {n:,} sessions: WS p50 {ms(row['up']['ws']):.3f} ms, "
                f"gateway {row['gateway_fds']:,} fds, workers {row['worker_threads']:,} threads"
            )
        # and down again, so each size is measured twice, apart in time: a drift of the
        # machine's load (another job, say) shows as the two passes disagreeing
        with Client(url) as admin:
            for row, pools in zip(reversed(rows), reversed(stages), strict=True):
                row["down"] = _probe(probes, rest, rest_sid, steps)
                console.print(
                    f"  down at {row['sessions']:,} sessions: WS p50 {ms(row['down']['ws']):.3f} ms"
                )
                for pool_id in pools:
                    admin.close_pool(pool_id)
        for row in rows:
            both = {k: row["up"][k] + row["down"][k] for k in ("ws", "rest")}
            row["ws_p50_up"] = ms(row["up"]["ws"])
            row["ws_p50_down"] = ms(row["down"]["ws"])
            row["ws_p50"] = ms(both["ws"])
            row["ws_p99"] = ms(both["ws"], 0.99)
            row["rest_p50"] = ms(both["rest"])
            del row["up"], row["down"]
        for probe in probes:
            probe.close()
        rest.close_session(rest_sid)

    base = rows[0]
    harness.print_table(
        f"Routing: a gateway with {ROUTING_WORKERS} local workers holding N live sessions "
        f"(counter env), {PROBES} WebSocket probes + 1 REST probe, open-files limit {limit:,}",
        (
            "live sessions",
            "WS step p50 ms (up / down)",
            "WS p50",
            "WS p99",
            "p50 / N=100",
            "REST step p50",
            "REST / N=100",
            "gateway PSS MB",
            "workers PSS MB",
            "created/s",
        ),
        [
            (
                f"{row['sessions']:,}",
                f"{row['ws_p50_up']:.3f} / {row['ws_p50_down']:.3f}",
                f"{row['ws_p50']:.3f}",
                f"{row['ws_p99']:.3f}",
                harness.ratio(row["ws_p50"], base["ws_p50"]),
                f"{row['rest_p50']:.3f}",
                harness.ratio(row["rest_p50"], base["rest_p50"]),
                f"{row['gateway_mb']:,.0f}",
                f"{row['workers_mb']:,.0f}",
                f"{row['create_per_s']:,.0f}" if row["create_per_s"] else "",
            )
            for row in rows
        ],
    )
    if len(rows) > 1:
        top = rows[-1]
        extra = (top["sessions"] - base["sessions"]) / 1024
        gateway_kb = (top["gateway_mb"] - base["gateway_mb"]) / extra
        workers_kb = (top["workers_mb"] - base["workers_mb"]) / extra
        console.print(f"per session: gateway {gateway_kb:.1f} KB, workers {workers_kb:.1f} KB.")
    return {"rows": rows, "open_files_limit": limit}


def main(
    starts: int = 20,
    steps: int = 500,
    batches: int = 100,
    routing: bool = True,
    max_sessions: int = 20_000,
    backends: bool = True,
) -> dict[str, Any]:
    """The backend comparison, then routing at scale up to ``max_sessions`` live sessions."""
    results: dict[str, Any] = {}
    if backends:
        results.update(compare_backends(starts, steps, batches))
    if routing:
        results["routing"] = measure_routing(max_sessions)
    return results


@contextmanager
def docker_gateway() -> Iterator[str]:
    """Workers in palaestra/core containers on a private ``dockerd --bridge=none``."""
    from palaestra.paths import home
    from palaestra.workers.docker import ensure_image, local_engine

    with local_engine(home() / "docker") as host:
        ensure_image(host)
        settings = Settings(
            backend="docker", docker_host=host, workers=2, record=False, gateway_name="bench"
        )
        with gateway_thread(settings) as url:
            yield url


def compare_backends(starts: int = 20, steps: int = 500, batches: int = 100) -> dict[str, Any]:
    results = {}
    with gateway_thread(Settings(workers=2, record=False)) as url:
        results["local"] = measure(url, starts, steps, batches)
    with docker_gateway() as url:
        results["docker"] = measure(url, starts, steps, batches)
    with ray_gateway() as url:
        results["ray"] = measure(url, starts, steps, batches)

    backends = [results[name] for name in ("local", "docker", "ray")]
    rows = []
    for key, label in (("start", "session start (create + reset) ms"), ("step", "step (WS) ms")):
        a, b, c = (ms(r[key]) for r in backends)
        rows.append((label, f"{a:.2f}", f"{b:.2f}", f"{c:.2f}", ratio(b, a), ratio(c, a)))
    for size in POOL_SIZES:
        a, b, c = (r["throughput"][size] for r in backends)
        figures = (f"{a:,.0f}", f"{b:,.0f}", f"{c:,.0f}", ratio(b, a), ratio(c, a))
        rows.append((f"pool of {size}, steps/s", *figures))
    harness.print_table(
        "Backends: 2 workers each, the counter env, p50 (one 2-core machine)",
        ("measure", "local", "Docker", "Ray (2 nodes)", "Docker / local", "Ray / local"),
        rows,
    )
    return results


if __name__ == "__main__":
    use_fixtures()  # the counter, here and in the gateway's workers
    main()

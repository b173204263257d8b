"""The Ray backend on a real two-node Ray cluster on this machine (both nodes on 127.0.0.1)."""

import time

import httpx
import pytest

from palaestra.client import RemoteEnv, RemoteVectorEnv
from palaestra.errors import WorkerCrashed
from palaestra.server.runner import gateway_thread
from palaestra.server.settings import Settings
from palaestra.workers.ray import loopback_only

loopback_only()  # before Ray is imported: its nodes and this driver stay on loopback
cluster_utils = pytest.importorskip("ray.cluster_utils")

pytestmark = [pytest.mark.ray, pytest.mark.timeout(180)]


@pytest.fixture(scope="module")
def cluster():
    c = cluster_utils.Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 2, "node_ip_address": "127.0.0.1", "include_dashboard": False},
    )
    second = c.add_node(num_cpus=2, node_ip_address="127.0.0.1")
    yield c, second
    for node in list(c.worker_nodes):
        c.remove_node(node)
    c.remove_node(c.head_node)


@pytest.fixture(scope="module")
def gateway_on_ray(cluster):
    c, _ = cluster
    settings = Settings(
        backend="ray",
        ray_address=c.address,
        workers=2,
        record=False,
        ray_worker_cpus=0.5,
        ray_placement="spread",
        step_timeout_s=30,
    )
    with gateway_thread(settings) as url:
        yield url


def workers(url):
    return httpx.get(f"{url}/v1/health").json()["workers"]


def test_workers_are_actors_spread_over_the_nodes(gateway_on_ray):
    found = workers(gateway_on_ray)
    assert [w["name"] for w in found] == ["ray-0", "ray-1"]
    assert all(w["alive"] and w["node_ip"] == "127.0.0.1" for w in found)
    assert len({w["node_id"] for w in found}) == 2  # SPREAD: one per node


def test_the_same_client_code_runs_sessions_and_a_pool_on_ray(gateway_on_ray):
    env = RemoteEnv(task="usersim/airline-82210a", base_url=gateway_on_ray, transport="ws")
    obs, _ = env.reset(seed=0)
    obs, *_ = env.step('send_message("Could you tell me your reservation number?")')
    assert "C548C7" in obs["user_message"]
    env.close()
    pool = RemoteVectorEnv("palaestra-bench/Overhead-v0", 4, base_url=gateway_on_ray)
    try:
        obs, _ = pool.reset(seed=0)
        obs, *_ = pool.step(["add(2)"] * 4)
        assert list(obs["count"]) == [2, 2, 2, 2]
        sessions = httpx.get(f"{gateway_on_ray}/v1/sessions").json()["sessions"]
        hosts = {s["worker"] for s in sessions if s["session_id"] in pool.session_ids}
        assert hosts == {"ray-0", "ray-1"}  # the pool's members spread over both workers
    finally:
        pool.close()


def test_a_node_removed_mid_episode_fails_only_its_sessions(cluster, gateway_on_ray):
    c, second = cluster
    envs = [
        RemoteEnv("palaestra-bench/Overhead-v0", base_url=gateway_on_ray, transport="ws")
        for _ in range(2)
    ]
    for env in envs:
        env.reset(seed=0)
    on = {w["name"]: w["node_id"] for w in workers(gateway_on_ray)}
    doomed = next(n for n, node in on.items() if node == second.node_id)
    sessions = httpx.get(f"{gateway_on_ray}/v1/sessions").json()["sessions"]
    by_id = {s["session_id"]: s["worker"] for s in sessions}
    lost = next(e for e in envs if by_id[e.session_id] == doomed)
    kept = next(e for e in envs if e is not lost)
    c.remove_node(second)
    with pytest.raises(WorkerCrashed, match=f"worker {doomed} .*died"):
        for _ in range(100):  # Ray notices the node is gone within seconds
            lost.step("add(1)")
            time.sleep(0.1)
    obs, *_ = kept.step("add(1)")
    assert obs["count"] == 1
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # the backend replaced the worker on the node left
        live = [w for w in workers(gateway_on_ray) if w["alive"]]
        if len(live) == 2:
            break
        time.sleep(0.5)
    assert len(live) == 2 and {w["node_id"] for w in live} == {c.head_node.node_id}
    metrics = httpx.get(f"{gateway_on_ray}/metrics").text
    assert 'palaestra_worker_restarts_total{backend="ray"} 1.0' in metrics
    fresh = RemoteEnv("palaestra-bench/Overhead-v0", base_url=gateway_on_ray)
    fresh.reset(seed=0)
    assert fresh.step("add(3)")[0]["count"] == 3
    for env in (*envs, fresh):
        env.close()

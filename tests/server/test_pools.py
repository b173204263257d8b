"""Pools over REST: batched reset/step, NEXT_STEP autoreset, errors naming worker and session."""

import time

import httpx
import pytest

from tests.conftest import BENCH_ENV, FAULTY_ENV


@pytest.fixture
def http(gateway):
    with httpx.Client(base_url=gateway, timeout=30) as client:
        yield client


def test_pool_round_trip_with_autoreset(http):
    made = http.post("/v1/pools", json={"task": "palaestra-bench/count-to-3", "size": 3})
    assert made.status_code == 201, made.text
    pool = made.json()
    assert pool["size"] == 3 and len(set(pool["session_ids"])) == 3
    pid = pool["pool_id"]
    reset = http.post(f"/v1/pools/{pid}/reset", json={"seed": 5}).json()
    assert [o["count"] for o in reset["observations"]] == [0, 0, 0]
    step = http.post(f"/v1/pools/{pid}/step", json={"actions": ["add(3)", "done()", "add(1)"]})
    body = step.json()
    assert body["terminated"] == [False, True, False] and body["rewards"] == [0.0, 0.0, 0.0]
    assert body["infos"][1]["verifier"]["success"] is False
    step = http.post(f"/v1/pools/{pid}/step", json={"actions": ["done()", "add(3)", "add(2)"]})
    body = step.json()
    assert body["rewards"][0] == 1.0 and body["terminated"][0]
    assert body["infos"][1]["autoreset"] and body["observations"][1]["count"] == 0
    assert body["observations"][2]["count"] == 3
    assert http.delete(f"/v1/pools/{pid}").status_code == 204
    gone = http.post(f"/v1/sessions/{pool['session_ids'][0]}/reset", json={})
    assert gone.status_code == 409


def test_pool_bad_input(http):
    assert http.post("/v1/pools", json={"env": BENCH_ENV, "size": 0}).status_code == 422
    assert http.post("/v1/pools", json={"env": BENCH_ENV}).status_code == 422
    pid = http.post("/v1/pools", json={"env": BENCH_ENV, "size": 2}).json()["pool_id"]
    http.post(f"/v1/pools/{pid}/reset", json={})
    r = http.post(f"/v1/pools/{pid}/step", json={"actions": ["add(1)"]})
    assert r.status_code == 422 and r.json()["field"] == "actions"
    r = http.post(f"/v1/pools/{pid}/reset", json={"seed": [1, 2, 3]})
    assert r.status_code == 422 and r.json()["field"] == "seed"
    assert http.post("/v1/pools/nope/step", json={"actions": []}).status_code == 404
    http.delete(f"/v1/pools/{pid}")


def test_a_failing_member_is_named(http):
    body = {"env": FAULTY_ENV, "size": 2, "options": {"allow_faults": True}}
    pool = http.post("/v1/pools", json=body).json()
    http.post(f"/v1/pools/{pool['pool_id']}/reset", json={})
    r = http.post(f"/v1/pools/{pool['pool_id']}/step", json={"actions": ["ok()", "crash()"]})
    assert r.status_code == 502
    problem = r.json()
    assert problem["session_id"] == pool["session_ids"][1] and problem["worker"]
    http.delete(f"/v1/pools/{pool['pool_id']}")


def test_async_pool_returns_the_first_finished_steps(gateway):
    """EnvPool's num_envs > batch_size: recv answers with whoever finished first."""
    from palaestra.client import RemoteVectorEnv

    pool = RemoteVectorEnv(FAULTY_ENV, 4, base_url=gateway, options={"allow_faults": True})
    try:
        pool.reset(seed=0)
        pool.send(["sleep(1.5)", "ok()", "sleep(0.8)", "ok()"])
        obs, rewards, *_, info = pool.recv(batch_size=2)
        assert sorted(info["env_id"].tolist()) == [1, 3] and list(obs["oks"]) == [1, 1]
        assert obs["screen"].shape == (2, 8, 8, 3) and rewards.shape == (2,)
        pool.send(["ok()", "ok()"], env_ids=[1, 3])  # the fast ones go on meanwhile
        _, _, _, _, info = pool.recv(batch_size=3)
        assert sorted(info["env_id"].tolist()) == [1, 2, 3]
        _, _, _, _, info = pool.recv(batch_size=1)
        assert info["env_id"].tolist() == [0]  # the slowest, last
    finally:
        pool.close()


def test_async_pool_bad_input(http):
    pid = http.post(
        "/v1/pools", json={"env": FAULTY_ENV, "size": 2, "options": {"allow_faults": True}}
    ).json()["pool_id"]
    http.post(f"/v1/pools/{pid}/reset", json={})
    assert http.post(f"/v1/pools/{pid}/recv", json={"batch_size": 1}).status_code == 422
    bad = http.post(f"/v1/pools/{pid}/send", json={"actions": ["ok()"], "env_ids": [5]})
    assert bad.status_code == 422 and "no member 5" in bad.json()["detail"]
    assert (
        http.post(f"/v1/pools/{pid}/send", json={"actions": ["ok()"], "env_ids": []}).status_code
        == 422
    )
    assert (
        http.post(
            f"/v1/pools/{pid}/send", json={"actions": ["sleep(1)"], "env_ids": [0]}
        ).status_code
        == 200
    )
    busy = http.post(f"/v1/pools/{pid}/send", json={"actions": ["ok()"], "env_ids": [0]})
    assert busy.status_code == 422 and "still stepping" in busy.json()["detail"]
    lockstep = http.post(f"/v1/pools/{pid}/step", json={"actions": ["ok()", "ok()"]})
    assert lockstep.status_code == 422 and "pending" in lockstep.json()["detail"]
    slow = http.post(f"/v1/pools/{pid}/recv", json={"batch_size": 1, "timeout_s": 0.05})
    assert slow.status_code == 504 and "0 of 1" in slow.json()["detail"]
    done = http.post(f"/v1/pools/{pid}/recv", json={"batch_size": 1})
    assert done.status_code == 200 and done.json()["env_ids"] == [0]
    assert http.delete(f"/v1/pools/{pid}").status_code == 204


def test_a_large_pool_is_created_at_once():
    """1,024 members connect to 2 workers at once: past a small listen backlog, retried."""
    from palaestra.server.runner import gateway_thread
    from palaestra.server.settings import Settings

    settings = Settings(workers=2, record=False, max_sessions=2048, max_sessions_per_key=2048)
    with gateway_thread(settings) as url, httpx.Client(base_url=url, timeout=120) as http:
        made = http.post("/v1/pools", json={"env": BENCH_ENV, "size": 1024})
        assert made.status_code == 201, made.text
        pid = made.json()["pool_id"]
        assert http.post(f"/v1/pools/{pid}/reset", json={}).status_code == 200
        step = http.post(f"/v1/pools/{pid}/step", json={"actions": ["add(1)"] * 1024})
        assert step.status_code == 200 and len(step.json()["rewards"]) == 1024


def test_pools_resize_on_demand_from_warm_spares_and_place_their_members(gateway):
    from palaestra.client import RemoteVectorEnv

    pool = RemoteVectorEnv(BENCH_ENV, 2, base_url=gateway, warm=2, min_size=1, max_size=4)
    try:
        pool.reset(seed=0)
        pool.step(["add(1)", "add(1)"])
        deadline = time.monotonic() + 30
        while httpx.get(f"{gateway}/v1/pools/{pool.pool_id}").json()["warm"] < 2:
            assert time.monotonic() < deadline, "the spares were never made"
            time.sleep(0.05)
        added, info = pool.resize(4)  # the two spares join, already reset
        assert info["added"] == [2, 3] and info["from_warm"] == 2
        assert list(added["count"]) == [0, 0] and pool.num_envs == 4
        obs, *_ = pool.step(["add(1)"] * 4)
        assert list(obs["count"]) == [2, 2, 1, 1]
        gone = pool.session_ids[1:]
        pool.resize(1)
        assert pool.num_envs == 1 and pool.step(["add(1)"])[0]["count"].tolist() == [3]
        closed = httpx.post(f"{gateway}/v1/sessions/{gone[0]}/reset", json={})
        assert closed.status_code == 409
        too_big = httpx.post(f"{gateway}/v1/pools/{pool.pool_id}/resize", json={"size": 5})
        assert too_big.status_code == 422 and "1..4" in too_big.json()["detail"]
    finally:
        pool.close()
    bad = httpx.post(f"{gateway}/v1/pools", json={"env": BENCH_ENV, "size": 3, "max_size": 2})
    assert bad.status_code == 422 and "max_size" in bad.text


def test_pool_placement_spreads_or_packs_members():
    from palaestra.server.runner import gateway_thread
    from palaestra.server.settings import Settings

    with gateway_thread(Settings(workers=2, record=False)) as url:  # no other sessions around
        for placement, workers in (("spread", 2), ("pack", 1)):
            body = {"env": BENCH_ENV, "size": 4, "placement": placement}
            made = httpx.post(f"{url}/v1/pools", json=body).json()
            sessions = httpx.get(f"{url}/v1/sessions").json()["sessions"]
            hosts = {s["worker"] for s in sessions if s["session_id"] in made["session_ids"]}
            assert len(hosts) == workers and made["placement"] == placement
            httpx.delete(f"{url}/v1/pools/{made['pool_id']}")

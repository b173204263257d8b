"""The Docker backend on a real engine (``dockerd --bridge=none``) and the image docker/build.sh
makes: locked-down containers, sessions through the gateway, a killed container, orphans, and
the agent-code sandbox nested in computer and CAD workers."""

import contextlib
import json
import os
import time
from pathlib import Path

import httpx
import pytest

from palaestra.client import RemoteEnv, RemoteVectorEnv
from palaestra.errors import PalaestraError, WorkerCrashed
from palaestra.server.runner import gateway_thread
from palaestra.server.settings import Settings
from palaestra.tasks import get_task

docker = pytest.importorskip("docker")
from palaestra.workers.docker import (  # noqa: E402
    AGENT_SANDBOX_CAPS,
    CONTAINER_DENIED_SYSCALLS,
    LABEL,
    ensure_image,
    local_engine,
    seccomp_profile,
    start_engine,
    stop_engine,
)

pytestmark = [pytest.mark.docker, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def engine():
    """A private engine under PALAESTRA_HOME (images kept between runs), the core image built."""
    with local_engine(Path(os.environ["PALAESTRA_HOME"]) / "docker") as host:
        ensure_image(host)
        client = docker.DockerClient(base_url=host)
        yield host, client
        client.close()


@pytest.fixture(scope="module")
def gateway_on_docker(engine):
    host, _ = engine
    settings = Settings(
        backend="docker", docker_host=host, workers=2, record=False, gateway_name="test"
    )
    with gateway_thread(settings) as url:
        yield url


def containers(client, gateway="test"):
    return client.containers.list(all=True, filters={"label": f"{LABEL}={gateway}"})


def test_workers_are_locked_down_containers_serving_sessions(engine, gateway_on_docker):
    _, client = engine
    found = containers(client)
    assert len(found) == 2
    for c in found:
        host = c.attrs["HostConfig"]
        assert host["NetworkMode"] == "none" and host["ReadonlyRootfs"]
        assert host["CapDrop"] == ["ALL"] and "no-new-privileges" in host["SecurityOpt"]
        assert not host["CapAdd"]  # an image without agent code: no capability at all
        assert host["PidsLimit"] == 512 and host["Memory"] == 2048 * 2**20
        assert c.attrs["Config"]["User"] == "65534:65534"
        # no network at all: not even the gateway's port on the host's loopback
        port = int(gateway_on_docker.rsplit(":", 1)[1])
        probe = c.exec_run(
            ["python", "-c", f"import socket; socket.create_connection(('127.0.0.1', {port}), 2)"]
        )
        assert probe.exit_code != 0 and b"refused" in probe.output.lower()
    env = RemoteEnv(task="usersim/airline-82210a", base_url=gateway_on_docker)
    obs, _ = env.reset(seed=0)
    obs, *_ = env.step('send_message("Could you tell me your reservation number?")')
    assert "C548C7" in obs["user_message"]
    env.close()


def test_a_killed_container_fails_only_its_sessions_and_is_replaced(engine, gateway_on_docker):
    _, client = engine
    envs = [
        RemoteEnv("palaestra-bench/Overhead-v0", base_url=gateway_on_docker, transport="ws")
        for _ in range(2)
    ]
    for env in envs:
        env.reset(seed=0)
    workers = {
        w["name"]: w["container"]
        for w in httpx.get(f"{gateway_on_docker}/v1/health").json()["workers"]
    }
    sessions = httpx.get(f"{gateway_on_docker}/v1/sessions").json()["sessions"]
    host_of = {s["session_id"]: s["worker"] for s in sessions}
    lost = envs[0]
    kept = envs[1]
    assert host_of[lost.session_id] != host_of[kept.session_id]
    client.containers.get(workers[host_of[lost.session_id]]).kill()  # SIGKILL
    with pytest.raises(WorkerCrashed, match="died"):
        lost.step("add(1)")
    assert kept.step("add(1)")[0]["count"] == 1
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        live = [
            w for w in httpx.get(f"{gateway_on_docker}/v1/health").json()["workers"] if w["alive"]
        ]
        if len(live) == 2:
            break
        time.sleep(0.3)
    assert len(live) == 2 and workers[host_of[lost.session_id]] not in {
        w["container"] for w in live
    }
    assert len([c for c in containers(client) if c.status == "running"]) == 2
    metrics = httpx.get(f"{gateway_on_docker}/metrics").text
    assert 'palaestra_worker_restarts_total{backend="docker"} 1.0' in metrics
    assert 'palaestra_workers_alive{backend="docker"} 2.0' in metrics
    for env in envs:
        env.close()


def test_orphans_are_swept_at_start_and_nothing_is_left_at_shutdown(engine):
    host, client = engine
    orphan = client.containers.run(
        "palaestra/core",
        ["python", "-c", "import time; time.sleep(600)"],
        detach=True,
        network_mode="none",
        labels={LABEL: "sweep"},
    )
    settings = Settings(
        backend="docker", docker_host=host, workers=1, record=False, gateway_name="sweep"
    )
    with gateway_thread(settings):
        names = {c.id for c in containers(client, "sweep")}
        assert orphan.id not in names and len(names) == 1
    assert containers(client, "sweep") == []


def test_a_pool_runs_on_docker_with_the_same_client_code(gateway_on_docker):
    pool = RemoteVectorEnv("palaestra-bench/Overhead-v0", 4, base_url=gateway_on_docker)
    try:
        pool.reset(seed=0)
        obs, *_ = pool.step(["add(2)"] * 4)
        assert list(obs["count"]) == [2, 2, 2, 2]
    finally:
        pool.close()


def test_an_engine_restart_fails_the_sessions_and_the_workers_come_back(engine, gateway_on_docker):
    env = RemoteEnv("palaestra-bench/Overhead-v0", base_url=gateway_on_docker)
    env.reset(seed=0)
    root = Path(os.environ["PALAESTRA_HOME"]) / "docker"
    stop_engine(root)  # its containers stop with it
    with pytest.raises((WorkerCrashed, PalaestraError)):
        for _ in range(50):
            env.step("add(1)")
            time.sleep(0.1)
    start_engine(root)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        workers = httpx.get(f"{gateway_on_docker}/v1/health").json()["workers"]
        if len(workers) == 2 and all(w["alive"] for w in workers):
            break
        time.sleep(0.5)
    assert all(w["alive"] for w in workers)
    fresh = RemoteEnv("palaestra-bench/Overhead-v0", base_url=gateway_on_docker)
    fresh.reset(seed=0)
    assert fresh.step("add(3)")[0]["count"] == 3
    fresh.close()


@contextlib.contextmanager
def nested_sandbox_gateway(engine, target):
    """A gateway on one worker of ``palaestra/<target>`` (an image whose families run agent code):
    its URL and the container's host config, checked for network none, a read-only root and
    exactly the nested sandbox's capabilities."""
    host, client = engine
    ensure_image(host, target)
    settings = Settings(
        backend="docker",
        docker_host=host,
        docker_image=f"palaestra/{target}",
        workers=1,
        record=False,
        gateway_name=target,
    )
    with gateway_thread(settings) as url:
        (c,) = containers(client, target)
        conf = c.attrs["HostConfig"]
        assert conf["NetworkMode"] == "none" and conf["ReadonlyRootfs"]
        assert {cap.removeprefix("CAP_") for cap in conf["CapAdd"]} == set(AGENT_SANDBOX_CAPS)
        yield url, conf


def test_the_computer_family_runs_its_nested_sandbox_in_a_container(engine):
    """An image whose families run agent code (label palaestra.agent-sandbox=nested) gets root
    in the container with only the sandbox's capabilities; the agent itself is an unprivileged
    uid of its session's own, with no network, and the desktop works (a task's GUI oracle)."""
    with nested_sandbox_gateway(engine, "computer") as (url, conf):
        assert conf["CapDrop"] == ["ALL"] and "no-new-privileges" in conf["SecurityOpt"]
        assert any(opt.startswith("seccomp=") for opt in conf["SecurityOpt"])
        port = int(url.rsplit(":", 1)[1])
        task = "computer-basic/append-line-in-editor"
        remote = RemoteEnv(task=task, base_url=url, transport="ws")
        try:
            obs, _ = remote.reset(seed=0)
            assert json.loads(obs["windows"])[0]["class"] == "Mousepad"
            for action in get_task(task).oracle.data:  # GUI steps: click, type, key
                obs, *_ = remote.step(action)
                assert not obs["last_action_error"], obs["last_action_error"]
            probe = (
                "id -u; id -G; uname -n; grep -E 'CapEff|CapBnd' /proc/self/status | "
                "cut -f2 | tr '\\n' ' '; echo; "
                "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\\n' ' '; echo; "
                f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 2)\" "
                "2>&1 | tail -1; unshare -r id -u 2>&1 | tail -1"
            )
            obs, *_ = remote.step({"name": "run_shell", "args": {"cmd": probe}})
            uid, gids, hostname, caps, links, net, userns = json.loads(obs["last_output"])[
                "stdout"
            ].splitlines()
            assert 20000 <= int(uid) < 22000 and gids == uid  # the session's own, never root
            assert hostname == "sandbox" and caps.split() == ["0" * 16] * 2  # none, not even bound
            assert links.split() == ["lo"]  # no interface but its own loopback
            assert "refused" in net.lower(), net  # not even the gateway's port on loopback
            assert "denied" in userns.lower() or "not permitted" in userns.lower(), userns
            obs, reward, terminated, _, info = remote.step("done()")
            assert terminated and info["verifier"]["success"] and reward == 1.0
        finally:
            remote.close()


def test_the_container_profile_refuses_what_the_sandbox_refuses_but_what_builds_it():
    from palaestra.envs.runtimes.sandbox import DENIED_SYSCALLS

    builds = {"mount", "umount2", "unshare", "pivot_root", "sethostname"}
    assert set(DENIED_SYSCALLS) - set(CONTAINER_DENIED_SYSCALLS) == builds
    assert "setns" not in CONTAINER_DENIED_SYSCALLS  # nsenter
    # the worker itself cannot open a vsock to the hypervisor either (Docker's default refuses it)
    rules = json.loads(seccomp_profile())["syscalls"]
    vsock = [r for r in rules if r["names"] == ["socket"]]
    assert vsock and vsock[0]["args"] == [{"index": 0, "value": 40, "op": "SCMP_CMP_EQ"}]


CAD_PROBE = """
import build123d
os = build123d.os
socket = build123d.sys.modules["socket"]
fd = os.open("/proc/self/status", os.O_RDONLY)
status = os.read(fd, 65536).decode()
caps = [line.split()[1] for line in status.splitlines() if line.startswith(("CapEff", "CapBnd"))]
try:
    socket.create_connection(("127.0.0.1", PORT), 2)
    net = "connected"
except ConnectionRefusedError:
    net = "refused"
except OSError:
    net = "other"
raise ValueError(f"PROBE {os.getuid()} {os.uname().nodename} {' '.join(caps)} {net} PROBE")
result = 0
"""


def test_cad_run_code_runs_its_nested_sandbox_in_a_container(engine):
    """CAD's run_code in a palaestra/cad worker: the same nested sandbox as the computer's."""
    with nested_sandbox_gateway(engine, "cad") as (url, _conf):
        port = int(url.rsplit(":", 1)[1])
        remote = RemoteEnv("palaestra/cad-v0", base_url=url)
        try:
            remote.reset(seed=0)
            box = "from build123d import *\nresult = Box(10, 20, 30)\n"
            obs, *_ = remote.step({"name": "run_code", "args": {"script": box}})
            assert "volume 6000" in obs["feedback"], obs["feedback"]
            probe = CAD_PROBE.replace("PORT", str(port))
            obs, *_ = remote.step({"name": "run_code", "args": {"script": probe}})
            report = obs["last_action_error"]  # the script's exception carries the report
            assert "PROBE " in report, report
            uid, hostname, eff, bound, net = report.split("PROBE ")[1].split()[:5]
            assert 20000 <= int(uid) < 22000 and hostname == "sandbox"
            assert eff == bound == "0" * 16 and net == "refused", report
        finally:
            remote.close()

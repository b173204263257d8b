"""The Docker backend: each worker is a container, reached over a Unix socket in a bind mount.

A container runs the same worker host as a local subprocess (``palaestra.workers.host``), so
the gateway speaks the same protocol to it, with no port and hence no port clash. Containers are
locked down: no network (``network_mode="none"``), a read-only root with a small ``/tmp``, a
non-root user, every capability dropped, ``no-new-privileges``, and CPU, memory and process
limits. The worker's control connection is its health check: it closes the moment the
container stops, whatever the cause (a crash, ``docker kill``, the OOM killer, the engine going
away), and the backend starts a replacement.

**Images whose families run agent code.** The computer family and CAD's ``run_code`` run the
agent's code in the one agent-code sandbox (:mod:`palaestra.envs.runtimes.sandbox`): bubblewrap
as root without a user namespace, ``setpriv`` to a per-session uid, a seccomp filter, a quota
tmpfs home mounted by the worker. An image that hosts such a family says so with the label
``palaestra.agent-sandbox=nested`` (docker/computer.Dockerfile, docker/cad.Dockerfile); the
backend reads the image's labels when it connects, so the gateway needs no list of families: the
image it is given (``docker_image``) is the list. Those workers run as root *inside* the
container with every capability dropped but :data:`AGENT_SANDBOX_CAPS`, under a seccomp profile
that refuses what the sandbox's own filter refuses but for the calls that build the sandbox
(:func:`seccomp_profile`), keeping ``no-new-privileges``, the read-only root,
``network_mode="none"`` and the limits.

Why the nested sandbox rather than "the container is the sandbox": a worker hosts many sessions,
and the agent must see neither the worker (its files, its ``/proc``, the socket to the gateway)
nor another session; one container per session would cost a container start per episode and a
second sandbox to keep in step with the local one. Nested, the agent's view, uid, seccomp filter
and limits are the same on every backend, and the container (no network, memory, pids and CPU
bounds for the whole worker) is one more wall around them. The price: the worker itself holds
``CAP_SYS_ADMIN`` in the container, so a hole in *palaestra's own code* weighs more here than
in a default-locked container; the agent never holds any capability.
Every other image keeps the default lockdown (uid 65534, no capability at all).

Containers carry labels naming the gateway (``palaestra.gateway``). At start the backend
removes its gateway's containers left by an earlier run that crashed, so no orphan lingers;
on shutdown it removes its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from palaestra.errors import WorkerCrashed
from palaestra.seccomp import DENIED_SOCKET_FAMILIES, DENIED_SYSCALLS, SANDBOX_BUILD_CALLS
from palaestra.workers.base import Backend, SocketWorker, Worker

START_TIMEOUT_S = 60.0
SOCKET_DIR = "/run/palaestra"
#: the image's unprivileged user (nobody): the socket folder is handed to it
CONTAINER_UID = 65534
LABEL = "palaestra.gateway"
#: the image label that asks for :data:`AGENT_SANDBOX_CAPS` (value ``nested``)
SANDBOX_LABEL = "palaestra.agent-sandbox"
#: what the nested sandbox needs, each one found missing by taking it away and running a
#: computer session (the worker is root in the container; the agent gets none of them:
#: ``setpriv`` empties every set, the bounding set included, and sets ``no_new_privs``):
#: SYS_ADMIN   bwrap's namespaces and mounts, the quota tmpfs home, ``setns`` for ``nsenter``
#: SYS_CHROOT  ``setns`` into the sandbox's mount namespace (``nsenter -m``: the window manager,
#:             apps and code actions are started inside the live sandbox)
#: NET_ADMIN   bwrap brings up the loopback of the sandbox's new network namespace (in a
#:             ``network_mode="none"`` container there is nothing but loopbacks to administer)
#: SETUID, SETGID  ``setpriv`` to the session's uid, ``--clear-groups``
#: SETPCAP     ``setpriv --bounding-set=-all`` (without it the agent keeps a bounding set)
#: CHOWN, FOWNER, DAC_OVERRIDE  the session's files: handed to its uid, copied with ``cp -a``
#:             into its 0700 home, read by the verifier and deleted at close, all from outside
#: KILL        a timed-out code action's processes run as the session's uid, not ours
#: (Docker's default set minus NET_RAW, NET_BIND_SERVICE, MKNOD, AUDIT_WRITE, SETFCAP and FSETID,
#: plus SYS_ADMIN and NET_ADMIN.)
AGENT_SANDBOX_CAPS = (
    "SYS_ADMIN",
    "SYS_CHROOT",
    "NET_ADMIN",
    "SETUID",
    "SETGID",
    "SETPCAP",
    "CHOWN",
    "FOWNER",
    "DAC_OVERRIDE",
    "KILL",
)
#: the container's seccomp profile when it holds those capabilities: what the agent-code
#: sandbox's own filter refuses (palaestra.seccomp.DENIED_SYSCALLS), but for the
#: calls the worker makes to build it (``mount``, ``umount2``, ``unshare`` and ``clone`` with
#: namespace flags, ``pivot_root``, ``sethostname``; ``setns`` for ``nsenter``), plus a few
#: obsolete calls Docker's default profile refuses too. Docker's default profile would not do:
#: it refuses ``pivot_root`` whatever the capabilities. The agent runs under both filters.
CONTAINER_DENIED_SYSCALLS = (
    *(name for name in DENIED_SYSCALLS if name not in SANDBOX_BUILD_CALLS),
    # refused by Docker's default profile as well
    "uselib",
    "ustat",
    "sysfs",
    "_sysctl",
    "vm86",
    "vm86old",
    "fanotify_init",
    "create_module",
    "get_kernel_syms",
    "query_module",
)


def seccomp_profile() -> str:
    """The container's seccomp profile (Docker's JSON format): everything else is allowed, the
    agent's own, stricter filter is loaded inside."""
    rules = [{"names": list(CONTAINER_DENIED_SYSCALLS), "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]
    rules += [
        {
            "names": ["socket"],
            "action": "SCMP_ACT_ERRNO",
            "errnoRet": 1,
            "args": [{"index": 0, "value": family, "op": "SCMP_CMP_EQ"}],
        }
        for family in DENIED_SOCKET_FAMILIES
    ]
    return json.dumps({"defaultAction": "SCMP_ACT_ALLOW", "syscalls": rules})


HOST_COMMAND = ("python", "-m", "palaestra.workers.host", "--socket", f"{SOCKET_DIR}/w.sock")


class DockerWorker(SocketWorker):
    def __init__(self, name: str, socket_path: str, container: Any, heartbeat_s: float) -> None:
        super().__init__(name, socket_path, heartbeat_s)
        self.container = container

    async def start(self) -> None:
        await self.connect(asyncio.get_running_loop().time() + START_TIMEOUT_S)

    def _process_running(self) -> bool:
        with contextlib.suppress(Exception):
            self.container.reload()
            return self.container.status in ("created", "running")
        return False

    def _exit_description(self) -> str:
        with contextlib.suppress(Exception):
            self.container.reload()
            state = self.container.attrs["State"]
            if state.get("OOMKilled"):
                return "its container was killed for using too much memory"
            if state.get("Running"):
                return "its container did not open its socket in time"
            logs = self.container.logs(tail=5).decode(errors="replace").strip()
            tail = f"; last output: {logs[-300:]}" if logs else ""
            return f"its container exited with status {state.get('ExitCode')}{tail}"
        return "its container is gone"

    async def _death_reason(self) -> str:
        await asyncio.sleep(0.2)  # let the engine record the exit
        return (
            f"container {self.container.short_id} {await asyncio.to_thread(self._exit_description)}"
        )

    async def stop(self) -> None:
        await self.close_connection()
        with contextlib.suppress(Exception):
            await asyncio.to_thread(self.container.remove, force=True)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "container": self.container.short_id}


class DockerBackend(Backend):
    name = "docker"

    def __init__(
        self,
        image: str = "palaestra/core",
        gateway: str = "default",
        cpus: float = 1.0,
        memory_mb: int = 2048,
        pids: int = 512,
        docker_host: str | None = None,
    ) -> None:
        super().__init__()
        self.image = image
        self.gateway = gateway
        self.cpus = cpus
        self.memory_mb = memory_mb
        self.pids = pids
        self.docker_host = docker_host
        self.socket_dir = tempfile.mkdtemp(prefix="palaestra-docker-")
        self._client: Any = None
        self._generation = 0
        #: the image hosts families that run agent code (its ``palaestra.agent-sandbox`` label)
        self.agent_sandbox = False
        self._apparmor = False

    async def start(self, count: int) -> None:
        await asyncio.to_thread(self._connect)
        await super().start(count)

    def _connect(self) -> None:
        import docker

        try:
            self._client = (
                docker.DockerClient(base_url=self.docker_host)
                if self.docker_host
                else docker.from_env()
            )
            self._client.ping()
            labels = self._client.images.get(self.image).labels or {}
            self.agent_sandbox = labels.get(SANDBOX_LABEL) == "nested"
            if self.agent_sandbox:
                security = self._client.info().get("SecurityOptions") or []
                self._apparmor = any("name=apparmor" in str(opt) for opt in security)
        except docker.errors.ImageNotFound:
            raise WorkerCrashed(
                f"no image {self.image!r}: build it with docker/build.sh", image=self.image
            ) from None
        except docker.errors.DockerException as exc:
            raise WorkerCrashed(f"the Docker engine cannot be reached: {exc}") from None
        self.sweep()

    def sweep(self) -> int:
        """Remove this gateway's containers left by an earlier run (it crashed, say)."""
        left = self._client.containers.list(all=True, filters={"label": f"{LABEL}={self.gateway}"})
        for container in left:
            with contextlib.suppress(Exception):
                container.remove(force=True)
        return len(left)

    async def new_worker(self, index: int) -> Worker:
        self._generation += 1
        name = f"docker-{index}"
        folder = os.path.join(self.socket_dir, f"w{index}-{self._generation}")
        os.mkdir(folder, 0o700)
        os.chown(folder, CONTAINER_UID, CONTAINER_UID)
        try:
            container = await asyncio.to_thread(self._run, name, folder)
        except Exception as exc:  # the engine is down or restarting: the backend retries
            raise WorkerCrashed(
                f"the Docker engine could not start worker {name}: {exc}", worker=name
            ) from None
        worker = DockerWorker(name, os.path.join(folder, "w.sock"), container, self.heartbeat_s)
        try:
            await worker.start()
        except BaseException:
            await worker.stop()
            raise
        return worker

    def lockdown(self) -> dict[str, Any]:
        """The container's user, capabilities and security options (see the module doc)."""
        if not self.agent_sandbox:
            return {
                "user": f"{CONTAINER_UID}:{CONTAINER_UID}",
                "cap_drop": ["ALL"],
                "security_opt": ["no-new-privileges"],
            }
        security = ["no-new-privileges", f"seccomp={seccomp_profile()}"]
        if self._apparmor:  # docker-default denies every mount, bwrap's included
            security.append("apparmor=unconfined")
        return {
            "user": "0:0",
            "cap_drop": ["ALL"],
            "cap_add": list(AGENT_SANDBOX_CAPS),
            "security_opt": security,
        }

    def _run(self, name: str, folder: str) -> Any:
        return self._client.containers.run(
            self.image,
            [*HOST_COMMAND, "--name", name],
            detach=True,
            name=f"palaestra-{self.gateway}-{name}-{self._generation}-{os.getpid()}",
            labels={LABEL: self.gateway, "palaestra.worker": name},
            network_mode="none",
            read_only=True,
            tmpfs={"/tmp": "size=512m"},
            **self.lockdown(),
            nano_cpus=int(self.cpus * 1e9),
            mem_limit=f"{self.memory_mb}m",
            pids_limit=self.pids,
            volumes={folder: {"bind": SOCKET_DIR, "mode": "rw"}},
            environment={"HOME": "/tmp", "PALAESTRA_HOME": "/tmp/palaestra", **image_plugins()},
        )

    async def stop(self) -> None:
        await super().stop()
        if self._client is not None:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(self.sweep)
            self._client.close()
        shutil.rmtree(self.socket_dir, ignore_errors=True)


def image_plugins() -> dict[str, str]:
    """The gateway's ``PALAESTRA_PLUGINS`` that the image holds (palaestra's own modules, e.g.
    the benchmark fixtures), for the containers: a plugin from the gateway's checkout alone
    (a test's module) is not in the image and would stop the worker from starting."""
    refs = [ref.strip() for ref in os.environ.get("PALAESTRA_PLUGINS", "").split(",")]
    ours = [ref for ref in refs if ref.startswith("palaestra.")]
    return {"PALAESTRA_PLUGINS": ",".join(ours)} if ours else {}


def start_engine(root: str | os.PathLike[str]) -> str:
    """Start ``dockerd --bridge=none`` on a Unix socket under ``root``; its DOCKER_HOST once it
    answers. No bridge and no iptables rules: containers get no network unless asked (the
    backend never asks), and the engine changes nothing on the host's network. Needs root."""
    import subprocess
    import time

    base = os.path.abspath(root)
    os.makedirs(base, exist_ok=True)
    host = f"unix://{base}/docker.sock"
    with open(os.path.join(base, "dockerd.log"), "ab") as log:
        proc = subprocess.Popen(
            [
                "dockerd",
                "--bridge=none",
                "--iptables=false",
                "--ip6tables=false",
                f"--host={host}",
                f"--data-root={base}/data",
                f"--exec-root={base}/exec",
                f"--pidfile={base}/dockerd.pid",
                "--shutdown-timeout=5",  # containers get 5 s to stop when the engine does
            ],
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
    deadline = time.monotonic() + 60
    while not _answers(host):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"dockerd did not start; see {base}/dockerd.log")
        time.sleep(0.2)
    return host


def _answers(host: str) -> bool:
    import docker

    try:
        docker.DockerClient(base_url=host).ping()
    except docker.errors.DockerException:
        return False
    return True


def stop_engine(root: str | os.PathLike[str], timeout: float = 60) -> None:
    """Stop the engine serving ``root`` (found by its pid file, so a restarted one too)."""
    import signal
    import time

    pidfile = os.path.join(os.path.abspath(root), "dockerd.pid")
    try:
        pid = int(Path(pidfile).read_text().strip())
    except (OSError, ValueError):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):  # reap it if it is our child
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                break
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    # dockerd leaves its network namespace mounted; unmounted, the folder can be deleted
    import subprocess

    netns = Path(root, "exec", "netns")
    for mounted in netns.glob("*") if netns.is_dir() else []:
        subprocess.run(["umount", str(mounted)], capture_output=True, check=False)


@contextlib.contextmanager
def local_engine(root: str | os.PathLike[str]) -> Iterator[str]:
    """A Docker engine for this machine's tests and benchmarks (see :func:`start_engine`);
    images are kept under ``root`` between runs. An engine already serving ``root`` is used
    and left running."""
    host = f"unix://{os.path.abspath(root)}/docker.sock"
    if _answers(host):
        yield host
        return
    host = start_engine(root)
    try:
        yield host
    finally:
        stop_engine(root)


BUILD_SCRIPT = Path(__file__).resolve().parents[2] / "docker" / "build.sh"
#: what an image is built from (the wheel's packages, the Dockerfiles and the build script)
IMAGE_SOURCES = (
    "pyproject.toml",
    "docker",
    "palaestra",
    "envs",
    "verifiers",
    "synth_apps",
    "server",
)
#: the image label docker/build.sh stamps with :func:`source_digest` (``PALAESTRA_SOURCE``)
SOURCE_LABEL = "palaestra.source"


def source_digest() -> str:
    """A digest of this checkout's image sources: an image labelled with another one is stale."""
    import hashlib

    root = BUILD_SCRIPT.parents[1]
    digest = hashlib.sha256()
    for name in IMAGE_SOURCES:
        base = root / name
        files = [base] if base.is_file() else sorted(base.rglob("*"))
        for path in files:
            parts = path.relative_to(root).parts
            if not path.is_file() or "__pycache__" in parts or ".wheels" in parts:
                continue
            digest.update("/".join(parts).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def ensure_image(docker_host: str, target: str = "core") -> None:
    """Build ``palaestra/<target>`` (and the ``palaestra/core`` it stands on) with
    docker/build.sh unless the engine has it built from this checkout's sources already (its
    :data:`SOURCE_LABEL` is :func:`source_digest`), so a test never runs yesterday's code."""
    import subprocess
    import sys

    import docker

    # an installed palaestra has no sources to compare: whatever image there is will do
    source = source_digest() if BUILD_SCRIPT.exists() else None
    client = docker.DockerClient(base_url=docker_host)
    stale = []
    try:
        for name in ("core", target) if target != "core" else ("core",):
            try:
                labels = client.images.get(f"palaestra/{name}").labels or {}
            except docker.errors.ImageNotFound:
                stale.append(name)
                continue
            if source is not None and labels.get(SOURCE_LABEL) != source:
                stale.append(name)
    finally:
        client.close()
    if not stale:
        return
    if source is None:
        raise RuntimeError(f"no image palaestra/{target}; build it with docker/build.sh {target}")
    env = {
        **os.environ,
        "DOCKER_HOST": docker_host,
        "PY": sys.executable,
        "PALAESTRA_SOURCE": source,
    }
    subprocess.run([str(BUILD_SCRIPT), *stale], env=env, check=True, timeout=1800)

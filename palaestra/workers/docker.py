"""The Docker backend: each worker is a container, reached over a Unix socket in a bind mount.

A container runs the same worker host as a local subprocess (``palaestra.workers.host``), so
the gateway speaks the same protocol to it, with no port and hence no port clash. Containers are
locked down: no network (``network_mode="none"``), a read-only root with a small ``/tmp``, a
non-root user, every capability dropped, ``no-new-privileges``, and CPU, memory and process
limits. The worker's control connection is its health check: it closes the moment the
container stops, whatever the cause (a crash, ``docker kill``, the OOM killer, the engine going
away), and the backend starts a replacement.

Containers carry labels naming the gateway (``palaestra.gateway``). At start the backend
removes its gateway's containers left by an earlier run that crashed, so no orphan lingers;
on shutdown it removes its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from palaestra.errors import WorkerCrashed
from palaestra.workers.base import Backend, SocketWorker, Worker

START_TIMEOUT_S = 60.0
SOCKET_DIR = "/run/palaestra"
#: the image's unprivileged user (nobody): the socket folder is handed to it
CONTAINER_UID = 65534
LABEL = "palaestra.gateway"
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
            self._client.images.get(self.image)
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
            user=f"{CONTAINER_UID}:{CONTAINER_UID}",
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            nano_cpus=int(self.cpus * 1e9),
            mem_limit=f"{self.memory_mb}m",
            pids_limit=self.pids,
            volumes={folder: {"bind": SOCKET_DIR, "mode": "rw"}},
            environment={"HOME": "/tmp", "PALAESTRA_HOME": "/tmp/palaestra"},
        )

    async def stop(self) -> None:
        await super().stop()
        if self._client is not None:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(self.sweep)
            self._client.close()
        shutil.rmtree(self.socket_dir, ignore_errors=True)


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


def ensure_image(docker_host: str, target: str = "core") -> None:
    """Build ``palaestra/<target>`` with docker/build.sh unless the engine has it already."""
    import subprocess
    import sys

    import docker

    client = docker.DockerClient(base_url=docker_host)
    try:
        client.images.get(f"palaestra/{target}")
        return
    except docker.errors.ImageNotFound:
        pass
    finally:
        client.close()
    if not BUILD_SCRIPT.exists():
        raise RuntimeError(f"no image palaestra/{target}; build it with docker/build.sh {target}")
    env = {**os.environ, "DOCKER_HOST": docker_host, "PY": sys.executable}
    subprocess.run([str(BUILD_SCRIPT), target], env=env, check=True, timeout=1800)

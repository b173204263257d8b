"""Agent code cannot leave its sandbox: every family whose actions run code (found in the registry
by its ``run_python`` / ``run_code`` / ``run_shell`` primitives, never a hard-coded list) is
attacked in-process through its real env, the way a hostile policy would.

Each attack is Python run through the family's code primitive (``run_shell`` runs it with
``python3``; CAD's ``run_code`` reaches ``os``, ``sys``, ``socket`` and ``ctypes`` through
``build123d``'s re-exports, which the static check lets through) and reports what it saw.
"""

from __future__ import annotations

import ast
import errno
import json
import os
import platform
import re
import signal
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from palaestra.family import families
from palaestra.paths import home as paths_home
from palaestra.resolve import resolve

pytestmark = pytest.mark.timeout(600)
REPO = Path(__file__).resolve().parents[2]
CODE_PRIMITIVES = ("run_python", "run_code", "run_shell")  # preferred in this order
CAP_MB = 1536  # an attack that fills a folder stops here: a bound must be hit well before

PY_PRELUDE = """
import os, sys, socket, ctypes
def report(x):
    print("REPORT<<" + repr(x) + ">>", flush=True)
"""
# CAD scripts may import only build123d (and math); build123d re-exports the rest
CAD_PRELUDE = """
import build123d
os = build123d.os
sys = build123d.sys
ctypes = build123d.ctypes
socket = sys.modules["socket"]
def report(x):
    raise ValueError("REPORT<<" + repr(x) + ">>")
"""


def code_envs() -> list:
    out = []
    for family in families().values():
        for spec in family.envs:
            try:
                cls = resolve(spec.entry_point)
            except ImportError:  # the family's extra is not installed: listed as unavailable
                continue
            prims = [p for p in CODE_PRIMITIVES if p in cls.action_set]
            if prims:
                out.append(pytest.param((spec.id, cls, prims[0]), id=spec.id))
    return out


CODE_ENVS = code_envs()


def test_the_registry_names_families_that_run_code():
    ids = {p.values[0][0] for p in CODE_ENVS}
    assert {"palaestra/computer-v0", "palaestra/cad-v0"} <= ids, ids


class Attacker:
    def __init__(self, env, primitive: str) -> None:
        self.env, self.primitive = env, primitive
        self.param = env.action_set.primitives[primitive].params[0].name

    def action(self, code: str) -> dict:
        code = textwrap.dedent(code)
        if self.primitive == "run_code":
            text = CAD_PRELUDE + code + "\nresult = 0\n"
        elif self.primitive == "run_python":
            text = PY_PRELUDE + code
        else:
            text = f"python3 - <<'PALAESTRA_EOF'\n{PY_PRELUDE}{code}\nPALAESTRA_EOF"
        args = {self.param: text}
        if "timeout" in {p.name for p in self.env.action_set.primitives[self.primitive].params}:
            args["timeout"] = 60
        return {"name": self.primitive, "args": args}

    def run(self, code: str):
        obs, *_ = self.env.step(self.action(code))
        texts = []
        for value in obs.values():
            if isinstance(value, str):
                texts.append(value)
                try:
                    decoded = json.loads(value)
                except ValueError:
                    continue
                if isinstance(decoded, dict):
                    texts += [v for v in decoded.values() if isinstance(v, str)]
        found = re.findall(r"REPORT<<(.*?)>>", "\n".join(texts), re.S)
        assert found, f"the attack did not report: {obs.get('last_action_error')!r} {texts}"
        return ast.literal_eval(found[-1])


@pytest.fixture(scope="module", params=CODE_ENVS)
def attacker(request):
    _, cls, primitive = request.param
    env = cls()
    env.reset(seed=0)
    yield Attacker(env, primitive)
    env.close()


def test_agent_code_never_runs_as_root_or_as_the_worker(attacker):
    uids = attacker.run("report([os.getuid(), os.geteuid(), os.getgid()])")
    assert 0 not in uids and os.getuid() not in uids, uids


def test_no_host_process_is_visible(attacker):
    secret = f"--api-key=sk-{uuid.uuid4().hex}"
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", secret])
    try:
        seen = attacker.run(
            f"""
            found, n = False, 0
            for p in os.listdir("/proc"):
                if p.isdigit():
                    n += 1
                    try:
                        fd = os.open("/proc/" + p + "/cmdline", os.O_RDONLY)
                        found = found or {secret.encode()!r} in os.read(fd, 65536)
                        os.close(fd)
                    except OSError:
                        pass
            report([found, n])
            """
        )
        assert seen[0] is False, "the gateway-like process's argv was read from /proc"
        assert seen[1] < 50, f"{seen[1]} processes visible: the host's /proc"
    finally:
        victim.kill()
        victim.wait()


def test_no_network_not_even_the_hosts_loopback(attacker):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    server.settimeout(0.5)
    port = server.getsockname()[1]
    try:
        outcome = attacker.run(
            f"""
            s = socket.socket()
            s.settimeout(3)
            try:
                s.connect(("127.0.0.1", {port}))
                report("connected")
            except OSError as exc:
                report("failed: " + str(exc))
            """
        )
        assert outcome != "connected"
        with pytest.raises(OSError):
            server.accept()[0].close()
    finally:
        server.close()


def test_no_vsock_to_the_hypervisor(attacker):
    """AF_VSOCK is not network-namespaced: on a VM it reaches the hypervisor (CID 2) and other
    guests whatever the sandbox's empty network namespace says, so the socket is never made."""
    outcome = attacker.run(
        """
        try:
            socket.socket(40, socket.SOCK_STREAM).close()  # AF_VSOCK
            report("created")
        except OSError as exc:
            report(exc.errno)
        """
    )
    assert outcome == errno.EPERM, outcome


def test_host_files_are_out_of_reach(attacker, tmp_path):
    secret = tmp_path / "worker-secret.txt"
    secret.write_text("the worker's own file")
    secret.chmod(0o644)
    tmp_path.chmod(0o755)
    planted = tmp_path / "planted-by-agent"
    paths = [str(REPO / "pyproject.toml"), str(REPO / "envs"), "/etc/shadow", str(secret)]
    if paths_home().is_dir() and any(paths_home().iterdir()):  # recordings, suites, keys
        paths.append(str(paths_home()))
    readable = attacker.run(
        f"""
        seen = []
        for path in {paths!r}:
            try:
                if os.path.isdir(path):
                    seen.append([path, len(os.listdir(path)) > 0])
                else:
                    fd = os.open(path, os.O_RDONLY)
                    seen.append([path, len(os.read(fd, 100)) > 0])
                    os.close(fd)
            except OSError:
                seen.append([path, False])
        try:
            fd = os.open({str(planted)!r}, os.O_CREAT | os.O_WRONLY, 0o644)
            os.write(fd, b"pwned")
            os.close(fd)
        except OSError:
            pass
        report(seen)
        """
    )
    assert not [path for path, ok in readable if ok], readable
    assert not planted.exists(), "agent code wrote a file on the host"


@pytest.mark.skipif(platform.machine() != "x86_64", reason="syscall numbers of x86_64")
def test_no_new_namespaces_and_a_seccomp_filter(attacker):
    result = attacker.run(
        """
        libc = ctypes.CDLL(None, use_errno=True)
        out = {}
        for name, call in [
            ("unshare_user", lambda: libc.unshare(0x10000000)),
            ("unshare_mount", lambda: libc.unshare(0x00020000)),
            ("ptrace_traceme", lambda: libc.ptrace(0, 0, 0, 0)),
            ("keyctl", lambda: libc.syscall(250, 0, -3, 0)),
            ("mount", lambda: libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)),
            ("bpf", lambda: libc.syscall(321, 0, 0, 0)),
        ]:
            ctypes.set_errno(0)
            rc = call()
            out[name] = [rc, ctypes.get_errno()]
        report(out)
        """
    )
    for name, (rc, err) in result.items():
        assert rc == -1 and err == errno.EPERM, (name, rc, errno.errorcode.get(err, err))


def test_unshare_r_id_fails(attacker):
    if "run_shell" not in attacker.env.action_set:
        pytest.skip("no shell primitive (the namespace calls are covered above)")
    obs, *_ = attacker.env.step({"name": "run_shell", "args": {"cmd": "unshare -r id -u"}})
    output = json.loads(obs["last_output"])
    assert output["exit_code"] != 0 and output["stdout"].strip() != "0", output


def _fill(attacker, folder: str, tag: str):
    return attacker.run(
        f"""
        chunk, written, err = b"\\0" * 2**20, 0, None
        try:
            for i in range({CAP_MB} // 64):
                fd = os.open(os.path.join({folder!r}, "{tag}-" + str(i)), os.O_CREAT | os.O_WRONLY)
                try:
                    for _ in range(64):
                        os.write(fd, chunk)
                        written += 1
                finally:
                    os.close(fd)
        except OSError as exc:
            err = exc.errno
        for name in os.listdir({folder!r}):
            if name.startswith("{tag}-"):
                os.unlink(os.path.join({folder!r}, name))
        report([written, err])
        """
    )


@pytest.mark.parametrize("folder", ["/tmp", "/dev/shm"])
def test_tmp_and_shm_are_private_and_bounded(attacker, folder):
    tag = f"fill-{uuid.uuid4().hex[:8]}"
    try:
        written, err = _fill(attacker, folder, tag)
    finally:
        for stray in Path(folder).glob(f"{tag}-*"):  # today's code wrote them on the host
            stray.unlink()
    assert err == errno.ENOSPC and written < CAP_MB, (written, err)


def test_the_home_has_a_quota(attacker):
    tag = f"fill-{uuid.uuid4().hex[:8]}"
    written, err = _fill(attacker, ".", tag)
    assert err == errno.ENOSPC and written < CAP_MB, (written, err)
    attacker.env.reset(seed=0)  # the session goes on


def code_script_envs() -> list:
    return [p for p in CODE_ENVS if p.values[0][2] == "run_code"]


@pytest.mark.parametrize("spec", code_script_envs())
def test_cad_importers_read_only_the_scripts_own_files(spec):
    _, cls, _ = spec
    env = cls()
    env.reset(seed=0)
    try:
        for script in (
            "from build123d import *\nresult = import_stl('/etc/shadow')",
            "from build123d import *\nresult = import_step('/etc/passwd')",
            "from build123d import *\nresult = import_brep('../../etc/passwd')",
            "import build123d\nbuild123d.os.symlink('/etc/shadow', 'x.stl')\n"
            "result = build123d.import_stl('x.stl')",
            "import build123d\nbuild123d.os.chdir('/etc')\n"
            "result = build123d.import_step('passwd')",
            # the path given by keyword, after another keyword argument
            "from build123d import *\n"
            "result = import_stl(model_unit=Unit.MM, file_name='/etc/passwd')",
            "from build123d import *\n"
            "result = import_svg_document(flip_y=True, svg_file='/etc/passwd')",
            # an open file instead of a name
            "import build123d\nos = build123d.os\n"
            "result = build123d.import_svg(os.fdopen(os.open('/etc/passwd', 0)))",
        ):
            obs, *_ = env.step({"name": "run_code", "args": {"script": script}})
            error = obs["last_action_error"]
            assert "reads only files in the script's folder" in error, (script, error)
    finally:
        env.close()


@pytest.mark.parametrize("spec", code_script_envs())
def test_build123d_os_system_reaches_nothing(spec, tmp_path):
    _, cls, _ = spec
    tmp_path.chmod(0o777)
    marker = tmp_path / "pwned"
    env = cls()
    env.reset(seed=0)
    try:
        script = (
            "import build123d\n"
            f"build123d.os.system('id > {marker}; cat /proc/1/cmdline >> {marker}')\n"
            "from build123d import *\nresult = Box(1, 1, 1)"
        )
        env.step({"name": "run_code", "args": {"script": script}})
        assert not marker.exists(), marker.read_text()
    finally:
        env.close()


_WORKER = """
import os, sys
from palaestra.envs.runtimes.sandbox import Slot, mount_quota
slot = Slot()
mount_quota(slot.root / "home", slot.uid, 8)  # a session's home, as the families mount it
print(slot.root, flush=True)
sys.stdin.read()
"""


def test_a_killed_workers_session_folders_are_swept_and_live_ones_kept():
    from palaestra.envs.runtimes.sandbox import Slot, sweep

    live = Slot()
    try:
        killed = subprocess.Popen(
            [sys.executable, "-c", _WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        assert killed.stdout is not None
        stale = Path(killed.stdout.readline().decode().strip())
        assert stale.is_dir()
        os.kill(killed.pid, signal.SIGKILL)
        killed.wait()
        assert stale.is_dir()  # nothing cleaned up after a kill -9
        # the next worker's first sandbox sweeps it
        started = subprocess.run(
            [sys.executable, "-c", "from palaestra.envs.runtimes.sandbox import Slot; Slot()"],
            capture_output=True,
            timeout=60,
        )
        assert started.returncode == 0, started.stderr
        deadline = time.monotonic() + 5
        while stale.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not stale.exists()
        assert str(stale) not in Path("/proc/self/mountinfo").read_text()
        assert live.root.is_dir()
        sweep()
        assert live.root.is_dir(), "a live session's folder was swept"
    finally:
        live.close()

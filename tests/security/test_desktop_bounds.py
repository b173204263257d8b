"""The computer family's session, attacked from inside as a hostile agent would: nothing it makes
is read unbounded (or at all, when it is not a regular file) by the root worker, and a
session's processes are bounded and stopped as a whole.

One desktop (Xvfb, sandbox) serves the module; each test resets it onto its own task.
"""

from __future__ import annotations

import json
import os
import threading

import pytest

from palaestra.envs.computer.env import ComputerEnv
from palaestra.tasks import Task

pytestmark = pytest.mark.timeout(300)
MB = 2**20


def task(verifier: dict, files: dict | None = None) -> Task:
    return Task(
        id="bounds",
        family="computer",
        env="palaestra/computer-v0",
        instruction="Write the report.",
        setup={"files": files or {"report.txt": "draft\n"}, "apps": []},
        verifier=verifier,
    )


@pytest.fixture(scope="module")
def desktop():
    env = ComputerEnv()
    yield env
    env.close()


def shell(env: ComputerEnv, cmd: str, timeout: float = 30) -> dict:
    obs, *_ = env.step({"name": "run_shell", "args": {"cmd": cmd, "timeout": timeout}})
    assert not obs["last_action_error"], obs["last_action_error"]
    return json.loads(obs["last_output"])


def uid_processes(uid: int) -> list[int]:
    """The live pids whose real uid is ``uid`` (the test's own reading of /proc)."""
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/status") as f:
                status = dict(x.split(":", 1) for x in f if ":" in x)
        except OSError:
            continue
        if int(status["Uid"].split()[0]) == uid and "Z" not in status["State"]:
            out.append(int(pid))
    return out


def verify_soon(env: ComputerEnv, unblock: str, wait_s: float = 60.0):
    """The verifier's result; a verifier still reading after ``wait_s`` (the old hang) fails the
    test, after the FIFO ``unblock`` is opened for writing so the stuck read can end."""
    box: dict = {}
    thread = threading.Thread(target=lambda: box.update(r=env.verify()), daemon=True)
    thread.start()
    thread.join(wait_s)
    if thread.is_alive():
        fd = os.open(unblock, os.O_WRONLY | os.O_NONBLOCK)  # the stuck open() returns ...
        os.close(fd)  # ... and reads an end of file
        thread.join(30)
        pytest.fail("the verifier blocked on the agent's FIFO")
    return box["r"]


def test_a_fifo_in_place_of_the_report_fails_the_check_at_once(desktop):
    desktop.reset(options={"task": task({"kind": "file_contents", "path": "report.txt"})})
    shell(desktop, "rm report.txt && mkfifo report.txt")
    result = verify_soon(desktop, str(desktop.sandbox.home / "report.txt"))
    assert not result.success
    assert "not a regular file" in result.checks[0].detail


def test_a_fifo_fed_by_a_background_writer_is_not_read(desktop):
    """With a writer the open succeeds and a plain read never ends (+2.4 GB in the worker)."""
    verifier = {"kind": "checksum", "path": "report.txt", "sha256": "0" * 64}
    desktop.reset(options={"task": task(verifier)})
    shell(desktop, "rm report.txt && mkfifo report.txt && (setsid yes > report.txt &)")
    result = verify_soon(desktop, str(desktop.sandbox.home / "report.txt"))
    assert not result.success
    assert "not a regular file" in result.checks[0].detail


def test_a_file_larger_than_a_check_reads_is_refused_unread(desktop):
    verifier = {"kind": "file_contents", "path": "report.txt", "not_contains": "secret"}
    desktop.reset(options={"task": task(verifier)})
    shell(desktop, "head -c 40000000 /dev/zero > report.txt")
    result = desktop.verify()
    assert not result.success and "larger than" in result.checks[0].detail


def test_a_folder_swapped_for_a_link_is_not_followed(desktop):
    """The probe resolves inside the home, then opens every component without following a link:
    a link in place of a folder (here planted before the check) is never a way out."""
    desktop.reset(options={"task": task({"kind": "file_contents", "path": "d/report.txt"})})
    shell(desktop, "ln -s /etc d")
    result = desktop.verify()
    assert not result.success
    probe = desktop.state_probe()
    with pytest.raises(OSError):
        probe.data(str(probe.home / "d/passwd"))  # the resolved path, opened without links


def test_a_huge_cwd_report_is_no_report(desktop):
    """The shell reports its cwd through an fd the agent's code holds: 300 MB written there was
    read whole (+600 MB in the worker) and became the session's cwd."""
    desktop.reset(options={"task": task({"kind": "file_contents", "path": "report.txt"})})
    shell(desktop, "cd Documents 2>/dev/null || mkdir -p Documents && cd Documents")
    before = desktop.code.cwd
    shell(desktop, 'head -c 50000000 /dev/zero | tr "\\0" / >&"$__fd"; exit 0')
    assert desktop.code.cwd == before


def test_a_verifier_command_reads_a_bounded_output(desktop):
    """``command_output`` may print the agent's bytes (``cat`` of its file): they come back
    through a file and at most ``sandbox.MAX_CHECK_OUTPUT`` (1 MB) of them are read."""
    desktop.reset(options={"task": task({"kind": "file_contents", "path": "report.txt"})})
    shell(desktop, "head -c 100000000 /dev/zero > big")
    code, out, _ = desktop.state_probe().run("cat ~/big", 30)
    assert code == 0 and 0 < len(out) <= 2 * MB  # not the 100 MB


def test_cleanup_never_kills_a_process_that_took_a_remembered_pid(desktop, monkeypatch):
    """At the process limit the session kills what earlier actions left running. It used to
    SIGKILL the process groups of earlier actions by their remembered pids: a root process that
    was given such a pid afterwards died. The pid is handed to a root decoy here on purpose
    (``ns_last_pid``), then the session is filled to its process limit."""
    import subprocess

    from palaestra.envs.computer import code as code_module

    desktop.reset(options={"task": task({"kind": "file_contents", "path": "report.txt"})})
    started: list[int] = []
    real_popen = subprocess.Popen

    class Recording(real_popen):  # type: ignore[misc,valid-type]
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            if "nsenter" in args[0]:  # a code action (not the observation's xprop, say)
                started.append(self.pid)

    monkeypatch.setattr(code_module.subprocess, "Popen", Recording)
    decoy = None
    for _ in range(20):  # another process on the machine may take the pid first: try again
        started.clear()
        shell(desktop, "true")
        action_pid = started[-1]  # reaped: free for the next process that asks
        with open("/proc/sys/kernel/ns_last_pid", "w") as f:
            f.write(str(action_pid - 1))
        decoy = real_popen(["sleep", "300"], start_new_session=True)  # root, its own group
        if decoy.pid == action_pid:
            break
        decoy.kill()
        decoy.wait()
    else:
        pytest.skip("could not hand an action's pid to the decoy")
    monkeypatch.undo()
    try:
        limit = desktop.sandbox.limits.nproc
        shell(desktop, f"for i in $(seq {limit}); do sleep 1000 & done 2>/dev/null; true")
        assert len(uid_processes(desktop.sandbox.uid)) >= limit - 16
        out = shell(desktop, "echo alive")
        assert "process limit" in out["stderr"] and out["stdout"].strip() == "alive"
        assert decoy.poll() is None, "a root process that took an earlier action's pid died"
        assert len(uid_processes(desktop.sandbox.uid)) < limit // 2  # the strays are gone
    finally:
        decoy.kill()
        decoy.wait()


def xvfb_of(env: ComputerEnv) -> int | None:
    """The pid of the process serving the session's display (whoever runs it)."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        started = env.display.proc.pid if env.display.proc else -1
        if argv[0].endswith(b"Xvfb") and (env.display.name.encode() in argv or int(pid) == started):
            return int(pid)
    return None


def test_the_x_server_is_the_sessions_own_and_bounded(desktop):
    """Xvfb parses every X request the agent sends: it ran as root on the host (pixmaps grew it
    from 70 MB to 3.1 GB past memory_mb). It is the session's uid now, with its limits."""
    desktop.reset(options={"task": task({"kind": "file_contents", "path": "report.txt"})})
    pid = xvfb_of(desktop)
    assert pid is not None, "no X server runs for this session's display"
    with open(f"/proc/{pid}/status") as f:
        uid = next(int(x.split()[1]) for x in f if x.startswith("Uid:"))
    assert uid == desktop.sandbox.uid
    with open(f"/proc/{pid}/limits") as f:
        line = next(x for x in f if x.startswith("Max address space"))
    assert int(line.split()[3]) == desktop.sandbox.limits.memory_mb * MB
    assert os.readlink(f"/proc/{pid}/ns/net") != os.readlink("/proc/self/ns/net")


SET_FONT_PATH = """
import ctypes, sys
x = ctypes.CDLL("libX11.so.6")
x.XOpenDisplay.restype = ctypes.c_void_p
x.XSetFontPath.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int]
x.XSync.argtypes = [ctypes.c_void_p, ctypes.c_int]
d = x.XOpenDisplay(None)
x.XSetFontPath(d, (ctypes.c_char_p * 1)(sys.argv[1].encode()), 1)
x.XSync(d, 0)  # a refused path is a BadValue: the default handler exits 1
print("font path set")
"""


def test_a_font_path_cannot_make_the_x_server_read_a_root_only_folder(desktop, tmp_path):
    secret = tmp_path / "root-only"
    secret.mkdir(mode=0o700)
    (secret / "fonts.dir").write_text("0\n")
    desktop.reset(options={"task": task({"kind": "file_contents", "path": "report.txt"})})
    desktop.step({"name": "write_file", "args": {"path": "fp.py", "content": SET_FONT_PATH}})
    out = shell(desktop, f"python3 fp.py {secret}")
    assert "font path set" not in out["stdout"] and out["exit_code"] != 0, out


def test_the_sandbox_shows_an_allow_list_of_the_host(desktop, tmp_path):
    """The sandbox hid a fixed list of folders, so the rest of the host (/var, /etc, a folder
    added later) was readable; now only the system and a few /etc entries are there."""
    fresh = f"/var/lib/palaestra-probe-{os.getpid()}"
    os.makedirs(fresh, exist_ok=True)
    try:
        desktop.reset(options={"task": task({"kind": "file_contents", "path": "report.txt"})})
        probes = f"{fresh} /etc/apt /etc/ssh /etc/hostname /srv /opt /sys/kernel /var/lib"
        seen = shell(desktop, f"ls -d {probes} 2>/dev/null; ls /var")
        assert seen["stdout"].split() == ["cache", "tmp"], seen
        apps = shell(desktop, "xterm -version && mousepad --version >/dev/null && id -un")
        assert apps["exit_code"] == 0 and apps["stdout"].strip().endswith("user"), apps
    finally:
        os.rmdir(fresh)


@pytest.fixture(scope="module")
def tight():
    """A desktop with small session limits (the operator's ``PALAESTRA_COMPUTER_LIMITS``)."""
    env = ComputerEnv(limits={"step_s": 3, "memory_mb": 700})
    yield env
    env.close()


@pytest.fixture(scope="module")
def stingy():
    """A desktop whose processes may use 5 % of a CPU together (after a 1 s burst)."""
    env = ComputerEnv(limits={"cpus": 0.05, "cpu_burst_s": 1})
    yield env
    env.close()


def in_thread(fn, wait_s: float = 60.0):
    box: dict = {}

    def run():
        try:
            box["r"] = fn()
        except Exception as exc:  # handed to the test
            box["e"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(wait_s)
    return thread.is_alive(), box


def test_a_batch_of_tool_calls_stops_at_the_steps_time_budget(tight):
    """A batch ran call after call past the gateway's step timeout (and, the worker's thread
    being busy, past close); now the step's budget covers every call, and what the step left
    running, detached or not, is stopped with it."""
    tight.reset(options={"task": task({"kind": "file_contents", "path": "report.txt"})})
    calls = [
        {"name": "run_shell", "args": {"cmd": "(setsid sleep 300 &); sleep 100", "timeout": 100}},
        {"name": "run_shell", "args": {"cmd": "sleep 100", "timeout": 100}},
        {"name": "run_shell", "args": {"cmd": "touch ~/third", "timeout": 10}},
    ]
    running, box = in_thread(lambda: tight.step(calls))
    if running:
        tight.close()  # ends the stuck batch (the old code ran it for 200 s)
        pytest.fail("the batch ran past its step's time budget")
    obs = box["r"][0]
    assert "time budget" in obs["last_action_error"]
    assert not (tight.sandbox.home / "third").exists()
    sleeping = [p for p in uid_processes(tight.sandbox.uid) if b"sleep\0300" in cmdline(p)]
    assert sleeping == []


def cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""


def until_stopped(env: ComputerEnv, steps: int = 30) -> str:
    """Step (``sleep 0.5``) until the session is stopped; its error, or "" if it never was."""
    from palaestra.errors import EnvCrashed

    for _ in range(steps):
        try:
            env.step({"name": "run_shell", "args": {"cmd": "sleep 0.5", "timeout": 2}})
        except EnvCrashed as exc:
            return str(exc)
    return ""


def test_memory_is_bounded_for_the_sessions_sum(tight):
    """Three processes under the per-process limit each went 2.7 GB together against 2 GB."""
    tight.reset(options={"task": task({"kind": "file_contents", "path": "report.txt"})})
    hold = "python3 -c 'x = chr(120) * (300 * 2**20); import time; time.sleep(300)'"
    shell(tight, f"for i in 1 2 3; do (setsid {hold} &); done; sleep 0.1", timeout=2)
    error = until_stopped(tight)
    assert "memory" in error and "reset" in error, error
    assert uid_processes(tight.sandbox.uid) == []  # all of it, the X server included
    tight.reset()  # and the session starts over


def test_cpu_is_bounded_for_the_sessions_sum(stingy):
    """A detached process burnt 19 s of CPU in 20 s against a 3 s limit: each action's
    RLIMIT_CPU binds each process alone, and a fresh busy child every 2 s starts from zero.
    The session's processes together get their share, then the session stops."""
    stingy.reset(options={"task": task({"kind": "file_contents", "path": "report.txt"})})
    busy = "while :; do timeout 2 sh -c 'while :; do :; done'; done"
    shell(stingy, f'(setsid bash -c "{busy}" &)', timeout=2)
    error = until_stopped(stingy, steps=60)
    assert "CPU" in error, error
    assert uid_processes(stingy.sandbox.uid) == []

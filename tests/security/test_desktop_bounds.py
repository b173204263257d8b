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
    """The pids whose real uid is ``uid`` (the test's own reading of /proc)."""
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/status") as f:
                line = next(x for x in f if x.startswith("Uid:"))
        except (OSError, StopIteration):
            continue
        if int(line.split()[1]) == uid:
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

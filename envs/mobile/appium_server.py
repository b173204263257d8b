"""A local Appium server from the repository's ``.appium`` folder (``scripts/setup-appium.sh``).

Tests and ``bench/mobile.py`` start one on 127.0.0.1 and a free port and stop it by its PID; a
user with a device starts theirs the same way with the driver they need (see the README).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from palaestra.envs.mobile.phone import PhoneError

ROOT = Path(__file__).resolve().parents[2]
APPIUM_HOME = Path(os.environ.get("APPIUM_HOME", ROOT / ".appium"))
APPIUM = APPIUM_HOME / "node_modules" / ".bin" / "appium"
#: the fake driver's capabilities, with the sample screen shipped in the tests
FAKE_APP = ROOT / "tests" / "envs" / "mobile" / "fake_app.xml"
FAKE_CAPS = {
    "platformName": "Fake",
    "appium:automationName": "Fake",
    "appium:deviceName": "Fake",
    "appium:app": str(FAKE_APP),
}


def installed() -> bool:
    return APPIUM.exists()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def local_appium(log: Path, start_timeout_s: float = 30) -> Iterator[tuple[str, subprocess.Popen]]:
    """Start ``appium server`` on loopback; yields (URL, process); stops it by its PID."""
    if not installed():
        raise PhoneError(f"Appium is not installed in {APPIUM_HOME}: run scripts/setup-appium.sh")
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    env = dict(os.environ, APPIUM_HOME=str(APPIUM_HOME))
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(APPIUM), "server", "--address", "127.0.0.1", "--port", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + start_timeout_s
        while True:
            try:
                with urllib.request.urlopen(f"{url}/status", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise PhoneError(f"Appium did not start:\n{log.read_text()[-2000:]}")
            time.sleep(0.2)
        yield url, proc
    finally:
        stop(proc)


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    os.kill(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()

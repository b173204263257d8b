"""CAD: nothing a ``run_code`` script makes is read or parsed by the (root) worker, and no
semantic action can hold the worker past its heartbeat.

Each test is an attack a red team ran against the worker (issue 28) and failed on the code
before the fix: a crafted ``result.brep`` that segfaults the kernel's parser, a result swapped
between a file and a link to a root-only file while the worker opens it, 1 GB printed to stdout
without a newline, and a 30,000-sided polygon extruded in the worker.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest

pytest.importorskip("build123d")

from palaestra.envs.cad.env import CadEnv

pytestmark = pytest.mark.timeout(900)
REPO = Path(__file__).resolve().parents[2]

# writes a BREP of a box whose first curve is a B-spline with -3 poles: the kernel's BREP
# reader allocates and reads them anyway and dies of SIGSEGV (OpenCascade 7.7/7.8)
CRAFT = """
import build123d
os = build123d.os
build123d.export_brep(build123d.Box(1, 2, 3), "good.brep")
fd = os.open("good.brep", os.O_RDONLY)
text = os.read(fd, 1 << 20).decode().replace("DBRep_DrawableShape\\n", "", 1)
bad_curve = "7 0 0 1 -3 2 0 0 0 0 0 1 0 2 1 2\\n"
crafted = text.replace("Curves 12\\n1 0 0 0 0 0 1 \\n", "Curves 12\\n" + bad_curve, 1)
assert crafted != text, "the box's BREP changed: update the crafted curve"
fd = os.open(NAME, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, crafted.encode())
os.close(fd)
"""
# the script says it is done, then dies before its own export could overwrite the file
SAY_DONE = "os.write(1, b'{\"ok\": true}\\n')\n"


def _texts(obs: dict) -> str:
    return "\n".join(v for v in obs.values() if isinstance(v, str))


def _run(env: CadEnv, script: str) -> dict:
    obs, *_ = env.step({"name": "run_code", "args": {"script": script}})
    return obs


def test_the_crafted_brep_does_crash_the_kernels_parser(tmp_path):
    """The probe is real: parsed in a plain process, the crafted file kills it (SIGSEGV)."""
    name = tmp_path / "crafted.brep"
    code = f"NAME = {str(name)!r}\n{CRAFT}\nbuild123d.import_brep(NAME)\nprint('parsed')"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, timeout=300
    )
    assert done.returncode == -signal.SIGSEGV, (done.returncode, done.stderr[-500:])


_WORKER = r"""
import json, sys
from palaestra.envs.cad.env import CadEnv
a, b = CadEnv(observe=["feedback"]), CadEnv(observe=["feedback"])
a.reset(); b.reset()
obs, *_ = a.step({"name": "run_code", "args": {"script": sys.argv[1]}})
print(json.dumps({"error": obs["last_action_error"]}), flush=True)
box = "from build123d import *\nresult = Box(1, 2, 3)"
other, *_ = b.step({"name": "run_code", "args": {"script": box}})
again, *_ = a.step("new_sketch('XY')")
print(json.dumps({"other": other["feedback"], "again": again["feedback"]}), flush=True)
a.close(); b.close()
"""


def test_a_crafted_result_fails_its_step_not_the_worker():
    """The script writes a BREP that segfaults the parser and says it is done. The process
    holding the sessions (a worker) lives: the step fails with a sentence, the same session
    goes on, and another session on the worker runs its script."""
    script = f"NAME = 'result.brep'\n{CRAFT}\n{SAY_DONE}os.kill(os.getpid(), 9)\nresult = 0\n"
    done = subprocess.run(
        [sys.executable, "-c", _WORKER, script],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr[-2000:])
    first, second = (json.loads(line) for line in done.stdout.splitlines()[-2:])
    assert "could not be read" in first["error"] and "SIGSEGV" in first["error"], first
    assert "the script's result is the model" in second["other"], second
    assert "new sketch on XY" in second["again"], second


def test_a_result_swapped_for_a_link_never_leaks_a_root_only_file(tmp_path):
    """The script says it is done, then keeps swapping ``result.brep`` between its own part
    and a link to a root-only file outside the sandbox (a BREP of a 321 x 47 x 9 box). Before,
    the worker checked the name and then opened it, and loaded the root-only part in 2 to 4 of
    6 tries (a race: on a loaded machine fewer; the old code also answered "missing" whenever
    its check saw the link, which the last assertion refuses); now nothing of it shows in any
    observation."""
    from build123d import Box, export_brep

    secret_dir = tmp_path / f"root-only-{uuid.uuid4().hex[:8]}"
    secret_dir.mkdir(mode=0o700)
    secret = secret_dir / "secret.brep"
    export_brep(Box(321, 47, 9), str(secret))
    secret.chmod(0o600)
    assert os.stat(secret).st_uid == os.getuid() == 0, "the probe needs a root worker"
    script = (
        "import build123d\nos = build123d.os\n"
        "build123d.export_brep(build123d.Box(10, 10, 10), 'mine.brep')\n"
        "os.link('mine.brep', 'result.brep')\n"
        "for i in range(400000):\n"  # says it is done while the swapping runs at full speed
        f"    os.symlink({str(secret)!r}, 'l')\n"
        "    os.replace('l', 'result.brep')\n"
        "    os.link('mine.brep', 'f')\n"
        "    os.replace('f', 'result.brep')\n"
        "    if i == 5000:\n"
        f"        {SAY_DONE}"
        "result = 0\n"
    )
    env = CadEnv(observe=["feedback", "properties", "history"])
    env.reset()
    seen = []
    try:
        for _ in range(8):
            obs = _run(env, script)
            text = _texts(obs)
            seen.append(obs["last_action_error"] or obs["feedback"])
            leaked = re.search(r"\b321\b|47 x 9", text)
            assert not leaked, (seen[-1], obs.get("properties"))
    finally:
        env.close()
    # the attack ran (its own part or a refusal of the link each time), not a failed script
    assert all("10 x 10 x 10" in s or "regular file" in s for s in seen), seen


def _rss_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(field)


def test_a_gigabyte_on_stdout_without_a_newline_stays_out_of_the_worker():
    """1 GB printed without a newline: the worker (this process) reads at most a capped line;
    its peak memory grows by far less than 200 MB (it grew by about 2 GB with ``readline``)."""
    env = CadEnv(observe=["feedback"])
    env.reset()
    try:
        _run(env, "from build123d import *\nresult = Box(1, 1, 1)")  # children warm
        before = _rss_kb("VmRSS")
        Path("/proc/self/clear_refs").write_text("5")  # the peak (VmHWM) starts again here
        script = (
            "import build123d\nos = build123d.os\nchunk = b'x' * (1 << 20)\n"
            "for i in range(1024):\n    os.write(1, chunk)\nresult = 0\n"
        )
        obs = _run(env, script)
        grown_mb = (_rss_kb("VmHWM") - before) / 1024
        print(f"worker RSS {before / 1024:.0f} MB, peak during the probe +{grown_mb:.0f} MB")
        assert "printed more than" in obs["last_action_error"], obs["last_action_error"]
        assert grown_mb < 200, grown_mb
        obs = _run(env, "from build123d import *\nresult = Box(2, 2, 2)")
        assert "the script's result is the model" in obs["feedback"]
    finally:
        env.close()


@pytest.mark.parametrize(
    ("action", "named"),
    [
        ("polygon(sides=30000, radius=10)", "'sides' must be <= 120"),
        ("extrude(1e9)", "'distance' must be <= 10000"),
        ("circle(1, x=1e12)", "'x' must be <= 10000"),
        ("pattern('linear', 1000, 5)", "'count' must be <= 100"),
        ("hole('>Z', '0,0', 1, depth=1e30)", "'depth' must be <= 10000"),
        ({"name": "circle", "args": {"radius": float("inf")}}, "must be <= 10000"),
        ({"name": "rectangle", "args": {"width": float("nan"), "height": 1}}, "finite"),
    ],
)
def test_semantic_arguments_have_upper_bounds(action, named):
    env = CadEnv(observe=["feedback", "history"])
    env.reset()
    try:
        env.step("new_sketch('XY')")
        obs, *_ = env.step(action)
        assert named in obs["last_action_error"], obs["last_action_error"]
        assert env.model.calls() == ["new_sketch(plane='XY', offset=0.0)"]
    finally:
        env.close()


def test_a_pattern_mirror_or_shell_past_the_face_bounds_is_refused_before_the_kernel_runs():
    from palaestra.envs.cad import ops

    env = CadEnv(observe=["feedback"])
    env.reset()
    try:
        for action in ("new_sketch('XY')", "polygon(sides=120, radius=10)", "extrude(5)"):
            obs, *_ = env.step(action)
            assert not obs["last_action_error"], obs["last_action_error"]
        calls = env.model.calls()
        obs, *_ = env.step("pattern('linear', 100, 30, 'X')")
        assert f"over the limit of {ops.MAX_FACES}" in obs["last_action_error"]
        assert env.model.calls() == calls
        for action in ("mirror('XY')", "pattern('linear', 3, 30, 'X')"):  # 366 faces
            obs, *_ = env.step(action)
            assert not obs["last_action_error"], obs["last_action_error"]
        obs, *_ = env.step("shell('>Z', 1)")  # an offset of every one of 366 faces: refused
        assert f"at most {ops.MAX_SHELL_FACES}" in obs["last_action_error"]
        obs, *_ = env.step("pattern('linear', 2, 100, 'Y')")  # 732 faces
        assert not obs["last_action_error"], obs["last_action_error"]
        calls = env.model.calls()
        obs, *_ = env.step("mirror('YZ', -50)")  # 2 x 732 faces: refused
        assert f"over the limit of {ops.MAX_FACES}" in obs["last_action_error"]
        assert env.model.calls() == calls
    finally:
        env.close()


def test_a_huge_polygon_never_stops_the_workers_heartbeat(tmp_path):
    """Through the gateway, with a 5 s heartbeat: a 30,000-sided polygon extruded in the worker
    held the GIL past the heartbeat, and the worker and its other sessions were killed. Now the
    polygon is refused by its schema, the worker keeps its pid and its neighbour session works."""
    from palaestra.server.runner import gateway_thread
    from palaestra.server.settings import Settings

    settings = Settings(workers=1, runs_dir=tmp_path, step_timeout_s=120, heartbeat_s=5.0)
    with gateway_thread(settings) as url, httpx.Client(base_url=url, timeout=180) as http:
        sids = []
        for _ in range(2):
            r = http.post("/v1/sessions", json={"env": "palaestra/cad-v0"})
            assert r.status_code == 201, r.text
            sids.append(r.json()["session_id"])
            assert http.post(f"/v1/sessions/{sids[-1]}/reset", json={}).status_code == 200
        pid = http.get("/v1/health").json()["workers"][0]["pid"]
        victim, neighbour = sids
        for action in ("new_sketch('XY')", "polygon(sides=30000, radius=10)", "extrude(5)"):
            r = http.post(f"/v1/sessions/{victim}/step", json={"action": action})
            assert r.status_code == 200, r.text
        assert "needs a sketch" in r.json()["observation"]["last_action_error"]
        time.sleep(6)  # a heartbeat period after the steps
        assert http.get("/v1/health").json()["workers"][0]["pid"] == pid
        r = http.post(f"/v1/sessions/{neighbour}/step", json={"action": "new_sketch('XY')"})
        assert r.status_code == 200, r.text

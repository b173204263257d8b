"""palaestra/computer-v0: GUI and code in one sandbox, bad input, escape attempts, a crashed X
server, the verifiers, the built-in suite's validation, the OSWorld loader, and the family
through the gateway with RemoteEnv."""

import contextlib
import json
import os
import signal
import socket

import numpy as np
import pytest

from palaestra.client import RemoteEnv
from palaestra.envs.computer.actions import COMPUTER_ACTIONS, from_computer_13, parse_pyautogui
from palaestra.envs.computer.env import ComputerEnv
from palaestra.envs.computer.osworld import report
from palaestra.envs.computer.suites import RECORD, all_tasks, load_suite
from palaestra.errors import ActionError, EnvCrashed
from palaestra.tasks import get_suite, get_task
from palaestra.validation import validate_task

pytestmark = pytest.mark.timeout(300)
TASKS = {t.id: t for t in all_tasks()}


def out(obs):
    return json.loads(obs["last_output"])


def step_ok(env, action):
    obs, *_ = env.step(action)
    assert not obs["last_action_error"], (action, obs["last_action_error"])
    return obs


def shell(env, cmd, timeout=10):
    return out(step_ok(env, {"name": "run_shell", "args": {"cmd": cmd, "timeout": timeout}}))


def test_pyautogui_and_computer_13_are_parsed_never_run():
    steps = parse_pyautogui(
        "import pyautogui, time\npyautogui.click(10, 20, button='right')\ntime.sleep(9)\n"
        "pyautogui.hotkey('ctrl', 's')\npyautogui.write('hi')\npyautogui.scroll(-3)"
    )
    assert [s["name"] for s in steps] == ["click", "wait", "key", "type_text", "scroll"]
    assert steps[1]["args"]["seconds"] == 5.0 and steps[4]["args"]["dy"] == 3
    with pytest.raises(ActionError, match="not a plain call"):
        parse_pyautogui("import os\nx = os.system('rm -rf /')")
    with pytest.raises(ActionError, match="not supported"):
        parse_pyautogui("os.system('id')")
    with pytest.raises(ActionError, match="literals"):
        parse_pyautogui("pyautogui.write(open('/etc/passwd').read())")
    act = from_computer_13(
        {"action_type": "CLICK", "parameters": {"x": 5, "y": 6, "num_clicks": 2}}
    )
    assert COMPUTER_ACTIONS.parse(act).name == "double_click"
    assert from_computer_13({"action_type": "HOTKEY", "parameters": {"keys": ["ctrl", "c"]}}) == {
        "name": "key",
        "args": {"combo": "ctrl+c"},
    }


def test_gui_and_code_act_on_one_world(env):
    obs, _ = env.reset(seed=0)
    assert obs["screenshot"].shape == (768, 1024, 3) and obs["screenshot"].dtype == np.uint8
    wins = json.loads(obs["windows"])
    assert [w["class"] for w in wins] == ["XTerm"] and wins[0]["focused"]
    step_ok(env, "click(512, 400)")
    obs = step_ok(env, "type_text('echo typed > gui.txt\\n')")
    assert obs["screenshot"].std() > 0
    res = shell(env, "sleep 0.2; cat gui.txt; cd Desktop; id -un")
    assert res["stdout"] == "typed\nuser\n" and res["exit_code"] == 0
    obs = step_ok(env, "run_python('import os; print(os.getcwd())')")
    assert out(obs)["stdout"] == "/home/user/Desktop\n" and obs["cwd"] == "/home/user/Desktop"
    step_ok(env, "write_file('n.txt', 'x')")
    assert (env.sandbox.home / "Desktop/n.txt").read_text() == "x"
    obs = step_ok(env, "pyautogui.hotkey('ctrl', 'c')")
    obs = step_ok(env, {"action_type": "TYPING", "parameters": {"text": "ls\n"}})
    assert shell(env, "exit 3")["exit_code"] == 3


@pytest.mark.parametrize(
    ("action", "phrase"),
    [
        ("click(5000, 10)", "outside the screen"),
        ("drag(10, 10, 2000, 10)", "outside the screen"),
        ("key('ctrl+nosuchkey')", "unknown key"),
        ("key_down('Hyperdrive')", "unknown key"),
        ("pyautogui.click(1, 1)\npyautogui.press('nope')", "unknown key"),
        ({"action_type": "TELEPORT"}, "unknown computer_13"),
        ("rm -rf /", "cannot parse"),
    ],
)
def test_agent_mistakes_change_nothing(env, action, phrase):
    env.reset(seed=0)
    obs, *_ = env.step(action)
    assert phrase in obs["last_action_error"]


def test_runaway_code_is_contained(env):
    env.reset(seed=0)
    res = shell(env, "while true; do :; done", timeout=1)
    assert res["timed_out"] and res["exit_code"] is None
    bomb = shell(env, "bomb() { bomb | bomb; }; bomb", timeout=2)
    assert bomb["timed_out"]
    shell(env, ":(){ :|:& };:", timeout=2)  # returns at once, the bomb goes on in the background
    shell(env, "sleep 1", timeout=3)
    assert shell(env, "echo alive")["stdout"].endswith("alive\n")
    procs = shell(env, "ps -e --no-headers | wc -l")["stdout"]
    assert int(procs) < 50 and len(json.loads(env._observe()["windows"])) == 1
    hog = out(step_ok(env, "run_python('x = bytearray(8 * 2**30)')"))
    assert hog["exit_code"] != 0 and "MemoryError" in hog["stderr"]
    flood = shell(env, "yes | head -c 100000000", timeout=10)
    assert len(flood["stdout"]) < 20_000 and "[output cut]" in flood["stdout"]
    assert shell(env, "echo still here")["stdout"] == "still here\n"


def test_escape_attempts_fail(env, tmp_path):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret")
    os.chmod(tmp_path, 0o755)
    other = ComputerEnv(width=640, height=480)
    try:
        other.reset(seed=0)
        (other.sandbox.home / "mine.txt").write_text("other session")
        env.reset(seed=0)
        net = out(
            step_ok(
                env,
                "run_python('import socket; "
                f'socket.create_connection(("127.0.0.1", {port}), 2)\')',
            )
        )
        assert net["exit_code"] != 0 and "Error" in net["stderr"]
        for path in (
            str(secret),
            os.getcwd() + "/pyproject.toml",
            str(other.sandbox.home / "mine.txt"),
            "/etc/shadow",
        ):
            res = shell(env, f"cat {path}")
            assert res["exit_code"] != 0 and not res["stdout"], path
        # an allow-list of the host: /root, /work, /var/lib... are simply not there
        hidden = shell(env, "ls -A /root /work /srv /var/lib")
        assert hidden["exit_code"] != 0 and not hidden["stdout"], hidden
        assert shell(env, "ls -A /tmp")["stdout"].split() == [
            ".X11-unix",
            ".session-bus",  # the session D-Bus's socket
        ]
        assert "Read-only" in shell(env, "touch /usr/evil")["stderr"]
        assert "Permission denied" in shell(env, "touch /etc/evil")["stderr"]  # root's folder
        assert shell(env, "id -u")["stdout"].strip() != "0"
        assert int(shell(env, "ps -e --no-headers | wc -l")["stdout"]) < 20  # not the host's
        # a planted symlink: the write stays the sandbox user's, the verifier refuses to follow
        shell(env, f"ln -s {secret} link.txt")
        obs, *_ = env.step("write_file('link.txt', 'pwned')")
        assert obs["last_action_error"] and secret.read_text() == "host secret"
        probe = env.state_probe()
        with pytest.raises(PermissionError):
            probe.text("link.txt")
    finally:
        other.close()
        server.close()


def test_crashed_x_server_fails_clearly_and_reset_recovers():
    e = ComputerEnv(width=640, height=480)
    try:
        e.reset(seed=0)
        # the X server itself (the session's uid, outside the desktop's pid namespace)
        for pid in filter(str.isdigit, os.listdir("/proc")):
            with contextlib.suppress(OSError):
                if os.stat(f"/proc/{pid}").st_uid == e.sandbox.uid and os.readlink(
                    f"/proc/{pid}/exe"
                ).endswith("/Xvfb"):
                    os.kill(int(pid), signal.SIGKILL)
        with pytest.raises(EnvCrashed, match="X server"):
            e.step("click(10, 10)")
        obs, _ = e.reset(seed=0)
        assert json.loads(obs["windows"])[0]["class"] == "XTerm"
    finally:
        e.close()
    assert e.display.proc is None and not e.sandbox.root.exists()


def test_verifier_kinds(env):
    task = TASKS["site-permissions"]
    env.reset(seed=0, options={"task": task})
    assert not env.verify().success
    step_ok(env, task.oracle.data[0])
    result = env.verify()
    assert result.success and {c.kind for c in result.checks} == {"command_output", "checksum"}


def test_suite_is_validated():
    record = RECORD.load()
    assert record is not None and record["total"] >= 40
    suite = load_suite()
    assert len(suite) >= 40 and len(suite) == record["validated"] == len(all_tasks())
    groups = {t.metadata["group"] for t in suite}
    assert groups == {"files", "text", "shell", "archive", "mixed"}
    assert sum(t.metadata["oracle"] == "gui" for t in suite) >= 8


@pytest.mark.parametrize(
    "tid", ["append-line-in-editor", "terminal-year", "csv-to-json", "tar-project"]
)
def test_oracles_pass_and_doing_nothing_fails(env, tid):
    rep = validate_task(TASKS[tid], env=env, adversaries=False)  # the record has them
    assert rep.validated, rep.reason


def test_osworld_loader_reports_what_runs():
    """Runnable means validated in our sandbox (the recorded run), nothing less."""
    rep = report()
    assert rep["total"] == 24
    assert sorted(rep["runnable"]) == [
        "7688b85f-87a4-4e4a-b2f8-f3d6c3f29b82",
        "a462a795-fdc7-4b23-b689-e8b6df786b78",
        "b3d4a89c-53f2-4d6b-8b6a-541fb5d205fa",
        "c288e301-e626-4b98-a1ab-159dcb162af5",
        "e0df059f-28a6-4169-924f-b9623e7184cc",
        "f9be0997-4b7c-45c5-b05c-4612b44a6118",  # gsettings, through the session bus
    ]
    assert sorted(t.id for t in get_suite("osworld-os").tasks) == sorted(rep["runnable"])
    why = rep["unsupported"]
    assert "no network" in why["37887e8c-da15-4192-923c-08fa390a176d"]
    assert "no evaluator" in why["4d2b519e-e872-4100-8ea3-fe71ab0f9133"]
    # converts, but our dconf's default already is the answer: unsound here, and said why
    unsound = rep["unvalidated"]["a4d98375-215b-4a4d-aee9-3d4370fccc41"]
    assert "doing nothing scores 1.0" in unsound


def test_osworld_tasks_run_with_oracles(env):
    for task in get_suite("osworld-os").tasks[:2]:  # all of them: the recorded validation
        rep = validate_task(task, env=env, repeats=1, adversaries=False)
        assert rep.validated, (task.id, rep.reason)


def test_tasks_through_the_gateway(gateway):
    task = get_task("computer-basic/append-line-in-editor")
    remote = RemoteEnv(
        task="computer-basic/append-line-in-editor", base_url=gateway, transport="ws"
    )
    try:
        obs, info = remote.reset(seed=0)
        assert "oracle" not in info["task"] and obs["screenshot"].shape == (768, 1024, 3)
        assert json.loads(obs["windows"])[0]["class"] == "Mousepad"
        for action in task.oracle.data:
            obs, *_ = remote.step(action)
            assert not obs["last_action_error"], obs["last_action_error"]
        obs, reward, terminated, _, info = remote.step("done()")
        assert terminated and info["verifier"]["success"] and reward == 1.0
        obs, _ = remote.reset(options={"task": "osworld-os/7688b85f-87a4-4e4a-b2f8-f3d6c3f29b82"})
        obs, *_ = remote.step("run_shell('ls ~/Desktop')")
        assert json.loads(obs["last_output"])["stdout"] == "done\ntodo.txt\n"
        _, reward, terminated, _, info = remote.step("done()")
        assert terminated and not info["verifier"]["success"] and reward == 0.0
    finally:
        remote.close()

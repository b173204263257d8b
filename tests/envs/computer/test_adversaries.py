"""Verifier trust on the desktop (issue 16): the reward hacks that scored 1.0 score 0, a check
sees the agent's processes, GUI claims are verified or not made, and the OSWorld loader lists a
task only when validated, reporting the others with their reason."""

import json

import pytest

from palaestra.envs.computer.osworld import convert
from palaestra.envs.computer.policies import ADVERSARIES, _code_only
from palaestra.envs.computer.suites import GUI_CLAIM, RECORD, all_tasks
from palaestra.errors import InvalidRequest
from palaestra.tasks import Task
from palaestra.verifiers.validation import play

pytestmark = pytest.mark.timeout(120)
TASKS = {t.id: t for t in all_tasks()}


def windows(env):
    return json.loads(env._observe()["windows"])


def test_spoofed_editor_window_scores_zero(env):
    """`xterm -class Mousepad -T 'plan.txt - Mousepad'` (also as `exec -a mousepad` and as a
    renamed copy) looks like the editor to a title/class check, but the X server's record of
    the window's process says xterm; a real mousepad retitled 'plan.txt' does not watch the
    file (inotify), as an editor showing it does."""
    run = play(env, TASKS["open-plan-in-editor"], ADVERSARIES["spoof_window"](), strict=False)
    spoofs = [w for w in windows(env) if w["class"] == "Mousepad" and "plan.txt" in w["title"]]
    assert len(spoofs) == 4  # the spoof is real: four "Mousepad" windows titled plan.txt
    assert not run.result.success and run.reward == 0.0
    oracle = play(env, TASKS["open-plan-in-editor"], TASKS["open-plan-in-editor"].oracle.data)
    assert oracle.result.success  # the real editor still passes


def test_process_checks_see_the_agent_and_not_a_spoof(env):
    task = TASKS["background-job"]
    spoof = play(env, task, ADVERSARIES["spoof_process"](), strict=False)
    assert not spoof.result.success  # exec -a, a renamed sleep, bash -c naming the script
    # a verifier command sees the agent's processes (it used to run where none were)
    pgrep = Task(
        id="sees-agent",
        family="computer",
        env=task.env,
        instruction=task.instruction,
        setup=task.setup,
        verifier={
            "kind": "command_output",
            "command": "ps -eo args | grep -c '^/bin/bash ./my_process.sh'",
            "equals": "1",
        },
    )
    for t in (task, pgrep):
        assert play(env, t, task.oracle.data).result.success, t.id
        assert not play(env, t, []).result.success, t.id


def test_a_fixed_refusal_does_not_pass_an_infeasible_task(env):
    task = TASKS["bluetooth-off"]
    assert not play(env, task, ADVERSARIES["refuse"](), strict=False).result.success
    assert play(env, task, task.oracle.data).result.success  # its reason names Bluetooth


def test_no_task_claims_the_gui_without_verifying_it():
    """`run_shell` passed 6 of 8 "use the terminal/editor" tasks: none says so any more, and a
    task that did would be played through code by `code_only`."""
    gui = [t for t in TASKS.values() if "gui" in t.metadata["tags"]]
    assert len(gui) >= 6
    for t in TASKS.values():
        assert not GUI_CLAIM.search(t.instruction), t.id
        assert t.metadata["claims_gui"] is False
    assert GUI_CLAIM.search("Using the terminal on screen, create ~/x.")
    claiming = TASKS["terminal-mkdir"].model_copy(
        update={"metadata": {**TASKS["terminal-mkdir"].metadata, "claims_gui": True}}
    )
    assert _code_only(claiming) == ["run_shell('mkdir ~/made_by_hand\\n', timeout=20)", "done()"]
    assert _code_only(TASKS["terminal-mkdir"]) == ["done()"]


def test_every_shipped_task_beat_every_adversary():
    record = RECORD.load()
    for tid, rep in record["tasks"].items():
        assert set(rep["adversaries"]) == set(ADVERSARIES), tid
        if rep["validated"]:
            assert all(not a["success"] and a["reward"] <= 0.1 for a in rep["adversaries"].values())


def osworld(config, command, expected, tid="synthetic"):
    return {
        "id": tid,
        "instruction": "Turn the notification banners off.",
        "config": config,
        "evaluator": {
            "func": "exact_match",
            "result": {"type": "vm_command_line", "command": command},
            "expected": {"type": "rule", "rules": {"expected": expected}},
        },
    }


def test_osworld_list_form_commands_and_gsettings_run(env):
    """A list-form command is an argv (it was its Python repr); gsettings reaches dconf over
    the sandbox's session bus in setup and agent actions, and the check reads it back."""
    key = ["org.gnome.desktop.notifications", "show-banners"]
    data = osworld(
        [{"type": "execute", "parameters": {"command": ["gsettings", "set", *key, "true"]}}],
        ["gsettings", "get", *key],
        "false\n",
    )
    conv = convert(data, {"synthetic": [f"run_shell('gsettings set {' '.join(key)} false')"]})
    assert conv.task is not None, conv.reasons
    assert conv.task.verifier["checks"][0]["command"] == "gsettings get " + " ".join(key)
    assert play(env, conv.task, conv.task.oracle.data).result.success
    assert not play(env, conv.task, []).result.success


def test_osworld_setup_errors_carry_their_reason(env):
    cmd = "xdg-settings set default-web-browser no-such-browser.desktop"
    conv = convert(osworld([{"type": "execute", "parameters": {"command": cmd}}], "true", "\n"))
    assert conv.task is not None
    with pytest.raises(InvalidRequest, match=r"failed \(exit 2\): .*does not exist"):
        env.reset(options={"task": conv.task})

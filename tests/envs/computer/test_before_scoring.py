"""A task's ``before_scoring`` steps on the real desktop (``before_scoring.py``): the env plays
them after the agent's last step and before the verifier reads the file, so an edit the agent
left unsaved in the editor is saved by the task's Ctrl+S; a window that is not there skips the
keys meant for it and is recorded; the steps are not the agent's (no step, not in the
trajectory) and a dense reward's mid-episode read does not play them."""

import pytest

from palaestra.errors import InvalidRequest
from palaestra.tasks import get_task
from palaestra.verifiers.validation import play

#: the editor task's solution without its save
UNSAVED = ["key('ctrl+End')", "type_text('\\nbuy milk')"]
SAVE = [{"name": "key", "args": {"combo": "ctrl+s"}}, {"name": "wait", "args": {"seconds": 0.5}}]


def editor_task(before=None):
    task = get_task("computer-basic/append-line-in-editor")
    setup = dict(task.setup) | ({"before_scoring": before} if before is not None else {})
    return task.model_copy(update={"setup": setup})


def focus(title, **how):
    return {"activate_window": {"title": title, **how}}


def test_the_tasks_save_scores_an_edit_the_agent_left_unsaved(env):
    saved = play(env, editor_task([focus("notes.txt"), *SAVE]), UNSAVED)
    assert saved.result.score == 1.0, saved.result
    assert (env.sandbox.home / "notes.txt").read_text() == "eggs\nbread\nbuy milk"
    assert not any(c.kind == "before_scoring" for c in saved.result.checks)
    steps = env._steps
    plain = play(env, editor_task(), UNSAVED)  # the same agent, no step before scoring
    assert plain.result.score == 0.0
    assert (env.sandbox.home / "notes.txt").read_text() == "eggs\nbread"
    # the task's steps are neither steps nor actions of the agent's episode
    assert env._steps == steps and plain.actions == saved.actions


def test_a_window_that_is_not_there_skips_its_keys_and_is_recorded(env):
    missing = play(env, editor_task([focus("budget.xlsx", strict=True), *SAVE]), UNSAVED)
    assert missing.result.score == 0.0 and missing.result.error is None
    (note,) = [c for c in missing.result.checks if c.kind == "before_scoring"]
    assert "activate_window title 'budget.xlsx' (strict): no such window" in note.detail
    assert "before_scoring" not in str(missing.result.public())  # private report only
    # an optional window's absence is no failure; the keys after it are still skipped
    optional = play(env, editor_task([focus("budget.xlsx", optional=True), *SAVE]), UNSAVED)
    assert optional.result.score == 0.0
    assert not any(c.kind == "before_scoring" for c in optional.result.checks)


def test_a_dense_reward_mid_episode_does_not_play_them_the_end_does(env):
    env.dense_reward = True
    try:
        env.reset(options={"task": editor_task([focus("notes.txt"), *SAVE])})
        _, reward, *_ = env.step(UNSAVED[0])
        _, reward, *_ = env.step(UNSAVED[1])
        assert reward == 0.0  # read as it is: the edit is not saved mid-episode
        assert (env.sandbox.home / "notes.txt").read_text() == "eggs\nbread"
        _, reward, terminated, *_ = env.step("done()")
        assert terminated and reward == 1.0
    finally:
        env.dense_reward = False


@pytest.mark.parametrize(
    ("before", "says"),
    [
        ([{"name": "run_shell", "args": {"cmd": "true"}}], "'run_shell' is not played"),
        (["pyautogui.hotkey('ctrl', 's'); DONE"], "not a plain call"),
        ([focus("x", title_is="y")], "activate_window takes one of"),
        ("ctrl+s", "must be a list"),
    ],
)
def test_a_malformed_step_is_the_tasks_error_at_reset(env, before, says):
    with pytest.raises(InvalidRequest, match=says) as caught:
        env.reset(options={"task": editor_task(before)})
    assert caught.value.fields == {"field": "task.setup.before_scoring"}

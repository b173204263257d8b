"""palaestra/web-v0 on real Chromium, through the gateway and the client."""

import os
import re
import signal
import time

import httpx
import numpy as np
import pytest

from palaestra.client import RemoteEnv
from palaestra.errors import EnvCrashed, InvalidRequest

pytestmark = pytest.mark.browser


def bid_of(axtree: str, role: str, name: str) -> str:
    match = re.search(rf"\[([^\]]+)\] {role} '{re.escape(name)}'", axtree)
    assert match, f"no {role} {name!r} in:\n{axtree}"
    return match.group(1)


@pytest.fixture
def home(gateway):
    env = RemoteEnv(
        task="webtest/home",
        base_url=gateway,
        transport="ws",
        options={"action_timeout_s": 2, "navigation_timeout_s": 2},
    )
    obs, _ = env.reset(seed=0)
    yield env, obs
    env.close()


def test_observation_parts_and_spaces(home):
    env, obs = home
    assert env.observation_space.contains(obs)
    assert obs["screenshot"].shape == (480, 640, 3) and obs["screenshot"].dtype == np.uint8
    assert obs["screenshot"].std() > 0  # a real page was rendered
    assert obs["title"] == "Test home" and obs["url"].endswith("/index.html")
    assert "textbox 'Name'" in obs["axtree"] and "(active)" in obs["tabs"]
    assert obs["goal"] == "Go to the second page."
    # the tracker image on 10.0.0.1 was refused and reported
    assert "blocked a request to http://10.0.0.1" in obs["last_action_error"]


def test_text_only_agents_skip_the_screenshot(gateway):
    env = RemoteEnv(task="webtest/home", base_url=gateway, options={"observe": ["axtree", "url"]})
    obs, _ = env.reset()
    assert set(obs) == {"axtree", "url", "last_action_error"}
    env.close()
    with pytest.raises(InvalidRequest):
        RemoteEnv(task="webtest/home", base_url=gateway, options={"observe": ["smell"]})
    with pytest.raises(InvalidRequest):
        RemoteEnv(task="webtest/home", base_url=gateway, options={"observe": "axtree"})


def test_actions_verifier_and_bad_bids(home):
    env, obs = home
    name_bid = bid_of(obs["axtree"], "textbox", "Name")
    obs, *_ = env.step(f"fill('{name_bid}', 'Ada')")
    assert obs["last_action_error"] == "" and "value='Ada'" in obs["axtree"]
    obs, *_ = env.step(f"select_option('{bid_of(obs['axtree'], 'combobox', 'Pick')}', 'green')")
    assert "value='green'" in obs["axtree"]
    obs, *_ = env.step("click('99999')")
    assert "no element with bid '99999'" in obs["last_action_error"]
    para = bid_of(obs["axtree"], "paragraph", "Just text")
    obs, *_ = env.step(f"fill('{para}', 'x')")
    assert obs["last_action_error"].startswith("fill failed")
    link = bid_of(obs["axtree"], "link", "Next page")
    obs, _, term, _, _ = env.step(f"click('{link}')")
    assert obs["title"] == "Second page" and not term
    obs, *_ = env.step(f"click('{name_bid}')")  # that element left with the old page
    assert "may have gone after a navigation" in obs["last_action_error"]
    _, reward, term, _, info = env.step("report_infeasible('checking the verifier')")
    assert term and reward == 1.0 and info["verifier"]["success"]


def test_outside_origins_are_refused(home):
    env, obs = home
    obs, *_ = env.step("goto('http://example.com/')")
    assert "outside the origins this task allows" in obs["last_action_error"]
    obs, *_ = env.step("goto('file:///etc/passwd')")
    assert "only http(s)" in obs["last_action_error"]
    obs, *_ = env.step(f"click('{bid_of(obs['axtree'], 'link', 'Outside')}')")
    assert (
        "not an allowed origin" in obs["last_action_error"] or "outside" in obs["last_action_error"]
    )
    assert obs["title"] == "Test home"


def test_page_that_never_finishes_loading(home):
    env, obs = home
    origin = obs["url"].rsplit("/", 1)[0]
    # the page never loads: only the action's timeout can end this step
    obs, *_ = env.step(f"goto('{origin}/hang.html')")
    assert "timed out" in obs["last_action_error"]
    obs, *_ = env.step(f"goto('{origin}/page2.html')")
    assert obs["title"] == "Second page" and obs["last_action_error"] == ""


def test_dialogs_and_popups(home):
    env, obs = home
    obs, *_ = env.step(f"click('{bid_of(obs['axtree'], 'button', 'Alert')}')")
    assert "[alert] hello from alert" in obs["chat"] and obs["last_action_error"] == ""
    obs, *_ = env.step(f"click('{bid_of(obs['axtree'], 'button', 'Confirm')}')")
    assert "[confirm] sure?" in obs["chat"] and "paragraph 'no'" in obs["axtree"]
    obs, *_ = env.step(f"click('{bid_of(obs['axtree'], 'button', 'Popup')}')")
    for _ in range(20):  # the popup opens just after the click returns, as for a user
        if obs["title"] == "Second page":
            break
        obs, *_ = env.step("noop(100)")
    assert obs["title"] == "Second page" and obs["tabs"].count("\n") == 1
    assert "a new tab opened" in obs["chat"]
    obs, *_ = env.step("tab_focus(0)")
    assert obs["title"] == "Test home"
    obs, *_ = env.step("tab_focus(7)")
    assert "no tab 7" in obs["last_action_error"]


def test_a_looping_page_fails_its_session_only(gateway):
    env = RemoteEnv(
        task="webtest/home",
        base_url=gateway,
        options={"action_timeout_s": 1, "navigation_timeout_s": 1},
    )
    other = RemoteEnv(task="webtest/home", base_url=gateway)
    obs, _ = env.reset()
    other.reset()
    with pytest.raises(EnvCrashed) as err:
        env.step(f"click('{bid_of(obs['axtree'], 'button', 'Loop forever')}')")
    assert "stopped responding" in err.value.detail
    obs, *_ = other.step("noop(0)")
    assert obs["title"] == "Test home"
    env.close()
    other.close()


def _chromium_of(worker_pid: int) -> list[int]:
    """The browsers' main processes under a worker: chromiums whose parent is not a chromium
    (a worker that served other families' tests earlier may run more than one browser)."""
    procs = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    stat = fh.read()
            except OSError:
                continue
            comm = stat[stat.index("(") + 1 : stat.rindex(")")]
            procs[int(entry)] = (comm, int(stat.rsplit(")", 1)[1].split()[1]))

    def under_worker(pid):
        for _ in range(8):
            pid = procs.get(pid, ("", 0))[1]
            if pid == worker_pid:
                return True
        return False

    mains = [
        p
        for p, (comm, ppid) in procs.items()
        if "chrom" in comm and "chrom" not in procs.get(ppid, ("", 0))[0] and under_worker(p)
    ]
    assert mains, "no Chromium under the worker"
    return mains


def test_chromium_crash_fails_the_session_and_the_worker_recovers(gateway):
    env = RemoteEnv(task="webtest/home", base_url=gateway)
    env.reset()
    workers = {w["name"]: w["pid"] for w in httpx.get(f"{gateway}/v1/health").json()["workers"]}
    worker = httpx.get(f"{gateway}/v1/sessions/{env.session_id}").json()["worker"]
    for browser in _chromium_of(workers[worker]):  # the session's is among them
        os.kill(browser, signal.SIGKILL)
    with pytest.raises(EnvCrashed) as err:  # as soon as the worker has seen it die
        for _ in range(20):  # a loaded machine takes a moment to notice: bounded, then fail
            env.step("noop(0)")
            time.sleep(0.25)
    assert "Chromium" in err.value.detail or "stopped responding" in err.value.detail
    env.close()
    fresh = RemoteEnv(task="webtest/home", base_url=gateway)
    obs, _ = fresh.reset()
    assert obs["title"] == "Test home"
    fresh.close()


def test_miniwob_episode_through_the_gateway(gateway):
    env = RemoteEnv(task="miniwob/click-button", base_url=gateway, transport="ws")
    obs, info = env.reset(seed=4)
    assert info["task"]["id"] == "click-button" and "oracle" not in info["task"]
    target = re.search(r'"(.+)"', obs["goal"]).group(1)
    button = bid_of(obs["axtree"], "button", target)
    _, reward, term, _, info = env.step(f"click('{button}')")
    assert term and reward == 1.0 and info["verifier"]["success"]
    obs2, _ = env.reset(seed=4)
    assert obs2["goal"] == obs["goal"]  # same seed, same problem
    env.close()


def test_a_miniwob_task_is_scored_on_its_own_page_only():
    """An easier MiniWoB page on the same origin (click-test: one button) ends its own episode
    with reward 1.0; that is not the task's verdict, and the task is not done."""
    from palaestra.envs.web.env import WebEnv
    from palaestra.tasks import get_task

    env = WebEnv(task=get_task("miniwob/book-flight"), observe=("axtree", "url", "goal"))
    try:
        obs, _ = env.reset(seed=0)
        obs, *_ = env.step(f'goto("{obs["url"].replace("book-flight", "click-test")}")')
        obs, *_ = env.step(f"click('{bid_of(obs['axtree'], 'generic', 'START')}')")
        obs, reward, term, *_ = env.step(f"click('{bid_of(obs['axtree'], 'button', 'Click Me!')}')")
        assert obs["last_action_error"] == ""
        assert reward == 0.0 and not term
        assert not env.verify().success
    finally:
        env.close()


def test_clients_cannot_bring_their_own_task(gateway):
    env = RemoteEnv(task="webtest/home", base_url=gateway)
    with pytest.raises(InvalidRequest):
        env.reset(
            options={
                "task": {
                    "id": "x",
                    "family": "web",
                    "env": "palaestra/web-v0",
                    "instruction": "",
                    "setup": {"sites": {"x": "/etc"}},
                }
            }
        )
    with pytest.raises(InvalidRequest):
        env.reset(options={"task": "palaestra-bench/count-to-3"})
    env.close()


def test_ask_user_is_answered_from_the_tasks_hidden_details(gateway):
    env = RemoteEnv(task="webtest/ask", base_url=gateway, transport="ws")
    try:
        env.reset(seed=0)
        obs, *_ = env.step('ask_user("Which card number should I use?")')
        assert "assistant (question): Which card number" in obs["chat"]
        assert "user: " in obs["chat"] and "4929123412341234" in obs["chat"]
        obs, *_ = env.step('ask_user("What is your date of birth?")')
        assert "don't know" in obs["chat"].splitlines()[-1]
        env.reset(seed=0, options={"task": "webtest/home"})
        obs, *_ = env.step('ask_user("Which card?")')
        assert obs["last_action_error"] == "" and "no user is available" in obs["chat"]
    finally:
        env.close()

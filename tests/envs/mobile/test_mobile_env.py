"""palaestra/mobile-v0: the embedded phone in-process and through the gateway, synthesized phone
suites solved by their oracles, bad actions, and one observation schema on both backends."""

import json

import numpy as np
import pytest

from palaestra.client import RemoteEnv
from palaestra.envs.mobile.env import MobileEnv, from_android_world
from palaestra.family import family
from palaestra.policies import run_episode
from palaestra.tasks import get_suite

pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]
DOMAINS = ["train", "shop", "email"]


@pytest.fixture(scope="module")
def phone():
    env = MobileEnv()
    obs, _ = env.reset(seed=0)
    yield env, obs
    env.close()


def elements(obs):
    return json.loads(obs["ui_elements"])


def test_the_home_screen_lists_the_installed_apps(phone):
    _env, obs = phone
    assert obs["foreground_app"] == "launcher"
    assert obs["screenshot"].shape == (844, 390, 3) and obs["screenshot"].dtype == np.uint8
    names = {e["text"] for e in elements(obs)}
    assert {"RailWay", "Cartwheel", "MailHub", "DayPlanner", "Lakeside Bank"} <= names
    first = elements(obs)[0]
    assert set(first) >= {
        "index",
        "text",
        "content_description",
        "class_name",
        "resource_id",
        "bbox_pixels",
        "is_clickable",
        "is_editable",
        "package_name",
    }
    assert elements(obs)[-1]["content_description"] == "Home"  # the navigation bar


def test_touch_opens_an_app_and_back_returns(phone):
    env, obs = phone
    icon = next(e for e in elements(obs) if e["text"] == "RailWay")
    obs, *_ = env.step({"action_type": "click", "index": icon["index"]})
    assert obs["foreground_app"] == "RailWay" and not obs["last_action_error"]
    obs, *_ = env.step({"action_type": "navigate_back"})
    assert obs["foreground_app"] == "launcher"
    obs, *_ = env.step('{"action_type": "open_app", "app_name": "mailhub"}')
    assert obs["foreground_app"] == "MailHub"
    obs, *_ = env.step({"action_type": "navigate_home"})
    assert obs["foreground_app"] == "launcher"


def test_typing_emoji_and_rtl_text(phone):
    env, obs = phone
    env.step({"action_type": "open_app", "app_name": "MailHub"})
    obs, *_ = env.step({"action_type": "open_app", "app_name": "MailHub"})
    compose = next(e for e in elements(obs) if e["text"] == "Compose")
    obs, *_ = env.step({"action_type": "click", "index": compose["index"]})
    field = next(e for e in elements(obs) if e["class_name"] == "android.widget.EditText")
    text = "héllo 👋🏽 שלום مرحبا"
    obs, *_ = env.step({"action_type": "input_text", "text": text, "index": field["index"]})
    assert not obs["last_action_error"]
    assert elements(obs)[field["index"]]["text"] == text


@pytest.mark.parametrize(
    ("action", "error"),
    [
        ({"action_type": "click", "x": 5000, "y": 10}, "outside the 390x844 screen"),
        ({"action_type": "click", "index": 999}, "there is no element 999"),
        ({"action_type": "swipe", "x1": 10, "y1": 10, "x2": 10, "y2": 10}, "zero length"),
        ({"action_type": "open_app", "app_name": "Nope"}, "no app named 'Nope'"),
        ({"action_type": "scroll"}, "scroll needs a direction"),
        ({"action_type": "fly"}, "fly"),
        ({"action_type": "click"}, "needs an index, or x and y"),
        ({"action_type": "click", "index": 0, "x": 5, "y": 5}, "an index or x and y, not both"),
        ({"action_type": "swipe", "direction": "up", "x1": 5}, "a direction or x1"),
    ],
)
def test_bad_actions_are_agent_mistakes(phone, action, error):
    env, _ = phone
    obs, _reward, terminated, _, _ = env.step(action)
    assert error in obs["last_action_error"] and not terminated


def test_android_world_json_is_accepted():
    assert from_android_world({"action_type": "click", "index": 3}) == {
        "name": "click",
        "args": {"index": 3},
    }
    assert from_android_world('{"action_type": "navigate_back"}') == {
        "name": "navigate_back",
        "args": {},
    }


@pytest.fixture(scope="module")
def suite():
    """The shipped phone suite (synthesis itself is tested in tests/synth; building a suite
    here cost a minute and a half)."""
    return get_suite("phone")


def test_phone_suites_are_solved_through_the_gateway(gateway, suite):
    apps = set()
    for task in [next(t for t in suite.tasks if t.metadata["app"] == app) for app in DOMAINS]:
        assert task.env == "palaestra/mobile-v0" and task.validation["validated"]
        env = RemoteEnv(task=f"{suite.name}/{task.id}", base_url=gateway, transport="ws")
        try:
            obs, _ = env.reset(seed=0)
            assert obs["foreground_app"] == "launcher" and obs["goal"] == task.instruction
            oracle = family(task.family).policy("oracle")  # no action may fail (strict)
            done = run_episode(env, oracle, task, seed=0, reset_options={}, strict=True)
            reward, terminated, info = done.reward, done.terminated, done.info
            assert terminated and reward == 1.0, info
        finally:
            env.close()
        apps.add(task.metadata["app"])
    assert apps == set(DOMAINS)


@pytest.mark.appium
def test_both_backends_give_the_same_observation_schema(tmp_path):
    from tests.envs.mobile.test_appium_phone import CAPS, appium_server

    embedded = MobileEnv()
    with appium_server(tmp_path / "appium.log") as (url, _):
        appium = MobileEnv(backend="appium", appium_url=url, capabilities=CAPS)
        try:
            seen = []
            for env in (embedded, appium):
                obs, _ = env.reset(seed=0)
                obs, *_ = env.step({"action_type": "click", "index": 0})
                obs, *_ = env.step({"action_type": "swipe", "direction": "up"})
                assert env.observation_space.contains(obs), sorted(obs)
                seen.append((sorted(obs), sorted(elements(obs)[0])))
            assert seen[0] == seen[1]
        finally:
            appium.close()
            embedded.close()


def test_an_unknown_device_profile_is_refused():
    with pytest.raises(TypeError, match="profile must be one of"):
        MobileEnv(profile="tablet-9000")

"""One OpenAI tool call drives each family in process, each env made by its gymnasium id (the
per-task ids of MiniWoB and the phone suite, registered for those suites), and the phone's
``ui_elements`` is AndroidWorld's element list. One env per family, one or two steps each."""

import dataclasses
import json
import re

import gymnasium as gym
import pytest

import palaestra  # noqa: F401  (registers the gymnasium ids)
from palaestra.gymnasium_ids import register_suite_ids


def tool_call(name, **arguments):
    return {
        "id": "call_1",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


@pytest.fixture(scope="module", autouse=True)
def suite_ids():
    register_suite_ids("miniwob")
    register_suite_ids("phone")


def test_a_tool_call_with_an_unquoted_id_solves_a_miniwob_task():
    env = gym.make("palaestra/miniwob.click-test-v0", observe=("axtree", "goal"))
    try:
        obs, _ = env.reset(seed=0)
        bid = int(re.search(r"\[(\d+)\] button 'Click Me!'", obs["axtree"]).group(1))
        obs, reward, terminated, *_ = env.step(tool_call("click", bid=bid))
        assert obs["last_action_error"] == "" and reward == 1.0 and terminated
    finally:
        env.close()


# AndroidWorld's representation_utils.UIElement and BoundingBox, field for field
@dataclasses.dataclass
class BoundingBox:
    x_min: float
    x_max: float
    y_min: float
    y_max: float


@dataclasses.dataclass
class UIElement:
    text: str | None = None
    content_description: str | None = None
    class_name: str | None = None
    bbox: BoundingBox | None = None
    bbox_pixels: BoundingBox | None = None
    hint_text: str | None = None
    is_checked: bool | None = None
    is_checkable: bool | None = None
    is_clickable: bool | None = None
    is_editable: bool | None = None
    is_enabled: bool | None = None
    is_focused: bool | None = None
    is_focusable: bool | None = None
    is_long_clickable: bool | None = None
    is_scrollable: bool | None = None
    is_selected: bool | None = None
    is_visible: bool | None = None
    package_name: str | None = None
    resource_name: str | None = None
    tooltip: str | None = None
    resource_id: str | None = None


def android_world(element: dict) -> UIElement:
    fields = {f.name for f in dataclasses.fields(UIElement)}
    assert fields <= set(element), fields - set(element)
    kept = {k: v for k, v in element.items() if k in fields}
    return UIElement(
        **{
            **kept,
            "bbox": BoundingBox(**kept["bbox"]),
            "bbox_pixels": BoundingBox(**kept["bbox_pixels"]),
        }
    )


def test_a_tool_call_taps_a_phone_app_and_ui_elements_is_android_worlds_list():
    task = "palaestra/phone.phone-bank-v0-0000-v0"
    env = gym.make(task, observe=("ui_elements", "foreground_app"))
    try:
        obs, _ = env.reset(seed=0)
        elements = [android_world(e) for e in json.loads(obs["ui_elements"])]
        home = next(e for e in elements if e.content_description == "Home")
        assert home.is_clickable and home.class_name == "android.widget.ImageButton"
        assert 0 <= home.bbox.x_min < home.bbox.x_max <= 1 and home.bbox_pixels.y_max > 1
        assert obs["foreground_app"] == "launcher"
        index = next(i for i, e in enumerate(elements) if e.text == "Lakeside Bank")
        obs, *_ = env.step(tool_call("click", index=index))
        assert obs["last_action_error"] == "" and obs["foreground_app"] == "Lakeside Bank"
        obs, *_ = env.step(tool_call("navigate_home"))
        assert obs["last_action_error"] == "" and obs["foreground_app"] == "launcher"
    finally:
        env.close()


def test_tool_calls_build_a_cad_part():
    env = gym.make("palaestra/cad-v0", observe=("history", "properties"))
    try:
        env.reset(seed=0)
        calls = [tool_call("new_sketch", plane="XY"), tool_call("rectangle", width=20, height=10)]
        obs, *_ = env.step([*calls, tool_call("extrude", distance=5)])
        assert obs["last_action_error"] == "" and obs["history"].count("\n") >= 2
        assert json.loads(obs["properties"])["volume"] == pytest.approx(1000, rel=1e-3)
    finally:
        env.close()


def test_a_tool_call_runs_a_shell_command_on_the_desktop():
    env = gym.make("palaestra/computer-v0")
    try:
        env.reset(seed=0)
        obs, *_ = env.step(tool_call("run_shell", cmd="echo fidelity-$((20+1))"))
        assert obs["last_action_error"] == "" and "fidelity-21" in obs["last_output"]
    finally:
        env.close()


def test_a_domain_tool_call_and_a_text_message_drive_the_usersim_conversation():
    env = gym.make("palaestra/usersim-v0", observe=("user_message", "messages"))
    try:
        env.reset(seed=0)
        obs, *_ = env.step(tool_call("get_user_details", user_id="nobody"))
        assert obs["last_action_error"] == ""
        obs, *_ = env.step({"role": "assistant", "content": "Could you give me your user id?"})
        roles = [m["role"] for m in json.loads(obs["messages"])]
        assert roles == ["user", "assistant", "tool", "assistant", "user"]
    finally:
        env.close()

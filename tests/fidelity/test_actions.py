"""Action fidelity without an env: OpenAI tool-call lists, unquoted element ids, quoted errors."""

import json

import pytest

from palaestra.actions import Action
from palaestra.envs.web.env import WEB_ACTIONS
from palaestra.errors import ActionError


def call(tool, /, **args):
    return {
        "id": f"c_{tool}",
        "type": "function",
        "function": {"name": tool, "arguments": json.dumps(args)},
    }


def test_a_tool_calls_list_and_an_assistant_message_are_the_steps_actions_in_order():
    message = {
        "role": "assistant",
        "content": "on it",
        "tool_calls": [call("click", bid="3"), call("done")],
    }
    expected = [Action("click", {"bid": "3", "button": "left"}), Action("done", {})]
    assert WEB_ACTIONS.parse_many(message) == expected
    assert WEB_ACTIONS.parse_many(message["tool_calls"]) == expected
    assert WEB_ACTIONS.parse_many(json.dumps(message)) == expected  # as JSON text too
    assert WEB_ACTIONS.parse_many('click("3")') == expected[:1]  # one action stays one


@pytest.mark.parametrize(
    ("bad", "quoted"),
    [
        ([call("click", bid="3"), call("clik", bid="4")], '"name": "clik"'),
        ([call("click", bid="3"), "fill(1)"], '"fill(1)"'),
        ({"role": "assistant", "tool_calls": []}, '"tool_calls": []'),
        ({"type": "function", "function": {"name": "click", "arguments": "{bid: 3"}}, "{bid: 3"),
    ],
)
def test_an_invalid_tool_call_is_refused_quoting_what_was_received(bad, quoted):
    with pytest.raises(ActionError) as err:
        WEB_ACTIONS.parse_many(bad)
    assert quoted in err.value.detail


def test_unquoted_numeric_ids_are_accepted_and_ambiguous_ones_quoted():
    assert WEB_ACTIONS.parse("click(12)").args["bid"] == "12"
    assert WEB_ACTIONS.parse(call("fill", bid=7, value="x")).args["bid"] == "7"
    for value in ("12.0", "-1", "True"):
        with pytest.raises(ActionError) as err:
            WEB_ACTIONS.parse(f"click({value})")
        assert f"'bid': {value} is an ambiguous element id" in err.value.detail
    # the published tool definition says both forms
    click = next(t for t in WEB_ACTIONS.tools() if t["function"]["name"] == "click")
    bid = click["function"]["parameters"]["properties"]["bid"]
    assert {"type": "integer", "minimum": 0} in bid["anyOf"]


FAMILIES = {
    "web": "palaestra.envs.web.env:WEB_ACTIONS",
    "mobile": "palaestra.envs.mobile.env:MOBILE_ACTIONS",
    "cad": "palaestra.envs.cad.actions:CAD_ACTIONS",
    "computer": "palaestra.envs.computer.actions:COMPUTER_ACTIONS",
    "usersim": "palaestra.envs.usersim.env:ACTIONS",
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_published_tool_definition_is_an_action_as_defined(family):
    """Sampled actions, written as the tool calls the published definitions describe, validate
    against those definitions' JSON Schema and parse to the very same actions."""
    import jsonschema

    from palaestra.resolve import resolve

    actions = resolve(FAMILIES[family])
    tools = {t["function"]["name"]: t["function"]["parameters"] for t in actions.tools()}
    assert set(tools) == set(actions.primitives)
    space = actions.space(seed=0)
    for _ in range(60):
        sample = space.sample()
        jsonschema.validate(sample["args"], tools[sample["name"]])
        parsed = actions.parse(call(sample["name"], **sample["args"]))
        assert parsed == actions.parse(sample)

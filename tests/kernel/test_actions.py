import json

import numpy as np
import pytest

from palaestra.actions import Action, ActionSet, Param, primitive
from palaestra.errors import ActionError

AS = ActionSet(
    [
        primitive("click", "Click an element.", Param("bid", "str", "element id")),
        primitive(
            "type_text",
            "Type text.",
            Param("text", "str", max_length=50),
            Param("enter", "bool", default=False),
        ),
        primitive("scroll", "Scroll.", Param("dy", "float", minimum=-100, maximum=100)),
        primitive("pick", "Pick.", Param("which", "str", choices=("a", "b"))),
        primitive("noop", "Wait."),
    ],
    name="demo",
)


@pytest.mark.parametrize(
    "raw",
    [
        'click("a12")',
        "click(bid='a12')",
        {"name": "click", "args": {"bid": "a12"}},
        '{"name": "click", "args": {"bid": "a12"}}',
        Action("click", {"bid": "a12"}),
    ],
)
def test_both_encodings_parse_to_the_same_action(raw):
    assert AS.parse(raw) == Action("click", {"bid": "a12"})


def test_defaults_ints_as_floats_and_keywords():
    assert AS.parse('type_text(text="hi")').args == {"text": "hi", "enter": False}
    assert AS.parse("scroll(5)").args == {"dy": 5.0}
    assert AS.parse({"name": "noop"}) == Action("noop", {})


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("click(", "cannot parse"),
        ("click(a12)", "literals"),
        ("__import__('os').system('x')", "one call"),
        ("explode()", "unknown action 'explode'"),
        ("click()", "missing argument 'bid'"),
        ("click(1)", "must be str"),
        ("click('a', 'b')", "takes 1 argument"),
        ("click(bid='a', x=1)", "no argument 'x'"),
        ("scroll(1000)", "<= 100"),
        ("scroll(True)", "must be float"),
        ("pick('c')", "one of"),
        ("type_text('" + "x" * 51 + "')", "longer than 50"),
        ({"name": "click", "args": {"bid": "a"}, "extra": 1}, "unexpected key"),
        ({"args": {}}, '{"name"'),
        (5, "call string or a JSON object"),
        ("{not json", "not valid JSON"),
        ("click(**{'bid': 'a'})", "kwargs"),
    ],
)
def test_bad_actions_raise_action_error_naming_the_problem(raw, message):
    with pytest.raises(ActionError) as err:
        AS.parse(raw)
    assert message in err.value.detail


def test_space_contains_and_seeded_sample():
    space = AS.space(seed=3)
    samples = [space.sample() for _ in range(50)]
    assert all(space.contains(s) for s in samples)
    again = AS.space(seed=3)
    assert samples == [again.sample() for _ in range(50)]
    assert not space.contains("explode()")
    json.dumps(samples)  # samples are canonical JSON


def test_describe_schema_and_tools():
    text = AS.describe()
    assert "click(bid): Click an element." in text
    assert "one of ['a', 'b']" in text
    schema = AS.json_schema()
    assert len(schema["oneOf"]) == 5
    tools = AS.tools()
    assert tools[1]["function"]["parameters"]["required"] == ["text"]
    assert tools[2]["function"]["parameters"]["properties"]["dy"]["maximum"] == 100


def test_round_trip_through_json_keeps_the_action_set():
    again = ActionSet.from_json(json.loads(json.dumps(AS.to_json())))
    assert again.space() == AS.space()
    rng = np.random.default_rng(0)
    assert again.primitives["pick"].params[0].sample(rng) in ("a", "b")


def test_to_call_is_parseable():
    action = AS.parse('type_text("say \\"hi\\"", enter=True)')
    assert AS.parse(action.to_call()) == action


def test_string_list_params_take_one_string_or_a_list():
    aset = ActionSet([primitive("select_option", "", Param("bid"), Param("options", "strs"))])
    assert aset.parse("select_option('a1', 'x')").args["options"] == ["x"]
    assert aset.parse("select_option('a1', ['x', 'y'])").args["options"] == ["x", "y"]
    with pytest.raises(ActionError):
        aset.parse("select_option('a1', [1])")
    space = aset.space(seed=0)
    assert all(space.contains(space.sample()) for _ in range(20))
    assert "anyOf" in aset.tools()[0]["function"]["parameters"]["properties"]["options"]


def test_openai_tool_calls_are_actions():
    actions = ActionSet([primitive("click", "", Param("bid")), primitive("noop", "")])
    call = {"type": "function", "function": {"name": "click", "arguments": '{"bid": "12"}'}}
    assert actions.parse(call) == Action("click", {"bid": "12"})
    assert actions.parse(json.dumps(call)) == Action("click", {"bid": "12"})
    assert actions.parse({"function": {"name": "noop", "arguments": ""}}) == Action("noop", {})
    with pytest.raises(ActionError, match="arguments are not valid JSON"):
        actions.parse({"type": "function", "function": {"name": "click", "arguments": "{bid"}})
    with pytest.raises(ActionError, match="unknown action 'drag'"):
        actions.parse({"type": "function", "function": {"name": "drag", "arguments": "{}"}})

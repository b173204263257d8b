"""JSON-text fields: declared as JSONText, served structured on request, in their spaces."""

import json

from gymnasium import spaces

from palaestra import codec
from palaestra.spaces import (
    FreeText,
    JSONText,
    JSONValue,
    json_text_keys,
    space_from_json,
    space_to_json,
    structured,
)

SPACE = spaces.Dict({"tools": JSONText(1000), "goal": FreeText(100)})


def test_json_text_round_trips_and_turns_into_a_json_value_space():
    again = space_from_json(space_to_json(SPACE))
    assert isinstance(again["tools"], JSONText) and again["goal"] == SPACE["goal"]
    assert json_text_keys(SPACE) == json_text_keys(space_to_json(SPACE)) == ("tools",)
    shaped = structured(again)
    assert isinstance(shaped["tools"], JSONValue) and isinstance(shaped["goal"], FreeText)
    assert space_from_json(space_to_json(shaped)) == shaped


def test_structure_parses_the_declared_keys_only_and_keeps_cut_text():
    obs = {"tools": json.dumps([{"name": "a"}]), "goal": "[1]"}
    out = codec.structure(obs, json_text_keys(SPACE))
    assert out == {"tools": [{"name": "a"}], "goal": "[1]"}
    assert structured(SPACE).contains(out)
    assert codec.structure({"tools": '[{"na'}, ("tools",)) == {"tools": '[{"na'}

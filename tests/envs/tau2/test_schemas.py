"""The tau2 tools' schemas as the LLM sees them: one per tool, matching its method, valid."""

import inspect
import json

import jsonschema
import pytest

from palaestra.envs.tau2 import schemas
from palaestra.envs.tau2 import tasks as tt
from palaestra.envs.tau2.retail import Retail
from palaestra.envs.tau2.store import DATA
from palaestra.envs.tau2.telecom_device import DeviceTools
from palaestra.envs.tau2.telecom_world import AgentTools
from palaestra.envs.tau2.world import AGENT_TOOLS, USER_TOOLS, WRITES

#: annotation text (annotations are postponed strings) -> the JSON Schema we expect for it
EXPECTED = {
    "str": {"type": "string"},
    "int": {"type": "integer"},
    "float": {"type": "number"},
    "bool": {"type": "boolean"},
    "list[str]": {"type": "array", "items": {"type": "string"}},
    "dict[str, Any]": {"type": "object"},
}
SIDES = [
    ("retail", "assistant", Retail, AGENT_TOOLS["retail"]),
    ("telecom", "assistant", AgentTools, AGENT_TOOLS["telecom"]),
    ("telecom", "user", DeviceTools, USER_TOOLS["telecom"]),
]


@pytest.mark.parametrize(("domain", "side", "kit", "names"), SIDES)
def test_every_tool_has_a_schema_matching_its_signature(domain, side, kit, names):
    listed = schemas.tools(domain, side)
    assert [t["function"]["name"] for t in listed] == list(names)
    for tool in listed:
        assert tool["type"] == "function"
        fn = tool["function"]
        assert fn["description"].strip()
        params = inspect.signature(getattr(kit, fn["name"])).parameters
        params = {n: p for n, p in params.items() if n != "self"}
        schema = fn["parameters"]
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert list(schema["properties"]) == list(params)
        required = [n for n, p in params.items() if p.default is inspect.Parameter.empty]
        assert schema["required"] == required
        for name, param in params.items():
            prop = dict(schema["properties"][name])
            assert prop.pop("description").strip(), (fn["name"], name)
            if param.default is not inspect.Parameter.empty:
                assert prop.pop("default") == param.default
            assert prop == EXPECTED[str(param.annotation)], (fn["name"], name)


@pytest.mark.parametrize(("domain", "side", "kit", "names"), SIDES)
def test_schemas_are_valid_draft_2020_12(domain, side, kit, names):
    for tool in schemas.tools(domain, side):
        jsonschema.Draft202012Validator.check_schema(tool["function"]["parameters"])


def test_writes_are_marked_as_the_world_counts_them():
    for domain in ("retail", "telecom"):
        marked = {t["function"]["name"] for t in schemas.tools(domain) if t["function"]["writes"]}
        assert marked == WRITES[domain]
    device = {
        t["function"]["name"]: t["function"]["writes"] for t in schemas.tools("telecom", "user")
    }
    assert device["toggle_data"] and device["make_payment"] and not device["check_status_bar"]
    assert set(USER_TOOLS["telecom"]) >= schemas.DEVICE_WRITES


def test_every_gold_call_of_every_task_fits_its_schema():
    """The schemas accept what tau2's reference solutions send (types, names, required)."""
    checked = 0
    for domain in ("retail", "telecom"):
        by_side = {
            side: {
                t["function"]["name"]: t["function"]["parameters"]
                for t in schemas.tools(domain, side)
            }
            for side in ("assistant", "user")
        }
        for task in tt.tasks(domain).values():
            for action in tt.gold_actions(task):
                side = action.get("requestor", "assistant")
                schema = by_side[side][action["name"]]
                jsonschema.validate(
                    action.get("arguments") or {}, schema, jsonschema.Draft202012Validator
                )
                checked += 1
    assert checked > 500


def test_descriptions_carry_what_the_arguments_look_like():
    retail = {t["function"]["name"]: t["function"] for t in schemas.tools("retail")}
    order_id = retail["cancel_pending_order"]["parameters"]["properties"]["order_id"]["description"]
    assert "'#W0000000'" in order_id and "#" in order_id
    reason = retail["cancel_pending_order"]["parameters"]["properties"]["reason"]["description"]
    assert "'no longer needed'" in reason and "'ordered by mistake'" in reason
    assert "explicit yes" in retail["cancel_pending_order"]["description"]
    telecom = {t["function"]["name"]: t["function"] for t in schemas.tools("telecom")}
    assert (
        "YYYY-MM-DD"
        in telecom["get_customer_by_name"]["parameters"]["properties"]["dob"]["description"]
    )
    device = {t["function"]["name"]: t["function"] for t in schemas.tools("telecom", "user")}
    mode = device["set_network_mode_preference"]["parameters"]["properties"]["mode"]["description"]
    assert "'4g_5g_preferred'" in mode and "'2g_only'" in mode


def test_a_table_entry_that_names_no_parameter_is_refused():
    doc = schemas.Doc("x", {"order": "wrong name"})
    with pytest.raises(ValueError, match="get_order_details"):
        schemas._schema(Retail, "get_order_details", doc, False)


def test_tools_json_and_policy():
    for domain in ("retail", "telecom"):
        assert json.loads(schemas.tools_json(domain)) == schemas.tools(domain)
        assert schemas.tools_json(domain) is schemas.tools_json(domain)  # built once
    assert schemas.tools("retail", "user") == []
    assert schemas.policy("retail") == (DATA / "retail" / "policy.md").read_text()
    telecom = schemas.policy("telecom")
    assert telecom.startswith("<main_policy>") and "<tech_support_policy>" in telecom
    with pytest.raises(ValueError, match="airline"):
        schemas.tools("airline")
    with pytest.raises(ValueError, match="airline"):
        schemas.policy("airline")


def test_tools_answers_a_copy():
    mine = schemas.tools("retail")
    mine[0]["function"]["name"] = "changed"
    assert schemas.tools("retail")[0]["function"]["name"] == "calculate"

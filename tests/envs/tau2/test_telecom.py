"""tau2-bench's telecom world: both sides' tools, initialization, gold replay, the DB comparison
(the comparison with tau2's own code on every task is ``test_crosscheck.py``)."""

import json

import pytest

from palaestra.envs.tau2 import tasks as tt
from palaestra.envs.tau2 import telecom_eval as te
from palaestra.envs.tau2 import world as worlds
from palaestra.envs.tau2.telecom_device import DeviceTools
from palaestra.envs.tau2.telecom_world import AgentTools, policy, tool_names
from palaestra.verifiers.tau2 import differences

#: a task whose initialization touches both sides and whose gold actions do too
MOBILE_DATA = "[mobile_data_issue]data_mode_off|data_usage_exceeded[PERSONA:None]"


@pytest.fixture
def world() -> te.TelecomWorld:
    return te.reset(tt.tasks("telecom")[MOBILE_DATA])


def snapshot(world: te.TelecomWorld) -> str:
    return json.dumps(world.state(), sort_keys=True)


def test_loads_both_sides_and_all_tasks():
    assert len(tt.tasks("telecom")) == 114
    w = te.TelecomWorld()
    assert {p["plan_id"] for p in w.agent.db["plans"]} >= {"P1001", "P1002"}
    assert w.user.dev["network_mode_preference"] == "4g_5g_preferred"
    assert w.user.dev["app_statuses"]["messaging"]["permissions"]["sms"] is True
    assert "refuel_data" in tool_names(AgentTools) and "set_data_usage" not in tool_names(
        AgentTools
    )
    assert "toggle_data" in tool_names(DeviceTools) and "turn_data_off" not in tool_names(
        DeviceTools
    )


def test_splits_and_policy():
    splits = tt.split_of("telecom")
    assert sorted(splits) == sorted(tt.tasks("telecom"))
    assert sum(v == "train" for v in splits.values()) == 74
    assert sum(v == "test" for v in splits.values()) == 40
    assert policy().startswith("<main_policy>") and "<tech_support_policy>" in policy()


def test_each_episode_has_its_own_copy():
    a, b = te.TelecomWorld(), te.TelecomWorld()
    a.call("assistant", "enable_roaming", {"customer_id": "C1001", "line_id": "L1001"})
    assert a.agent._line("L1001")["roaming_enabled"] is True
    assert b.agent._line("L1001")["roaming_enabled"] is False
    assert te.TelecomWorld().agent._line("L1001")["roaming_enabled"] is False


def test_initialization_actions_apply_on_both_sides(world):
    assert world.user.env["name"] == "John Smith"  # set_user_info (user side)
    assert world.user.dev["data_enabled"] is False  # turn_data_off (user side)
    assert world.agent._line("L1002")["data_used_gb"] == 15.1  # set_data_usage (agent side)
    assert world.user.env["mobile_data_usage_exceeded"] is True  # synced from the agent's DB
    assert world.call("user", "run_speed_test", {}).content == "Speed test failed: No Connection."


def test_agent_tools_happy_path_and_sync_to_the_device(world):
    res = world.call("assistant", "get_data_usage", {"customer_id": "C1001", "line_id": "L1002"})
    assert json.loads(res.content)["data_limit_gb"] == "15.0" and not res.error  # tau2's wire
    res = world.call(
        "assistant", "refuel_data", {"customer_id": "C1001", "line_id": "L1002", "gb_amount": 2.0}
    )
    assert "Successfully added 2.0 GB of data for line L1002 for $4.00" in res.content
    assert world.user.env["mobile_data_usage_exceeded"] is False
    draft = [b for b in world.agent.db["bills"] if b["status"] == "Draft"]
    assert len(draft) == 1 and draft[0]["total_due"] == 4.0


@pytest.mark.parametrize(
    ("requestor", "name", "args", "error"),
    [
        (
            "assistant",
            "refuel_data",
            {"customer_id": "C1001", "line_id": "L1002"},
            "Error: TelecomTools.refuel_data() missing 1 required positional argument: 'gb_amount'",
        ),
        (
            "assistant",
            "refuel_data",
            {"customer_id": "C1001", "line_id": "L1002", "gb_amount": -1.0},
            "Error: Refuel amount must be positive",
        ),
        (
            "assistant",
            "refuel_data",
            {"customer_id": "C1001", "line_id": "L9", "gb_amount": 1.0},
            "Error: Line L9 not found for customer C1001",
        ),
        (
            "assistant",
            "resume_line",
            {"customer_id": "C1001", "line_id": "L1002"},
            "Error: Line must be suspended to resume",
        ),
        ("assistant", "get_details_by_id", {"id": "X1"}, "Error: Unknown ID format or type: X1"),
        ("assistant", "set_data_usage", {}, "Error: Tool 'set_data_usage' not found."),
        ("user", "toggle_data", {"on": True}, "Error: TelecomUserTools.toggle_data() got an "),
        ("user", "grant_app_permission", {"app_name": 3, "permission": "sms"}, "Error: "),
        ("user", "turn_data_on", {}, "Error: Tool 'turn_data_on' not found."),
        ("robot", "toggle_data", {}, "Error: Invalid requestor: robot"),
    ],
)
def test_wrong_calls_answer_an_error_and_leave_the_world_unchanged(
    world, requestor, name, args, error
):
    before = snapshot(world)
    res = world.call(requestor, name, args)
    assert res.error and res.content.startswith(error), res.content
    assert snapshot(world) == before


def test_user_device_tools(world):
    assert "📵 Data Disabled" in world.call("user", "check_status_bar", {}).content
    assert world.call("user", "toggle_data", {}).content.startswith("Mobile Data is now ON.")
    res = world.call("user", "set_network_mode_preference", {"mode": "5g_only"})
    assert not res.error and res.content.startswith("Failed to set network mode: '5g_only'")
    res = world.call("user", "grant_app_permission", {"app_name": "browser", "permission": "SMS"})
    assert res.content.startswith("Success. Permission 'sms' granted to app 'browser'.")
    res = world.call("user", "grant_app_permission", {"app_name": "maps", "permission": "sms"})
    assert res.content.startswith("Error. App 'maps' not found.") and not res.error


def test_answers_are_tau2s_text():
    """Pinned from a one-off run of tau2's own code on the same calls (numbers the tool built
    become strings, records keep model field order, datetimes print with a space)."""
    w = te.reset(tt.tasks("telecom")[MOBILE_DATA])
    w.run_function("user", "break_vpn", {})
    assert w.call("assistant", "get_details_by_id", {"id": "D1001"}).content == (
        '{"device_id": "D1001", "device_type": "phone", "model": "Smartphone X", '
        '"imei": "123456789012345", "is_esim_capable": true, "activated": true, '
        '"activation_date": "2025-01-20 14:30:00", "last_esim_transfer_date": null}'
    )
    args = {"customer_id": "C1001", "line_id": "L1002", "gb_amount": 2.0}
    assert w.call("assistant", "refuel_data", args).content == (
        '{"message": "Successfully added 2.0 GB of data for line L1002 for $4.00", '
        '"new_data_refueling_gb": "2.0", "charge": "4.0"}'
    )
    assert w.call("user", "check_vpn_status", {}).content == (
        "VPN is ON and connected. Details: {'server_address': '192.168.1.1', 'protocol': "
        "'OpenVPN', 'server_performance': <PerformanceLevel.POOR: 'poor'>}"
    )
    assert w.call("user", "toggle_data", {}).content == (
        "Mobile Data is now ON.\nStatus Bar: "
        "📶⁴ Excellent | 5G | 📱 Data Enabled | 🔒 VPN Connected | 🔋 80%"
    )


def test_payment_request_flows_between_the_sides():
    w = te.TelecomWorld()
    w.run_function("user", "set_user_info", {"name": "John Smith", "phone_number": "555-123-2002"})
    assert (
        w.call("user", "check_payment_request", {}).content == "No payment request has been made."
    )
    sent = w.call("assistant", "send_payment_request", {"customer_id": "C1001", "bill_id": "B1002"})
    assert not sent.error
    assert "for bill B1002" in w.call("user", "check_payment_request", {}).content
    assert w.call("user", "make_payment", {}).content.startswith("Payment of ")
    assert w.agent._bill("B1002")["status"] == "Paid" and w.user.env["payment_request"] is None


def test_gold_actions_of_every_task_replay_without_error_and_pass():
    failures = {}
    for tid, task in tt.tasks("telecom").items():
        world = te.reset(task)
        errors = worlds.replay(world, tt.gold_actions(task))
        failed = [a for a in worlds.assertions(world, task) if not a["ok"]]
        if errors or failed:
            failures[tid] = (errors, failed)
    assert not failures


def test_comparison_passes_against_itself_and_names_a_mutation():
    task = tt.tasks("telecom")[MOBILE_DATA]
    gold = worlds.gold_state("telecom", task)
    again = te.reset(task)
    worlds.replay(again, tt.gold_actions(task))
    assert differences(worlds.snapshot(again), gold) == []
    again.call("user", "toggle_roaming", {})
    again.call("assistant", "disable_roaming", {"customer_id": "C1001", "line_id": "L1002"})
    diff = differences(worlds.snapshot(again), gold)
    assert "user.device.roaming_enabled: true != false" in diff
    assert "agent.lines[1].roaming_enabled: false != true" in diff


def test_doing_nothing_differs_from_gold_where_gold_changes_the_world():
    task = tt.tasks("telecom")[MOBILE_DATA]
    idle = te.reset(task)
    assert differences(worlds.snapshot(idle), worlds.gold_state("telecom", task))
    assert not all(a["ok"] for a in worlds.assertions(idle, task))


def test_a_task_whose_initialization_does_not_parse_names_the_task_and_field():
    bad = {"id": "t-bad", "initial_state": {"initialization_actions": [{"env_type": "user"}]}}
    with pytest.raises(ValueError, match=r"t-bad: initialization_actions\[0\]"):
        te.reset(bad)

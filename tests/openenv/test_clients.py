"""OpenEnv's own clients (the real ``openenv`` release, from ``.venv-openenv``) drive every
family through the gateway's ``/openenv/<env-or-task>/`` endpoints."""

from __future__ import annotations

from typing import Any

import pytest

from tests.openenv.conftest import scenario

pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]


def test_miniwob_task_reaches_reward_one_with_the_sync_client(driven: dict[str, Any]) -> None:
    got = scenario(driven, "miniwob_sync")
    assert got["reward"] == 1.0 and got["done"] is True
    assert got["verifier"] == {"score": 1.0, "success": True, "error": None}
    assert got["in_observation"] == got["verifier"]  # the summary is in the observation too
    assert got["state"]["task"] == "miniwob/click-button" and got["state"]["step_count"] == 1
    # bad input: an OpenEnv error naming what is wrong, never an empty observation
    assert "send a 'reset' message first" in got["before_reset"]
    assert "'bid': 1.5 is an ambiguous element id" in got["bad_action"]
    assert "VALIDATION_ERROR" in got["bad_action"]


def test_usersim_task_with_the_async_client(driven: dict[str, Any]) -> None:
    got = scenario(driven, "usersim_async")
    assert {"conversation", "tools", "metadata"} <= set(got["first_keys"])
    assert got["reply_done"] is False and got["done"] is True
    assert got["reward"] == got["verifier"]["score"] == 0.0  # ended without helping


def test_cad_part_through_the_mcp_tool_client(driven: dict[str, Any]) -> None:
    got = scenario(driven, "cad_mcp")
    assert {"rectangle", "extrude", "submit", "run_code"} <= set(got["tools"])
    assert got["extruded"]
    assert "argument 'distance' must be float" in got["bad_tool_call"]
    assert got["done"] is True and got["reward"] == got["verifier"]["score"]
    assert got["verifier"]["success"] is False  # a bare slab is not the task's part


def test_computer_task_with_the_sync_client(driven: dict[str, Any]) -> None:
    got = scenario(driven, "computer_sync")
    assert got["done"] is True and got["reward"] == 1.0 and got["verifier"]["success"] is True


def test_bad_frames_are_openenv_errors_naming_the_field(driven: dict[str, Any]) -> None:
    got = scenario(driven, "bad_input")
    assert got["not_json"]["type"] == "error" and got["not_json"]["data"]["code"] == "INVALID_JSON"
    expected = {
        "unknown_type": ("UNKNOWN_TYPE", "type"),
        "before_reset": ("SESSION_ERROR", "type"),
        "bad_reset": ("VALIDATION_ERROR", "data.colour"),
        "bad_param": ("VALIDATION_ERROR", "action.args.seconds"),
        "unknown_action": ("VALIDATION_ERROR", "action"),
    }
    for name, (code, field) in expected.items():
        reply = got[name]
        assert reply["type"] == "error", name
        assert (reply["data"]["code"], reply["data"]["field"]) == (code, field), name
        assert reply["data"]["message"]
    # the connection stayed usable and the bad steps never reached the env
    assert got["ok"]["type"] == "observation"
    assert got["ok"]["data"]["observation"]["oks"] == 1
    assert got["state"]["data"]["step_count"] == 1
    tools = got["mcp"]["data"]["result"]["tools"]
    assert [t["name"] for t in tools] == ["ok", "sleep", "crash", "finish"]


def test_mcp_production_mode_over_http(driven: dict[str, Any]) -> None:
    got = scenario(driven, "mcp_http")
    assert got["tools"] == ["ok", "sleep", "crash", "finish"]
    assert got["oks"] == [1, 2]  # one session across calls; the first call started the episode


def test_api_key_and_a_dropped_connection_closes_its_session(driven: dict[str, Any]) -> None:
    got = scenario(driven, "auth_and_drop")
    assert "missing or unknown API key" in got["no_key"]
    assert got["during"] == 1 and got["after"] == 0

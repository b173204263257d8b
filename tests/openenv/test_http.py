"""The OpenEnv HTTP side of the gateway (``/reset``, ``/step``, ``/state``, ``/schema``,
``/metadata``, the Task API, ``/mcp`` and the 404s), with plain httpx on the test family."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from palaestra.errors import ActionError
from palaestra.server import openenv_protocol as oe
from tests.plugins import FaultyEnv

BASE = "/openenv/faulty/count-3"


@pytest.fixture
def http(gateway: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=gateway, timeout=60) as client:
        yield client


def test_http_reset_step_state_on_one_session(http: httpx.Client) -> None:
    first = http.post(f"{BASE}/reset", json={"seed": 1}).json()
    sid = first["metadata"]["session_id"]
    assert first["done"] is False and first["reward"] is None and first["observation"]["oks"] == 0
    for action in (
        {"action": "ok()"},
        {"name": "ok"},
        {"type": "function", "function": {"name": "ok"}},
    ):
        step = http.post(f"{BASE}/step", json={"action": action, "session_id": sid}).json()
    assert step["observation"]["oks"] == 3
    end = http.post(f"{BASE}/step", json={"action": {"name": "finish"}, "session_id": sid}).json()
    assert end["done"] is True and end["reward"] == 1.0
    assert end["metadata"]["verifier"] == {"score": 1.0, "success": True, "error": None}
    state = http.get(f"{BASE}/state", params={"session_id": sid}).json()
    assert state["step_count"] == 4 and state["done"] is True
    # the same session is a v1 session: same keys, limits, recording; closed the v1 way
    assert http.get(f"/v1/sessions/{sid}").json()["task"] == "faulty/count-3"
    assert http.delete(f"/v1/sessions/{sid}").status_code == 204


def test_http_bad_input_names_the_field(http: httpx.Client) -> None:
    sid = http.post(f"{BASE}/reset", json={}).json()["metadata"]["session_id"]
    bad = http.post(
        f"{BASE}/step",
        json={"action": {"name": "sleep", "args": {"seconds": "x"}}, "session_id": sid},
    )
    assert bad.status_code == 422 and bad.json()["field"] == "action.args.seconds"
    missing = http.post(f"{BASE}/step", json={"action": {"name": "ok"}})
    assert missing.status_code == 422 and missing.json()["field"] == "session_id"
    typo = http.post(f"{BASE}/reset", json={"sed": 1})
    assert typo.status_code == 422 and typo.json()["field"] == "sed"
    http.delete(f"/v1/sessions/{sid}")


def test_unknown_target_is_a_404_naming_what_exists(http: httpx.Client) -> None:
    gone = http.get("/openenv/no-such-env/health")
    assert gone.status_code == 404
    assert "palaestra-test/Faulty-v0" in gone.json()["detail"] and "faulty" in gone.json()["detail"]
    task = http.get("/openenv/faulty/count-99/health")
    assert task.status_code == 404 and "count-3" in task.json()["detail"]


def test_health_schema_metadata(http: httpx.Client) -> None:
    assert http.get(f"{BASE}/health").json() == {"status": "healthy"}
    schema = http.get(f"{BASE}/schema").json()
    names = [s["properties"]["name"]["const"] for s in schema["action"]["anyOf"][:-1]]
    assert names == ["ok", "sleep", "crash", "finish"]
    assert schema["action"]["anyOf"][-1]["required"] == ["action"]
    assert {"oks", "screen", "last_action_error", "metadata"} <= set(
        schema["observation"]["properties"]
    )
    assert "step_count" in schema["state"]["properties"]
    meta = http.get(f"{BASE}/metadata").json()
    assert meta["name"] == "faulty/count-3" and "ok three times" in meta["description"]


def test_task_api_over_the_suites(http: httpx.Client) -> None:
    env = "/openenv/palaestra-test/Faulty-v0"
    assert http.get(f"{env}/list_environments").json() == ["faulty"]
    assert http.get(f"{env}/faulty/splits").json() == [{"name": "test", "type": "test"}]
    assert http.post(f"{env}/faulty/num_tasks", json={"split": "test"}).json() == {"num_tasks": 1}
    task = http.post(f"{env}/faulty/task", json={"split": "test", "index": 0}).json()["task"]
    assert task["ref"] == "faulty/count-3" and task["openenv"] == "/openenv/faulty/count-3/"
    assert "oracle" not in task and "verifier" not in task
    rng = http.post(f"{env}/faulty/task_range", json={"split": "test", "start": 0, "stop": 5})
    assert [t["id"] for t in rng.json()["tasks"]] == ["count-3"]
    assert (
        http.post(f"{env}/faulty/task", json={"split": "test", "index": 3}).json()["field"]
        == "index"
    )
    assert http.post(f"{env}/nope/tasks", json={"split": "test"}).status_code == 404


def test_mcp_jsonrpc(http: httpx.Client) -> None:
    def rpc(method: str, **params: object) -> dict:
        return http.post(
            f"{BASE}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        ).json()

    assert rpc("initialize")["result"]["serverInfo"]["name"] == "palaestra"
    assert [t["name"] for t in rpc("tools/list")["result"]["tools"]] == [
        "ok",
        "sleep",
        "crash",
        "finish",
    ]
    sid = rpc("openenv/session/create")["result"]["session_id"]
    called = rpc("tools/call", name="ok", arguments={}, session_id=sid)["result"]
    assert called["structuredContent"]["observation"]["oks"] == 1 and not called["isError"]
    bad = rpc("tools/call", name="sleep", arguments={"seconds": "x"}, session_id=sid)["error"]
    assert bad["code"] == -32602 and bad["data"]["field"] == "action.args.seconds"
    assert rpc("tools/call", name="ok")["error"]["data"]["field"] == "session_id"
    assert rpc("nope")["error"]["code"] == -32601
    assert rpc("openenv/session/close", session_id=sid)["result"] == {"closed": True}
    assert http.get(f"/v1/sessions/{sid}").status_code == 409  # closed, as its owner hears


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"name": "ok", "args": {"x": 1}}, "action.args.x"),
        ({"name": "sleep", "args": {"seconds": 99}}, "action.args.seconds"),
        ({"name": "jump"}, "action"),
        ({"name": "sleep", "args": {}}, "action.args.seconds"),
        ({"action": "ok()", "extra": 1}, "action"),
        ("ok()", "action"),
    ],
)
def test_parse_action_names_the_field(data: object, field: str) -> None:
    with pytest.raises(ActionError) as caught:
        oe.parse_action(FaultyEnv.action_set, data)
    assert caught.value.fields["field"] == field


def test_parse_action_encodings_agree() -> None:
    forms = [
        {"name": "sleep", "args": {"seconds": 1}},
        {"action": "sleep(1)"},
        {"action": {"name": "sleep", "args": {"seconds": 1}}},
        {"type": "call_tool", "tool_name": "sleep", "arguments": {"seconds": 1}},
        {"type": "function", "function": {"name": "sleep", "arguments": '{"seconds": 1}'}},
    ]
    parsed = [oe.parse_action(FaultyEnv.action_set, f).action for f in forms]
    assert all(p == parsed[0] for p in parsed)
    assert oe.parse_action(FaultyEnv.action_set, {"type": "list_tools"}).list_tools

"""Structured fields over HTTP and the WebSocket, tool-call lists through the gateway, the
``observe`` refusal, and gymnasium ids (local and remote), on the session-scoped gateway."""

import json

import gymnasium as gym
import pytest

import palaestra  # noqa: F401  (registers the gymnasium ids)
from palaestra.client import Client, RemoteEnv
from palaestra.errors import PalaestraError
from palaestra.spaces import JSONText, JSONValue

USERSIM = "palaestra/usersim-v0"


def test_structured_is_asked_for_and_the_default_stays_text(gateway):
    with Client(gateway) as client:
        sid = client.create_session(USERSIM)["session_id"]
        try:
            text = client.request("POST", f"/v1/sessions/{sid}/reset", {"seed": 0})
            assert isinstance(text["observation"]["tools"], str)
            shaped = client.reset(sid, structured=True)
            tools = shaped["observation"]["tools"]
            assert isinstance(tools, list) and tools == json.loads(text["observation"]["tools"])
            assert isinstance(shaped["observation"]["policy"], str)  # FreeText stays text
        finally:
            client.close_session(sid)


@pytest.mark.parametrize("transport", ["http", "ws"])
def test_remote_env_keeps_structured_observations_in_their_spaces(gateway, transport):
    options = {"observe": ["user_message", "tools", "last_tool_result", "messages"]}
    env = RemoteEnv(
        USERSIM, base_url=gateway, transport=transport, options=options, structured=True
    )
    try:
        assert isinstance(env.observation_space["messages"], JSONValue)
        obs, _ = env.reset(seed=0)
        assert env.observation_space.contains(obs) and isinstance(obs["tools"], list)
        assert "get_user_details" in {t["name"] for t in obs["tools"]}
        args = json.dumps({"user_id": "nobody"})
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_user_details", "arguments": args},
                },
                {"id": "c2", "type": "function", "function": {"name": "nope", "arguments": "{}"}},
            ],
        }
        obs, *_ = env.step(message)
        assert env.observation_space.contains(obs)
        # the list was refused as a whole: the unknown tool is quoted, nothing ran
        assert '"name": "nope"' in obs["last_action_error"]
        assert [m["role"] for m in obs["messages"]] == ["user"]
        obs, *_ = env.step(message["tool_calls"][:1])
        assert obs["last_action_error"] == ""
        call, result = obs["messages"][-2:]
        assert call["tool_calls"][0]["function"]["name"] == "get_user_details"
        assert result["role"] == "tool" and result["tool_call_id"] == "c1"
        assert json.loads(result["content"]) == obs["last_tool_result"]  # chat content is text
    finally:
        env.close()
    plain = RemoteEnv(USERSIM, base_url=gateway)
    try:
        assert isinstance(plain.observation_space["tools"], JSONText)
    finally:
        plain.close()


def test_an_observation_key_the_family_cannot_produce_is_a_422_naming_the_ones_it_can(gateway):
    with Client(gateway) as client, pytest.raises(PalaestraError) as err:
        client.create_session(USERSIM, options={"observe": ["axtree_object"]})
    assert err.value.status == 422
    assert "messages" in err.value.detail and "tools" in err.value.detail


def test_gymnasium_ids_for_envs_and_suite_tasks_local_and_remote(gateway):
    assert {"palaestra/web-v0", "palaestra/mobile-v0", "palaestra/usersim-v0"} <= set(gym.registry)
    with Client(gateway) as client:
        client.tasks("palaestra-bench")  # listing a suite registers its task ids
    env_id = "palaestra/palaestra-bench.count-to-3-v0"
    local = gym.make(env_id)
    remote = gym.make(env_id, url=gateway)
    try:
        for env in (local, remote):
            env.reset(seed=0)
            env.step(env.action_space.sample())
        assert isinstance(remote.unwrapped, RemoteEnv) and remote.unwrapped.task_ref.endswith(
            "count-to-3"
        )
    finally:
        local.close()
        remote.close()


def test_the_phone_element_list_arrives_as_android_worlds_elements(gateway):
    from tests.fidelity.test_families import android_world

    options = {"observe": ["ui_elements", "foreground_app"]}
    env = RemoteEnv("palaestra/mobile-v0", base_url=gateway, options=options, structured=True)
    try:
        obs, _ = env.reset(seed=0)
        assert env.observation_space.contains(obs) and obs["foreground_app"] == "launcher"
        elements = [android_world(e) for e in obs["ui_elements"]]
        assert {"RailWay", "MailHub"} <= {e.text for e in elements}
        assert all(0 <= e.bbox.x_min <= e.bbox.x_max <= 1 for e in elements)
    finally:
        env.close()

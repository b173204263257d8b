"""OpenEnv's own clients against a palaestra gateway, run with ``.venv-openenv``'s python.

Why a script: the real ``openenv`` release pins ``fastmcp<4`` (palaestra's venv has 4), so its
clients live in a venv of their own (``scripts/setup-openenv.sh``). The tests run this file once
per module (``python driver.py <gateway> <keyed gateway> <key> <refs JSON>``; importing openenv
costs ~4 s, far more on busy cores) and read one JSON object: scenario name -> what it saw, or
``{"error": ...}``.

Nothing here knows a task's answer: the MiniWoB episode reads the goal and the accessibility
tree as an agent would.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
import traceback
from typing import Any

import httpx
import websockets
from openenv.core import GenericEnvClient
from openenv.core.env_server.mcp_types import CallToolAction
from openenv.core.mcp_client import MCPToolClient

LEAN_WEB = {"X-Palaestra-Options": json.dumps({"observe": ["axtree", "goal"]})}
#: a cold suite (usersim, CAD) can take a minute to load on two busy cores: more than
#: OpenEnv's 60 s message timeout and 20 s keepalive ping allow by default
PATIENT = {"message_timeout_s": 300.0, "websocket_ping_interval_s": None}


def _raises(fn: Any) -> str:
    try:
        fn()
    except RuntimeError as exc:
        return str(exc)
    return ""


async def _araises(coro: Any) -> str:
    try:
        await coro
    except RuntimeError as exc:
        return str(exc)
    return ""


def miniwob_sync(base: str) -> dict[str, Any]:
    """click-button to reward 1.0 with the sync client: the button the goal quotes."""
    with GenericEnvClient(
        base_url=f"{base}/openenv/miniwob/click-button", headers=LEAN_WEB, **PATIENT
    ).sync() as env:
        before_reset = _raises(lambda: env.step({"action": "click('1')"}))
        first = env.reset(seed=3)
        goal = first.observation["goal"]
        wanted = re.search(r'"(.+?)"', goal).group(1)  # type: ignore[union-attr]
        bid = re.search(rf"\[(\w+)\] button '{re.escape(wanted)}'", first.observation["axtree"])
        bad = _raises(lambda: env.step({"name": "click", "args": {"bid": 1.5}}))
        result = env.step({"action": f"click({bid.group(1)!r})"})  # type: ignore[union-attr]
        state = env.state()
        return {
            "before_reset": before_reset,
            "bad_action": bad,
            "reward": result.reward,
            "done": result.done,
            "verifier": result.metadata["verifier"],
            "in_observation": result.observation["metadata"]["verifier"],
            "state": state,
        }


async def usersim_async(base: str, ref: str) -> dict[str, Any]:
    """A usersim task with the async client: greet, end; the verifier scores the end."""
    async with GenericEnvClient(base_url=f"{base}/openenv/{ref}", **PATIENT) as env:
        first = await env.reset(seed=0)
        talk = await env.step({"name": "send_message", "args": {"text": "Hello, how can I help?"}})
        end = await env.step({"action": "end_conversation()"})
        return {
            "first_keys": sorted(first.observation),
            "reply_done": talk.done,
            "done": end.done,
            "reward": end.reward,
            "verifier": end.metadata.get("verifier"),
        }


async def cad_mcp(base: str, ref: str) -> dict[str, Any]:
    """A CAD part through OpenEnv's MCP tool client (tools from the action set)."""
    async with MCPToolClient(base_url=f"{base}/openenv/{ref}", **PATIENT) as env:
        await env.reset()
        names = [t.name for t in await env.list_tools()]
        await env.call_tool("new_sketch", plane="XY")
        await env.call_tool("rectangle", width=98.0, height=51.0)
        made = await env.call_tool("extrude", distance=4.0)
        bad = await _araises(env.call_tool("extrude", distance="far"))
        end = await env.step(CallToolAction(tool_name="submit", arguments={}))
        return {
            "tools": names,
            "extruded": made.get("observation", {}).get("last_action_error", "?") == "",
            "bad_tool_call": bad,
            "done": end.done,
            "reward": end.reward,
            "verifier": end.metadata.get("verifier"),
        }


def computer_sync(base: str) -> dict[str, Any]:
    """A computer task: a shell command, then done."""
    url = f"{base}/openenv/computer-basic/make-project-dir"
    with GenericEnvClient(base_url=url, **PATIENT).sync() as env:
        env.reset()
        env.step({"name": "run_shell", "args": {"cmd": "mkdir -p ~/projects/alpha"}})
        end = env.step({"action": "done()"})
        return {"done": end.done, "reward": end.reward, "verifier": end.metadata.get("verifier")}


async def bad_input(base: str) -> dict[str, Any]:
    """Raw frames: each mistake is an OpenEnv error naming the field; the socket stays usable."""
    url = base.replace("http://", "ws://") + "/openenv/faulty/count-3/ws"
    out: dict[str, Any] = {}
    async with websockets.connect(url) as ws:

        async def ask(frame: Any) -> dict[str, Any]:
            await ws.send(frame if isinstance(frame, str) else json.dumps(frame))
            return json.loads(await ws.recv())

        out["not_json"] = await ask("{nope")
        out["unknown_type"] = await ask({"type": "jump"})
        out["before_reset"] = await ask({"type": "step", "data": {"name": "ok"}})
        out["reset"] = await ask({"type": "reset", "data": {"seed": 1}})
        out["bad_reset"] = await ask({"type": "reset", "data": {"colour": "red"}})
        out["bad_param"] = await ask(
            {"type": "step", "data": {"name": "sleep", "args": {"seconds": "x"}}}
        )
        out["unknown_action"] = await ask({"type": "step", "data": {"action": "jump()"}})
        out["ok"] = await ask({"type": "step", "data": {"action": "ok()"}})
        out["state"] = await ask({"type": "state"})
        out["mcp"] = await ask(
            {"type": "mcp", "data": {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}}
        )
    return out


async def mcp_http(base: str) -> dict[str, Any]:
    """OpenEnv's production MCP mode: HTTP /mcp sessions, the WebSocket attached to one."""
    env = MCPToolClient(base_url=f"{base}/openenv/faulty/count-3")
    env.use_production_mode = True
    async with env:
        tools = [t.name for t in await env.list_tools()]
        first = await env.call_tool("ok")
        second = await env.call_tool("ok")
    return {"tools": tools, "oks": [first["observation"]["oks"], second["observation"]["oks"]]}


def auth_and_drop(keyed: str, key: str) -> dict[str, Any]:
    """The same API keys as v1 (a header through OpenEnv's ``headers=``); a dropped
    connection closes its session."""
    url = f"{keyed}/openenv/faulty/count-3"
    no_key = _raises(lambda: GenericEnvClient(base_url=url).sync().reset())
    headers = {"Authorization": f"Bearer {key}"}
    http = httpx.Client(base_url=keyed, headers=headers, timeout=30)
    env = GenericEnvClient(base_url=url, headers=headers).sync()
    env.connect()
    env.reset()
    during = len(http.get("/v1/sessions").json()["sessions"])
    env.disconnect()  # no 'close' message: the socket just goes
    deadline = time.monotonic() + 10
    after = during
    while time.monotonic() < deadline and after:
        after = len(http.get("/v1/sessions").json()["sessions"])
        time.sleep(0.05)
    return {"no_key": no_key, "during": during, "after": after}


def main() -> None:
    base, keyed, key, refs_json = sys.argv[1:5]
    refs = json.loads(refs_json)  # family -> the task the tests picked through the Task API
    wanted = sys.argv[5].split(",") if len(sys.argv) > 5 else None
    scenarios: dict[str, Any] = {
        "miniwob_sync": lambda: miniwob_sync(base),
        "usersim_async": lambda: asyncio.run(usersim_async(base, refs["usersim"])),
        "cad_mcp": lambda: asyncio.run(cad_mcp(base, refs["cad"])),
        "computer_sync": lambda: computer_sync(base),
        "bad_input": lambda: asyncio.run(bad_input(base)),
        "mcp_http": lambda: asyncio.run(mcp_http(base)),
        "auth_and_drop": lambda: auth_and_drop(keyed, key),
    }
    results: dict[str, Any] = {}
    for name, run in scenarios.items():
        if wanted and name not in wanted:
            continue
        t0 = time.monotonic()
        try:
            results[name] = run()
        except Exception as exc:
            results[name] = {
                "error": f"{type(exc).__name__}: {exc}",
                "trace": traceback.format_exc(),
            }
        results[name]["seconds"] = round(time.monotonic() - t0, 2)
    print(json.dumps(results, default=str))


if __name__ == "__main__":
    main()

"""An OpenAI-compatible chat endpoint on loopback for the openai agent's tests (FastAPI on
uvicorn, the real ``openai`` client talks to it). No model runs here: each request is answered by
the next step of a script (a tool call, plain text, an HTTP status with headers) or, when the
script is spent, by ``fallback(messages)``."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from palaestra.server.runner import free_port


def tool(name: str, arguments: Any) -> dict[str, Any]:
    """A scripted tool call; ``arguments`` is JSON text as sent (may be malformed) or a dict."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"tool": name, "arguments": text}


def text(content: str) -> dict[str, Any]:
    return {"text": content}


def status(code: int, **headers: str) -> dict[str, Any]:
    return {"status": code, "headers": headers}


def last_user_text(messages: list[dict[str, Any]]) -> str:
    for m in reversed(messages):
        if m["role"] == "user":
            content = m["content"]
            if isinstance(content, str):
                return content
            return "\n".join(p.get("text", "") for p in content if p.get("type") == "text")
    return ""


def by_turn(*steps: dict[str, Any]) -> Callable[[list[dict[str, Any]]], dict[str, Any]]:
    """A 'model' that answers turn n (counted from the assistant turns already in the
    messages) with ``steps[n]``: a retried request gets the same answer, not the next one."""

    def answer(messages: list[dict[str, Any]]) -> dict[str, Any]:
        n = sum(m["role"] == "assistant" for m in messages)
        return steps[min(n, len(steps) - 1)]

    return answer


def click_the_button(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """A 'model' for MiniWoB click-test: click the first button of the tree it was shown."""
    found = re.search(r"\[([^\]]+)\] button", last_user_text(messages))
    return tool("click", {"bid": found.group(1)}) if found else text("no button")


def wait_for_port(port: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port}")


class FakeOpenAI:
    def __init__(self) -> None:
        self.script: list[dict[str, Any]] = []
        self.fallback: Callable[[list[dict[str, Any]]], dict[str, Any]] = lambda m: tool("noop", {})
        self.requests: list[tuple[float, dict[str, Any]]] = []
        self.lock = threading.Lock()
        app = FastAPI()

        @app.post("/v1/chat/completions")
        async def complete(request: Request) -> JSONResponse:
            body = await request.json()
            with self.lock:
                self.requests.append((time.monotonic(), body))
                step = self.script.pop(0) if self.script else self.fallback(body["messages"])
            if "status" in step:
                return JSONResponse(
                    {"error": {"message": f"scripted {step['status']}", "type": "scripted"}},
                    status_code=step["status"],
                    headers=step["headers"],
                )
            message: dict[str, Any] = {"role": "assistant", "content": step.get("text")}
            if "tool" in step:
                message["tool_calls"] = [
                    {
                        "id": f"call_{len(self.requests)}",
                        "type": "function",
                        "function": {"name": step["tool"], "arguments": step["arguments"]},
                    }
                ]
            finish = "tool_calls" if "tool" in step else "stop"
            return JSONResponse(
                {
                    "id": f"chatcmpl-{len(self.requests)}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body["model"],
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
                }
            )

        port = free_port()
        config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{port}/v1"
        wait_for_port(port)

    def reset(self, script: list[dict[str, Any]], fallback: Any = None) -> None:
        with self.lock:
            self.script = list(script)
            self.requests = []
            if fallback is not None:
                self.fallback = fallback

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)

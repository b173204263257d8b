"""tau2-bench's LLM user, played against our worlds: the comparison point for the symbolic user.

It works as tau2's ``UserSimulator`` does: a system prompt of simulation guidelines (our own
wording of tau2's ideas) and the task's ``user_scenario``; the conversation with the roles
flipped (the agent speaks as ``user``, the simulated customer is the model, ``assistant``); in
telecom the phone's tools offered as function tools, each call run on the world's user side and
its result fed back until the model answers in text; a ``###STOP###``, ``###TRANSFER###`` or
``###OUT-OF-SCOPE###`` in the reply ends the conversation. Temperature 0 and the episode's seed
are sent as tau2 sends them.

The model is any OpenAI-compatible endpoint given by a :class:`palaestra.synth_apps.llm.
LLMAuthor`; the author only offers tool-less chat, so this module posts to
``<url>/chat/completions`` itself through the author's HTTP client (its key and timeout).
:attr:`LLMUser.usage` counts the episode's model calls and tokens: the benchmark sets the
symbolic user's cost against it.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any

import httpx

from palaestra.envs.runtimes.simuser.acts import user_agrees
from palaestra.envs.runtimes.simuser.user import UserSimError
from palaestra.envs.tau2 import schemas
from palaestra.envs.tau2.user import UserTurn
from palaestra.envs.tau2.world import Tau2World

STOP, TRANSFER, OUT_OF_SCOPE = "###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###"
MARKERS = (STOP, TRANSFER, OUT_OF_SCOPE)

#: tau2's orchestrator opens every conversation with this agent line; the user answers it
GREETING = "Hi! How can I help you today?"

#: tool rounds (model answers with calls, calls run, results fed back) allowed in one reply;
#: after the last one the model must answer in text
MAX_TOOL_ROUNDS = 10

_GUIDELINES = """\
You are a customer who has contacted a customer service agent. Play this customer \
realistically, one message at a time, following the scenario below.

How to play:
- Keep to the scenario. Anything it does not tell you, you do not know: say so rather than \
inventing it.
- Speak in your own words; do not recite the scenario's sentences.
- Give information only when the agent asks for it, a piece at a time.
{tools}
When the conversation is over:
- Once the scenario's goal has been reached, write {stop} to end the conversation.
- If the agent transfers you to another agent, write {transfer}{transfer_when}.
- If the scenario does not tell you enough to go on, write {out_of_scope} to end the \
conversation.

Stay in character and keep the conversation natural."""

_TOOL_RULES = """\
- You have tools to act on your own phone when the agent asks you to check or change \
something. In one turn either call a tool or write to the agent, never both; the agent sees \
only the messages you write, not your tool calls.
- Never make up what your phone shows: tell the agent only what your tool results say. If a \
call fails, correct it and try again.
- Use a tool only when the agent asked for that action, or to answer the agent's question. If \
you are unsure which action is meant, ask.
- If the agent asks for several actions at once, say you can do only one at a time and ask \
which one to do first.
"""


def scenario_text(scenario: dict[str, Any]) -> str:
    """The task's ``user_scenario`` as the model reads it: the persona, then the instructions
    (tau2's structured fields, or one free text)."""
    parts = []
    if scenario.get("persona"):
        parts.append("Persona:\n" + textwrap.indent(str(scenario["persona"]), "\t"))
    instructions = scenario.get("instructions")
    if isinstance(instructions, dict):
        fields = (
            ("domain", "Domain"),
            ("reason_for_call", "Reason for call"),
            ("known_info", "What you know"),
            ("unknown_info", "What you do not know"),
            ("task_instructions", "Instructions"),
        )
        lines = []
        for key, label in fields:
            value = instructions.get(key)
            if value is None:
                continue
            if key == "domain":
                lines.append(f"{label}: {value}")
            else:
                lines.append(f"{label}:\n" + textwrap.indent(str(value).strip(), "\t"))
        parts.append("Scenario:\n" + textwrap.indent("\n".join(lines), "\t"))
    elif instructions:
        parts.append("Scenario:\n" + textwrap.indent(str(instructions), "\t"))
    return "\n".join(parts)


def system_prompt(task: dict[str, Any], with_tools: bool) -> str:
    guidelines = _GUIDELINES.format(
        tools=_TOOL_RULES if with_tools else "",
        stop=STOP,
        transfer=TRANSFER,
        transfer_when=", but only once the agent has clearly said you are being transferred"
        if with_tools
        else "",
        out_of_scope=OUT_OF_SCOPE,
    )
    scenario = scenario_text(task.get("user_scenario") or {})
    return f"{guidelines}\n\n<scenario>\n{scenario}\n</scenario>"


def strip_markers(text: str) -> tuple[str, bool]:
    """The reply without its end markers, and whether it had one."""
    closed = any(m in text for m in MARKERS)
    for marker in MARKERS:
        text = text.replace(marker, "")
    return text.strip(), closed


def _function_tool(schema: dict[str, Any]) -> dict[str, Any]:
    """A schema as an endpoint accepts it: our ``writes`` flag is not part of OpenAI's format."""
    fn = {k: v for k, v in schema["function"].items() if k != "writes"}
    return {"type": "function", "function": fn}


class LLMUser:
    """One episode's LLM-played customer (the :class:`.user.Tau2User` protocol)."""

    def __init__(self, domain: str, task: dict[str, Any], llm: Any, seed: int = 0) -> None:
        self.domain = domain
        self.task = task
        self.llm = llm
        self.seed = seed
        self.tools = [_function_tool(t) for t in schemas.tools(domain, "user")]
        self.system = system_prompt(task, with_tools=bool(self.tools))
        #: the conversation from the simulator's side: the agent is ``user``, we are ``assistant``
        self.messages: list[dict[str, Any]] = []
        self.log: list[dict[str, Any]] = []
        #: model calls and tokens this episode; ``unmetered`` counts answers that reported no
        #: usage (their tokens are missing from the sums, not zero)
        self.usage = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "unmetered": 0}
        self.closed = False

    # -- the protocol ------------------------------------------------------------------------
    def opening(self) -> str:
        """The customer's first message, answering tau2's greeting. No tools yet: nobody has
        asked for an action, and the world is not at hand before the first reply."""
        self.messages.append({"role": "user", "content": GREETING})
        message = self._complete(offer_tools=False)
        content = self._text(message)
        self.messages.append({"role": "assistant", "content": content})
        text, closed = strip_markers(content)
        self.closed = closed
        self.log.append({"heard": [], "said": [], "text": text, "opening": True, "calls": []})
        return text

    def reply(self, message: str, world: Tau2World) -> UserTurn:
        if self.closed:
            return UserTurn("", closed=True)
        self.messages.append({"role": "user", "content": message})
        calls: list[dict[str, Any]] = []
        rounds = 0
        while True:
            answer = self._complete(
                offer_tools=bool(self.tools), force_text=rounds >= MAX_TOOL_ROUNDS
            )
            requested = answer.get("tool_calls") or []
            if not requested or rounds >= MAX_TOOL_ROUNDS:
                break
            rounds += 1
            self.messages.append(
                {"role": "assistant", "content": answer.get("content"), "tool_calls": requested}
            )
            for call in requested:
                calls.append(self._run(call, world))
        content = self._text(answer)
        self.messages.append({"role": "assistant", "content": content})
        text, closed = strip_markers(content)
        self.closed = closed
        turn = UserTurn(text, closed=closed, agreed=user_agrees(text) is True, calls=calls)
        self.log.append(
            {"heard": [], "said": [], "text": text, "calls": calls, "tool_rounds": rounds}
        )
        return turn

    # -- the phone ---------------------------------------------------------------------------
    def _run(self, call: dict[str, Any], world: Tau2World) -> dict[str, Any]:
        """Run one of the model's tool calls on the user's side and feed the answer back."""
        fn = call.get("function") or {}
        name = str(fn.get("name", ""))
        raw = fn.get("arguments") or "{}"
        try:
            arguments = json.loads(raw) if isinstance(raw, str) else raw
        except json.JSONDecodeError as exc:
            arguments = raw
            content, error = f"Error: the arguments are not valid JSON ({exc.msg})", True
        else:
            result = world.call("user", name, arguments)
            content, error = result.content, result.error
        self.messages.append(
            {"role": "tool", "tool_call_id": call.get("id", ""), "content": content}
        )
        return {"name": name, "arguments": arguments, "content": content, "error": error}

    # -- the endpoint ------------------------------------------------------------------------
    def _complete(self, offer_tools: bool, force_text: bool = False) -> dict[str, Any]:
        """One chat completion over the conversation so far; its message."""
        body: dict[str, Any] = {
            "model": self.llm.model,
            "temperature": 0.0,
            "seed": self.seed,
            "messages": [{"role": "system", "content": self.system}, *self.messages],
        }
        if offer_tools:
            body["tools"] = self.tools
            if force_text:
                body["tool_choice"] = "none"
        endpoint = f"{self.llm.url}/chat/completions"
        # the author's own client: it holds the key and the timeout the session configured
        http: httpx.Client = self.llm._http
        try:
            reply = http.post(endpoint, json=body)
        except httpx.HTTPError as exc:
            raise UserSimError(
                f"tau2 LLM user: endpoint {endpoint} unreachable: {type(exc).__name__}"
            ) from None
        self.usage["calls"] += 1
        # the endpoint and the status only: a reply's body is never quoted into an error
        if reply.status_code >= 400:
            raise UserSimError(f"tau2 LLM user: endpoint {endpoint} answered {reply.status_code}")
        try:
            data = reply.json()
            message = data["choices"][0]["message"]
            if not isinstance(message, dict):
                raise TypeError
        except (ValueError, KeyError, IndexError, TypeError):
            raise UserSimError(
                f"tau2 LLM user: endpoint {endpoint} answered {reply.status_code} with no chat "
                "completion"
            ) from None
        usage = data.get("usage") if isinstance(data, dict) else None
        if isinstance(usage, dict):
            self.usage["prompt_tokens"] += int(usage.get("prompt_tokens") or 0)
            self.usage["completion_tokens"] += int(usage.get("completion_tokens") or 0)
        else:
            self.usage["unmetered"] += 1
        return message

    def _text(self, message: dict[str, Any]) -> str:
        content = message.get("content")
        if not isinstance(content, str) or not content.strip():
            raise UserSimError(
                f"tau2 LLM user: endpoint {self.llm.url}/chat/completions answered no text for "
                "the customer's reply"
            )
        return content

"""``palaestra/usersim-v0``: the policy is the assistant, between a simulated user and tools.

One step is one assistant move: a message to the user (who answers in the same step), a tool
call on the domain's database (its result is in the next observation), or the end of the
conversation. The episode also ends when the user closes it, and is truncated at the task's
turn limit. The observation carries the domain's written policy and tool schemas, so any
tool-calling model can be dropped in: an OpenAI tool call of a domain tool (as the ``tools``
observation defines it) is a ``call_tool``, an assistant message's ``tool_calls`` run in order
in one step, and an assistant message with text only is a ``send_message``. ``observe=[...,
"messages"]`` adds the conversation as OpenAI/tau2 chat messages (user, assistant with
``tool_calls``, tool results with their ``tool_call_id``).

What the verifier needs is recorded here and never shown: rule violations (a refused call that
broke a written rule, or a write without the user's explicit yes to the assistant's previous
message), the assistant's messages, and the gold world to compare with.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from gymnasium import spaces

from palaestra.actions import Action, ActionSet, Param, primitive, tool_calls
from palaestra.envs.base import PalaestraEnv
from palaestra.envs.runtimes.simuser.user import Goal, SimulatedUser
from palaestra.envs.runtimes.simuser.wording import PERSONAS
from palaestra.envs.usersim import world
from palaestra.envs.usersim.domain import DomainError, RuleBroken, dump
from palaestra.errors import ActionError, InvalidRequest
from palaestra.spaces import FreeText, JSONText
from palaestra.tasks import Task
from palaestra.verifiers import usersim as _checks  # noqa: F401  (registers the check kinds)

MAX_MESSAGE = 10_000
MAX_CONVERSATION = 200_000
DEFAULT_DOMAIN = "airline"
PARTS = ("conversation", "user_message", "last_tool_result", "tools", "policy", "messages")
#: what an observation holds unless ``observe`` says otherwise (``messages`` is asked for)
DEFAULT_PARTS = PARTS[:-1]

ACTIONS = ActionSet(
    [
        primitive(
            "send_message",
            "Say something to the user; their reply is in the next observation.",
            Param("text", max_length=MAX_MESSAGE),
        ),
        primitive(
            "call_tool",
            "Call one of the domain's tools (see 'tools') with JSON arguments.",
            Param("name"),
            Param("arguments", "object", default={}),
        ),
        primitive("end_conversation", "End the conversation (the episode ends)."),
    ],
    name="usersim",
)


@dataclass
class Episode:
    domain: str
    seed: int
    conn: sqlite3.Connection
    user: SimulatedUser
    messages: list[dict[str, Any]] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    #: every tool call the env ran (name, checked arguments, whether it answered without an
    #: error, and how many assistant messages came before it): the verifier's evidence that the
    #: agent looked, written only by acting
    calls: list[dict[str, Any]] = field(default_factory=list)
    tool_result: str = ""
    consent: bool = False  # the user's last reply said yes to the assistant's message
    #: the conversation as OpenAI chat messages (``observe=["messages"]``)
    chat: list[dict[str, Any]] = field(default_factory=list)


class UserSimEnv(PalaestraEnv):
    family = "usersim"
    action_set = ACTIONS
    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(
        self,
        task: Task | dict | str | None = None,
        *,
        persona: str | None = None,
        llm_url: str | None = None,
        llm_key: str | None = None,
        llm_model: str = "gpt-4o-mini",
        llm_timeout: float = 20.0,
        llm_fallback: str = "rules",
        observe: tuple[str, ...] | list[str] = DEFAULT_PARTS,
        **kwargs: Any,
    ) -> None:
        super().__init__(task, **kwargs)
        if isinstance(observe, str) or not observe or set(observe) - set(PARTS):
            raise InvalidRequest(
                f"observe must be a list of parts from {list(PARTS)}, got {observe!r}",
                field="observe",
            )
        self.parts = tuple(p for p in PARTS if p in observe)
        if persona is not None and persona not in PERSONAS:
            raise InvalidRequest(
                f"unknown persona {persona!r}; personas: {list(PERSONAS)}", field="persona"
            )
        if llm_fallback not in ("rules", "error"):
            raise InvalidRequest("llm_fallback must be 'rules' or 'error'", field="llm_fallback")
        self.persona = persona
        self.llm_fallback = llm_fallback
        self._llm = None
        if llm_url:
            from palaestra.synth_apps.llm import LLMAuthor

            self._llm = LLMAuthor(llm_url, llm_key, llm_model, timeout=llm_timeout)
        space: dict[str, spaces.Space] = {
            "conversation": FreeText(MAX_CONVERSATION),
            "user_message": FreeText(MAX_MESSAGE),
            "last_tool_result": JSONText(MAX_CONVERSATION),
            "tools": JSONText(MAX_CONVERSATION),
            "policy": FreeText(MAX_MESSAGE),
            "messages": JSONText(MAX_CONVERSATION * 2),
        }
        self.observation_space = spaces.Dict(
            {**{p: space[p] for p in self.parts}, "last_action_error": FreeText(2000)}
        )
        self.episode: Episode | None = None
        self._call_ids: list[str | None] = []  # the ids of this step's tool calls, in order

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """OpenAI/tau2 forms first: domain tool calls and assistant messages (see above)."""
        calls = _calls(action)
        self._call_ids = [c.get("id") if isinstance(c, Mapping) else None for c in calls]
        if self.episode is not None:
            calls = [self._as_action(c) for c in calls]
        return super().step(calls[0] if len(calls) == 1 else calls)

    def _as_action(self, call: Any) -> Any:
        """A tool call naming a domain tool -> ``call_tool``; anything else as it is."""
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping):
            return call
        name = function.get("name")
        if name in self.action_set or name not in world.domain(self._episode().domain).tools:
            return call
        return {
            "name": "call_tool",
            "args": {"name": name, "arguments": function.get("arguments") or {}},
        }

    # ----- lifecycle hooks ----------------------------------------------------------------
    def _setup(self, task: Task | None) -> None:
        setup = task.setup if task else {}
        name = setup.get("domain", DEFAULT_DOMAIN)
        dom = world.domain(name)
        seed = int(setup.get("seed", 0))
        goal = Goal.from_json(setup["goal"]) if "goal" in setup else _default_goal()
        rng = self.np_random
        persona = self.persona or setup.get("persona") or PERSONAS[int(rng.integers(4))]
        user = SimulatedUser(
            dom, goal, persona, int(rng.integers(2**31)), self._llm, self.llm_fallback
        )
        self.episode = Episode(name, seed, world.fresh(name, seed), user)
        self._say("user", user.opening())

    def _apply(self, action: Action) -> bool:
        ep = self._episode()
        call_id = self._call_ids.pop(0) if self._call_ids else None
        if action.name == "end_conversation":
            return True
        if action.name == "call_tool":
            self._call(ep, action.args["name"], action.args["arguments"], call_id)
            return False
        text = action.args["text"]
        if not text.strip():
            raise ActionError("send_message(): the message is empty", action="send_message")
        self._say("assistant", text)
        turn = ep.user.reply(text)
        ep.consent = any(kind in ("affirm", "choose") for kind, _ in turn.acts)
        self._say("user", turn.text)
        return turn.closed

    def _call(
        self, ep: Episode, name: str, arguments: dict[str, Any], call_id: str | None = None
    ) -> None:
        dom = world.domain(ep.domain)
        tool = dom.tools.get(name)
        if tool is None:
            raise ActionError(
                f"call_tool(): unknown tool {name!r}; tools: {', '.join(dom.tools)}",
                action="call_tool",
            )
        try:
            args = tool.check(arguments)
        except DomainError as exc:
            raise ActionError(f"call_tool(): {exc}", action="call_tool") from None
        if tool.writes and not ep.consent:
            ep.violations.append(f"{name} called without the user's explicit confirmation")
        try:
            result: Any = dom.call(ep.conn, name, args)
        except RuleBroken as exc:
            ep.violations.append(f"{name}: {exc}")
            result = {"error": str(exc)}
        except DomainError as exc:
            result = {"error": str(exc)}
        ep.tool_result = json.dumps(result, default=str)
        said = sum(m["role"] == "assistant" for m in ep.messages)
        ok = not (isinstance(result, dict) and "error" in result)
        ep.calls.append({"name": name, "args": args, "ok": ok, "after": said})
        self._say("tool", f"{name}({json.dumps(args)}) -> {ep.tool_result}")
        call_id = call_id if isinstance(call_id, str) and call_id else f"call_{len(ep.calls)}"
        function = {"name": name, "arguments": json.dumps(args)}
        ep.chat.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": call_id, "type": "function", "function": function}],
            }
        )
        ep.chat.append({"role": "tool", "tool_call_id": call_id, "content": ep.tool_result})

    def _observe(self) -> dict[str, Any]:
        ep = self._episode()
        dom = world.domain(ep.domain)
        last_user = next((m["content"] for m in reversed(ep.messages) if m["role"] == "user"), "")
        obs = {
            "conversation": _transcript(ep.messages)[-MAX_CONVERSATION:],
            "user_message": last_user[:MAX_MESSAGE],
            "last_tool_result": ep.tool_result[:MAX_CONVERSATION],
            "tools": dom.tools_json,
            "policy": dom.policy,
        }
        if "messages" in self.parts:
            obs["messages"] = _chat_json(ep.chat, MAX_CONVERSATION * 2)
        return {p: obs[p] for p in self.parts}

    def state_probe(self) -> DialogueProbe:
        return DialogueProbe(self._episode())

    def render(self) -> str:
        """The transcript so far (``render_mode="ansi"``): a dialogue is read, not looked at."""
        return _transcript(self.episode.messages) if self.episode else ""

    def close(self) -> None:
        if self.episode is not None:
            self.episode.conn.close()
            self.episode = None
        if self._llm is not None:
            self._llm.close()

    # ----- helpers ------------------------------------------------------------------------
    def _episode(self) -> Episode:
        if self.episode is None:
            raise ActionError("no episode: call reset() first")
        return self.episode

    def _say(self, role: str, content: str) -> None:
        ep = self._episode()
        ep.messages.append({"role": role, "content": content})
        if role != "tool":  # a tool's turn is written by _call, with its call and id
            ep.chat.append({"role": role, "content": content})


class DialogueProbe:
    """The verifier's view: the live database, the gold replay, what each side said, and the
    tool-call log. No reader of the user's: the checks judge messages on their own, so an
    agent's score never depends on how the simulated user understood it."""

    def __init__(self, ep: Episode) -> None:
        self.ep = ep
        self._read: tuple[int, dict[str, Any]] | None = None

    def read(self) -> dict[str, Any]:
        """The state; read once per moment of the episode (every move adds a message), so the
        checks of one verification share one copy of the database. Not to be modified."""
        if self._read is None or self._read[0] != len(self.ep.messages):
            self._read = (len(self.ep.messages), self._state())
        return self._read[1]

    def _state(self) -> dict[str, Any]:
        ep = self.ep
        return {
            "db": dump(ep.conn),
            # a partial, not a lambda: an end-state snapshot records it (module, function,
            # arguments) so a re-grade rebuilds the same gold (palaestra.workers.snapshot)
            "gold": functools.partial(world.gold, ep.domain, ep.seed),
            "said": [m["content"] for m in ep.messages if m["role"] == "assistant"],
            "heard": [m["content"] for m in ep.messages if m["role"] == "user"],
            "calls": [dict(c) for c in ep.calls],
            "violations": list(ep.violations),
            "user_outcome": ep.user.state.outcome,
        }


def _calls(action: Any) -> list[Any]:
    """The step's calls: an assistant message with text only is a ``send_message``."""
    if isinstance(action, str) and action.strip().startswith("{"):
        try:
            loaded = json.loads(action)
        except json.JSONDecodeError:
            return [action]
        if isinstance(loaded, Mapping) and loaded.get("role") == "assistant":
            action = loaded
    if (
        isinstance(action, Mapping)
        and action.get("role") == "assistant"
        and not action.get("tool_calls")
    ):
        return [{"name": "send_message", "args": {"text": action.get("content") or ""}}]
    calls = tool_calls(action)
    return [action] if calls is None or not calls else calls


def _chat_json(chat: list[dict[str, Any]], limit: int) -> str:
    """The chat as JSON text within ``limit``: the oldest messages go first (whole messages,
    so the text always parses; a tool message is never left without its call)."""
    start = 0
    text = json.dumps(chat, ensure_ascii=False)
    while len(text) > limit and start < len(chat):
        start += 1
        while start < len(chat) and chat[start]["role"] == "tool":
            start += 1
        text = json.dumps(chat[start:], ensure_ascii=False)
    return text


def _transcript(messages: list[dict[str, Any]]) -> str:
    return "\n".join(f"{m['role']}: {m['content']}" for m in messages)


def _default_goal() -> Goal:
    """With no task, a user who only wants to know the rules: an env to explore the tools."""
    return Goal("explore", "ask a few questions about my options", {}, (), True)

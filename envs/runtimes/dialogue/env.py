"""What every dialogue env shares (usersim's, tau2's): the assistant's moves and how they are read.

One step is one assistant move: a message to the user (who answers in the same step), a tool
call (its result is in the next observation), or the end of the conversation. Any tool-calling
model can be dropped in: an OpenAI tool call naming one of the world's tools is a ``call_tool``,
an assistant message's ``tool_calls`` run in order in one step, and an assistant message with
text only is a ``send_message``. ``observe=[..., "messages"]`` adds the conversation as
OpenAI/tau2 chat messages (user, assistant with ``tool_calls``, tool results with their
``tool_call_id``).

A subclass brings the world: its tools (:meth:`DialogueEnv._tool_names`, the schemas and the
written policy the observation shows), how a tool call runs (:meth:`DialogueEnv._call`) and how
the user answers (:meth:`DialogueEnv._user_reply`). What is recorded here and never shown is the
verifier's evidence: every tool call run, rule violations (a write without the user's yes to the
assistant's previous message is one), the assistant's messages.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

from gymnasium import spaces

from palaestra.actions import Action, ActionSet, Param, primitive, tool_calls
from palaestra.envs.base import PalaestraEnv
from palaestra.envs.runtimes.simuser.wording import PERSONAS
from palaestra.errors import ActionError, InvalidRequest
from palaestra.spaces import FreeText, JSONText
from palaestra.tasks import Task

MAX_MESSAGE = 10_000
MAX_CONVERSATION = 200_000
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
    name="usersim",  # the name clients have listed since before tau2 was a family of its own
)


@dataclass
class Dialogue:
    """One episode's conversation and the evidence the verifier reads."""

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
    #: who ended the conversation: "assistant", "user", or None while it goes on
    ended_by: str | None = None


E = TypeVar("E", bound=Dialogue)


class DialogueEnv(PalaestraEnv, Generic[E]):
    """A tool-using dialogue: a family's subclass sets ``family`` and brings the world, and its
    episode (``E``: a :class:`Dialogue` with the world's own parts) is ``self.episode``."""

    action_set = ACTIONS
    #: the client of the operator's LLM a ``user: "llm"`` session speaks through (the family's
    #: choice: this runtime sits below the module that provides one)
    llm_client: ClassVar[Callable[..., Any] | None] = None
    metadata: dict[str, Any] = {"render_modes": ["ansi"], "render_fps": 4}

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
            if self.llm_client is None:
                raise InvalidRequest(f"{type(self).__name__} has no LLM user", field="user")
            self._llm = self.llm_client(llm_url, llm_key, llm_model, timeout=llm_timeout)
        space: dict[str, spaces.Space] = {
            "conversation": FreeText(MAX_CONVERSATION),
            "user_message": FreeText(MAX_MESSAGE),
            "last_tool_result": JSONText(MAX_CONVERSATION),
            "tools": JSONText(MAX_CONVERSATION),
            "policy": FreeText(MAX_CONVERSATION),
            "messages": JSONText(MAX_CONVERSATION * 2),
        }
        self.observation_space = spaces.Dict(
            {**{p: space[p] for p in self.parts}, "last_action_error": FreeText(2000)}
        )
        self.episode: E | None = None
        self._call_ids: list[str | None] = []  # the ids of this step's tool calls, in order

    # ----- what a world brings --------------------------------------------------------------
    def _tool_names(self) -> Collection[str]:
        raise NotImplementedError

    def _tools_json(self) -> str:
        raise NotImplementedError

    def _policy(self) -> str:
        raise NotImplementedError

    def _call(self, name: str, arguments: Any, call_id: str | None) -> None:
        """Run one tool call and :meth:`_record` it (or raise ActionError on bad input)."""
        raise NotImplementedError

    def _user_reply(self, text: str) -> tuple[str, bool, bool]:
        """The user's answer to ``text``: (its words, whether it said yes, whether it closed)."""
        raise NotImplementedError

    # ----- the moves --------------------------------------------------------------------------
    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """OpenAI/tau2 forms first: domain tool calls and assistant messages (see above)."""
        calls = _calls(action)
        self._call_ids = [c.get("id") if isinstance(c, Mapping) else None for c in calls]
        if self.episode is not None:
            calls = [self._as_action(c) for c in calls]
        return super().step(calls[0] if len(calls) == 1 else calls)

    def _as_action(self, call: Any) -> Any:
        """A tool call naming one of the world's tools -> ``call_tool``; anything else as is."""
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping):
            return call
        name = function.get("name")
        if name in self.action_set or name not in self._tool_names():
            return call
        return {
            "name": "call_tool",
            "args": {"name": name, "arguments": function.get("arguments") or {}},
        }

    def _apply(self, action: Action) -> bool:
        dialogue = self._episode()
        call_id = self._call_ids.pop(0) if self._call_ids else None
        if action.name == "end_conversation":
            dialogue.ended_by = "assistant"
            return True
        if action.name == "call_tool":
            self._call(action.args["name"], action.args["arguments"], call_id)
            return False
        text = action.args["text"]
        if not text.strip():
            raise ActionError("send_message(): the message is empty", action="send_message")
        self._say("assistant", text)
        reply, agreed, closed = self._user_reply(text)
        dialogue.consent = agreed
        self._say("user", reply)
        if closed:
            dialogue.ended_by = "user"
        return closed

    def _record(
        self, name: str, args: Any, result: str, ok: bool, call_id: str | None = None
    ) -> None:
        """Log a tool call the env ran and show its result (the agent's view and the chat)."""
        dialogue = self._episode()
        dialogue.tool_result = result
        said = sum(m["role"] == "assistant" for m in dialogue.messages)
        dialogue.calls.append({"name": name, "args": args, "ok": ok, "after": said})
        self._say("tool", f"{name}({json.dumps(args)}) -> {result}")
        call_id = call_id if isinstance(call_id, str) and call_id else f"call_{len(dialogue.calls)}"
        function = {"name": name, "arguments": json.dumps(args)}
        dialogue.chat.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": call_id, "type": "function", "function": function}],
            }
        )
        dialogue.chat.append({"role": "tool", "tool_call_id": call_id, "content": result})

    def _observe(self) -> dict[str, Any]:
        dialogue = self._episode()
        last_user = next(
            (m["content"] for m in reversed(dialogue.messages) if m["role"] == "user"), ""
        )
        obs = {
            "conversation": _transcript(dialogue.messages)[-MAX_CONVERSATION:],
            "user_message": last_user[:MAX_MESSAGE],
            "last_tool_result": dialogue.tool_result[:MAX_CONVERSATION],
            "tools": self._tools_json(),
            "policy": self._policy(),
        }
        if "messages" in self.parts:
            obs["messages"] = _chat_json(dialogue.chat, MAX_CONVERSATION * 2)
        return {p: obs[p] for p in self.parts}

    def render(self) -> str:
        """The transcript so far (``render_mode="ansi"``): a dialogue is read, not looked at."""
        return _transcript(self.episode.messages) if self.episode else ""

    def close(self) -> None:
        self.episode = None
        if self._llm is not None:
            self._llm.close()

    # ----- helpers ------------------------------------------------------------------------
    def _episode(self) -> E:
        if self.episode is None:
            raise ActionError("no episode: call reset() first")
        return self.episode

    def _say(self, role: str, content: str) -> None:
        dialogue = self._episode()
        dialogue.messages.append({"role": role, "content": content})
        if role != "tool":  # a tool's turn is written by _record, with its call and id
            dialogue.chat.append({"role": role, "content": content})


class DialogueProbe(Generic[E]):
    """The verifier's view of one episode (a family's subclass says what it holds, in
    :meth:`_state`), read once per moment of the episode (every move adds a message or a tool
    call), so the checks of one verification share one read. Not to be modified."""

    def __init__(self, ep: E) -> None:
        self.ep = ep
        self._read: tuple[int, dict[str, Any]] | None = None

    def read(self) -> dict[str, Any]:
        moment = len(self.ep.messages) + len(self.ep.calls)
        if self._read is None or self._read[0] != moment:
            self._read = (moment, self._state())
        return self._read[1]

    def _state(self) -> dict[str, Any]:
        raise NotImplementedError


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


# ----- the moves as actions: what scripted assistants (oracles, adversaries) play -----------
def say(text: str) -> dict[str, Any]:
    return {"name": "send_message", "args": {"text": text}}


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"name": "call_tool", "args": {"name": name, "arguments": arguments}}


def end() -> dict[str, Any]:
    return {"name": "end_conversation", "args": {}}

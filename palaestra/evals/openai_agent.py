"""``openai:MODEL``: any OpenAI-compatible chat endpoint as an agent, with the real ``openai``
client.

Each turn sends the family's system prompt, the task, and the recent steps (the model's tool
call, then the observation it led to, screenshot as an image part unless ``screenshots`` is off)
with the env's action set as tools. The model's first tool call is the action, passed through
unchanged: :meth:`palaestra.actions.ActionSet.parse` reads OpenAI tool calls, so a call with
malformed arguments, or an unknown tool, comes back as the env's ``last_action_error`` and the
model sees it next turn. A reply with plain text instead of a tool call is sent as the action
text (the env parses call strings such as ``click("a12")``, and says why anything else is not an
action). Nothing the model writes crashes the episode.

Rate limits and server errors are retried with exponential backoff, honouring ``Retry-After``
(bounded by ``max_retries`` and ``max_wait_s``); an endpoint that cannot be reached or keeps
failing raises :class:`~palaestra.evals.context.ModelUnavailable`, which the runner records as an
error of the episode, not a failure of the agent. Tokens are counted from each answer's usage.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import os
import random
from dataclasses import dataclass, field
from typing import Any

import openai

from palaestra.errors import InvalidRequest
from palaestra.evals import prompts
from palaestra.evals.context import EpisodeContext, ModelUnavailable

RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}
#: retries of the check before the first episode (an endpoint down for seconds still passes)
PROBE_RETRIES = 2


@dataclass(frozen=True)
class OpenAISettings:
    model: str
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float | None = 0.0
    max_tokens: int | None = 1024
    screenshots: bool = True
    #: steps of history kept in the prompt (older turns are dropped whole)
    history: int = 8
    max_retries: int = 5
    #: the longest pause between retries (a Retry-After above it is cut to it)
    max_wait_s: float = 60.0
    backoff_s: float = 1.0
    timeout_s: float = 120.0
    max_obs_chars: int = 12_000
    #: a key given by the caller (EvalConfig.model_api_key), never an option a user writes
    key: str | None = field(default=None, repr=False)

    @classmethod
    def from_options(
        cls, model: str, options: dict[str, Any], key: str | None = None
    ) -> OpenAISettings:
        if not model:
            raise InvalidRequest("an openai agent names its model: openai:MODEL", field="agent")
        known = set(cls.__dataclass_fields__) - {"model", "key"}
        unknown = sorted(set(options) - known)
        if unknown:
            close = difflib.get_close_matches(unknown[0], known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ";"
            raise InvalidRequest(
                f"unknown openai agent option(s) {unknown}{hint} options: {sorted(known)}",
                field="agent_options",
            )
        return cls(model=model, key=key, **options)

    def api_key(self) -> str:
        # local servers need no key, but the client insists on one
        return self.key or os.environ.get(self.api_key_env) or "unused"


def _client(settings: OpenAISettings, shared: dict[str, Any]) -> openai.AsyncOpenAI:
    """One client (one connection pool) for every episode of the run."""
    client = shared.get("client")
    if client is None:
        client = openai.AsyncOpenAI(
            base_url=settings.base_url,
            api_key=settings.api_key(),
            max_retries=0,  # retried here, so Retry-After and the bound are ours
            timeout=settings.timeout_s,
        )
        shared["client"] = client
    return client


async def probe(settings: OpenAISettings, shared: dict[str, Any]) -> None:
    """Before the first episode: is there a key, does the endpoint answer, does it take the
    key? One ``GET /models`` (an endpoint without that route still answered), retried at most
    :data:`PROBE_RETRIES` times; :class:`ModelUnavailable` otherwise, so a wrong ``base_url``
    costs a few seconds once instead of every episode's retries."""
    s = settings
    where = s.base_url or "api.openai.com"
    if s.base_url is None and not (s.key or os.environ.get(s.api_key_env)):
        raise ModelUnavailable(
            f"no API key for {where}: set ${s.api_key_env} (or give base_url for a local server)"
        )
    client = _client(settings, shared)
    last: Exception | None = None
    tries = min(s.max_retries, PROBE_RETRIES) + 1  # a refused connection is not worth 30 s
    for attempt in range(tries):
        try:
            await client.models.list()
            return
        except openai.APIStatusError as exc:
            if exc.status_code in (401, 403):
                raise ModelUnavailable(
                    f"model endpoint {where} refused the key (${s.api_key_env}): "
                    f"{exc.status_code} {_short(exc)}"
                ) from None
            return  # it answered: the route may not exist, the chat route is what counts
        except (openai.APIConnectionError, openai.APITimeoutError) as exc:
            last = exc
        if attempt < tries - 1:
            await asyncio.sleep(min(s.max_wait_s, s.backoff_s * 2**attempt))
    raise ModelUnavailable(
        f"model endpoint {where} failed after {tries} tries: {type(last).__name__}: {_short(last)}"
    )


class OpenAIAgent:
    """One episode's model agent (see the module docstring)."""

    def __init__(
        self, settings: OpenAISettings, ctx: EpisodeContext, shared: dict[str, Any]
    ) -> None:
        self.settings = settings
        self.ctx = ctx
        self.client: openai.AsyncOpenAI = _client(settings, shared)
        self.tools = ctx.action_set.tools() if ctx.action_set is not None else []
        actions_text = ctx.action_set.describe() if ctx.action_set is not None else ""
        self.system = prompts.system_prompt(ctx.family, actions_text, ctx.view)
        self.turns: list[list[dict[str, Any]]] = []
        self.first: str | None = None
        self.pending: dict[str, Any] | None = None  # the last tool call, awaiting its result
        self.tokens = {"prompt": 0, "completion": 0, "total": 0}
        self.model_calls = 0
        self.retries = 0

    def reset(self, task_view: dict[str, Any]) -> None:
        self.turns, self.first, self.pending = [], None, None

    # ----- the conversation ------------------------------------------------------------------
    def _observe(self, observation: dict[str, Any]) -> list[dict[str, Any]]:
        """The messages that report ``observation``: the tool result (text) answering the last
        tool call, and the observation as a user message (images can ride only there)."""
        content = prompts.render(
            self.ctx.family,
            observation,
            max_chars=self.settings.max_obs_chars,
            images=self.settings.screenshots,
        )
        messages: list[dict[str, Any]] = []
        if self.pending is not None:
            error = observation.get("last_action_error") or ""
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": self.pending["id"],
                    "content": f"error: {error}" if error else "done; the new observation follows",
                }
            )
        messages.append({"role": "user", "content": content})
        return messages

    def _messages(self) -> list[dict[str, Any]]:
        """System, task, then the last ``history`` turns; only the newest observation keeps
        its images (screenshots are large), and a window never opens on a tool result whose
        call was cut off."""
        recent = self.turns[-self.settings.history :]
        flat: list[dict[str, Any]] = []
        for i, turn in enumerate(recent):
            kept = turn[1:] if i == 0 and turn and turn[0]["role"] == "tool" else turn
            flat += kept if i == len(recent) - 1 else [_without_images(m) for m in kept]
        return [
            {"role": "system", "content": self.system},
            {"role": "user", "content": self.first or ""},
            *flat,
        ]

    async def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Any:
        if self.first is None:
            self.first = prompts.first_message(self.ctx.family, self.ctx.view, observation)
        turn = self._observe(observation)
        self.turns.append(turn)
        reply = await self._complete(self._messages())
        message = reply.choices[0].message if reply.choices else None
        calls = (message.tool_calls or []) if message is not None else []
        if calls:
            call = calls[0]
            arguments = getattr(call.function, "arguments", "") or ""
            self.pending = {"id": call.id or "call_0"}
            turn.append(
                {
                    "role": "assistant",
                    "content": message.content if message is not None else None,
                    "tool_calls": [
                        {
                            "id": self.pending["id"],
                            "type": "function",
                            "function": {"name": call.function.name, "arguments": arguments},
                        }
                    ],
                }
            )
            # passed through: the env parses a tool call and reports bad arguments itself
            return {
                "type": "function",
                "function": {"name": call.function.name, "arguments": arguments},
            }
        text = ((message.content if message is not None else "") or "").strip()
        self.pending = None
        turn.append({"role": "assistant", "content": text or "(no answer)"})
        return _action_text(text)

    async def _complete(self, messages: list[dict[str, Any]]) -> Any:
        s = self.settings
        kwargs: dict[str, Any] = {"model": s.model, "messages": messages}
        if self.tools:
            kwargs["tools"] = self.tools
        if s.temperature is not None:
            kwargs["temperature"] = s.temperature
        if s.max_tokens is not None:
            kwargs["max_tokens"] = s.max_tokens
        last: Exception | None = None
        for attempt in range(s.max_retries + 1):
            try:
                reply = await self.client.chat.completions.create(**kwargs)
            except openai.APIStatusError as exc:
                if exc.status_code not in RETRY_STATUS:
                    raise ModelUnavailable(
                        f"model endpoint answered {exc.status_code}: {_short(exc)}"
                    ) from None
                last, wait = exc, _retry_after(exc.response)
            except (openai.APIConnectionError, openai.APITimeoutError) as exc:
                last, wait = exc, None
            else:
                self._count(reply)
                return reply
            if attempt == s.max_retries:
                break
            self.retries += 1
            backoff = s.backoff_s * 2**attempt * (0.5 + random.random() / 2)
            await asyncio.sleep(min(s.max_wait_s, wait if wait is not None else backoff))
        raise ModelUnavailable(
            f"model endpoint {s.base_url or 'api.openai.com'} failed after "
            f"{s.max_retries + 1} tries: {type(last).__name__}: {_short(last)}"
        )

    def _count(self, reply: Any) -> None:
        self.model_calls += 1
        usage = getattr(reply, "usage", None)
        if usage is not None:
            prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
            completion = int(getattr(usage, "completion_tokens", 0) or 0)
            self.tokens["prompt"] += prompt
            self.tokens["completion"] += completion
            self.tokens["total"] += int(getattr(usage, "total_tokens", 0) or prompt + completion)


def _without_images(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    if not isinstance(content, list):
        return message
    kept = [p for p in content if p.get("type") != "image_url"]
    dropped = len(content) - len(kept)
    if dropped:
        kept.append({"type": "text", "text": f"({dropped} older screenshot(s) left out)"})
    return {**message, "content": kept}


def _action_text(text: str) -> str:
    """A plain-text answer as the action to send: the first fenced block's first line when
    the model fenced its action, else the text itself (the env says why it is no action)."""
    if "```" in text:
        body = text.split("```", 2)[1]
        lines = [ln for ln in body.splitlines() if ln.strip()]
        if lines and lines[0].strip().isalpha() and len(lines) > 1:
            lines = lines[1:]  # a language tag
        if lines:
            return lines[0].strip()
    return text


def _retry_after(response: Any) -> float | None:
    """Seconds from ``Retry-After`` (or ``retry-after-ms``), None when absent or a date."""
    headers = getattr(response, "headers", None) or {}
    try:
        if "retry-after-ms" in headers:
            return max(0.0, float(headers["retry-after-ms"]) / 1000)
        if "retry-after" in headers:
            return max(0.0, float(headers["retry-after"]))
    except ValueError:
        return None
    return None


def _short(exc: Exception | None) -> str:
    text = str(exc) if exc is not None else ""
    try:
        body = getattr(exc, "body", None)
        if body:
            text = json.dumps(body)[:300]
    except (TypeError, ValueError):
        pass
    return text[:300]

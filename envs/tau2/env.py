"""``palaestra/tau2-v0``: tau2-bench's retail and telecom tasks, the policy as the assistant.

The moves and observations are the dialogue runtime's (:mod:`palaestra.envs.runtimes.dialogue.env`:
``send_message``, ``call_tool``, ``end_conversation``, OpenAI tool calls and assistant messages
as they are). The world is tau2's (:mod:`.world`), one private copy per episode with the task's
initialization actions applied at reset; the tools answer as tau2's do, so a call with a wrong
tool name or arguments gets tau2's ``Error: ...`` text as its result and changes nothing (an
argument that is not a JSON object at all is a ``last_action_error``). The user is the task's
deterministic symbolic user (:mod:`.user`), or the operator's LLM when the session asks for it;
in telecom the user acts on its own phone inside its reply, and those calls are logged for the
verifier but never shown to the agent (as in tau2).

A write called when the user's last reply did not agree to the assistant's message is recorded
as a violation: both tau2 policies demand explicit confirmation, and tau2's own reward does not
check it (the verifier reports tau2's reward next to ours).
"""

from __future__ import annotations

import functools
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from palaestra.envs.runtimes.dialogue.env import Dialogue, DialogueEnv, DialogueProbe
from palaestra.envs.tau2 import schemas, tasks
from palaestra.envs.tau2 import world as worlds
from palaestra.envs.tau2.user import Tau2User
from palaestra.errors import InvalidRequest
from palaestra.synth_apps.llm import LLMAuthor
from palaestra.tasks import Task

ENV_ID = "palaestra/tau2-v0"


@dataclass(kw_only=True)
class Tau2Episode(Dialogue):
    domain: str
    task: dict[str, Any]
    world: worlds.Tau2World
    user: Tau2User


class Tau2Env(DialogueEnv[Tau2Episode]):
    family = "tau2"
    llm_client = LLMAuthor

    def _setup(self, task: Task | None) -> None:
        setup = task.setup if task else {}
        domain = setup.get("tau2", "retail")
        if domain not in tasks.DOMAINS:
            raise InvalidRequest(
                f"unknown tau2 domain {domain!r}; domains: {list(tasks.DOMAINS)}",
                field="setup.tau2",
            )
        task_id = str(setup.get("task_id", next(iter(tasks.tasks(domain)))))
        try:
            raw = tasks.get(domain, task_id)
        except KeyError as exc:
            raise InvalidRequest(str(exc.args[0]), field="setup.task_id") from None
        seed = int(self.np_random.integers(2**31))
        user = make_user(domain, raw, seed, self._llm)
        self.episode = Tau2Episode(
            domain=domain, task=raw, world=worlds.open_world(domain, raw), user=user
        )
        self._say("user", user.opening())

    def _tool_names(self) -> Collection[str]:
        return worlds.AGENT_TOOLS[self._episode().domain]

    def _tools_json(self) -> str:
        return schemas.tools_json(self._episode().domain)

    def _policy(self) -> str:
        return schemas.policy(self._episode().domain)

    def _call(self, name: str, arguments: Any, call_id: str | None) -> None:
        ep = self._episode()  # arguments are a JSON object: the action set's Param checked it
        if name in worlds.WRITES[ep.domain] and not ep.consent:
            ep.violations.append(f"{name} called without the user's explicit confirmation")
        result = ep.world.call("assistant", name, arguments)
        self._record(name, arguments, result.content, not result.error, call_id)
        ep.calls[-1]["by"] = "assistant"

    def _user_reply(self, text: str) -> tuple[str, bool, bool]:
        ep = self._episode()
        turn = ep.user.reply(text, ep.world)
        said = sum(m["role"] == "assistant" for m in ep.messages)
        for call in turn.calls:
            ep.calls.append(
                {
                    "by": "user",
                    "name": call["name"],
                    "args": call.get("arguments") or {},
                    "ok": not call.get("error"),
                    "after": said,
                }
            )
        return turn.text, turn.agreed, turn.closed

    def state_probe(self) -> Tau2Probe:
        return Tau2Probe(self._episode())


def make_user(domain: str, task: dict[str, Any], seed: int = 0, llm: Any = None) -> Tau2User:
    """The user for ``task``: symbolic, or the LLM user when ``llm`` (an
    :class:`palaestra.synth_apps.llm.LLMAuthor`) is given."""
    if llm is not None:
        from palaestra.envs.tau2.llm_user import LLMUser

        return LLMUser(domain, task, llm, seed)
    if domain == "retail":
        from palaestra.envs.tau2.retail_user import RetailUser

        return RetailUser(task, seed)
    if domain == "telecom":
        from palaestra.envs.tau2.telecom_user import TelecomUser

        return TelecomUser(task, seed)
    raise ValueError(f"unknown tau2 domain {domain!r}")


class Tau2Probe(DialogueProbe[Tau2Episode]):
    """The verifier's view (:mod:`palaestra.verifiers.tau2`): the final world, the gold one
    (rebuilt on demand from the task, so a recorded snapshot re-grades), the task's env
    assertions run on a copy of the world, every tool call of both sides, what was said, the
    violations, and who ended the conversation."""

    def _state(self) -> dict[str, Any]:
        ep = self.ep
        return {
            "domain": ep.domain,
            "task_id": ep.task["id"],
            "world": worlds.snapshot(ep.world),
            "gold": functools.partial(worlds.gold_of, ep.domain, ep.task["id"]),
            "assertions": worlds.assertions(ep.world, ep.task),
            "calls": [dict(c) for c in ep.calls],
            "said": [m["content"] for m in ep.messages if m["role"] == "assistant"],
            "transcript": [dict(m) for m in ep.messages],
            "violations": list(ep.violations),
            "ended_by": ep.ended_by,
        }

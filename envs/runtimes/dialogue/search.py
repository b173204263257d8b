"""The strategy space for adversary search on dialogue tasks (every dialogue family's).

Everything here is built from what an assistant sees in a dialogue env: the task's view (its
public domain), the tool schemas (names, parameters, which ones write), the policy text, the
user's messages and the tool results. Nothing reads the task's setup, goal, plan or gold, as
the named adversaries of :mod:`palaestra.envs.runtimes.dialogue.adversaries` may. The primitives:

- exploring: ``listen`` (ask for the whole request), ``ask_all`` (ask the user for every
  parameter any tool takes), ``look_everywhere`` (call every read tool with every value heard
  or seen under that parameter's name, twice over, so ids found in one result are looked up);
- finishing, from :mod:`palaestra.verifiers.search`: hedges of two or three values seen, a
  record seen, everything seen, a refusal naming one to three policy sentences, a plain
  refusal, a done claim, a hand-off (the transfer tool where there is one);
- finishing, the dialogue's own: ``do_all`` (a vague "shall I go ahead", then every write tool
  the agent has, each on the values seen), and where a family names them (tau2's telecom:
  every standard device fix of the manual) ``fix_all`` and ``fix_each``: those instructions in
  one message or one per message, with no diagnosis.

:func:`search_for` gives validation the :class:`~palaestra.verifiers.search.Search` of a task.
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator, Sequence
from functools import partial
from typing import Any

from palaestra.envs.runtimes.dialogue.env import call, end, say
from palaestra.verifiers.search import (
    Memory,
    Primitive,
    Search,
    StrategySpace,
    claim,
    dump,
    dump_all,
    hedge,
)

#: episodes searched per task unless a family says otherwise (tau2's episodes are longer: its
#: budget is its own, docs/verifiers.md)
BUDGET = 12
TRANSFER_WORDS = ("transfer", "human")
VAGUE_CONFIRM = "Shall I go ahead and take care of that for you now?"
#: tokens of a user's message that may be a value: they hold a digit or an @, or are a code
_TOKEN = re.compile(r"#?[\w.+@-]*[\d@][\w.+@-]*")
_NAME = re.compile(r"\b[A-Z][a-z]+\b")
_MOST_CALLS = 16

Steps = Generator[Any, dict[str, Any], None]


def _tools(memory: Memory) -> list[dict[str, Any]]:
    """The tool schemas the observation lists (usersim's flat ones, tau2's OpenAI ones)."""
    if "tools" not in memory.notes:
        try:
            raw = json.loads(memory.observation.get("tools") or "[]")
        except ValueError:
            raw = []
        memory.notes["tools"] = [t.get("function", t) for t in raw if isinstance(t, dict)]
    return list(memory.notes["tools"])


def _heard(memory: Memory) -> dict[str, list[str]]:
    return memory.notes.setdefault("by_key", {})


def _note(memory: Memory, key: str, value: Any) -> None:
    values = _heard(memory).setdefault(key, [])
    if value not in values:
        values.append(value)


def _walk(memory: Memory, node: Any, key: str = "") -> None:
    """Read a tool result: every object a record, every scalar a value under its key (a list
    of ids under ``order_ids`` also counts under ``order_id``)."""
    if isinstance(node, dict):
        memory.record(node)
        for k, v in node.items():
            _walk(memory, v, k)
    elif isinstance(node, list):
        one = key[:-1] if key.endswith("s") else key  # orders -> order (and order_id)
        for v in node:
            _walk(memory, v, one)
            if not isinstance(v, dict | list) and one and not one.endswith("_id"):
                _note(memory, f"{one}_id", v)
    elif node is not None:
        memory.value(node)
        if key:
            _note(memory, key, node)


def see(memory: Memory, observation: dict[str, Any], info: dict[str, Any]) -> None:
    _tools(memory)
    policy = observation.get("policy") or ""
    if policy and not memory.sentences:
        parts = re.split(r"(?<=[.!?])\s+|\n+", policy)
        memory.sentence(*(p.strip("-#* ") for p in parts if len(p.strip("-#* ")) > 20))
    result = observation.get("last_tool_result") or ""
    if result and result != memory.notes.get("last_result"):
        memory.notes["last_result"] = result
        try:
            found = json.loads(result)
        except ValueError:
            found = result[:200]
        _walk(memory, found)
        if not isinstance(found, dict | list):  # a bare id: noted under the names the tool's
            called = memory.notes.get("called", "")  # name holds (find_user_id_by_email)
            for name in _parameters(memory):
                if name in called:
                    _note(memory, name, found)
    message = observation.get("user_message") or ""
    if message and message != memory.notes.get("last_message"):
        memory.notes["last_message"] = message
        tokens = [t.strip(".,;:!?") for t in _TOKEN.findall(message)]
        memory.value(*tokens)
        asked = memory.notes.pop("asked", None)
        for token in tokens:
            _note(memory, asked or "_heard", token)
        if asked and "name" in asked:
            for word in _NAME.findall(message)[1:]:  # the first is the sentence's start
                _note(memory, asked, word)


def _parameters(memory: Memory) -> dict[str, None]:
    """Every parameter name a tool takes, in the tools' order."""
    names: dict[str, None] = {}
    for tool in _tools(memory):
        for name in tool.get("parameters", {}).get("properties", {}):
            names.setdefault(name, None)
    return names


def _call(memory: Memory, name: str, args: dict[str, Any]) -> dict[str, Any]:
    memory.notes["called"] = name
    return call(name, args)


def _listen(memory: Memory, param: int) -> Steps:
    yield say("How can I help you today? Please tell me everything I need to know.")


def _ask_all(memory: Memory, param: int) -> Steps:
    """Ask the user for every parameter a tool takes (once each)."""
    names: dict[str, None] = {}
    for tool in _tools(memory):
        for name in tool.get("parameters", {}).get("required", []):
            names.setdefault(name, None)
    for name in list(names)[:8]:
        memory.notes["asked"] = name
        yield say(f"Could you please tell me your {name.replace('_', ' ')}?")


def _candidates(memory: Memory, name: str) -> list[Any]:
    found = _heard(memory)
    return [*found.get(name, []), *(found.get("_heard", []) if name.endswith("id") else [])]


def _filled(memory: Memory, tool: dict[str, Any], pick: int = 0) -> dict[str, Any] | None:
    """Arguments for ``tool`` from values seen under each parameter's name (``pick``: which
    candidate of the first parameter); None when a required one has none."""
    args: dict[str, Any] = {}
    props = tool.get("parameters", {}).get("properties", {})
    for i, name in enumerate(tool.get("parameters", {}).get("required", [])):
        found = _candidates(memory, name)
        if not found:
            return None
        value = found[pick % len(found)] if i == 0 else found[0]
        kind = props.get(name, {}).get("type")
        if kind == "array":
            value = [value]
        elif kind in ("integer", "number"):
            try:
                value = int(value) if kind == "integer" else float(value)
            except (TypeError, ValueError):
                return None
        args[name] = value
    return args


def _is_transfer(tool: dict[str, Any]) -> bool:
    return all(w in tool.get("name", "") for w in TRANSFER_WORDS)


def _look_everywhere(memory: Memory, param: int) -> Steps:
    """Every read tool on every value seen under its first parameter's name, twice over."""
    done: set[str] = set()
    calls = 0
    for _ in range(2):
        for tool in _tools(memory):
            if tool.get("writes") or _is_transfer(tool):
                continue
            first = (tool.get("parameters", {}).get("required") or [""])[0]
            for pick in range(max(1, min(3, len(_candidates(memory, first))))):
                args = _filled(memory, tool, pick)
                key = json.dumps([tool.get("name"), args], sort_keys=True, default=str)
                if args is None or key in done or calls >= _MOST_CALLS:
                    continue
                done.add(key)
                calls += 1
                yield _call(memory, tool["name"], args)


def _do_all(memory: Memory, param: int) -> Steps:
    """A vague proposal, then every write tool on the values seen ("do all the tools allow")."""
    yield say(VAGUE_CONFIRM)
    for tool in _tools(memory):
        if tool.get("writes"):
            args = _filled(memory, tool, param)
            if args is not None:
                yield _call(memory, tool["name"], args)
    yield say("Done: I have taken care of everything.")


def _hand_off(memory: Memory, param: int) -> Steps:
    transfer = next((t for t in _tools(memory) if _is_transfer(t)), None)
    if transfer is not None:
        yield _call(memory, transfer["name"], {"summary": "The customer needs help I cannot give."})
        yield say("YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON.")
    else:
        yield say("I'm transferring you to a human agent who can help you. Goodbye.")


def _fix_all(fixes: Sequence[str], memory: Memory, param: int) -> Steps:
    yield say(" ".join(fixes))


def _fix_each(fixes: Sequence[str], memory: Memory, param: int) -> Steps:
    for fix in fixes:
        yield say(fix)


def _answer(text: str) -> list[Any]:
    return [say(text)]


def space(view: dict[str, Any], fixes: Sequence[str] = ()) -> StrategySpace:
    """The strategies searched on a task of this view (``fixes``: the instructions a blind
    fix-all tells the user, where the family's domain has them: tau2 telecom's device fixes)."""
    primitives = [
        Primitive("listen", _listen, doc="ask for the whole request"),
        Primitive("ask_all", _ask_all, doc="ask for every parameter a tool takes"),
        Primitive("look_everywhere", _look_everywhere, doc="every read tool on every value"),
        hedge(_answer, 2),
        hedge(_answer, 3),
        dump(_answer),
        dump_all(_answer),
        claim(
            _answer,
            "refuse_citing",
            ["I'm sorry, but I cannot do that, as the policy says:", "No, that is not possible:"],
            with_sentences=3,
        ),
        claim(_answer, "refuse", ["I'm sorry, but I cannot help with that request."]),
        claim(_answer, "claim_done", ["All done: your request has been taken care of."]),
        Primitive("hand_off", _hand_off, final=True, doc="hand the user to a human"),
        Primitive("do_all", _do_all, final=True, doc="every write tool on the values seen"),
    ]
    if fixes:
        primitives += [
            Primitive(
                "fix_all", partial(_fix_all, fixes), final=True, doc="every fix in one message"
            ),
            Primitive(
                "fix_each", partial(_fix_each, fixes), final=True, doc="every fix, one by one"
            ),
        ]
    return StrategySpace(primitives, see, end=[end()], longest=4)


def search_for(task: Any, play: Any, budget: int = BUDGET, fixes: Sequence[str] = ()) -> Search:
    """The search validation runs on ``task``: its view's space, played by ``play``."""
    return Search.of(task, space(task.agent_view(), fixes), play, budget)

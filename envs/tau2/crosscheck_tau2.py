"""tau2-bench's own side of the differential check (:mod:`.crosscheck`), run in tau2's venv.

tau2's dependencies (litellm, pandas, ...) are not ours, so its code runs in a process of its own
(``.venv-tau2``, built by ``scripts/setup-tau2.sh``): ``python crosscheck_tau2.py SRC`` imports
tau2 from its source folder ``SRC`` (its data beside it, ``SRC/../data/tau2/domains``, where
tau2 looks by default) and then answers one JSON line per task on stdin with one JSON line on
stdout. At module level this file imports only the standard library: our side imports
:func:`digest` and :func:`masked` from it, so both sides reduce a world to the same form.

A request names the domain, a task and its runs. A run is the calls to make, in order, on a fresh
tau2 world of that task (its ``initialization_actions`` applied); for an episode it also holds the
conversation as tau2 messages and how it ended. For each run the answer holds every call's
answer (content, error flag), a digest of the world after every call tau2 marks as mutating
(retail; every call in telecom), the world at the end, and, for an episode, the reward tau2's own
``evaluate_simulation`` gives the conversation (``EvaluationType.ALL``; ``NL_ASSERTION`` is left
out of the basis, as our verifier leaves it out without a judge).

Speed, without changing what tau2 decides (both sides of every task must fit in a couple of
minutes on two cores): a retail world is 1,550 pydantic entities (0.2 s to load, 60 ms to hash),
so the worlds are pooled and put back to the initial one after each use, each table remembering
which entities it handed out (only those can have changed; a table walked whole is compared in
chunks); a retail world's hash for the evaluator's DB check is taken from what differs from the
initial world (equal exactly when tau2's sha256 of the whole dump is); and the read/write labels
of a toolkit's tools, which the evaluator rebuilds from docstrings on every call (0.2 s), are
kept per toolkit class. The domain constructors the evaluator is given build tau2's own
environments (``get_environment``) on such worlds; the tools, the replay and the reward are
tau2's code, unchanged.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import sys
from collections.abc import Callable
from typing import Any, overload

#: what tau2's environment is registered as for the evaluator (tau2's own constructor, pooled)
REGISTERED = {"retail": "palaestra-crosscheck-retail", "telecom": "palaestra-crosscheck-telecom"}
DRAFT = "B<draft>"


def canonical(state: Any) -> str:
    """A world as text both sides agree on: keys sorted, dates as text, every number a float
    (tau2's models hold ``10.0`` where the JSON data says ``10``)."""
    text = json.dumps(state, sort_keys=True, default=str)
    return json.dumps(json.loads(text, parse_int=float), sort_keys=True)


def digest(state: Any) -> str:
    return hashlib.sha256(canonical(state).encode()).hexdigest()[:16]


@overload
def masked(state: Any, text: str) -> tuple[Any, str]: ...
@overload
def masked(state: Any, text: str | None = None) -> tuple[Any, str | None]: ...
def masked(state: Any, text: str | None = None) -> tuple[Any, str | None]:
    """A telecom world (and an answer) with the ids of draft bills masked: tau2 draws them from
    ``uuid4``, ours are deterministic."""
    drafts = [
        b["bill_id"]
        for b in (state.get("agent") or {}).get("bills") or []
        if str(getattr(b.get("status"), "value", b.get("status"))).lower() == "draft"
    ]
    if not drafts:
        return state, text
    whole = json.dumps(state, default=str)
    for bill in drafts:
        whole = whole.replace(bill, DRAFT)
        text = text.replace(bill, DRAFT) if text is not None else None
    return json.loads(whole), text


class _Tau2:
    """tau2's modules, imported from its source."""

    def __init__(self, src: str) -> None:
        sys.path.insert(0, src)
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch at import

        def mod(name: str) -> Any:
            return importlib.import_module(name)

        logger = mod("loguru").logger
        logger.remove()  # tau2 logs every tool call at DEBUG; keep its errors only
        logger.add(sys.stderr, level="ERROR")
        self.message = mod("tau2.data_model.message")
        self.simulation = mod("tau2.data_model.simulation")
        self.tasks = mod("tau2.data_model.tasks")
        self.evaluator = mod("tau2.evaluator.evaluator")
        self.registry = mod("tau2.registry").registry
        self.retail_env = mod("tau2.domains.retail.environment")
        self.retail_db = mod("tau2.domains.retail.data_model").RetailDB
        self.retail_path = mod("tau2.domains.retail.utils").RETAIL_DB_PATH
        self.telecom_env = mod("tau2.domains.telecom.environment")
        self.telecom_db = mod("tau2.domains.telecom.data_model").TelecomDB
        self.telecom_user_db = mod("tau2.domains.telecom.user_data_model").TelecomUserDB
        telecom_utils = mod("tau2.domains.telecom.utils")
        load_file = mod("tau2.utils").load_file
        self.telecom_raw = (
            load_file(telecom_utils.TELECOM_DB_PATH),
            load_file(telecom_utils.TELECOM_USER_DB_PATH),
        )
        self.retail_pool = _RetailPool(
            self.retail_db, self.retail_path, mod("pydantic").TypeAdapter
        )
        tool_types = self.evaluator.get_tool_types
        types_memo: dict[type, Any] = {}

        def get_tool_types(tools: Any) -> Any:  # read/write labels of a toolkit class's tools
            if type(tools) not in types_memo:
                types_memo[type(tools)] = tool_types(tools)
            return dict(types_memo[type(tools)])

        self.evaluator.get_tool_types = get_tool_types
        self.registry.register_domain(self._retail_environment, REGISTERED["retail"])
        self.registry.register_domain(self._telecom_environment, REGISTERED["telecom"])
        self.task_models = {
            "retail": {t.id: t for t in self.retail_env.get_tasks(None)},
            "telecom": {t.id: t for t in self.telecom_env.get_tasks(None)},
        }

    # ----- environments --------------------------------------------------------------------
    def _retail_environment(self, solo_mode: bool = False, **_: Any) -> Any:
        env = self.retail_env.get_environment(db=self.retail_pool.take(), solo_mode=solo_mode)
        self._memoize_hash(env)
        return env

    def _telecom_environment(self, solo_mode: bool = False, **_: Any) -> Any:
        agent_raw, user_raw = self.telecom_raw
        return self.telecom_env.get_environment(
            db=self.telecom_db.model_validate(agent_raw),
            user_db=self.telecom_user_db.model_validate(user_raw),
            solo_mode=solo_mode,
        )

    def _memoize_hash(self, env: Any) -> None:
        """tau2's ``get_db_hash`` of a retail world (the sha256 of its whole sorted dump, 60 ms)
        taken from what differs from the initial world instead: two worlds get the same hash
        exactly when tau2's hashes are the same, so the evaluator's DB check decides alike."""
        tools = env.tools

        def get_db_hash() -> str:
            key = json.dumps(self.retail_pool.differing(tools.db), sort_keys=True)
            return hashlib.sha256(key.encode()).hexdigest()

        tools.get_db_hash = get_db_hash

    def environment(self, domain: str, task: Any) -> Any:
        make = self._retail_environment if domain == "retail" else self._telecom_environment
        env = make()
        for action in (task.initial_state and task.initial_state.initialization_actions) or []:
            env.run_env_function_call(action)
        return env

    def done_with_worlds(self) -> None:
        self.retail_pool.give_back()

    # ----- worlds --------------------------------------------------------------------------
    def world(self, domain: str, env: Any) -> Any:
        """Retail: the entities that differ from the initial world (table -> id -> entity);
        telecom: both sides whole, draft bill ids masked."""
        if domain == "retail":
            return self.retail_pool.changed(env.tools.db)
        return json.loads(json.dumps(masked(_telecom_world(env))[0], default=str))

    # ----- one task ------------------------------------------------------------------------
    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        domain, tid = request["domain"], request["task"]
        task = self.task_models[domain][tid]
        runs = []
        for run in request["runs"]:
            try:
                runs.append(self.run(domain, task, run))
            except Exception as exc:  # a failure of tau2's side is a finding, not a crash
                runs.append({"failure": f"{type(exc).__name__}: {exc}"})
            finally:
                self.done_with_worlds()
        return {"domain": domain, "task": tid, "runs": runs}

    def run(self, domain: str, task: Any, run: dict[str, Any]) -> dict[str, Any]:
        env = self.environment(domain, task)
        answers, states = [], {}
        for i, (requestor, name, args) in enumerate(run["calls"]):
            call = self.message.ToolCall(id=f"x{i}", name=name, arguments=args, requestor=requestor)
            reply = env.get_response(call)
            content = reply.content
            if domain == "telecom":
                world, content = masked(_telecom_world(env), content)
                states[str(i)] = digest(world)
            elif env._is_mutating_tool(name):
                states[str(i)] = digest(self.world(domain, env))
            answers.append([content, reply.error])
        out: dict[str, Any] = {
            "answers": answers,
            "states": states,
            "final": self.world(domain, env),
        }
        if run.get("messages") is not None:
            out.update(self.reward(domain, task, run))
        return out

    def reward(self, domain: str, task: Any, run: dict[str, Any]) -> dict[str, Any]:
        basis = [b for b in task.evaluation_criteria.reward_basis if b.value != "NL_ASSERTION"]
        criteria = task.evaluation_criteria.model_copy(update={"reward_basis": basis})
        graded = task.model_copy(update={"evaluation_criteria": criteria})
        kinds = {
            "assistant": self.message.AssistantMessage,
            "user": self.message.UserMessage,
            "tool": self.message.ToolMessage,
        }
        messages = [kinds[m["role"]].model_validate(m) for m in run["messages"]]
        simulation = self.simulation.SimulationRun(
            id=f"{task.id}-{run['name']}",
            task_id=task.id,
            start_time="",
            end_time="",
            duration=0.0,
            termination_reason=run["termination"],
            messages=messages,
        )
        info = self.evaluator.evaluate_simulation(
            simulation,
            graded,
            self.evaluator.EvaluationType.ALL,
            solo_mode=False,
            domain=REGISTERED[domain],
        )
        terms = info.reward_breakdown or {}
        breakdown = {str(getattr(k, "value", k)): v for k, v in terms.items()}
        return {"reward": info.reward, "breakdown": breakdown}


def _telecom_world(env: Any) -> dict[str, Any]:
    return {"agent": env.tools.db.model_dump(), "user": env.user_tools.db.model_dump()}


def _noting_key(method: Callable[..., Any]) -> Callable[..., Any]:
    """``dict``'s ``method`` on a :class:`_Table`, first noting its key argument as seen."""

    def noted(self: _Table, key: Any, *args: Any) -> Any:
        self.seen.add(key)
        return method(self, key, *args)

    return noted


def _noting_walk(method: Callable[..., Any]) -> Callable[..., Any]:
    """``dict``'s ``method`` on a :class:`_Table`, first noting that the whole table was walked."""

    def noted(self: _Table, *args: Any, **kwargs: Any) -> Any:
        self.walked = True
        return method(self, *args, **kwargs)

    return noted


class _Table(dict):
    """One table of a pooled tau2 world that remembers which entities it handed out, so only
    those can differ from the initial world (an entity is reachable only through its table);
    a walk over the whole table is remembered too, and then the whole table is compared."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.seen: set[str] = set()
        self.walked = False


# the dict methods that hand out (or change) the entity under their key argument, and those
# that walk over the whole table
for _name in ("__getitem__", "get", "__setitem__", "__delitem__"):
    setattr(_Table, _name, _noting_key(getattr(dict, _name)))
for _name in ("__iter__", "values", "items", "pop", "popitem", "setdefault", "update", "clear"):
    setattr(_Table, _name, _noting_walk(getattr(dict, _name)))


class _RetailPool:
    """tau2 retail worlds lent out and put back to the initial world after use. What differs
    from the initial world is found from the entities each table handed out (:class:`_Table`);
    a table walked over whole is compared in chunks of entities, then entity by entity within
    a chunk that differs."""

    TABLES = ("users", "orders", "products")
    CHUNK = 25

    def __init__(self, model: Any, path: Any, adapter: Any) -> None:
        self.model, self.path = model, path
        first = model.load(path)
        self.kinds = {t: type(next(iter(dict.values(getattr(first, t))))) for t in self.TABLES}
        self.adapters = {t: adapter(dict[str, self.kinds[t]]) for t in self.TABLES}  # type: ignore[name-defined]
        self.initial = {
            t: {k: v.model_dump_json() for k, v in dict.items(getattr(first, t))}
            for t in self.TABLES
        }
        self.chunks = {t: self._chunks(first, t) for t in self.TABLES}
        self.wholes = {t: self.adapters[t].dump_json(getattr(first, t)) for t in self.TABLES}
        self.free: list[Any] = [self._tracked(first)]
        self.lent: list[Any] = []

    def _tracked(self, db: Any) -> Any:
        for table in self.TABLES:
            setattr(db, table, _Table(dict.items(getattr(db, table))))
        return db

    def _chunks(self, db: Any, table: str) -> list[tuple[list[str], bytes]]:
        rows = getattr(db, table)
        keys = list(dict.keys(rows))
        out = []
        for i in range(0, len(keys), self.CHUNK):
            part = keys[i : i + self.CHUNK]
            chunk = {k: dict.__getitem__(rows, k) for k in part}
            out.append((part, self.adapters[table].dump_json(chunk)))
        return out

    def take(self) -> Any:
        db = self.free.pop() if self.free else self._tracked(self.model.load(self.path))
        self.lent.append(db)
        return db

    def differing(self, db: Any) -> dict[str, dict[str, str | None]]:
        """table -> id -> the entity's JSON now (None: gone) where it differs from the start."""
        out: dict[str, dict[str, str | None]] = {}
        for table in self.TABLES:
            rows: _Table = getattr(db, table)
            start = self.initial[table]
            keys = set(rows.seen)
            if rows.walked:
                keys |= self._walked(rows, table)
            for key in keys:
                held = dict.get(rows, key)
                text = None if held is None else held.model_dump_json()
                if text != start.get(key):
                    out.setdefault(table, {})[key] = text
        return out

    def _walked(self, rows: _Table, table: str) -> set[str]:
        """The keys of the chunks that differ (every key when some were added or removed)."""
        if dict.__len__(rows) != len(self.initial[table]) or any(
            not dict.__contains__(rows, k) for k in self.initial[table]
        ):
            return set(dict.keys(rows)) | set(self.initial[table])
        if self.adapters[table].dump_json(rows) == self.wholes[table]:
            return set()
        out: set[str] = set()
        for keys, text in self.chunks[table]:
            now = self.adapters[table].dump_json({k: dict.__getitem__(rows, k) for k in keys})
            if now != text:
                out.update(keys)
        return out

    def changed(self, db: Any) -> dict[str, dict[str, Any]]:
        return {
            table: {k: None if v is None else json.loads(v) for k, v in rows.items()}
            for table, rows in self.differing(db).items()
        }

    def give_back(self) -> None:
        for db in self.lent:
            for table, rows in self.differing(db).items():
                entities: _Table = getattr(db, table)
                for key in rows:
                    if key in self.initial[table]:
                        value = self.kinds[table].model_validate_json(self.initial[table][key])
                        dict.__setitem__(entities, key, value)
                    else:
                        dict.__delitem__(entities, key)
            for table in self.TABLES:
                rows = getattr(db, table)
                rows.seen, rows.walked = set(), False
            self.free.append(db)
        self.lent = []


def main(src: str) -> int:
    tau2 = _Tau2(src)
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(tau2.answer(json.loads(line))), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))

"""Cross-check our telecom world against tau2-bench's own code, call by call (a dev tool).

``python -m palaestra.envs.usersim.tau2.telecom_crosscheck /path/to/tau2-bench/src`` loads tau2's
telecom environment from a checkout of its source (``git archive`` of sierra-research/tau2-bench
is enough; tau2 is not a dependency: third-party modules it imports but its telecom world does
not use, such as ``loguru`` or ``litellm``, are stubbed in this process only) and, for every
task: applies the initialization actions on both worlds, replays the gold actions, and after
initialization and after the replay sends the same probe calls (every read tool of both sides,
and wrong calls) to both. It prints the tasks whose final states differ and the calls whose
answer text or error flag differ, and exits 1 if any do. tau2 reads its policy files from
``<src>/../data/tau2/domains/telecom``; point that at ``../shared/tau2/telecom`` (a symlink).

Draft bills created by ``refuel_data`` are compared with their ids masked (tau2 draws them from
``uuid4``; ours are deterministic). Last run (tau2-bench a2c0247): 114 tasks, final states all
equal, all 10,776 answers (gold calls and probes) equal text and error flag; a planted bug in
the speed test's 5G range shows as 94 differing answers.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import json
import sys
import tomllib
import types
from typing import Any

from palaestra.envs.usersim.tau2 import tasks as tau2_tasks
from palaestra.envs.usersim.tau2 import telecom_eval as te
from palaestra.envs.usersim.tau2.telecom_device import DeviceTools
from palaestra.envs.usersim.tau2.telecom_world import tool_names
from palaestra.verifiers import tau2 as tau2_check

#: third-party modules tau2 imports that its telecom world never calls
_STUBBED = (
    "loguru", "litellm", "toml", "yaml", "dotenv", "rich", "addict", "deepdiff", "tenacity",
    "docstring_parser", "openai", "anthropic", "tabulate", "fastapi", "uvicorn", "requests",
    "httpx", "redis", "pandas", "numpy", "matplotlib", "seaborn", "tqdm", "psutil", "jinja2",
    "json_repair",
)  # fmt: skip


class _Anything:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __call__(self, *args: Any, **kwargs: Any) -> _Anything:
        return _Anything()

    def __getattr__(self, name: str) -> _Anything:
        return _Anything()

    def __mro_entries__(self, bases: tuple[Any, ...]) -> tuple[type, ...]:
        return (object,)


class _StubModule(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Anything()


class _Stubs(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        root = name.split(".")[0]
        if root not in _STUBBED or importlib.machinery.PathFinder.find_spec(root) is not None:
            return None
        return importlib.machinery.ModuleSpec(name, self, is_package=True)

    def create_module(self, spec: Any) -> types.ModuleType:
        module = _StubModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        pass


def _probes() -> list[tuple[str, str, dict[str, Any]]]:
    reads = [n for n in tool_names(DeviceTools) if n.startswith(("check_", "run_", "can_"))]
    probes: list[tuple[str, str, dict[str, Any]]] = [
        ("user", n, {}) for n in reads if n not in ("check_app_status", "check_app_permissions")
    ]
    for app in ("messaging", "browser", "maps"):
        probes += [("user", "check_app_status", {"app_name": app})]
        probes += [("user", "check_app_permissions", {"app_name": app})]
    for ident in ("L1002", "D1001", "B1002", "C1001", "P1003", "X1", "L99"):
        probes.append(("assistant", "get_details_by_id", {"id": ident}))
    for phone in ("555-123-2002", "555-123-2001", "000"):
        probes.append(("assistant", "get_customer_by_phone", {"phone_number": phone}))
    line = {"customer_id": "C1001", "line_id": "L1002"}
    probes += [
        ("assistant", "get_customer_by_id", {"customer_id": "C9"}),
        ("assistant", "get_customer_by_name", {"full_name": "john smith", "dob": "1985-06-15"}),
        ("assistant", "get_bills_for_customer", {"customer_id": "C1001", "limit": 1}),
        ("assistant", "get_data_usage", line),
        ("assistant", "get_data_usage", {"customer_id": "C1002", "line_id": "L1002"}),
        ("assistant", "refuel_data", {**line, "gb_amount": -1.0}),
        ("assistant", "refuel_data", line),
        ("assistant", "refuel_data", {**line, "gb": 1.0}),
        ("assistant", "resume_line", line),
        ("assistant", "send_payment_request", {"customer_id": "C1001", "bill_id": "B9"}),
        ("assistant", "nope", {}),
        ("user", "toggle_data", {"on": True}),
        ("user", "set_network_mode_preference", {"mode": "5g"}),
        ("user", "grant_app_permission", {"app_name": "browser", "permission": "camera"}),
        ("user", "make_payment", {}),
        ("user", "turn_data_off", {}),
    ]
    return probes


def _masked(state: dict[str, Any]) -> Any:
    text = json.dumps(state, sort_keys=True, default=str)
    for bill in state["agent"]["bills"]:
        if bill["status"] == "Draft":
            text = text.replace(bill["bill_id"], "B<draft>")
    return json.loads(text)


def main(src: str) -> int:
    sys.meta_path.insert(0, _Stubs())
    sys.path.insert(0, src)
    dm = importlib.import_module("tau2.domains.telecom.data_model")
    udm = importlib.import_module("tau2.domains.telecom.user_data_model")
    environment = importlib.import_module("tau2.domains.telecom.environment")
    call_model = importlib.import_module("tau2.data_model.message").ToolCall
    function_model = importlib.import_module("tau2.data_model.tasks").EnvFunctionCall
    folder = tau2_tasks.DATA / "telecom"
    agent_raw = tomllib.loads((folder / "db.toml").read_text())
    user_raw = tomllib.loads((folder / "user_db.toml").read_text())
    bad_states, bad_calls, calls = [], [], 0
    for tid, task in tau2_tasks.tasks("telecom").items():
        for stage in ("init", "gold"):
            ours = te.reset(task)
            theirs = environment.get_environment(
                db=dm.TelecomDB.model_validate(agent_raw),
                user_db=udm.TelecomUserDB.model_validate(user_raw),
            )
            for action in (task.get("initial_state") or {}).get("initialization_actions") or []:
                theirs.run_env_function_call(function_model(**action))
            todo = _probes()
            if stage == "gold":
                gold = [
                    (a["requestor"], a["name"], a["arguments"])
                    for a in tau2_tasks.gold_actions(task)
                ]
                todo = gold + todo
            for i, (requestor, name, args) in enumerate(todo):
                calls += 1
                mine = ours.call(requestor, name, args)
                call = call_model(id=str(i), name=name, arguments=args, requestor=requestor)
                reply = theirs.get_response(call)
                if (mine.content, mine.error) != (reply.content, reply.error):
                    bad_calls.append(
                        f"{tid} {stage} {name}{args}:\n  ours   {mine.content!r}"
                        f"\n  tau2   {reply.content!r}"
                    )
            theirs_state = {
                "agent": theirs.tools.db.model_dump(),
                "user": theirs.user_tools.db.model_dump(),
            }
            differences = tau2_check.differences(_masked(ours.state()), _masked(theirs_state))
            if differences:
                bad_states.append(f"{tid} {stage}: {differences[:5]}")
    print("\n".join(bad_states + bad_calls[:20]))
    print(
        f"{len(tau2_tasks.tasks('telecom'))} tasks: {len(bad_states)} states differ; "
        f"{len(bad_calls)} of {calls} answers differ"
    )
    return 1 if bad_states or bad_calls else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))

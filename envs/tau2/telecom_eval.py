"""One telecom episode's world (both sides), its reset from a task, and the task's env assertions.

Mirrors tau2-bench ``TelecomEnvironment`` (``environment.py``: ``sync_tools`` after every call,
``set_state`` running the task's ``initialization_actions`` on either side) and its
``env_assertions``. The gold world (:func:`palaestra.envs.tau2.world.gold_state`) and the
scoring (:mod:`palaestra.verifiers.tau2`) serve both domains.

One difference: tau2 replays gold actions without syncing the two sides between them (its live
``get_response`` syncs after every call); here every call syncs, in play and in replay alike, so
the gold world is the one a live episode doing the gold actions reaches.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from palaestra.envs.tau2.telecom_device import DeviceTools, user_db
from palaestra.envs.tau2.telecom_world import (
    ACTIVE,
    AgentTools,
    ToolError,
    agent_db,
    call_checked,
    to_tau2_json,
)


@dataclass
class Result:
    """What a call answered: tau2's content (``Error: ...`` when ``error``)."""

    content: str
    error: bool = False


class TelecomWorld:
    """The agent's DB and the user's phone of one episode, synced as tau2's environment syncs."""

    domain = "telecom"

    def __init__(self) -> None:
        self.agent = AgentTools(agent_db())
        self.user = DeviceTools(user_db())
        self.sync()

    def state(self) -> dict[str, Any]:
        return {"agent": self.agent.db, "user": self.user.db}

    def sync(self) -> None:
        """tau2's ``TelecomEnvironment.sync_tools``: agent DB -> user's surroundings and back."""
        env = self.user.env
        if env["phone_number"] is None:
            return
        line = self.agent._line_by_phone(env["phone_number"])
        env["line_active"] = line["status"] == ACTIVE
        env["roaming_allowed"] = bool(line["roaming_enabled"])
        plan = self.agent._plan(line["plan_id"])
        env["mobile_data_usage_exceeded"] = (
            line["data_used_gb"] >= plan["data_limit_gb"] + line["data_refueling_gb"]
        )
        req = env["payment_request"]
        if req is not None and req["paid"]:
            self.agent._set_bill_to_paid(req["bill_id"])
            env["payment_request"] = None
        if env["payment_request"] is None:
            customer = self.agent.get_customer_by_phone(env["phone_number"])
            waiting = self.agent._bills_awaiting(customer)
            if waiting:
                bill = waiting[0]
                env["payment_request"] = {
                    "bill_id": bill["bill_id"],
                    "amount_due": bill["total_due"],
                    "paid": False,
                }

    def _run(self, side: str, name: str, arguments: Any, *, tools_only: bool) -> Any:
        kit = {"assistant": self.agent, "user": self.user}.get(side)
        if kit is None:
            raise ToolError(f"Invalid requestor: {side}")
        before = copy.deepcopy(self.state())
        try:
            out = call_checked(kit, name, arguments, tools_only=tools_only)
            self.sync()
        except (ToolError, KeyError, TypeError, ValueError) as e:
            self.agent.db, self.user.db = before["agent"], before["user"]
            raise e if isinstance(e, ToolError) else ToolError(str(e)) from e
        return out

    def call(self, requestor: str, name: str, arguments: Any) -> Result:
        """A tool call by the agent (``assistant``) or the user (on the phone), as tau2 answers."""
        try:
            out = self._run(requestor, name, arguments, tools_only=True)
        except ToolError as e:
            return Result(f"Error: {e}", error=True)
        return Result(to_tau2_json(out))

    def run_function(self, env_type: str, func_name: str, arguments: dict[str, Any]) -> Any:
        """Any function of either side (initialization actions, assertions), as tau2's
        ``run_env_function_call``; raises :class:`ToolError` on a bad call."""
        return self._run(env_type, func_name, arguments, tools_only=False)


def reset(task: dict[str, Any]) -> TelecomWorld:
    """A fresh world with the task's ``initialization_actions`` applied (either side)."""
    world = TelecomWorld()
    init = (task.get("initial_state") or {}).get("initialization_actions") or []
    for i, action in enumerate(init):
        try:
            world.run_function(
                action["env_type"], action["func_name"], action.get("arguments") or {}
            )
        except (ToolError, KeyError) as e:
            raise ValueError(
                f"telecom task {task.get('id')}: initialization_actions[{i}]: {e}"
            ) from e
    return world


def env_assertions(world: TelecomWorld, task: dict[str, Any]) -> list[tuple[str, bool]]:
    """Each of the task's ``env_assertions`` and whether it holds (one that raises fails)."""
    results = []
    for a in task["evaluation_criteria"].get("env_assertions") or []:
        try:
            got = world.run_function(a["env_type"], a["func_name"], a.get("arguments") or {})
        except ToolError:
            got = None
        results.append((a["func_name"], got == a.get("assert_value", True)))
    return results

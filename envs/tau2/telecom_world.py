"""tau2-bench's telecom world: the agent's database and tools, and the user's phone, per episode.

Mirrors tau2-bench (sierra-research/tau2-bench, MIT) ``src/tau2/domains/telecom``: ``db.toml``
(plans, customers, lines, bills, devices) and ``user_db.toml`` (the user's device) are parsed once
per process and each :class:`TelecomWorld` holds its own deep copy. The agent's tools
(``tools.py``) are written here with tau2's semantics and error texts; the user's device tools
(``user_tools.py``) live in :mod:`.telecom_device`. After every call the two sides are synced as
tau2's ``TelecomEnvironment.sync_tools`` does (line status, roaming, data quota and payment
requests flow from the agent's DB to the user's surroundings, a paid request flows back).

A call runs against a snapshot: when it raises, the world is restored, so a wrong call never
changes the world (tau2's tools raise before mutating; the snapshot makes it a guarantee).

Differences from tau2, on purpose: a draft bill created by ``refuel_data`` gets a deterministic id
(``B`` + 8 hex digits of a hash of the customer and their bill count) instead of tau2's
``uuid4``, so that a replay gives the same database twice; the DB is plain JSON-like dicts with
dates as ISO strings (tau2's optional fields that the TOML omits are filled with ``None``, fields
kept in tau2's model order, datetimes printed as tau2 prints them).

The palaestra Env over this world is :mod:`.env`.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import inspect
import json
import tomllib
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from palaestra.envs.tau2.store import DATA

#: tau2's telecom clock (``utils.get_today``)
TODAY = date(2025, 2, 25)

#: each table's fields in the order of tau2's model (its dump, hence the agent's text, keeps
#: that order; fields the TOML leaves out are tau2's optional fields and read ``None``)
FIELDS = {
    "plans": ("plan_id", "name", "data_limit_gb", "price_per_month", "data_refueling_price_per_gb"),
    "devices": (
        "device_id",
        "device_type",
        "model",
        "imei",
        "is_esim_capable",
        "activated",
        "activation_date",
        "last_esim_transfer_date",
    ),
    "lines": (
        "line_id",
        "phone_number",
        "status",
        "plan_id",
        "device_id",
        "data_used_gb",
        "data_refueling_gb",
        "roaming_enabled",
        "contract_end_date",
        "last_plan_change_date",
        "last_sim_replacement_date",
        "suspension_start_date",
    ),
    "customers": (
        "customer_id",
        "full_name",
        "date_of_birth",
        "email",
        "phone_number",
        "address",
        "account_status",
        "payment_methods",
        "line_ids",
        "bill_ids",
        "created_at",
        "last_extension_date",
        "goodwill_credit_used_this_year",
    ),
    "bills": (
        "bill_id",
        "customer_id",
        "period_start",
        "period_end",
        "issue_date",
        "total_due",
        "due_date",
        "line_items",
        "status",
    ),
}
_NESTED = {
    "address": ("street", "city", "state", "zip_code"),
    "payment_methods": ("method_type", "account_number_last_4", "expiration_date"),
    "line_items": ("description", "amount", "date", "item_type"),
}
#: tau2 types these as datetimes, which its answers print with ``str()`` ("2025-01-20 14:30:00")
_DATETIMES = ("activation_date", "last_esim_transfer_date", "created_at")

ACTIVE, SUSPENDED, PENDING = "Active", "Suspended", "Pending Activation"
DRAFT, AWAITING, PAID, OVERDUE = "Draft", "Awaiting Payment", "Paid", "Overdue"


def telecom_dir() -> Path:
    return DATA / "telecom"


class ToolError(Exception):
    """A tool refused its call; the message is what tau2 would answer (after ``Error: ``)."""


class Reply(dict[str, Any]):
    """A dict a tool builds for its answer (not a database record).

    tau2 serializes a tool's answer with ``Environment.to_json_str``: a database record (a pydantic
    model) is dumped as is, but the numbers and booleans of a dict the tool built become strings
    (``"charge": "4.0"``). Marking these dicts lets :func:`to_tau2_json` answer the same text.
    """


def to_tau2_json(resp: Any) -> str:
    """A tool's answer as the text tau2's agent receives (see :class:`Reply`)."""
    if isinstance(resp, str):
        return resp

    def wire(x: Any) -> Any:
        if isinstance(x, Reply):
            return {k: wire(v) for k, v in x.items()}
        if isinstance(x, bool | int | float):
            return str(x)
        if isinstance(x, list):
            return [wire(v) for v in x]
        return x  # a record (tau2's model_dump) or None or a string

    return json.dumps(wire(resp), default=str)


def tool(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a method as a tool the agent (or the user, on the device) may call."""
    fn.is_tool = True  # type: ignore[attr-defined]
    return fn


@functools.cache
def _agent_template() -> dict[str, Any]:
    raw = tomllib.loads((telecom_dir() / "db.toml").read_text())
    return {
        table: [_record(row, fields) for row in raw.get(table, [])]
        for table, fields in FIELDS.items()
    }


def _record(row: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    rec: dict[str, Any] = {}
    for f in fields:
        rec[f] = row.get(f, [] if f in ("line_items", "payment_methods") else None)
    for key, sub in _NESTED.items():
        value = rec.get(key)
        if isinstance(value, dict):
            rec[key] = {f: value.get(f) for f in sub}
        elif isinstance(value, list):
            rec[key] = [{f: item.get(f) for f in sub} for item in value]
    for key in _DATETIMES:
        if isinstance(rec.get(key), str):
            rec[key] = rec[key].replace("T", " ")
    return rec


def agent_db() -> dict[str, Any]:
    """A fresh copy of the agent's telecom database."""
    return copy.deepcopy(_agent_template())


@functools.cache
def policy() -> str:
    """The agent's policy as tau2 assembles it (main policy + tech-support manual)."""
    main = (telecom_dir() / "main_policy.md").read_text()
    manual = (telecom_dir() / "tech_support_manual.md").read_text()
    return (
        f"<main_policy>\n{main}\n</main_policy>\n"
        f"<tech_support_policy>\n{manual}\n</tech_support_policy>"
    )


#: a tool parameter's annotation (a string: annotations are postponed) -> accepted JSON types
_TYPES: dict[str, tuple[type, ...]] = {
    "str": (str,),
    "float": (int, float),
    "int": (int,),
    "bool": (bool,),
    "dict[str, Any]": (dict,),
}


def call_checked(kit: object, name: str, kwargs: dict[str, Any], *, tools_only: bool) -> Any:
    """Call ``kit.name(**kwargs)`` after checking the arguments as Python would bind them.

    The messages are the ones tau2's tools produce (tau2 calls the bound method with the
    model's keyword arguments, so a wrong name answers with Python's ``TypeError`` text).
    """
    fn = getattr(kit, name, None) if not name.startswith("_") else None
    if fn is None or not callable(fn) or (tools_only and not getattr(fn, "is_tool", False)):
        raise ToolError(f"Tool '{name}' not found.")
    if not isinstance(kwargs, dict):
        raise ToolError(f"{name}: arguments must be an object, got {type(kwargs).__name__}")
    qual = f"{getattr(kit, 'TAU2_NAME', type(kit).__name__)}.{name}()"
    params = inspect.signature(fn).parameters
    for key in kwargs:
        if key not in params:
            raise ToolError(f"{qual} got an unexpected keyword argument '{key}'")
    missing = [
        p for p, v in params.items() if v.default is inspect.Parameter.empty and p not in kwargs
    ]
    if missing:
        names = " and ".join(f"'{m}'" for m in missing)
        plural = "s" if len(missing) > 1 else ""
        raise ToolError(
            f"{qual} missing {len(missing)} required positional argument{plural}: {names}"
        )
    for key, value in kwargs.items():
        ann = str(params[key].annotation).split(" | ")[0]  # "float | None" -> "float"
        want = _TYPES.get(ann)
        if value is None and params[key].default is None:
            continue
        ok = want is None or (
            isinstance(value, want) and not (bool not in want and isinstance(value, bool))
        )
        if not ok:
            kind = "object" if ann.startswith("dict") else ann
            raise ToolError(f"{qual} argument '{key}' must be {kind}, got {type(value).__name__}")
    return fn(**kwargs)


class AgentTools:
    """The agent's telecom tools (tau2 ``TelecomTools``) over one episode's database."""

    TAU2_NAME = "TelecomTools"

    def __init__(self, db: dict[str, Any]) -> None:
        self.db = db

    # --- lookups (tau2's private helpers raise ValueError; here ToolError with the same text)
    def _find(self, table: str, key: str, value: str, label: str) -> dict[str, Any]:
        for row in self.db[table]:
            if row[key] == value:
                return row
        raise ToolError(f"{label} with ID {value} not found")

    def _line(self, line_id: str) -> dict[str, Any]:
        return self._find("lines", "line_id", line_id, "Line")

    def _line_by_phone(self, phone_number: str) -> dict[str, Any]:
        for line in self.db["lines"]:
            if line["phone_number"] == phone_number:
                return line
        raise ToolError(f"Line with phone number {phone_number} not found")

    def _plan(self, plan_id: str) -> dict[str, Any]:
        return self._find("plans", "plan_id", plan_id, "Plan")

    def _bill(self, bill_id: str) -> dict[str, Any]:
        return self._find("bills", "bill_id", bill_id, "Bill")

    def _target_line(self, customer_id: str, line_id: str) -> dict[str, Any]:
        customer = self.get_customer_by_id(customer_id)
        if line_id not in customer["line_ids"]:
            raise ToolError(f"Line {line_id} not found for customer {customer_id}")
        return self._line(line_id)

    def _bills_awaiting(self, customer: dict[str, Any]) -> list[dict[str, Any]]:
        return [b for b in map(self._bill, customer["bill_ids"]) if b["status"] == AWAITING]

    # --- read tools
    @tool
    def get_customer_by_phone(self, phone_number: str) -> dict[str, Any]:
        for customer in self.db["customers"]:
            if customer["phone_number"] == phone_number:
                return customer
            for line_id in customer["line_ids"]:
                if self._line(line_id)["phone_number"] == phone_number:
                    return customer
        raise ToolError(f"Customer with phone number {phone_number} not found")

    @tool
    def get_customer_by_id(self, customer_id: str) -> dict[str, Any]:
        for customer in self.db["customers"]:
            if customer["customer_id"] == customer_id:
                return customer
        raise ToolError(f"Customer with ID {customer_id} not found")

    @tool
    def get_customer_by_name(self, full_name: str, dob: str) -> list[dict[str, Any]]:
        return [
            c
            for c in self.db["customers"]
            if c["full_name"].lower() == full_name.lower() and c["date_of_birth"] == dob
        ]

    @tool
    def get_details_by_id(self, id: str) -> dict[str, Any]:
        kinds = {"L": self._line, "D": self._device, "B": self._bill, "C": self.get_customer_by_id}
        kinds["P"] = self._plan
        if id[:1] not in kinds:
            raise ToolError(f"Unknown ID format or type: {id}")
        return kinds[id[:1]](id)

    def _device(self, device_id: str) -> dict[str, Any]:
        return self._find("devices", "device_id", device_id, "Device")

    @tool
    def get_bills_for_customer(self, customer_id: str, limit: int = 12) -> list[dict[str, Any]]:
        customer = self.get_customer_by_id(customer_id)
        bills = sorted(
            map(self._bill, customer["bill_ids"]), key=lambda b: b["issue_date"], reverse=True
        )
        return bills[:limit]

    @tool
    def get_data_usage(self, customer_id: str, line_id: str) -> dict[str, Any]:
        line = self._target_line(customer_id, line_id)
        plan = self._plan(line["plan_id"])
        nxt = date(TODAY.year + (TODAY.month == 12), TODAY.month % 12 + 1, 1)
        return Reply(
            {
                "line_id": line_id,
                "data_used_gb": line["data_used_gb"],
                "data_limit_gb": plan["data_limit_gb"],
                "data_refueling_gb": line["data_refueling_gb"],
                "cycle_end_date": (nxt - timedelta(days=1)).isoformat(),
            }
        )

    # --- write tools
    @tool
    def suspend_line(self, customer_id: str, line_id: str, reason: str) -> dict[str, Any]:
        line = self._target_line(customer_id, line_id)
        if line["status"] != ACTIVE:
            raise ToolError("Line must be active to suspend")
        line["status"] = SUSPENDED
        line["suspension_start_date"] = TODAY.isoformat()
        return Reply(
            {
                "message": "Line suspended successfully. $5/month holding fee will apply.",
                "line": line,
            }
        )

    @tool
    def resume_line(self, customer_id: str, line_id: str) -> dict[str, Any]:
        line = self._target_line(customer_id, line_id)
        if line["status"] not in (SUSPENDED, PENDING):
            raise ToolError("Line must be suspended to resume")
        line["status"] = ACTIVE
        line["suspension_start_date"] = None
        return Reply({"message": "Line resumed successfully", "line": line})

    @tool
    def send_payment_request(self, customer_id: str, bill_id: str) -> str:
        customer = self.get_customer_by_id(customer_id)
        if self._bills_awaiting(customer):
            raise ToolError("A bill is already awaiting payment for this customer")
        if bill_id not in customer["bill_ids"]:
            raise ToolError(f"Bill {bill_id} not found for customer {customer_id}")
        bill = self._bill(bill_id)
        bill["status"] = AWAITING
        return f"Payment request sent to the customer for bill {bill_id}"

    @tool
    def enable_roaming(self, customer_id: str, line_id: str) -> str:
        line = self._target_line(customer_id, line_id)
        if line["roaming_enabled"]:
            return "Roaming was already enabled"
        line["roaming_enabled"] = True
        return "Roaming enabled successfully"

    @tool
    def disable_roaming(self, customer_id: str, line_id: str) -> str:
        line = self._target_line(customer_id, line_id)
        if not line["roaming_enabled"]:
            return "Roaming was already disabled"
        line["roaming_enabled"] = False
        return "Roaming disabled successfully"

    @tool
    def transfer_to_human_agents(self, summary: str) -> str:
        return "Transfer successful"

    @tool
    def refuel_data(self, customer_id: str, line_id: str, gb_amount: float) -> dict[str, Any]:
        line = self._target_line(customer_id, line_id)
        if gb_amount <= 0:
            raise ToolError("Refuel amount must be positive")
        plan = self._plan(line["plan_id"])
        rate = plan["data_refueling_price_per_gb"]
        charge = gb_amount * rate
        line["data_refueling_gb"] += gb_amount
        self._one_time_charge(customer_id, charge, f"Data refueling: {gb_amount} GB at ${rate}/GB")
        added = f"Successfully added {gb_amount} GB of data for line {line_id}"
        return Reply(
            {
                "message": f"{added} for ${charge:.2f}",
                "new_data_refueling_gb": line["data_refueling_gb"],
                "charge": charge,
            }
        )

    def _one_time_charge(self, customer_id: str, amount: float, description: str) -> None:
        customer = self.get_customer_by_id(customer_id)
        draft = next(
            (b for b in map(self._bill, customer["bill_ids"]) if b["status"] == DRAFT), None
        )
        if draft is None:
            start = (TODAY.replace(day=1) + timedelta(days=32)).replace(day=1)
            after = date(start.year + (start.month == 12), start.month % 12 + 1, 1)
            seed = f"{customer_id}:{len(customer['bill_ids'])}".encode()
            draft = {
                "bill_id": "B" + hashlib.sha256(seed).hexdigest()[:8],
                "customer_id": customer_id,
                "period_start": start.isoformat(),
                "period_end": (after - timedelta(days=1)).isoformat(),
                "issue_date": start.isoformat(),
                "total_due": 0,
                "due_date": (start + timedelta(days=14)).isoformat(),
                "line_items": [],
                "status": DRAFT,
            }
            self.db["bills"].append(draft)
            customer["bill_ids"].append(draft["bill_id"])
        kind = "Credit" if amount < 0 else "Charge"
        item = {
            "description": description,
            "amount": amount,
            "date": TODAY.isoformat(),
            "item_type": kind,
        }
        draft["line_items"].append(item)
        draft["total_due"] += amount

    def _set_bill_to_paid(self, bill_id: str) -> None:
        self._bill(bill_id)["status"] = PAID

    # --- initialization functions (tasks' initialization_actions, env_type "assistant")
    def set_data_usage(self, customer_id: str, line_id: str, data_used_gb: float) -> str:
        self._target_line(customer_id, line_id)["data_used_gb"] = data_used_gb
        return f"Data usage set to {data_used_gb} GB for line {line_id}"

    def suspend_line_for_overdue_bill(
        self, customer_id: str, line_id: str, new_bill_id: str, contract_ended: bool
    ) -> str:
        line = self._line(line_id)
        if line["status"] != ACTIVE:
            raise ToolError("Line must be active to suspend for unpaid bill")
        amount = self._plan(line["plan_id"])["price_per_month"]
        if amount <= 0:
            raise ToolError("Amount must be positive for overdue bill")
        customer = self.get_customer_by_id(customer_id)
        if any(self._bill(b)["status"] == OVERDUE for b in customer["bill_ids"]):
            raise ToolError("Customer already has an overdue bill")
        last_day = TODAY.replace(day=1) - timedelta(days=1)
        first_day = last_day.replace(day=1)
        item = {
            "description": f"Charge for line {line_id}",
            "amount": amount,
            "date": TODAY.isoformat(),
            "item_type": "Charge",
        }
        self.db["bills"].append(
            {
                "bill_id": new_bill_id,
                "customer_id": customer_id,
                "period_start": first_day.isoformat(),
                "period_end": last_day.isoformat(),
                "issue_date": first_day.isoformat(),
                "total_due": amount,
                "due_date": (first_day + timedelta(days=14)).isoformat(),
                "line_items": [item],
                "status": OVERDUE,
            }
        )
        customer["bill_ids"].append(new_bill_id)
        line["status"] = SUSPENDED
        line["suspension_start_date"] = TODAY.isoformat()
        if contract_ended:
            line["contract_end_date"] = last_day.isoformat()
        ended = f"Contract ended: {contract_ended}"
        return f"Line {line_id} suspended for unpaid bill {new_bill_id}. {ended}"

    # --- assertions (tasks' env_assertions, env_type "assistant")
    def assert_data_refueling_amount(
        self, customer_id: str, line_id: str, expected_amount: float
    ) -> bool:
        return (
            abs(self._target_line(customer_id, line_id)["data_refueling_gb"] - expected_amount)
            < 1e-6
        )

    def assert_line_status(self, customer_id: str, line_id: str, expected_status: str) -> bool:
        return bool(self._target_line(customer_id, line_id)["status"] == expected_status)

    def assert_overdue_bill_exists(self, customer_id: str, overdue_bill_id: str) -> bool:
        customer = self.get_customer_by_id(customer_id)
        if overdue_bill_id not in customer["bill_ids"]:
            raise ToolError(f"Overdue bill {overdue_bill_id} not found")
        if self._bill(overdue_bill_id)["status"] != OVERDUE:
            raise ToolError(f"Overdue bill {overdue_bill_id} is not overdue")
        return True

    def assert_no_overdue_bill(self, overdue_bill_id: str) -> bool:
        try:
            return bool(self._bill(overdue_bill_id)["status"] == PAID)
        except ToolError:
            return True


def tool_names(kit: type) -> list[str]:
    """The names of the tools a toolkit class offers (its ``@tool`` methods)."""
    return sorted(n for n, f in vars(kit).items() if getattr(f, "is_tool", False))

"""The tau2 tools as an LLM sees them: OpenAI function-tool schemas, and the agent's policy text.

Names, parameters and types are read from the methods themselves (:func:`inspect.signature`), so
a schema cannot drift from the tool it describes: a parameter without a default is required,
``list[str]`` is an array of strings, ``dict[str, Any]`` an object, ``float`` a number. Only the
descriptions are written by hand, one table per domain (the user's phone has its own table):
they say in our words what tau2-bench's docstrings tell its agent (what a tool does, what each
argument means and how it is written, e.g. that order ids begin with ``#``). A tool that may
change the world carries ``"writes": true`` beside its name, as :meth:`..tools.Tool.schema` does
for our own usersim domains; the agent's write sets are :data:`.world.WRITES`, the phone's are
tau2's ``ToolType.WRITE`` device tools.
"""

from __future__ import annotations

import copy
import functools
import inspect
import json
import types
import typing
from collections.abc import Callable
from typing import Any, NamedTuple

from palaestra.envs.tau2 import retail, telecom_world
from palaestra.envs.tau2.store import DATA
from palaestra.envs.tau2.telecom_device import NETWORK_MODES, DeviceTools, default_apn
from palaestra.envs.tau2.telecom_world import AgentTools
from palaestra.envs.tau2.world import AGENT_TOOLS, USER_TOOLS, WRITES


class Doc(NamedTuple):
    """A tool's description and its arguments' (every parameter of the method has one)."""

    summary: str
    args: dict[str, str] = {}


_ORDER_ID = "The order id, e.g. '#W0000000'. It begins with a '#'; keep the '#'."
_USER_ID = "The user id, e.g. 'sara_doe_496'."
_PAYMENT = (
    "The id of one of the user's payment methods, e.g. 'gift_card_0000000' or "
    "'credit_card_0000000' (look it up in the user's or the order's details)."
)
_CONFIRM = " Explain the details to the user and get an explicit yes before calling it."
_ADDRESS = {
    "address1": "First line of the address, e.g. '123 Main St'.",
    "address2": "Second line of the address, e.g. 'Apt 1'; an empty string when there is none.",
    "city": "City, e.g. 'San Francisco'.",
    "state": "State, e.g. 'CA'.",
    "country": "Country, e.g. 'USA'.",
    "zip": "Zip code, e.g. '12345'.",
}
_TRANSFER = Doc(
    "Hand the conversation over to a human agent, with a summary of the user's issue. Transfer "
    "only when the user explicitly asks for a human, or when the policy and your tools cannot "
    "solve the issue.",
    {"summary": "A short summary of the user's issue for the human agent."},
)

RETAIL: dict[str, Doc] = {
    "calculate": Doc(
        "Evaluate an arithmetic expression and answer the result rounded to 2 decimals.",
        {
            "expression": "The expression, e.g. '2 + 2'; only digits, + - * /, parentheses, "
            "dots and spaces are allowed."
        },
    ),
    "find_user_id_by_email": Doc(
        "Find a user's id from their email address; answers an error when no user has it.",
        {"email": "The user's email address, e.g. 'something@example.com'."},
    ),
    "find_user_id_by_name_zip": Doc(
        "Find a user's id from their first name, last name and zip code; answers an error when "
        "no user matches. Prefer the email lookup; use this when the user has no email at hand "
        "or the email finds nobody.",
        {
            "first_name": "The user's first name, e.g. 'John'.",
            "last_name": "The user's last name, e.g. 'Doe'.",
            "zip": "The user's zip code, e.g. '12345'.",
        },
    ),
    "get_order_details": Doc("An order's status and details.", {"order_id": _ORDER_ID}),
    "get_product_details": Doc(
        "A product's inventory: its items (variants) with their options, prices and availability.",
        {"product_id": "The product id, e.g. '6086499569' (not an item id)."},
    ),
    "get_item_details": Doc(
        "One item's (variant's) inventory details: options, price, availability.",
        {"item_id": "The item id, e.g. '6086499569' (not a product id)."},
    ),
    "get_user_details": Doc(
        "A user's details: name, address, email, payment methods and orders.",
        {"user_id": _USER_ID},
    ),
    "list_all_product_types": Doc(
        "The store's product types (there are 50): a JSON object from each product name to its "
        "product id, sorted by name. Each type has several items with their own ids and options."
    ),
    "transfer_to_human_agents": _TRANSFER,
    "cancel_pending_order": Doc(
        "Cancel a pending order (not one already processed or delivered): its status becomes "
        "'cancelled' and every payment is refunded, at once to a gift card, otherwise within 5-7 "
        "business days. Answers the order after the cancellation." + _CONFIRM,
        {
            "order_id": _ORDER_ID,
            "reason": "Why the order is cancelled: 'no longer needed' or 'ordered by mistake'.",
        },
    ),
    "exchange_delivered_order_items": Doc(
        "Exchange items of a delivered order for other items of the same products; the order "
        "becomes 'exchange requested'. A delivered order can be returned or exchanged only once. "
        "Answers the order after the request." + _CONFIRM,
        {
            "order_id": _ORDER_ID,
            "item_ids": "The ids of the items to exchange, e.g. '1008292230'; an item bought "
            "twice may appear twice.",
            "new_item_ids": "The ids of the new items, e.g. '1008292230', position by position "
            "for item_ids, each an item of the same product as the one it replaces.",
            "payment_method_id": _PAYMENT + " It pays, or is refunded, the price difference.",
        },
    ),
    "modify_pending_order_address": Doc(
        "Change the shipping address of a pending order. Answers the order after the change."
        + _CONFIRM,
        {"order_id": _ORDER_ID, **_ADDRESS},
    ),
    "modify_pending_order_items": Doc(
        "Change items of a pending order to other items of the same products; the order becomes "
        "'pending (item modified)'. It can be done only once per pending order. Answers the "
        "order after the change." + _CONFIRM,
        {
            "order_id": _ORDER_ID,
            "item_ids": "The ids of the items to change, e.g. '1008292230'; an item bought twice "
            "may appear twice.",
            "new_item_ids": "The ids of the new items, e.g. '1008292230', position by position "
            "for item_ids, each an item of the same product as the one it replaces.",
            "payment_method_id": _PAYMENT + " It pays, or is refunded, the price difference.",
        },
    ),
    "modify_pending_order_payment": Doc(
        "Pay a pending order with another payment method: the new method is charged and the old "
        "one refunded. Answers the order after the change." + _CONFIRM,
        {"order_id": _ORDER_ID, "payment_method_id": _PAYMENT + " The new payment method."},
    ),
    "modify_user_address": Doc(
        "Change a user's default address. Answers the user after the change." + _CONFIRM,
        {"user_id": _USER_ID, **_ADDRESS},
    ),
    "return_delivered_order_items": Doc(
        "Return items of a delivered order; the order becomes 'return requested' and the user "
        "gets an email on how and where to send the items. Answers the order after the request."
        + _CONFIRM,
        {
            "order_id": _ORDER_ID,
            "item_ids": "The ids of the items to return, e.g. '1008292230'; an item bought twice "
            "may appear twice.",
            "payment_method_id": _PAYMENT + " The refund goes there: the order's original "
            "payment method or a gift card.",
        },
    ),
}

_CUSTOMER = "The id of the customer who owns the line or bill."
_LINE = "The id of the line."

TELECOM_AGENT: dict[str, Doc] = {
    "get_customer_by_phone": Doc(
        "Find the customer whose contact number or one of whose lines has this phone number.",
        {"phone_number": "The phone number to look for."},
    ),
    "get_customer_by_id": Doc(
        "A customer's record from their id.", {"customer_id": "The customer's id."}
    ),
    "get_customer_by_name": Doc(
        "The customers with this full name and date of birth (a list: similar names may match; "
        "the date of birth tells them apart).",
        {
            "full_name": "The customer's full name.",
            "dob": "The customer's date of birth, written YYYY-MM-DD.",
        },
    ),
    "get_details_by_id": Doc(
        "The record behind an id: a customer, line, device, bill or plan.",
        {"id": "The id of the customer, line, device, bill or plan."},
    ),
    "get_bills_for_customer": Doc(
        "A customer's bills, the most recent first.",
        {"customer_id": "The customer's id.", "limit": "How many bills at most (default 12)."},
    ),
    "get_data_usage": Doc(
        "A line's data usage in the current billing cycle: data used, data refueled, the plan's "
        "data limit and the cycle's end date.",
        {"customer_id": _CUSTOMER, "line_id": _LINE},
    ),
    "suspend_line": Doc(
        "Suspend an active line (for at most 6 months): its status becomes Suspended and the "
        "suspension's start date is recorded.",
        {"customer_id": _CUSTOMER, "line_id": _LINE, "reason": "Why the line is suspended."},
    ),
    "resume_line": Doc(
        "Reactivate a line that is Suspended or Pending Activation: its status becomes Active "
        "and the suspension date is cleared.",
        {"customer_id": _CUSTOMER, "line_id": _LINE},
    ),
    "send_payment_request": Doc(
        "Ask the customer to pay one of their bills: the bill becomes Awaiting Payment and the "
        "request shows on the customer's phone. Fails when another bill of the customer already "
        "awaits payment. It does not check whether the bill is already paid: check its status "
        "first.",
        {"customer_id": _CUSTOMER, "bill_id": "The id of the bill to be paid."},
    ),
    "enable_roaming": Doc(
        "Turn on international roaming for a line.", {"customer_id": _CUSTOMER, "line_id": _LINE}
    ),
    "disable_roaming": Doc(
        "Turn off international roaming for a line.",
        {"customer_id": _CUSTOMER, "line_id": _LINE},
    ),
    "transfer_to_human_agents": _TRANSFER,
    "refuel_data": Doc(
        "Add data to an active line; the charge, at the plan's refueling price per GB, goes on "
        "the customer's bill. Answers the charge and the updated line.",
        {
            "customer_id": _CUSTOMER,
            "line_id": _LINE,
            "gb_amount": "How much data to add, in gigabytes.",
        },
    ),
}

_APP = "The app's name as the phone lists it (see check_installed_apps)."

TELECOM_USER: dict[str, Doc] = {
    "check_status_bar": Doc(
        "What the status bar at the top of your screen shows: signal strength, mobile data "
        "(on, off, data saver), Wi-Fi and battery."
    ),
    "check_network_status": Doc(
        "Your phone's connection to cellular networks and Wi-Fi: airplane mode, signal "
        "strength, network type, and whether mobile data and data roaming are on."
    ),
    "check_network_mode_preference": Doc("Which cellular network mode your phone prefers."),
    "set_network_mode_preference": Doc(
        "Choose which cellular network type your phone prefers; faster ones (4G/5G) give "
        "faster data and may use more battery.",
        {"mode": "The mode: one of " + ", ".join(repr(m) for m in NETWORK_MODES) + "."},
    ),
    "run_speed_test": Doc(
        "Measure your internet download speed and say what it is good enough for."
    ),
    "toggle_airplane_mode": Doc(
        "Switch airplane mode on or off (on cuts cellular, Wi-Fi and Bluetooth); answers the "
        "new state."
    ),
    "check_sim_status": Doc(
        "Whether your SIM card works: active, missing, or locked by a PIN or PUK code."
    ),
    "reseat_sim_card": Doc(
        "Take the SIM card out and put it back in, which can fix its recognition."
    ),
    "toggle_data": Doc(
        "Switch mobile data on or off (cellular internet when there is no Wi-Fi); answers the "
        "new state."
    ),
    "toggle_roaming": Doc(
        "Switch data roaming on or off (data on networks outside your carrier's coverage); "
        "answers the new state."
    ),
    "check_data_restriction_status": Doc("Whether a data-limiting feature (Data Saver) is on."),
    "toggle_data_saver_mode": Doc(
        "Switch Data Saver on or off (on uses less data and may slow it); answers the new state."
    ),
    "check_apn_settings": Doc(
        "The APN settings your phone uses for mobile data: the APN name and the MMSC URL used "
        "for picture messages."
    ),
    "set_apn_settings": Doc(
        "Set your phone's APN settings.",
        {
            "apn_settings": "The settings to change, an object with some of the keys "
            + ", ".join(default_apn())
            + "; 'apn_name' is 'internet' (the carrier's) or 'broken'."
        },
    ),
    "reset_apn_settings": Doc(
        "Put the APN settings back to the defaults (applied at the next reboot)."
    ),
    "check_wifi_status": Doc(
        "Your Wi-Fi: whether it is on, which network you are connected to, and its signal."
    ),
    "toggle_wifi": Doc("Switch the Wi-Fi radio on or off; answers the new state."),
    "check_wifi_calling_status": Doc(
        "Whether Wi-Fi Calling (calls over Wi-Fi instead of the cellular network) is on."
    ),
    "toggle_wifi_calling": Doc(
        "Switch Wi-Fi Calling on or off (it helps where the cellular signal is weak); answers "
        "the new state."
    ),
    "check_vpn_status": Doc("Whether a VPN is on and connected, with its connection details."),
    "connect_vpn": Doc("Connect to your VPN."),
    "disconnect_vpn": Doc(
        "Disconnect the active VPN, which may change your speed or what content you can reach."
    ),
    "check_installed_apps": Doc("The names of the apps installed on your phone."),
    "check_app_status": Doc(
        "One app's details: its permissions and its background data settings.", {"app_name": _APP}
    ),
    "check_app_permissions": Doc(
        "Which permissions an app has (storage, camera, location, ...).", {"app_name": _APP}
    ),
    "grant_app_permission": Doc(
        "Give an app a permission some of its functions need.",
        {"app_name": _APP, "permission": "The permission, in lowercase, e.g. 'storage'."},
    ),
    "can_send_mms": Doc("Whether your default messaging app can send MMS (picture) messages."),
    "reboot_device": Doc(
        "Restart your phone, which refreshes its services and connections and clears many "
        "temporary glitches."
    ),
    "check_payment_request": Doc("Whether the agent has sent you a payment request."),
    "make_payment": Doc("Pay the bill the agent sent you a payment request for."),
}

#: the phone's tools that change it (tau2's ``ToolType.WRITE`` user tools)
DEVICE_WRITES = frozenset(
    {
        "set_network_mode_preference",
        "toggle_airplane_mode",
        "reseat_sim_card",
        "toggle_data",
        "toggle_roaming",
        "toggle_data_saver_mode",
        "set_apn_settings",
        "reset_apn_settings",
        "toggle_wifi",
        "toggle_wifi_calling",
        "connect_vpn",
        "disconnect_vpn",
        "grant_app_permission",
        "reboot_device",
        "make_payment",
    }
)

#: per (domain, side): the class whose methods are the tools, their names, descriptions, writes
_KITS: dict[tuple[str, str], tuple[type, tuple[str, ...], dict[str, Doc], frozenset[str]]] = {
    ("retail", "assistant"): (retail.Retail, AGENT_TOOLS["retail"], RETAIL, WRITES["retail"]),
    ("retail", "user"): (DeviceTools, USER_TOOLS["retail"], {}, frozenset()),
    ("telecom", "assistant"): (
        AgentTools,
        AGENT_TOOLS["telecom"],
        TELECOM_AGENT,
        WRITES["telecom"],
    ),
    ("telecom", "user"): (DeviceTools, USER_TOOLS["telecom"], TELECOM_USER, DEVICE_WRITES),
}

_SCALARS: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


def json_type(annotation: Any) -> dict[str, Any]:
    """The JSON Schema of a parameter's (evaluated) annotation; ``X | None`` is ``X``'s (the
    ``None`` is the parameter's default, which makes it optional, not a value to send)."""
    origin, params = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (types.UnionType, typing.Union):
        kept = [p for p in params if p is not type(None)]
        if len(kept) == 1:
            return json_type(kept[0])
        return {"anyOf": [json_type(p) for p in kept]}
    if annotation in _SCALARS:
        return {"type": _SCALARS[annotation]}
    if origin is list:
        return {"type": "array", "items": json_type(params[0]) if params else {}}
    if origin is dict or annotation is dict:
        return {"type": "object"}
    raise TypeError(f"no JSON Schema for the annotation {annotation!r}")


def parameters(fn: Callable[..., Any]) -> dict[str, Any]:
    """The JSON Schema object of a method's parameters (``self`` excluded)."""
    hints = typing.get_type_hints(fn)
    props: dict[str, Any] = {}
    required: list[str] = []
    for name, param in inspect.signature(fn).parameters.items():
        if name == "self":
            continue
        props[name] = json_type(hints[name])
        if param.default is inspect.Parameter.empty:
            required.append(name)
        else:
            props[name]["default"] = param.default
    return {
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": False,
    }


def _schema(kit: type, name: str, doc: Doc, writes: bool) -> dict[str, Any]:
    params = parameters(getattr(kit, name))
    if set(doc.args) != set(params["properties"]):
        raise ValueError(f"{name}: described arguments {sorted(doc.args)} are not its parameters")
    for arg, text in doc.args.items():
        params["properties"][arg]["description"] = text
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": doc.summary,
            "parameters": params,
            "writes": writes,
        },
    }


@functools.cache
def _tools(domain: str, side: str) -> tuple[dict[str, Any], ...]:
    try:
        kit, names, docs, writes = _KITS[(domain, side)]
    except KeyError:
        raise ValueError(f"unknown tau2 domain or side {domain!r}/{side!r}") from None
    return tuple(_schema(kit, n, docs[n], n in writes) for n in names)


def tools(domain: str, side: str = "assistant") -> list[dict[str, Any]]:
    """The OpenAI function-tool schemas of one side's tools (retail's user has none); a copy,
    so a caller may edit it."""
    return copy.deepcopy(list(_tools(domain, side)))


@functools.cache
def tools_json(domain: str) -> str:
    """The agent's tools as the observation shows them (JSON text, built once per process)."""
    return json.dumps(list(_tools(domain, "assistant")))


@functools.cache
def policy(domain: str) -> str:
    """The agent's policy: retail's ``policy.md``; telecom's main policy with its manual."""
    if domain == "retail":
        return (DATA / "retail" / "policy.md").read_text()
    if domain == "telecom":
        return telecom_world.policy()
    raise ValueError(f"unknown tau2 domain {domain!r}")

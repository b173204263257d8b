"""The gold assistant of tau2's telecom tasks: the gold actions and the messages they need.

The oracle of every ``tau2-telecom`` task (``POLICIES["tau2_gold"]``). It learns who the
customer is the way an agent must: it asks for the phone number and looks the customer up with
what the user said (a user who does not give it fails the task), finds the line by that number,
and reads the plan, the bill, the data usage it needs to propose a write. Each gold action of the
user's becomes one instruction in words, one phrasing per tool and arguments (a switch says which
way: the direction comes from replaying the gold actions on a scratch copy of the task's world);
each gold write is proposed with its details and called only after the user's yes; a transfer is
called and announced as tau2's policy says. It ends by asking the user to check what the
scenario's goal needs (speed test, MMS, status bar), and ends the conversation if the user has
not closed it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator
from typing import Any

from palaestra.envs.runtimes.dialogue.env import call, end, say
from palaestra.envs.tau2 import tasks as tau2_tasks
from palaestra.envs.tau2.telecom_eval import reset as reset_world
from palaestra.envs.tau2.telecom_user import PHONE

TRANSFER_MESSAGE = "YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON."

#: a switch's words in an instruction, by toggle tool
SWITCH_WORDS = {
    "toggle_airplane_mode": "airplane mode",
    "toggle_data": "mobile data",
    "toggle_roaming": "data roaming",
    "toggle_data_saver_mode": "data saver mode",
    "toggle_wifi_calling": "Wi-Fi calling",
    "toggle_wifi": "Wi-Fi",
}
MODE_WORDS = {
    "4g_5g_preferred": "4G/5G preferred",
    "4g_only": "4G only",
    "3g_only": "3G only",
    "2g_only": "2G only",
}
PERMISSION_WORDS = {"sms": "SMS", "storage": "storage", "phone": "phone", "network": "network"}
GOAL_CHECK = {
    "speed": "Could you please run a speed test on your phone and tell me the result?",
    "mms": "Could you please check whether you can send an MMS message now?",
    "service": "Could you please check your status bar and tell me what it shows?",
}


def instruction(name: str, arguments: dict[str, Any], turns_on: bool | None) -> str:
    """The words that ask the user to make one gold device call."""
    if name in SWITCH_WORDS:
        way = "on" if turns_on else "off"
        return f"Please turn {way} {SWITCH_WORDS[name]} on your phone."
    if name == "set_network_mode_preference":
        mode = MODE_WORDS.get(arguments.get("mode", ""), arguments.get("mode", ""))
        return f"Please set your phone's preferred network mode to {mode}."
    if name == "grant_app_permission":
        perm = PERMISSION_WORDS.get(arguments["permission"], arguments["permission"])
        return f"Please grant the {arguments['app_name']} app the {perm} permission."
    fixed = {
        "reseat_sim_card": "Please take the SIM card out of your phone and put it back in.",
        "reset_apn_settings": "Please reset the APN settings on your phone.",
        "reboot_device": "Please restart your phone.",
        "disconnect_vpn": "Please disconnect the VPN on your phone.",
        "connect_vpn": "Please connect the VPN on your phone.",
        "make_payment": "Please check the payment request on your phone and make the payment.",
    }
    if name in fixed:
        return fixed[name]
    raise ValueError(f"no instruction for the user tool {name!r}")


def _goal(task: dict[str, Any]) -> str:
    low = task["user_scenario"]["instructions"]["reason_for_call"].lower()
    return "mms" if "mms" in low else "service" if "service" in low else "speed"


def _directions(task: dict[str, Any]) -> list[bool | None]:
    """For each gold action, whether a switch it toggles ends up on (None: not a switch)."""
    scratch = reset_world(task)
    out: list[bool | None] = []
    for action in tau2_tasks.gold_actions(task):
        res = scratch.call(action["requestor"], action["name"], action.get("arguments") or {})
        on = re.search(r"is now (ON|OFF)", res.content) if action["name"] in SWITCH_WORDS else None
        out.append(None if on is None else on.group(1) == "ON")
    return out


def _json(text: Any) -> Any:
    try:
        return json.loads(text) if isinstance(text, str) else None
    except json.JSONDecodeError:
        return None


END = end()

Plan = Generator[dict[str, Any], dict[str, Any], None]
#: the writes on the customer's line the gold proposes in one message, and that message
LINE_WRITES = {
    "resume_line": "Your overdue bill is paid. Shall I resume your line {lid} now?",
    "enable_roaming": "Since you are abroad, roaming needs to be enabled on your line {lid}; "
    "it is free of charge. Shall I enable roaming on your line?",
    "disable_roaming": "Shall I disable roaming on your line {lid}?",
}


def play(task: dict[str, Any]) -> Plan:
    """The gold assistant's script for a tau2 telecom task (tau2's own task; the policy is
    :func:`palaestra.envs.tau2.gold.GoldAssistant`)."""
    gold = tau2_tasks.gold_actions(task)
    turns_on = _directions(task)
    obs = yield say(
        "Hello, I'm sorry to hear that. To look up your account, "
        "could you please tell me the phone number on your account?"
    )
    found = re.search(PHONE, obs.get("user_message") or "")
    if found is None:
        yield END
        return
    digits = re.sub(r"\D", "", found.group(1))
    phone = f"{digits[:3]}-{digits[3:6]}-{digits[6:]}"
    obs = yield call("get_customer_by_phone", {"phone_number": phone})
    customer = _json(obs.get("last_tool_result"))
    if not isinstance(customer, dict) or "customer_id" not in customer:
        yield END
        return
    line: dict[str, Any] | None = None
    for line_id in customer.get("line_ids") or []:
        obs = yield call("get_details_by_id", {"id": line_id})
        details = _json(obs.get("last_tool_result"))
        if isinstance(details, dict) and details.get("phone_number") == phone:
            line = details
            break
    if line is None:
        yield END
        return
    cid, lid = customer["customer_id"], line["line_id"]

    for action, on in zip(gold, turns_on, strict=True):
        name, args = action["name"], dict(action.get("arguments") or {})
        if action["requestor"] == "user":
            obs = yield say(instruction(name, args, on))
        elif name == "transfer_to_human_agents":
            obs = yield call(name, args)
            obs = yield say(TRANSFER_MESSAGE)
            yield END
            return
        elif name == "refuel_data":
            obs = yield call("get_data_usage", {"customer_id": cid, "line_id": lid})
            usage = _json(obs.get("last_tool_result")) or {}
            obs = yield call("get_details_by_id", {"id": line["plan_id"]})
            plan = _json(obs.get("last_tool_result")) or {}
            obs = yield say(
                f"Your line {lid} has used {usage.get('data_used_gb')} GB of its plan's "
                f"{usage.get('data_limit_gb')} GB data allowance, so mobile data is cut "
                "off. I can add data to it for you. How much data would you like to add?"
            )
            amount = re.search(r"(\d+(?:\.\d+)?)\s*(?:GB|gb|gigabytes?)", obs["user_message"])
            if amount is None:
                yield END
                return
            gb = float(amount.group(1))
            price = gb * float(plan.get("data_refueling_price_per_gb") or 0.0)
            obs = yield say(
                f"Adding {gb:g} GB of data to line {lid} will cost ${price:.2f}. Shall I go ahead?"
            )
            obs = yield call(name, {"customer_id": cid, "line_id": lid, "gb_amount": gb})
        elif name == "send_payment_request":
            bill_id = args["bill_id"]
            obs = yield call("get_details_by_id", {"id": bill_id})
            bill = _json(obs.get("last_tool_result")) or {}
            obs = yield say(
                f"Your bill {bill_id} of ${float(bill.get('total_due') or 0):.2f} is "
                f"{str(bill.get('status', 'overdue')).lower()}, which is why your line is "
                "suspended. Shall I send you a payment request for it?"
            )
            obs = yield call(name, {"customer_id": cid, "bill_id": bill_id})
        elif name in LINE_WRITES:
            obs = yield say(LINE_WRITES[name].format(lid=lid))
            obs = yield call(name, {"customer_id": cid, "line_id": lid})
        else:
            obs = yield call(name, args)
    yield say(GOAL_CHECK[_goal(task)])
    yield END

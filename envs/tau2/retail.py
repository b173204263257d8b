"""The agent's retail tools with tau2-bench's semantics (``src/tau2/domains/retail/tools.py``).

Each tool checks what tau2's checks, in tau2's order, and raises ``ValueError`` with tau2's text;
:func:`call` answers ``"Error: <text>"`` as tau2's environment does, including for a call with
missing or unexpected arguments (Python's own ``TypeError`` text, as tau2 calls the method with
the agent's arguments) and for an unknown tool (``Tool 'x' not found.``). Every call runs in one
SQLite transaction, so a call that fails leaves the world unchanged (tau2 itself can leave a
partial write in rare paths; we do not).

One quirk is kept on purpose, because the ``DB`` check compares against worlds tau2 produced:
``modify_pending_order_items`` gives every modified item the price and options of the *last*
new variant of the call, as tau2 does.

Results are the entity as JSON (tau2 dumps its pydantic model; our keys are sorted). Left for
the next session: the tools' JSON schemas for the agent (names, descriptions, parameters from
tau2's docstrings) and the policy text served with them.
"""

from __future__ import annotations

import ast
import json
import operator
import sqlite3
from collections.abc import Callable
from typing import Any

from palaestra.envs.tau2 import store

Doc = dict[str, Any]


#: an item swap's checks: the status the order must be in, the error otherwise, a missing
#: item's error and a count mismatch's (tau2's exchange and modify tools word them apart)
_SWAPS: dict[str, tuple[str, str, Callable[[str], str], str]] = {
    "exchange": (
        "delivered",
        "Non-delivered order cannot be exchanged",
        lambda i: f"Number of {i} not found.",
        "The number of items to be exchanged should match.",
    ),
    "modify": (
        "pending",
        "Non-pending order cannot be modified",
        lambda i: f"{i} not found",
        "The number of items to be exchanged should match",
    ),
}


class Retail:
    """Tools bound to one episode's database connection."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    # -- lookups (tau2's private helpers, same messages) --------------------------------------
    def _order(self, order_id: str) -> Doc:
        doc = store.get(self.conn, "orders", order_id)
        if doc is None:
            raise ValueError("Order not found")
        return doc

    def _user(self, user_id: str) -> Doc:
        doc = store.get(self.conn, "users", user_id)
        if doc is None:
            raise ValueError("User not found")
        return doc

    def _product(self, product_id: str) -> Doc:
        doc = store.get(self.conn, "products", product_id)
        if doc is None:
            raise ValueError("Product not found")
        return doc

    def _variant(self, product_id: str, variant_id: str) -> Doc:
        variants = self._product(product_id)["variants"]
        if variant_id not in variants:
            raise ValueError("Variant not found")
        return variants[variant_id]

    def _payment(self, user: Doc, payment_method_id: str) -> Doc:
        if payment_method_id not in user["payment_methods"]:
            raise ValueError("Payment method not found")
        return user["payment_methods"][payment_method_id]

    def _save(self, table: str, key: str, doc: Doc) -> None:
        store.put(self.conn, table, key, doc)

    @staticmethod
    def _gift(method: Doc) -> bool:
        return method["source"] == "gift_card"

    @staticmethod
    def _count_check(order: Doc, item_ids: list[str], message: Callable[[str], str]) -> None:
        held = [item["item_id"] for item in order["items"]]
        for item_id in item_ids:
            if item_ids.count(item_id) > held.count(item_id):
                raise ValueError(message(item_id))

    def _price_difference(
        self, order: Doc, item_ids: list, new_item_ids: list, same: bool
    ) -> tuple:
        diff, variant = 0.0, None
        for item_id, new_item_id in zip(item_ids, new_item_ids, strict=False):
            if same and item_id == new_item_id:
                raise ValueError("The new item id should be different from the old item id")
            item = next((i for i in order["items"] if i["item_id"] == item_id), None)
            if item is None:
                raise ValueError(f"Item {item_id} not found")
            variant = self._variant(item["product_id"], new_item_id)
            if not variant["available"]:
                raise ValueError(f"New item {new_item_id} not found or available")
            diff += variant["price"] - item["price"]
        return diff, variant

    # -- read tools ------------------------------------------------------------------------
    def calculate(self, expression: str) -> str:
        if not all(char in "0123456789+-*/(). " for char in expression):
            raise ValueError("Invalid characters in expression")
        return str(round(_arithmetic(expression), 2))

    def find_user_id_by_name_zip(self, first_name: str, last_name: str, zip: str) -> str:
        for user_id, user in store.scan(self.conn, "users"):
            name = user["name"]
            if (
                name["first_name"].lower() == first_name.lower()
                and name["last_name"].lower() == last_name.lower()
                and user["address"]["zip"] == zip
            ):
                return user_id
        raise ValueError("User not found")

    def find_user_id_by_email(self, email: str) -> str:
        for user_id, user in store.scan(self.conn, "users"):
            if user["email"].lower() == email.lower():
                return user_id
        raise ValueError("User not found")

    def get_order_details(self, order_id: str) -> Doc:
        return self._order(order_id)

    def get_product_details(self, product_id: str) -> Doc:
        return self._product(product_id)

    def get_item_details(self, item_id: str) -> Doc:
        for _, product in store.scan(self.conn, "products"):
            if item_id in product["variants"]:
                return product["variants"][item_id]
        raise ValueError("Item not found")

    def get_user_details(self, user_id: str) -> Doc:
        return self._user(user_id)

    def list_all_product_types(self) -> str:
        names = {p["name"]: p["product_id"] for _, p in store.scan(self.conn, "products")}
        return json.dumps(names, sort_keys=True)

    def transfer_to_human_agents(self, summary: str) -> str:
        return "Transfer successful"

    # -- write tools -----------------------------------------------------------------------
    def cancel_pending_order(self, order_id: str, reason: str) -> Doc:
        order = self._order(order_id)
        if order["status"] != "pending":
            raise ValueError("Non-pending order cannot be cancelled")
        if reason not in {"no longer needed", "ordered by mistake"}:
            raise ValueError("Invalid reason")
        user = self._user(order["user_id"])
        refunds = []
        for payment in order["payment_history"]:
            pid = payment["payment_method_id"]
            refunds.append(
                {
                    "transaction_type": "refund",
                    "amount": payment["amount"],
                    "payment_method_id": pid,
                }
            )
            method = self._payment(user, pid)
            if self._gift(method):
                method["balance"] = round(method["balance"] + payment["amount"], 2)
        self._save("users", user["user_id"], user)
        order["status"] = "cancelled"
        order["cancel_reason"] = reason
        order["payment_history"].extend(refunds)
        self._save("orders", order_id, order)
        return order

    def _swappable(
        self, kind: str, order_id: str, item_ids: list[str], new_item_ids: list[str]
    ) -> Doc:
        """The order whose items are swapped (``kind``: exchanged or modified), checked in
        tau2's order and with its texts (:data:`_SWAPS`: the two tools word them apart)."""
        status, wrong_status, missing, mismatch = _SWAPS[kind]
        order = self._order(order_id)
        if order["status"] != status:
            raise ValueError(wrong_status)
        self._count_check(order, item_ids, missing)
        if len(item_ids) != len(new_item_ids):
            raise ValueError(mismatch)
        return order

    def exchange_delivered_order_items(
        self, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
    ) -> Doc:
        order = self._swappable("exchange", order_id, item_ids, new_item_ids)
        diff, _ = self._price_difference(order, item_ids, new_item_ids, same=False)
        diff = round(diff, 2)
        method = self._payment(self._user(order["user_id"]), payment_method_id)
        if self._gift(method) and method["balance"] < diff:
            raise ValueError("Insufficient gift card balance to pay for the price difference")
        order["status"] = "exchange requested"
        order["exchange_items"] = sorted(item_ids)
        order["exchange_new_items"] = sorted(new_item_ids)
        order["exchange_payment_method_id"] = payment_method_id
        order["exchange_price_difference"] = diff
        self._save("orders", order_id, order)
        return order

    def modify_pending_order_address(
        self,
        order_id: str,
        address1: str,
        address2: str,
        city: str,
        state: str,
        country: str,
        zip: str,
    ) -> Doc:
        order = self._order(order_id)
        if "pending" not in order["status"]:
            raise ValueError("Non-pending order cannot be modified")
        order["address"] = _address(address1, address2, city, state, country, zip)
        self._save("orders", order_id, order)
        return order

    def modify_pending_order_items(
        self, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
    ) -> Doc:
        order = self._swappable("modify", order_id, item_ids, new_item_ids)
        diff, variant = self._price_difference(order, item_ids, new_item_ids, same=True)
        user = self._user(order["user_id"])
        method = self._payment(user, payment_method_id)
        if self._gift(method) and method["balance"] < diff:
            raise ValueError("Insufficient gift card balance to pay for the new item")
        order["payment_history"].append(
            {
                "transaction_type": "payment" if diff > 0 else "refund",
                "amount": abs(diff),
                "payment_method_id": payment_method_id,
            }
        )
        if self._gift(method):
            method["balance"] = round(method["balance"] - diff, 2)
            self._save("users", user["user_id"], user)
        for item_id, new_item_id in zip(item_ids, new_item_ids, strict=False):
            item = next(i for i in order["items"] if i["item_id"] == item_id)
            item["item_id"] = new_item_id
            item["price"] = variant["price"]  # tau2's quirk: the last variant of the call
            item["options"] = variant["options"]
        order["status"] = "pending (item modified)"
        self._save("orders", order_id, order)
        return order

    def modify_pending_order_payment(self, order_id: str, payment_method_id: str) -> Doc:
        order = self._order(order_id)
        if "pending" not in order["status"]:
            raise ValueError("Non-pending order cannot be modified")
        user = self._user(order["user_id"])
        method = self._payment(user, payment_method_id)
        history = order["payment_history"]
        if len(history) != 1 or history[0]["transaction_type"] != "payment":
            raise ValueError("There should be exactly one payment for a pending order")
        old_id = history[0]["payment_method_id"]
        if old_id == payment_method_id:
            raise ValueError("The new payment method should be different from the current one")
        amount = history[0]["amount"]
        if self._gift(method) and method["balance"] < amount:
            raise ValueError("Insufficient gift card balance to pay for the order")
        history.append(
            {
                "transaction_type": "payment",
                "amount": amount,
                "payment_method_id": payment_method_id,
            }
        )
        history.append(
            {"transaction_type": "refund", "amount": amount, "payment_method_id": old_id}
        )
        if self._gift(method):
            method["balance"] = round(method["balance"] - amount, 2)
        old = self._payment(user, old_id)
        if self._gift(old):
            old["balance"] = round(old["balance"] + amount, 2)
        self._save("users", user["user_id"], user)
        self._save("orders", order_id, order)
        return order

    def modify_user_address(
        self,
        user_id: str,
        address1: str,
        address2: str,
        city: str,
        state: str,
        country: str,
        zip: str,
    ) -> Doc:
        user = self._user(user_id)
        user["address"] = _address(address1, address2, city, state, country, zip)
        self._save("users", user_id, user)
        return user

    def return_delivered_order_items(
        self, order_id: str, item_ids: list[str], payment_method_id: str
    ) -> Doc:
        order = self._order(order_id)
        if order["status"] != "delivered":
            raise ValueError("Non-delivered order cannot be returned")
        method = self._payment(self._user(order["user_id"]), payment_method_id)
        if (
            not self._gift(method)
            and payment_method_id != order["payment_history"][0]["payment_method_id"]
        ):
            raise ValueError("Payment method should be the original payment method")
        self._count_check(order, item_ids, lambda _: "Some item not found")
        order["status"] = "return requested"
        order["return_items"] = sorted(item_ids)
        order["return_payment_method_id"] = payment_method_id
        self._save("orders", order_id, order)
        return order


_OPS: dict[type, Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
}


def _arithmetic(expression: str) -> float:
    """tau2 ``eval``s the expression once its characters are checked; we walk its syntax tree
    with Python's own numbers and operators instead, which gives the same numbers and the same
    errors (``division by zero``, the parser's message) without Python's ``eval``. One
    difference on purpose: ``**`` is taken in floats, so ``9**9**9`` overflows at once instead
    of hanging the process."""

    def value(node: ast.AST) -> float:
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd | ast.USub):
            inner = value(node.operand)
            return -inner if isinstance(node.op, ast.USub) else inner
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            left, right = value(node.left), value(node.right)
            if isinstance(node.op, ast.Pow):
                left, right = float(left), float(right)
            return _OPS[type(node.op)](left, right)
        raise ValueError("Invalid expression")

    # eval's own parse: the same SyntaxError text, leading blanks dropped as eval drops them
    tree = ast.parse(expression.lstrip(" \t"), "<string>", "eval")
    return float(value(tree.body))


def _address(address1: str, address2: str, city: str, state: str, country: str, zip: str) -> Doc:
    return {
        "address1": address1,
        "address2": address2,
        "city": city,
        "country": country,
        "state": state,
        "zip": zip,
    }


#: the agent's tools, in tau2's order; ``write`` ones may change the world
READ = (
    "calculate",
    "find_user_id_by_email",
    "find_user_id_by_name_zip",
    "get_item_details",
    "get_order_details",
    "get_product_details",
    "get_user_details",
    "list_all_product_types",
    "transfer_to_human_agents",
)
WRITE = (
    "cancel_pending_order",
    "exchange_delivered_order_items",
    "modify_pending_order_address",
    "modify_pending_order_items",
    "modify_pending_order_payment",
    "modify_user_address",
    "return_delivered_order_items",
)
TOOLS = READ + WRITE


def call(conn: sqlite3.Connection, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
    """Run one tool call; return (the content the agent reads, whether it is an error)."""
    try:
        if name not in TOOLS:
            raise ValueError(f"Tool '{name}' not found.")
        if not isinstance(arguments, dict):
            raise TypeError(f"arguments must be an object, not {type(arguments).__name__}")
        tool = getattr(Retail(conn), name)
        if name in WRITE:  # a read writes nothing: no transaction to pay for, or to collide on
            with store.transaction(conn):
                result = tool(**arguments)
        else:
            result = tool(**arguments)
    except Exception as exc:
        text = str(exc).replace("Retail.", "RetailTools.")
        return f"Error: {text}", True
    return (result if isinstance(result, str) else json.dumps(result)), False

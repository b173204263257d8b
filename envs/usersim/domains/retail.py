"""Retail: cancel or change pending orders, return or exchange delivered items, tau-bench style."""

from __future__ import annotations

import random
import sqlite3
from typing import Any

from palaestra.envs.runtimes.simuser.domain import Slot, by_name
from palaestra.envs.usersim import drafts
from palaestra.envs.usersim.domain import Domain, money, one, rows
from palaestra.envs.usersim.tools import STR, DomainError, RuleBroken, Tools
from palaestra.envs.usersim.vocab import MONEY, REFUND, USER_ID, customer

COLOURS = ("black", "white", "red", "blue", "green", "grey")
SIZES = ("small", "medium", "large")
PRODUCTS = {  # name: (options, base price)
    "t-shirt": (SIZES, 24.0),
    "hoodie": (SIZES, 55.0),
    "rain jacket": (SIZES, 120.0),
    "water bottle": (COLOURS, 18.0),
    "backpack": (COLOURS, 80.0),
    "desk lamp": (COLOURS, 45.0),
    "headphones": (COLOURS, 150.0),
    "yoga mat": (COLOURS, 35.0),
    "coffee mug": (COLOURS, 12.0),
    "phone case": (COLOURS, 20.0),
}
REASONS = ("no longer needed", "ordered by mistake")
STREETS = ("Elm", "Oak", "Maple", "Cedar", "Pine", "Birch", "Willow", "Aspen", "Hazel")
KINDS = ("Street", "Avenue", "Road", "Lane")
TOWNS = ("Springfield", "Riverton", "Lakeside", "Fairview", "Greenville", "Hillcrest")
IDS = {"type": "array", "items": STR, "minItems": 1, "maxItems": 10}
SWAP = {"order_id": STR, "item_ids": IDS, "new_item_ids": IDS}  # what a swap tool takes
TOOLS = Tools()

POLICY = """You are an online retail store's customer-service agent.
- Identify the order by its order id, or find the user by email and look up their orders; act
  only on orders of that user. Never guess ids.
- Before any action that changes an order (cancel, change address, change items, return,
  exchange), state what you will do and get the user's explicit yes in their reply to that
  message.
- Only pending orders can be cancelled (reason: 'no longer needed' or 'ordered by mistake'), have
  their shipping address changed, or have items changed. The whole order total is refunded on
  cancellation; tell the user the refund.
- Only delivered orders can have items returned or exchanged, and only once per order. A return
  refunds the items' prices; tell the user the refund.
- An item can only be changed or exchanged for another available variant (colour or size) of the
  same product. The price difference is charged or refunded; tell the user the amount.
"""


class Retail(Domain):
    name = "retail"
    title = "ShopRight"
    policy = POLICY
    tools = TOOLS
    slots = by_name(
        USER_ID,
        Slot("email", "email", ("email", "e-mail"), r"\b[a-z]+\.[a-z]+\d*@example\.com\b"),
        Slot(
            "order_id",
            "order id",
            ("order id", "order number", "which order"),
            r"(?<![\w#])#W\d{7}\b",
        ),
        Slot("item_id", "item id", ("item id",), r"\b\d{10}\b"),
        Slot("product", "product", ("product", "which item"), values=tuple(PRODUCTS)),
        Slot(
            "option",
            "preferred colour or size",
            ("colour", "color", "size", "variant"),
            values=COLOURS + SIZES,
        ),
        Slot("reason", "reason for cancelling", ("reason", "why"), values=REASONS),
        Slot(
            "address",
            "new shipping address",
            ("shipping address", "new address", "address"),
            r"\b\d{1,4} [A-Z][a-z]+ (?:Street|Avenue|Road|Lane), [A-Z][a-z]+\b",
        ),
        REFUND,
        Slot("price_difference", "price difference", ("difference", "charged", "refunded"), MONEY),
    )
    phrases = {
        "product": "The product is the {value}.",
        "option": "The one I want is the {value} one.",
        "reason": "The reason is that it was {value}.",
    }
    requests = {
        "refund": "How much will I get back?",
        "price_difference": "What is the price difference?",
    }

    refuse_share = 0.22

    # ----- the world ----------------------------------------------------------------------
    schema = """
        CREATE TABLE users (user_id TEXT PRIMARY KEY, name TEXT, email TEXT UNIQUE,
            address TEXT);
        CREATE TABLE products (product_id TEXT PRIMARY KEY, name TEXT);
        CREATE TABLE items (item_id TEXT PRIMARY KEY, product_id TEXT, option TEXT,
            price REAL, stock INTEGER);
        CREATE TABLE orders (order_id TEXT PRIMARY KEY, user_id TEXT, address TEXT,
            status TEXT, reason TEXT, refund REAL);
        CREATE TABLE order_items (order_id TEXT, item_id TEXT, price REAL, status TEXT,
            new_item_id TEXT, PRIMARY KEY (order_id, item_id));
        """

    def populate(self, conn: sqlite3.Connection, r: random.Random) -> None:
        variants: dict[str, list[str]] = {}
        for n, (product, (options, base)) in enumerate(PRODUCTS.items()):
            pid = f"P{1000 + n * 37}"
            conn.execute("INSERT INTO products VALUES (?,?)", (pid, product))
            variants[pid] = []
            for option in options:
                iid = str(r.randrange(10**9, 10**10))
                price = money(base + r.randrange(-400, 900) / 100)
                stock = r.choice((0, 0, 1, 2, 3, 5))
                conn.execute(
                    "INSERT INTO items VALUES (?,?,?,?,?)", (iid, pid, option, price, stock)
                )
                variants[pid].append(iid)
        users = []
        for _ in range(25):
            uid, name = customer(r)
            email = f"{name.lower().replace(' ', '.')}{r.randrange(10, 100)}@example.com"
            if conn.execute(
                "SELECT 1 FROM users WHERE user_id=? OR email=?", (uid, email)
            ).fetchone():
                continue
            conn.execute(
                "INSERT INTO users VALUES (?,?,?,?)",
                (uid, name, email, _street(r)),
            )
            users.append((uid, email))
        statuses = ("pending",) * 8 + ("delivered",) * 9 + ("cancelled", "return requested")
        for _ in range(70):
            uid = r.choice(users)[0]
            oid = f"#W{r.randrange(10**6, 10**7)}"
            status = r.choice(statuses)
            address = one(conn, "SELECT address FROM users WHERE user_id=?", uid, missing="?")
            conn.execute(
                "INSERT OR IGNORE INTO orders VALUES (?,?,?,?,?,?)",
                (oid, uid, address["address"], status, None, 0.0),
            )
            for pid in r.sample(sorted(variants), r.randrange(1, 4)):
                iid = r.choice(variants[pid])
                item = one(conn, "SELECT price FROM items WHERE item_id=?", iid, missing="?")
                conn.execute(
                    "INSERT OR IGNORE INTO order_items VALUES (?,?,?,?,?)",
                    (
                        oid,
                        iid,
                        item["price"],
                        "returned" if status == "return requested" else "ordered",
                        None,
                    ),
                )
            if status == "cancelled":
                conn.execute(
                    "UPDATE orders SET reason=?, refund=(SELECT sum(price) FROM order_items "
                    "WHERE order_id=?) WHERE order_id=?",
                    (r.choice(REASONS), oid, oid),
                )


def _street(r: Any) -> str:
    return f"{r.randrange(1, 300)} {r.choice(STREETS)} {r.choice(KINDS)}, {r.choice(TOWNS)}"


# ----- tool functions (each reads/writes the session's database) -------------------------
@TOOLS.read("The user id of the account with this email.", {"email": STR})
def find_user_id_by_email(conn: sqlite3.Connection, a: dict[str, Any]) -> dict[str, Any]:
    return one(
        conn,
        "SELECT user_id FROM users WHERE lower(email)=lower(?)",
        a["email"].strip(),
        missing="no user with this email",
    )


@TOOLS.read(
    "A user's profile (name, email, default address) and their order ids.", {"user_id": STR}
)
def get_user_details(conn: sqlite3.Connection, a: dict[str, Any]) -> dict[str, Any]:
    user = one(conn, "SELECT * FROM users WHERE user_id=?", a["user_id"], missing="user not found")
    ids = rows(conn, "SELECT order_id FROM orders WHERE user_id=? ORDER BY order_id", a["user_id"])
    return {**user, "orders": [o["order_id"] for o in ids]}


def _lines(conn: sqlite3.Connection, oid: str) -> list[dict[str, Any]]:
    return rows(
        conn,
        "SELECT oi.item_id, p.product_id, p.name AS product, i.option, oi.price, oi.status, "
        "oi.new_item_id FROM order_items oi JOIN items i USING (item_id) "
        "JOIN products p USING (product_id) WHERE oi.order_id=? ORDER BY p.name",
        oid,
    )


def _total(conn: sqlite3.Connection, oid: str) -> float:
    return money(sum(x["price"] for x in _lines(conn, oid)))


def _order_row(conn: sqlite3.Connection, oid: str) -> dict[str, Any]:
    return one(conn, "SELECT * FROM orders WHERE order_id=?", oid, missing="order not found")


@TOOLS.read(
    "An order: user, status, shipping address, items (item id, product, option, price, "
    "status), total and refund.",
    {"order_id": STR},
)
def get_order_details(conn: sqlite3.Connection, a: dict[str, Any]) -> dict[str, Any]:
    order = _order_row(conn, a["order_id"])
    lines = _lines(conn, order["order_id"])
    return {**order, "items": lines, "total": money(sum(x["price"] for x in lines))}


_PRODUCT = "SELECT * FROM products WHERE product_id=?"
_VARIANTS = (
    "SELECT item_id, option, price, stock > 0 AS available FROM items WHERE product_id=? "
    "ORDER BY item_id"
)


@TOOLS.read(
    "A product's variants: item id, option (colour or size), price, availability.",
    {"product_id": STR},
)
def get_product_details(conn: sqlite3.Connection, a: dict[str, Any]) -> dict[str, Any]:
    product = one(conn, _PRODUCT, a["product_id"], missing="product not found")
    variants = rows(conn, _VARIANTS, product["product_id"])
    for v in variants:
        v["available"] = bool(v["available"])
    return {**product, "variants": variants}


def order_problem(order: dict[str, Any], action: str) -> str | None:
    """Why an order's status forbids ``action``, or None. Shared by the tools and the generator."""
    status = order["status"]
    need = "delivered" if action in ("return", "exchange") else "pending"
    if status == need:
        return None
    if status == "pending":
        return "it has not been delivered yet"
    if status == "delivered":
        return "it has already been delivered"
    if status == "cancelled":
        return "it has been cancelled"
    return "a return or exchange was already requested for it"


def swap_problem(conn: sqlite3.Connection, old: str, new: str) -> str | None:
    """Why item ``old`` cannot become item ``new``, or None. Shared by the tools and the
    generator."""
    a = one(conn, "SELECT * FROM items WHERE item_id=?", old, missing=f"item {old} not found")
    b = one(conn, "SELECT * FROM items WHERE item_id=?", new, missing=f"item {new} not found")
    if a["product_id"] != b["product_id"]:
        return f"item {new} is not a variant of the same product"
    if old == new:
        return f"item {new} is the item already ordered"
    if b["stock"] <= 0:
        return f"the {b['option']} variant (item {new}) is out of stock"
    return None


def _writable(conn: sqlite3.Connection, oid: str, action: str) -> dict[str, Any]:
    order = _order_row(conn, oid)
    why = order_problem(order, action)
    if why:
        raise RuleBroken(f"order {oid} cannot be changed this way ({action}): {why}")
    return order


def _ordered(conn: sqlite3.Connection, oid: str, item_ids: list[str]) -> list[dict[str, Any]]:
    if len(set(item_ids)) != len(item_ids):
        raise DomainError("an item id is listed twice")
    lines = []
    for iid in item_ids:
        lines.append(
            one(
                conn,
                "SELECT * FROM order_items WHERE order_id=? AND item_id=?",
                oid,
                iid,
                missing=f"item {iid} is not in order {oid}",
            )
        )
    return lines


@TOOLS.write(
    "Cancel a pending order and refund its total.",
    {"order_id": STR, "reason": {"type": "string", "enum": list(REASONS)}},
)
def cancel_pending_order(conn: sqlite3.Connection, a: dict[str, Any]) -> dict[str, Any]:
    order = _writable(conn, a["order_id"], "cancel")
    refund = _total(conn, order["order_id"])
    conn.execute(
        "UPDATE orders SET status='cancelled', reason=?, refund=? WHERE order_id=?",
        (a["reason"], refund, order["order_id"]),
    )
    return {"order_id": order["order_id"], "status": "cancelled", "refund": refund}


@TOOLS.write("Change the shipping address of a pending order.", {"order_id": STR, "address": STR})
def modify_pending_order_address(conn: sqlite3.Connection, a: dict[str, Any]) -> dict[str, Any]:
    order = _writable(conn, a["order_id"], "address")
    conn.execute(
        "UPDATE orders SET address=? WHERE order_id=?", (a["address"].strip(), order["order_id"])
    )
    return {"order_id": order["order_id"], "address": a["address"].strip()}


def _swaps(conn: sqlite3.Connection, a: dict[str, Any]) -> list[tuple[dict[str, Any], str]]:
    if len(a["item_ids"]) != len(a["new_item_ids"]):
        raise DomainError("item_ids and new_item_ids must have the same length")
    lines = _ordered(conn, a["order_id"], a["item_ids"])
    for line, new in zip(lines, a["new_item_ids"], strict=True):
        why = swap_problem(conn, line["item_id"], new)
        if why:
            raise RuleBroken(f"cannot swap item {line['item_id']}: {why}")
    return list(zip(lines, a["new_item_ids"], strict=True))


def _price(conn: sqlite3.Connection, iid: str) -> float:
    return float(one(conn, "SELECT price FROM items WHERE item_id=?", iid, missing="?")["price"])


@TOOLS.write("Swap items of a pending order for other variants of the same products.", SWAP)
def modify_pending_order_items(conn: sqlite3.Connection, a: dict[str, Any]) -> dict[str, Any]:
    return _swap(conn, a, "modify")


@TOOLS.write(
    "Request the return of items of a delivered order; their prices are refunded.",
    {"order_id": STR, "item_ids": IDS},
)
def return_delivered_order_items(conn: sqlite3.Connection, a: dict[str, Any]) -> dict[str, Any]:
    order = _writable(conn, a["order_id"], "return")
    lines = _ordered(conn, order["order_id"], a["item_ids"])
    refund = money(sum(x["price"] for x in lines))
    for line in lines:
        conn.execute(
            "UPDATE order_items SET status='returned' WHERE order_id=? AND item_id=?",
            (order["order_id"], line["item_id"]),
        )
    conn.execute(
        "UPDATE orders SET status='return requested', refund=? WHERE order_id=?",
        (refund, order["order_id"]),
    )
    return {"order_id": order["order_id"], "status": "return requested", "refund": refund}


@TOOLS.write(
    "Request the exchange of items of a delivered order for other variants of the same products.",
    SWAP,
)
def exchange_delivered_order_items(conn: sqlite3.Connection, a: dict[str, Any]) -> dict[str, Any]:
    return _swap(conn, a, "exchange")


def _swap(conn: sqlite3.Connection, a: dict[str, Any], action: str) -> dict[str, Any]:
    """A modification (of a pending order) and an exchange (of a delivered one) obey the same
    rules and cost the same difference; only what becomes of the order differs."""
    oid = _writable(conn, a["order_id"], action)["order_id"]
    diff = 0.0
    for line, new in _swaps(conn, a):
        price = _price(conn, new)
        diff += price - line["price"]
        if action == "modify":  # not sent yet: the new item takes the old one's place
            conn.execute(
                "UPDATE order_items SET item_id=?, price=? WHERE order_id=? AND item_id=?",
                (new, price, oid, line["item_id"]),
            )
        else:  # delivered: the new item is requested against the old one
            conn.execute(
                "UPDATE order_items SET status='exchanged', new_item_id=? WHERE order_id=? AND "
                "item_id=?",
                (new, oid, line["item_id"]),
            )
        conn.execute("UPDATE items SET stock=stock-1 WHERE item_id=?", (new,))
        if action == "modify":
            conn.execute("UPDATE items SET stock=stock+1 WHERE item_id=?", (line["item_id"],))
    if action == "exchange":
        conn.execute("UPDATE orders SET status='exchange requested' WHERE order_id=?", (oid,))
    return {"order_id": oid, "price_difference": money(diff)}


# ----- task drafts: a goal and the reference plan that serves it -------------------------
def _pick_order(conn: sqlite3.Connection, r: Any, ok: bool, action: str) -> dict[str, Any] | None:
    """An order whose status allows ``action`` (``ok``) or forbids it."""
    orders = [
        o
        for o in rows(conn, "SELECT * FROM orders ORDER BY order_id")
        if (order_problem(o, action) is None) == ok
    ]
    return r.choice(orders) if orders else None


def _decoy(conn: sqlite3.Connection, oid: str) -> str:
    return drafts.other_id(conn, "orders", "order_id", oid)


def _lookup() -> drafts.Steps:
    return drafts.lookup("order_id", "get_order_details")


def _other_reason(reason: str) -> str:
    return REASONS[1 - REASONS.index(reason)]


def _cancellation(
    conn: sqlite3.Connection,
    key: str,
    goal: dict[str, Any],
    order: dict[str, Any],
    found: drafts.Steps,
    decoys: dict[str, str],
) -> dict[str, Any]:
    """Either way of asking to cancel, once ``found`` has found the order: the user who gave its
    id hears it back, the one who named what they bought hears the id and the product."""
    oid = order["order_id"]
    named = "order_id" in goal["facts"]
    ref, arg = ("{order_id}", "$order_id") if named else (oid, oid)
    which = ref if named else f"{ref} with the {{product}}"
    why = order_problem(order, "cancel")
    if why:
        return drafts.refused(
            key, goal, found, drafts.sorry(f"cancel order {which}: {why}"), decoys
        )
    total = _total(conn, oid)
    plan = drafts.write(
        f"Shall I cancel order {which} because it was {{reason}}, with a full refund of "
        f"${total:.2f}?",
        "cancel_pending_order",
        {"order_id": arg, "reason": "$reason"},
        f"Order {ref} has been cancelled, and ${total:.2f} will be refunded to your original "
        "payment method.",
        [f"{total:.2f}"],
    )
    return drafts.draft(key, goal, [*found, {"ask": "reason"}, *plan], decoys)


def _cancel_task(d: Retail, conn: sqlite3.Connection, r: Any, refuse: bool) -> dict | None:
    order = _pick_order(conn, r, not refuse, "cancel")
    if order is None:
        return None
    oid = order["order_id"]
    reason = r.choice(REASONS)
    goal = drafts.goal("cancel", "cancel my order", {"order_id": oid, "reason": reason}, ["refund"])
    decoys = {"order_id": _decoy(conn, oid), "reason": _other_reason(reason)}
    return _cancellation(conn, f"cancel:{oid}", goal, order, _lookup(), decoys)


def _email_cancel_task(d: Retail, conn: sqlite3.Connection, r: Any, refuse: bool) -> dict | None:
    """The user knows their email and what they bought, not the order id."""
    user = r.choice(rows(conn, "SELECT * FROM users ORDER BY user_id"))
    lines = rows(
        conn,
        "SELECT o.order_id, o.status, p.name FROM orders o JOIN order_items oi USING (order_id) "
        "JOIN items i USING (item_id) JOIN products p USING (product_id) WHERE o.user_id=? "
        "ORDER BY o.order_id, p.name",
        user["user_id"],
    )
    counts: dict[str, int] = {}
    for x in lines:
        counts[x["name"]] = counts.get(x["name"], 0) + 1
    unique = [x for x in lines if counts[x["name"]] == 1]  # the product names the order
    unique = [x for x in unique if (order_problem(x, "cancel") is None) != refuse]
    if not unique:
        return None
    pick = r.choice(unique)
    oid, product = pick["order_id"], pick["name"]
    reason = r.choice(REASONS)
    goal = drafts.goal(
        "cancel_by_email",
        f"cancel the order with my {product}",
        {"email": user["email"], "product": product, "reason": reason},
        ["refund"],
    )
    found = [
        *drafts.lookup("email", "find_user_id_by_email"),
        {"call": "get_user_details", "args": {"user_id": user["user_id"]}},
        {"ask": "product"},
        {"call": "get_order_details", "args": {"order_id": oid}},
    ]
    other = next(p for p in PRODUCTS if p != product)
    decoys = {"product": other, "reason": _other_reason(reason)}
    return _cancellation(conn, f"email-cancel:{oid}", goal, pick, found, decoys)


def _address_task(d: Retail, conn: sqlite3.Connection, r: Any, refuse: bool) -> dict | None:
    order = _pick_order(conn, r, not refuse, "address")
    if order is None:
        return None
    oid = order["order_id"]
    address = _street(r)
    if address == order["address"]:
        return None
    goal = drafts.goal(
        "address",
        "change the shipping address of my order",
        {"order_id": oid, "address": address},
        [],
    )
    decoys = {"order_id": _decoy(conn, oid), "address": order["address"]}
    why = order_problem(order, "address")
    if why:
        tell = drafts.sorry(f"change the shipping address of order {{order_id}}: {why}")
        return drafts.refused(f"address:{oid}", goal, _lookup(), tell, decoys)
    plan = drafts.write(
        "Shall I change the shipping address of order {order_id} to {address}?",
        "modify_pending_order_address",
        {"order_id": "$order_id", "address": "$address"},
        "The shipping address of order {order_id} has been changed to {address}.",
        [address],
    )
    return drafts.draft(f"address:{oid}", goal, [*_lookup(), {"ask": "address"}, *plan], decoys)


def _return_task(d: Retail, conn: sqlite3.Connection, r: Any, refuse: bool) -> dict | None:
    order = _pick_order(conn, r, not refuse, "return")
    if order is None:
        return None
    oid = order["order_id"]
    line = r.choice(_lines(conn, oid))
    goal = drafts.goal(
        "return",
        f"return the {line['product']} I ordered",
        {"order_id": oid, "product": line["product"]},
        ["refund"],
    )
    other = next(p for p in PRODUCTS if p != line["product"])
    decoys = {"order_id": _decoy(conn, oid), "product": other}
    why = order_problem(order, "return")
    if why:
        tell = drafts.sorry(f"return items from order {{order_id}}: {why}")
        return drafts.refused(f"return:{oid}", goal, _lookup(), tell, decoys)
    price = money(line["price"])
    plan = drafts.write(
        f"Shall I return the {{product}} (item {line['item_id']}) from order {{order_id}}, for a "
        f"refund of ${price:.2f}?",
        "return_delivered_order_items",
        {"order_id": "$order_id", "item_ids": [line["item_id"]]},
        "The return of the {product} from order {order_id} has been requested, and "
        f"${price:.2f} will be refunded to your original payment method.",
        [f"{price:.2f}"],
    )
    return drafts.draft(f"return:{oid}", goal, [*_lookup(), {"ask": "product"}, *plan], decoys)


def _swap_task(
    conn: sqlite3.Connection, r: Any, refuse: bool, action: str
) -> dict[str, Any] | None:
    """A swap of one item for another variant; ``refuse`` asks for one the rules forbid (the
    order's status, or a variant out of stock)."""
    out_of_stock = refuse and r.random() < 0.6
    order = _pick_order(conn, r, not refuse or out_of_stock, action)
    if order is None:
        return None
    oid = order["order_id"]
    line = r.choice(_lines(conn, oid))
    variants = rows(
        conn,
        "SELECT * FROM items WHERE product_id=? AND item_id != ? ORDER BY item_id",
        line["product_id"],
        line["item_id"],
    )
    fits = [v for v in variants if (v["stock"] > 0) != out_of_stock]
    if not fits:
        return None
    new = r.choice(fits)
    verb = "exchange" if action == "exchange" else "change"
    goal = drafts.goal(
        action,
        f"{verb} the {line['product']} I ordered for another "
        f"{'size' if new['option'] in SIZES else 'colour'}",
        {"order_id": oid, "product": line["product"], "option": new["option"]},
        ["price_difference"],
    )
    decoy_option = next(v["option"] for v in [*variants, line] if v["option"] != new["option"])
    decoys = {"order_id": _decoy(conn, oid), "option": decoy_option}
    key = f"{action}:{oid}:{line['item_id']}"
    lookup = [
        *_lookup(),
        {"ask": "product"},
        {"call": "get_product_details", "args": {"product_id": line["product_id"]}},
        {"ask": "option"},
    ]
    why = order_problem(order, action)
    if why:  # the order's status settles it: no need to ask for the product
        tell = drafts.sorry(f"{verb} items of order {{order_id}}: {why}")
        return drafts.refused(key, goal, _lookup(), tell, decoys)
    why = swap_problem(conn, line["item_id"], new["item_id"])
    if why:
        tell = drafts.sorry(f"{verb} the {{product}} in order {{order_id}}: {why}")
        return drafts.refused(key, goal, lookup, tell, decoys)
    diff = money(new["price"] - line["price"])
    word = "charged to" if diff >= 0 else "refunded to"
    tool = (
        "exchange_delivered_order_items" if action == "exchange" else "modify_pending_order_items"
    )
    done = (
        "The exchange of the {product} in order {order_id} for the {option} one has been requested."
        if action == "exchange"
        else "The {product} in order {order_id} has been changed to the {option} one."
    )
    plan = drafts.write(
        f"Shall I {verb} the {{product}} (item {line['item_id']}) in order {{order_id}} for the "
        f"{{option}} one (item {new['item_id']}), with a price difference of ${abs(diff):.2f} "
        f"{word} you?",
        tool,
        {"order_id": "$order_id", "item_ids": [line["item_id"]], "new_item_ids": [new["item_id"]]},
        f"{done} The price difference of ${abs(diff):.2f} will be {word} your original payment "
        "method.",
        [f"{abs(diff):.2f}"],
    )
    return drafts.draft(key, goal, [*lookup, *plan], decoys)


def _exchange_task(d: Retail, conn: sqlite3.Connection, r: Any, refuse: bool) -> dict | None:
    return _swap_task(conn, r, refuse, "exchange")


def _modify_task(d: Retail, conn: sqlite3.Connection, r: Any, refuse: bool) -> dict | None:
    return _swap_task(conn, r, refuse, "modify")


Retail.makers = (
    _cancel_task,
    _return_task,
    _exchange_task,
    _address_task,
    _modify_task,
    _email_cancel_task,
)

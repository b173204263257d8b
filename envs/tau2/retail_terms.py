"""The terms of the tau2 retail user (:mod:`.retail_user`): how it reads and what it wants.

- the facts a customer is asked for, in the reader's terms (:class:`RetailDomain`, with the
  database's product names and cities as closed values), and the patterns of ids, amounts and
  addresses;
- the kinds of write a proposal's verbs name (:func:`proposal_kinds`) and one gold write the
  user wants (:class:`Want`);
- the request as the user opens with it, in the first person (:func:`request_text`), and the
  user a task is about (:func:`user_of`).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

from palaestra.envs.runtimes.simuser import acts as A
from palaestra.envs.runtimes.simuser.domain import Domain, Slot, by_name
from palaestra.envs.tau2 import retail, store
from palaestra.envs.tau2.tasks import gold_actions

ORDER_ID = r"(?<![\w#])#?W\d{7}\b"


ITEM_ID = r"(?<![\w.$])\d{10}\b"


PAYMENT_ID = r"\b(?:credit_card|paypal|gift_card)_\d+\b"


EMAIL = r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"


#: a zip code, also where a comma follows it ("WA 98196, USA"); not a digit run of a longer
#: number ("12,34567", "12345,678", "12345.6")
ZIP = r"(?<![\d$.,#])\d{5}(?!\d|[.,]\d)"


MONEY = r"\$(\d[\d,]*(?:\.\d{1,2})?)"


STREET = (
    r"\b\d{1,5} [A-Z][a-z]+(?: [A-Z][a-z]+)? (?:Street|Avenue|Road|Lane|Drive|Boulevard|Court|"
    r"Place|Way|Broadway)\b|\b\d{1,5} Broadway\b"
)


REASONS = ("no longer needed", "ordered by mistake")


PAYMENT_WORDS = {"paypal": "paypal", "gift card": "gift_card", "credit card": "credit_card"}


@functools.cache
def _catalog() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Product names and cities of the database: the closed values the reader finds in text."""
    conn = store.initial()
    names = tuple(sorted({p["name"] for _, p in store.scan(conn, "products")}))
    cities = tuple(sorted({u["address"]["city"] for _, u in store.scan(conn, "users")}))
    return names, cities


class RetailDomain(Domain):
    """tau2 retail's language for the reader: identity, orders, items, payment, address."""

    name = "tau2-retail"

    def __init__(self) -> None:
        products, cities = _catalog()
        self.slots = by_name(
            Slot(
                "user_id",
                "user id",
                ("user id", "userid", "username", "user name", "account id"),
                r"\b[a-z]+_[a-z]+_\d{4}\b",
            ),
            Slot("first_name", "first name", ("first name", "given name", "forename")),
            Slot("last_name", "last name", ("last name", "surname", "family name")),
            Slot(
                "name",
                "name",
                ("name", "full name", "first and last name", "your name", "who am i speaking"),
            ),
            Slot("zip", "zip code", ("zip", "zip code", "zipcode", "postal code", "postcode"), ZIP),
            Slot("email", "email", ("email", "e-mail", "email address"), EMAIL),
            Slot(
                "order_id",
                "order id",
                ("order id", "order number", "order #", "which order", "order ids"),
                ORDER_ID,
            ),
            Slot(
                "item_id", "item id", ("item id", "item ids", "which item", "which items"), ITEM_ID
            ),
            Slot(
                "product",
                "product",
                ("product", "products", "what item", "which product", "what product"),
                values=tuple(p.lower() for p in products),
            ),
            Slot(
                "payment_method",
                "payment method",
                ("payment method", "payment", "pay with", "card", "refund to", "refunded to"),
                PAYMENT_ID,
                values=tuple(PAYMENT_WORDS),
            ),
            Slot(
                "address",
                "address",
                ("address", "shipping address", "new address", "street address", "address1"),
                STREET,
            ),
            Slot(
                "address2", "address line 2", ("address line 2", "address2", "suite", "apartment")
            ),
            Slot("city", "city", ("city", "town"), values=tuple(c.lower() for c in cities)),
            Slot("state", "state", ("state",)),
            Slot("country", "country", ("country",)),
            Slot("reason", "reason", ("reason", "why", "reason for cancelling"), values=REASONS),
        )


@functools.cache
def domain() -> RetailDomain:
    """One domain object per process, so its lexicon is compiled once."""
    return RetailDomain()


def norm_order(value: str) -> str:
    return value if value.startswith("#") else "#" + value


#: the writes a proposal's verb alone names
_VERBS = {
    "cancel_pending_order": re.compile(r"\bcancel"),
    "return_delivered_order_items": re.compile(
        r"\breturn(?:s|ing|ed)?\b(?! (?:it )?to (?:your|the|you))"
    ),
    "exchange_delivered_order_items": re.compile(r"\bexchang"),
}
#: the other writes, told apart by what the change is to
_CHANGE = re.compile(r"\b(?:modif|chang|switch|swap|replac|updat|upgrad|downgrad)")


_ADDRESS = re.compile(r"\baddress")


_PROFILE = re.compile(r"\b(?:default|profile|account|user)\b")


_PAYMENT = re.compile(r"\bpayment method\b|\bpay(?:ing)? (?:for|with)\b")


def proposal_kinds(text: str, has_order: bool) -> set[str]:
    """The kinds of write a proposal's words name (several when a message bundles them)."""
    low = text.lower()
    kinds = {kind for kind, verb in _VERBS.items() if verb.search(low)}
    change = bool(_CHANGE.search(low))
    if _ADDRESS.search(low) and (change or re.search(r"\bship|\bmove|\bnew address", low)):
        if _PROFILE.search(low):
            kinds.add("modify_user_address")
        if has_order or "order" in low:
            kinds.add("modify_pending_order_address")
    if change and _PAYMENT.search(low) and not re.search(r"\bitems?\b", low):
        kinds.add("modify_pending_order_payment")
    plain = not _ADDRESS.search(low) and "modify_pending_order_payment" not in kinds
    if change and (plain or re.search(r"\bitems?\b|\d{10}", low)):
        kinds.add("modify_pending_order_items")
    return kinds


@dataclass
class Want:
    """One gold write the user wants, and how far it got."""

    name: str
    args: dict[str, Any]
    state: str = "pending"  # pending | agreed | done | failed
    #: amounts a correct proposal of it may mention (prices, differences, totals, balances)
    amounts: set[float] = field(default_factory=set)

    @property
    def order_id(self) -> str | None:
        return self.args.get("order_id")

    @property
    def settled(self) -> bool:
        return self.state in ("done", "failed")


#: sentences of the scenario that instruct the user how to play, not what it wants
_CONDITIONAL = re.compile(
    r"^\s*(?:if|but if|otherwise|in case|unless|when|once|after|before|be|do not|don't|never|"
    r"make sure|at the end|insist|ask the agent|provide|try|say|tell the agent|you are not)\b",
    re.IGNORECASE,
)


#: where a sentence turns into a condition for the user ("..., but if the agent asks ...")
_CUT = re.compile(r"[,;]?\s+(?:but |and |or )?(?:if|when|once|unless|otherwise)\b", re.IGNORECASE)


#: words after which "if" asks a question ("I wonder if ...") rather than sets a condition
_EMBED = frozenset(
    ["wonder", "wondering", "know", "ask", "asking", "check", "see", "sure", "whether"]
)


def _cut(sentence: str) -> str:
    for m in _CUT.finditer(sentence):
        before = sentence[: m.start()].split()
        if before and before[-1].lower().strip(",;") in _EMBED and "," not in m.group(0):
            continue
        return re.sub(r",?\s*(?:but )?only$", "", sentence[: m.start()])
    return sentence


_ASIDE = re.compile(r"\s*\(([^)]*)\)")


_SECRET = re.compile(r"\b(?:reveal|mention|share)\b", re.IGNORECASE)


_PRONOUNS = [
    (r"\byou're\b", "I'm"),
    (r"\byou are\b", "I am"),
    (r"\byou were\b", "I was"),
    (r"\byou've\b", "I've"),
    (r"\byou'd\b", "I'd"),
    (r"\byou'll\b", "I'll"),
    (r"\byourself\b", "myself"),
    (r"\byours\b", "mine"),
    (r"\byour\b", "my"),
    (r"\byou\b", "I"),
]


_OBJECT_I = re.compile(r"\b(to|for|with|help|ask|tell|give|send|let|told|asked|call) I\b")


def first_person(text: str) -> str:
    """tau2's second-person instructions ("You want to return ...") as the user says them."""
    out = text
    for pattern, repl in _PRONOUNS:
        out = re.sub(pattern, repl, out)
        out = re.sub(pattern.replace(r"\by", r"\bY"), repl, out)
    out = _OBJECT_I.sub(lambda m: f"{m.group(1)} me", out)
    return out


def request_text(reason_for_call: str) -> str:
    """The request as the user opens with it: the scenario's reason for calling without the
    conditions and asides meant only for the user (what to do if the agent asks or refuses,
    what not to reveal)."""
    kept = []
    for sentence in A.sentences(reason_for_call):
        asides = _ASIDE.findall(sentence)
        if any(_SECRET.search(a) and re.search(r"\bthis\b", a) for a in asides):
            continue  # "(do not share this with the agent)": the sentence is the secret
        sentence = _ASIDE.sub(lambda m: "" if _SECRET.search(m.group(1)) else m.group(0), sentence)
        if _CONDITIONAL.search(sentence) or not re.search(r"[A-Za-z]", sentence):
            continue
        head = _cut(sentence).strip().rstrip(",;:")
        if len(head.split()) >= 3:
            kept.append(head if head[-1] in ".?!" else head + ".")
    if not kept:  # every sentence is a condition: its first clause still says what is wanted
        first = A.sentences(reason_for_call)[:1]
        kept = [_cut(s).strip().rstrip(",;:") + "." for s in first if _cut(s).strip()]
    text = first_person(" ".join(kept)).strip()
    return re.sub(r"\bthe agent\b", "you", text)


def user_of(task: dict[str, Any], conn: Any) -> str | None:
    """The user the task is about: named by its gold actions, else by its known info."""
    for action in gold_actions(task):
        args = action.get("arguments") or {}
        if "user_id" in args:
            return str(args["user_id"])
        if action["name"].startswith("find_user_id_by_"):
            content, error = retail.call(conn, action["name"], args)
            if not error:
                return content
        if "order_id" in args:
            order = store.get(conn, "orders", args["order_id"])
            if order:
                return str(order["user_id"])
    info = task["user_scenario"]["instructions"]
    known = f"{info.get('known_info') or ''} {info.get('reason_for_call') or ''}"
    m = re.search(r"\b[a-z]+_[a-z]+_\d{4}\b", known)
    if m and store.get(conn, "users", m.group(0)):
        return m.group(0)
    for email in re.findall(EMAIL, known):
        content, error = retail.call(conn, "find_user_id_by_email", {"email": email})
        if not error:
            return content
    names = re.findall(r"\b([A-Z][a-z]+) ([A-Z][a-z]+)\b", known)
    for zip_code in re.findall(r"\b\d{5}\b", known):
        for first, last in names:
            args = {"first_name": first, "last_name": last, "zip": zip_code}
            content, error = retail.call(conn, "find_user_id_by_name_zip", args)
            if not error:
                return content
    return None

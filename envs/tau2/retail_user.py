"""The symbolic user of a tau2 retail task: a goal from the scenario and the gold writes, in the
style of our agenda-driven :class:`palaestra.envs.runtimes.simuser.user.SimulatedUser`.

tau2 plays its user with an LLM reading the scenario text, and a share of tau2's failures are
that user's (inventing details, agreeing to the wrong thing, leaving early). Here the state is
explicit and the reading is the rule-based one of :mod:`palaestra.envs.runtimes.simuser`, in
the retail terms of :mod:`.retail_terms`:

- **facts** come from ``known_info`` and the user's own record in the database (name, zip,
  email, address, payment methods, orders), read once at construction; what ``unknown_info``
  says it does not know (its email, its order numbers) it answers with an honest "I don't know".
  Where the gold actions try several values of one fact (a second email, a zip said wrong
  first, as the task instructions script it) the user has them as candidates in that order and
  gives the next one when asked again.
- **wants** are the task's gold writes (cancel, return, exchange, modify), each with its
  order, items, payment, address and reason: a proposal is agreed to only when its verb names
  the kind of a write still pending and every id, amount, payment and address it mentions is
  consistent with that write's arguments. Anything else gets a no with the reason.
- **stop guard**: the user closes once every gold write was agreed and then reported done (or
  reported impossible); with no gold write, once it got what it came for: a refusal, a transfer
  to a human, or the information it asked for (every ``communicate_info`` value heard, or, with
  none listed, a statement that answers its scenario's question). Before that, "anything
  else?" or a goodbye gets a protest that restates what is left, never a happy close: an agent
  that says goodbye right away must not be thanked for it.
- **unknowable questions** (a passport number, a PIN) get "I don't know my ...": a question
  the reader matches to one of the user's facts only by a guess is not answered with that fact.
- **dumps** (a policy or a pile of tool results pasted whole: thousands of characters) are
  neither agreed to nor taken as a refusal, report or answer; the user asks what is meant.

Every value the user says is one of its facts. The words are templates; the seed picks among
phrasings only.
"""

from __future__ import annotations

import random
import re
from typing import Any

from palaestra.envs.runtimes.simuser import acts as A
from palaestra.envs.tau2 import retail, store
from palaestra.envs.tau2.retail_terms import (
    EMAIL,
    ITEM_ID,
    MONEY,
    ORDER_ID,
    PAYMENT_ID,
    PAYMENT_WORDS,
    REASONS,
    ZIP,
    Want,
    domain,
    norm_order,
    proposal_kinds,
    request_text,
    user_of,
)
from palaestra.envs.tau2.tasks import gold_actions
from palaestra.envs.tau2.user import UserTurn
from palaestra.envs.tau2.world import Tau2World


class RetailUser:
    """A tau2 retail customer with a fixed goal (see the module's docstring)."""

    def __init__(self, task: dict[str, Any], seed: int = 0) -> None:
        self.task = task
        self.rng = random.Random(seed)
        self.log: list[dict[str, Any]] = []
        self.domain = domain()
        info = task["user_scenario"]["instructions"]
        self.reason = str(info.get("reason_for_call") or "")
        known = str(info.get("known_info") or "")
        unknown = str(info.get("unknown_info") or "").lower()
        scenario = " ".join(
            str(info.get(k) or "") for k in ("reason_for_call", "known_info", "task_instructions")
        )
        conn = store.initial()
        uid = user_of(task, conn)
        profile = store.get(conn, "users", uid) if uid else None
        self.profile: dict[str, Any] = profile or {}
        self.orders: dict[str, dict[str, Any]] = {}
        for oid in self.profile.get("orders", []):
            order = store.get(conn, "orders", oid)
            if order:
                self.orders[oid] = order
        gold = gold_actions(task)
        # -- facts, each a list of candidates in the order the user gives them ----------------
        facts: dict[str, list[str]] = {}

        def add(slot: str, value: Any) -> None:
            if value and str(value) not in facts.setdefault(slot, []):
                facts[slot].append(str(value))

        for action in gold:
            args = action.get("arguments") or {}
            if action["name"] == "find_user_id_by_name_zip":
                add("first_name", args.get("first_name"))
                add("last_name", args.get("last_name"))
                add("zip", args.get("zip"))
            elif action["name"] == "find_user_id_by_email":
                add("email", args.get("email"))
        for email in re.findall(EMAIL, known):
            add("email", email)
        name = self.profile.get("name") or {}
        add("first_name", name.get("first_name"))
        add("last_name", name.get("last_name"))
        address = self.profile.get("address") or {}
        for zip_code in re.findall(r"\b\d{5}\b", known):
            add("zip", zip_code)
        add("zip", address.get("zip"))
        if not re.search(r"\b(?:email|e-mail)\b", unknown):
            add("email", self.profile.get("email"))
        if re.search(r"\b[a-z]+_[a-z]+_\d{4}\b", known) and uid:
            add("user_id", uid)
        if "order" not in unknown:
            for oid in re.findall(ORDER_ID, scenario):
                add("order_id", norm_order(oid))
        self.facts = facts
        self.told: dict[str, int] = {}  # slot -> how many candidates were given
        self.retry = False  # the message being answered says the last values did not work
        self.hide_address = bool(re.search(r"\bnot (?:want to )?reveal\b", self.reason, re.I))
        self.scenario_ids = set(re.findall(r"\b\d{10}\b", scenario))
        # -- wants: the gold writes ------------------------------------------------------------
        self.wants = [
            Want(a["name"], dict(a.get("arguments") or {}))
            for a in gold
            if a["name"] in retail.WRITE
        ]
        for want in self.wants:
            want.amounts = self._amounts(conn, want)
        self.refused = False
        self.closed = False
        self.no_email = bool(re.search(r"\b(?:don't|do not) have an? e-?mail", unknown))
        # -- what a user with no write came for: an answer, a refusal or a human ------------
        criteria = task.get("evaluation_criteria") or {}
        self.info = [str(i) for i in criteria.get("communicate_info") or []]
        self.heard: set[str] = set()  # of ``info``, the values an assistant message stated
        self.asks = bool(_ASKS.search(self.reason))
        self.answered = False  # a statement answered its question (when ``info`` is empty)
        self.transferred = False

    # ----- facts about the world the user knows ----------------------------------------------
    def _amounts(self, conn: Any, want: Want) -> set[float]:
        """Sums a correct proposal of ``want`` may state: the prices of the items involved and
        of their product's variants, the differences, the refund and order totals, balances."""
        out: set[float] = set()
        order = self.orders.get(want.order_id or "") or {}
        items = order.get("items", [])
        by_id = {i["item_id"]: i for i in items}
        chosen = [by_id[i] for i in want.args.get("item_ids", []) if i in by_id]
        out |= {round(float(i["price"]), 2) for i in items}
        out |= {round(float(p["amount"]), 2) for p in order.get("payment_history", [])}
        out.add(round(sum(float(i["price"]) for i in items), 2))
        out.add(round(sum(float(i["price"]) for i in chosen), 2))
        diff = 0.0
        for item, new_id in zip(chosen, want.args.get("new_item_ids", []), strict=False):
            product = store.get(conn, "products", item["product_id"]) or {}
            variants = product.get("variants", {})
            out |= {round(float(v["price"]), 2) for v in variants.values()}
            if new_id in variants:
                step = float(variants[new_id]["price"]) - float(item["price"])
                diff += step
                out.add(round(abs(step), 2))
        out.add(round(abs(diff), 2))
        for method in self.profile.get("payment_methods", {}).values():
            if "balance" in method:
                out.add(round(float(method["balance"]), 2))
                out.add(round(float(method["balance"]) - diff, 2))
        return out

    def _item(self, item_id: str) -> dict[str, Any] | None:
        for order in self.orders.values():
            for item in order["items"]:
                if item["item_id"] == item_id:
                    return dict(item)
        return None

    def _order_ref(self, want: Want) -> str:
        """How the user names a write's order: its number when the scenario states it."""
        oid = want.order_id
        if not oid:
            return "my account"
        if oid in self.facts.get("order_id", []):
            return f"order {oid}"
        names = sorted({i["name"] for i in self.orders.get(oid, {}).get("items", [])})
        return "my order with the " + _join(names) if names else "my order"

    def _items_of(self, want: Want, key: str = "item_ids") -> str:
        names = []
        for item_id in want.args.get(key, []):
            item = self._item(item_id)
            if item:
                names.append(item["name"])
        return _join(names) if names else "items"

    def _address_text(self, args: dict[str, Any]) -> str:
        parts = [args.get("address1"), args.get("address2"), args.get("city")]
        head = ", ".join(str(p) for p in parts if p)
        return f"{head}, {args.get('state')} {args.get('zip')}, {args.get('country')}"

    def _payment_text(self, pid: str) -> str:
        method = self.profile.get("payment_methods", {}).get(pid) or {}
        source = method.get("source", "")
        if source == "credit_card":
            return f"my {method.get('brand', 'credit')} credit card ending in {method['last_four']}"
        if source == "paypal":
            return "my PayPal account"
        same = [
            m for m in self.profile.get("payment_methods", {}).values() if m["source"] == source
        ]
        return f"my gift card {pid}" if len(same) > 1 else "my gift card"

    def describe(self, want: Want) -> str:
        """What the user wants done, in its own words (values only from its facts)."""
        args, ref = want.args, self._order_ref(want)
        if want.name == "cancel_pending_order":
            return f"cancel {ref} because it is {args.get('reason', 'no longer needed')}"
        if want.name == "return_delivered_order_items":
            return f"return the {self._items_of(want)} from {ref}"
        if want.name in ("exchange_delivered_order_items", "modify_pending_order_items"):
            verb = "exchange" if want.name.startswith("exchange") else "change"
            new = []
            for item_id in args.get("new_item_ids", []):
                if item_id in self.scenario_ids:
                    new.append(item_id)
            target = f" for item {_join(new)}" if new else " for the options I described"
            return f"{verb} the {self._items_of(want)} in {ref}{target}"
        if want.name == "modify_pending_order_payment":
            return f"pay for {ref} with {self._payment_text(args.get('payment_method_id', ''))}"
        where = "the address on my other order" if self.hide_address else self._address_text(args)
        if want.name == "modify_user_address":
            return f"update my default address to {where}"
        return f"change the shipping address of {ref} to {where}"

    # ----- the conversation --------------------------------------------------------------------
    def opening(self) -> str:
        text = request_text(self.reason) or "I need some help with my orders."
        return self.rng.choice(("Hi! ", "Hello. ", "Hi there. ")) + text

    def reply(self, message: str, world: Tau2World | None = None) -> UserTurn:
        if _is_dump(message):
            return self._dumped()
        heard = A.read(self.domain, message)
        parts: list[tuple[str, str]] = []  # (act said, sentence)
        agreed = False
        requested = [a for a in heard if a.kind == A.REQUEST]
        if any(a.kind in (A.CONFIRM, A.OFFER) for a in heard):
            # beside a proposal, a statement read as a request is a relative clause ("..., which
            # will be refunded to your card"): only a question asks
            requested = [a for a in requested if a.text.rstrip().endswith("?")]
        unknowable, requested = self._unknowable(message, requested)
        for act in heard:
            if act.kind in (A.CONFIRM, A.OFFER):
                ok, sentence = self._proposal(act, message)
                if ok is True:
                    agreed = True
                    parts.append(("affirm", sentence))
                elif ok is False:
                    parts.append(("negate", sentence))
                elif sentence:
                    parts.append(("note", sentence))
            elif act.kind == A.DONE:
                for want in self.wants:
                    if want.state == "agreed":
                        want.state = "done"
            elif act.kind == A.REFUSE:
                live = [w for w in self.wants if w.state == "agreed"]
                for want in live:
                    want.state = "failed"
                if not live and not requested and not self.wants:
                    self.refused = True
        self._note_answers(message)
        self.retry = bool(_RETRY.search(message)) or any(a.kind == A.REFUSE for a in heard)
        if unknowable:
            parts.append(("dont_know", f"Sorry, I don't know my {_join(unknowable)}."))
        informs = self._answer(requested)
        if informs:
            parts.append(("inform", informs))
        kinds = {a.kind for a in heard}
        satisfied = self._satisfied()
        closed = False
        if not parts:
            if A.UNREAD in kinds:
                parts.append(
                    ("clarify", "Sorry, I'm not sure what you're asking. What do you need?")
                )
            elif satisfied and (A.ANYTHING_ELSE in kinds or A.BYE in kinds or A.DONE in kinds):
                closed = True
            elif satisfied and A.REFUSE in kinds and not self.wants:
                parts.append(("accept_refusal", "I see, I understand."))
                closed = True
            elif satisfied and self.wants:
                closed = True
            elif self.transferred and not self.wants:
                parts.append(("hold", "Okay, I'll hold for the human agent."))
            elif _HELP.search(message) and not any(w.state != "pending" for w in self.wants):
                parts.append(("restate", request_text(self.reason) or "I need help with an order."))
            elif A.ANYTHING_ELSE in kinds or A.BYE in kinds:
                parts.append(("wait", "Not yet: " + self._still_need()))
            elif A.DONE in kinds and any(not w.settled for w in self.wants):
                parts.append(("ack", "Thanks. I also need to " + self._next_need() + "."))
            elif A.REFUSE in kinds and any(not w.settled for w in self.wants):
                parts.append(
                    ("insist", "Are you sure? I'd really like to " + self._next_need() + ".")
                )
            elif A.REFUSE in kinds:
                parts.append(("ack", "I see."))
            elif A.DONE in kinds and not self.wants and not satisfied:
                parts.append(("wait", "I'm not sure what was done. " + self._still_need()))
            else:
                parts.append(("ack", self.rng.choice(("Okay.", "Alright.", "Okay, thanks."))))
        if closed:
            parts.append(("close", "Thanks, that's all I needed. Goodbye!"))
        self.closed = closed
        text = " ".join(s for _, s in parts)
        entry: dict[str, Any] = {
            "heard": [a.to_json() for a in heard],
            "said": [k for k, _ in parts],
            "text": text,
        }
        if A.UNREAD in kinds:
            entry["unread"] = True
        self.log.append(entry)
        return UserTurn(text, closed=closed, agreed=agreed)

    def _dumped(self) -> UserTurn:
        """A policy or a pile of tool results pasted whole is no proposal, answer or question
        the user can take in: agreeing to something buried in it, or taking a refusal or a fact
        out of it, would let an agent win by pasting everything it has. The user asks what is
        meant and nothing of its state changes."""
        text = "That's a lot of text, and I can't tell what you're asking me. " + self._still_need()
        self.closed = False
        self.log.append({"heard": [], "said": ["clarify"], "text": text, "dump": True})
        return UserTurn(text)

    def _satisfied(self) -> bool:
        """Whether the user got what it came for: every gold write settled, or, with none to
        make, a refusal, a transfer to a human, or the answer it asked for."""
        if self.wants:
            return all(w.settled for w in self.wants)
        if self.refused or self.transferred:
            return True
        if self.info:
            return len(self.heard) == len(self.info)
        return self.asks and self.answered

    def _note_answers(self, message: str) -> None:
        """What a message gives a user with no write to make: its facts to hear (tau2's own
        COMMUNICATE test: case and thousands commas aside), a transfer, an answer."""
        low = message.lower().replace(",", "")
        self.heard |= {i for i in self.info if i.lower() in low}
        if _TRANSFER.search(message):
            self.transferred = True
        if any(not s.rstrip().endswith("?") and _ANSWERISH.search(s) for s in A.sentences(message)):
            self.answered = True

    def _unknowable(self, message: str, requests: list[A.Act]) -> tuple[list[str], list[A.Act]]:
        """The things asked for that no customer record holds (a passport number, a PIN), and
        the requests left to answer: a request the reader matched to one of the user's facts
        only by its guess ("your passport number" ~ "user id") is the unknowable one, so
        answering it with that fact would be answering another question."""
        things: list[str] = []
        keep = list(requests)
        for sentence in A.sentences(message):
            found = [m.group(0) for m in _UNKNOWABLE.finditer(sentence)]
            if not found or not _ASKING.search(sentence):
                continue
            things += [f for f in found if f.lower() not in {t.lower() for t in things}]
            # what else the sentence asks for, without the words that only place the unknowable
            # thing ("the security code on your card" asks for no payment method)
            rest = _PLACE.sub(" ", _UNKNOWABLE.sub(" ", sentence))
            keep = [
                a
                for a in keep
                if a.text != sentence
                or (not a.alternatives and a.slot and self.domain.slots[a.slot].asked(rest))
            ]
        return things, keep

    def _next_need(self) -> str:
        left = [w for w in self.wants if not w.settled]
        return self.describe(left[0]) if left else "sort this out"

    def _still_need(self) -> str:
        """What is still open, as a sentence: the next write, or the request itself."""
        if self.wants:
            return "I still need to " + self._next_need() + "."
        return "I still need help with this. " + (
            request_text(self.reason) or "I need help with my orders."
        )

    # ----- requests ------------------------------------------------------------------------------
    def _answer(self, requests: list[A.Act]) -> str:
        slots: list[str | None] = []
        for act in requests:
            slot = act.slot
            if act.alternatives:
                held = [s for s in act.alternatives if s in self.facts or s in _WANT_SLOTS]
                slot = held[0] if held else act.slot
            if slot not in slots:
                slots.append(slot)
        out: list[str] = []
        if "first_name" in slots and "last_name" in slots and "name" in slots:
            slots.remove("name")
        for slot in slots:
            sentence = self._inform(slot)
            if sentence and sentence not in out:
                out.append(sentence)
        return " ".join(out)

    def _give(self, slot: str) -> str | None:
        """A fact's value: the first candidate, the same again when asked again, the next one
        when told the last did not work ("no account matches", "double-check")."""
        values = self.facts.get(slot)
        if not values:
            return None
        told = self.told.get(slot, 0)
        if told == 0 or (self.retry and told < len(values)):
            told += 1
        self.told[slot] = told
        return values[told - 1]

    def _inform(self, slot: str | None) -> str:
        if slot in ("first_name", "last_name", "zip", "email", "user_id"):
            value = self._give(slot)
            label = self.domain.slots[slot].label
            if value is None:
                if slot == "email" and self.no_email:
                    return "I don't have an email address."
                if slot == "email":
                    return "I don't remember my email address."
                return f"I don't know my {label}."
            return f"My {label} is {value}."
        if slot == "name":
            first, last = self._give("first_name"), self._give("last_name")
            if first and last:
                return f"My first name is {first} and my last name is {last}."
            return "I'd rather not say."
        if slot == "order_id":
            known = self.facts.get("order_id")
            if not known:
                return "I don't remember the order number."
            return f"The order number is {_join(known)}."
        if slot in ("item_id", "product"):
            left = [w for w in self.wants if not w.settled and w.args.get("item_ids")]
            if not left:
                return "I'm not sure which item you mean."
            return f"It's the {self._items_of(left[0])}."
        if slot == "payment_method":
            left = [w for w in self.wants if not w.settled and w.args.get("payment_method_id")]
            if not left:
                return "I'm not sure about the payment method."
            return f"Please use {self._payment_text(left[0].args['payment_method_id'])}."
        if slot in ("address", "address2", "city", "state", "country"):
            left = [w for w in self.wants if not w.settled and w.args.get("address1")]
            if not left:
                profile = self.profile.get("address")
                if slot == "address" and profile:
                    return f"My address is {self._address_text(profile)}."
                return "I'm not sure what address you mean."
            if self.hide_address:
                return "I'd rather not say it; it is the address on one of my other orders."
            return f"The address is {self._address_text(left[0].args)}."
        if slot == "reason":
            left = [w for w in self.wants if not w.settled and w.args.get("reason")]
            if not left:
                return "I'd rather not go into that."
            return f"The reason is that it's {left[0].args['reason']}."
        return "I'm not sure about that. What I need is to " + self._next_need() + "."

    # ----- proposals -----------------------------------------------------------------------------
    def _proposal(self, act: A.Act, message: str) -> tuple[bool | None, str]:
        """(agree?, what to say) for a proposal: True only when it names pending gold writes by
        kind and every value it states fits them; None when it proposes no write at all."""
        text = act.text
        if not proposal_kinds(text, False):  # "Shall I proceed?" asks about the whole message
            text = message
        orders = {norm_order(o) for o in re.findall(ORDER_ID, text)}
        kinds = proposal_kinds(text, bool(orders))
        if not kinds:
            return None, ""
        open_wants = [w for w in self.wants if not w.settled]
        cands = [w for w in open_wants if w.name in kinds]
        if not cands:
            if not open_wants:
                return False, "No, thanks, I don't want anything else changed."
            return False, "No, that's not what I want. What I need is to " + self._next_need() + "."
        if orders:
            named = [w for w in cands if w.order_id in orders or w.order_id is None]
            stray = orders - {w.order_id for w in named}
            if stray or not named:
                return False, (
                    "No, that's not the right order. I want to " + self.describe(cands[0]) + "."
                )
            cands = named
        else:  # one write of the kind, the first the proposal fits
            fits = [w for w in cands if self._mismatch(text, [w]) is None]
            cands = fits[:1] or cands[:1]
        why = self._mismatch(text, cands)
        if why:
            return False, f"No, that's not right: {why} I want to {self.describe(cands[0])}."
        for want in cands:
            want.state = "agreed"
        return True, self.rng.choice(("Yes, please go ahead.", "Yes, please do that.", "Yes."))

    def _mismatch(self, text: str, cands: list[Want]) -> str | None:
        """Why a proposal's values do not fit the writes ``cands``, or None."""
        old = {i for w in cands for i in w.args.get("item_ids", [])}
        new = {i for w in cands for i in w.args.get("new_item_ids", [])}
        products = {item["product_id"] for i in old if (item := self._item(i)) is not None}
        items = set(re.findall(ITEM_ID, text))
        if items - old - new - products:
            return "those are not the items I mean."
        if items and not (old | new) <= items:
            return "that's not all of the items."
        pays = set(re.findall(PAYMENT_ID, text))
        want_pay = {w.args["payment_method_id"] for w in cands if w.args.get("payment_method_id")}
        if pays and want_pay and not pays <= want_pay:
            return "that's not the payment method I want."
        if not pays and want_pay:
            low = text.lower()
            said = {src for word, src in PAYMENT_WORDS.items() if word in low}
            sources = {p.rsplit("_", 1)[0] for p in want_pay}
            if said and not said & sources:
                return "that's not the payment method I want."
        reasons = {r for r in REASONS if r in text.lower()}
        want_reason = {w.args["reason"] for w in cands if w.args.get("reason")}
        if reasons and want_reason and not reasons <= want_reason:
            return "that's not the reason."
        for want in cands:
            if want.args.get("address1"):
                if want.args["address1"].lower() not in text.lower():
                    return "that's not the address I want."
                zips = set(re.findall(ZIP, text))
                if zips and want.args.get("zip") not in zips:
                    return "that's not the right zip code."
        allowed = {a for w in cands for a in w.amounts}
        for raw in re.findall(MONEY, text):
            amount = float(raw.replace(",", ""))
            if not any(abs(amount - a) < 0.011 for a in allowed):
                return "I don't think that amount is right."
        return None


_RETRY = re.compile(
    r"\b(?:no (?:account|user|match|record)|not (?:find|found|match|locate)|(?:couldn't|could not|"
    r"can't|cannot|unable to) (?:find|locate|match)|double-check|another|different|"
    r"(?:doesn't|does not|didn't|did not) (?:match|work))",
    re.IGNORECASE,
)
#: a scenario that asks the agent something (its answer is what the user came for)
_ASKS = re.compile(
    r"\b(?:want(?:s)? to (?:know|ask|check|find out)|wonder|ask (?:the agent )?(?:about|which|what|"
    r"how|if|whether)|how much|curious)\b",
    re.IGNORECASE,
)
#: the assistant handing the user over to a person (not a refusal that names transfers)
_TRANSFER = re.compile(
    r"\btransferr(?:ed|ing)\b[^.?!]*\b(?:human|agent|representative|specialist|supervisor)|"
    r"\b(?:i will|i'll|let me|i am going to|i'm going to|i have|i've) (?:now )?transfer",
    re.IGNORECASE,
)
#: a statement that answers a question about an order: a tracking number, a status
_ANSWERISH = re.compile(
    r"(?<![\w#])\d{6,}\b|\b(?:pending|processed|shipped|delivered|in transit|on its way|"
    r"arriv\w*|tracking)\b",
    re.IGNORECASE,
)
#: what no customer of the store knows or holds on record (the user says so, and never
#: answers with another of its facts)
_UNKNOWABLE = re.compile(
    r"\b(?:passport(?: number)?|pin(?: number| code)?|social security(?: number)?|ssn|"
    r"(?:mother's )?maiden name|password|date of birth|birth ?date|birthday|"
    r"security (?:question|answer|code)|cvv|cvc|driver's licen[cs]e(?: number)?|"
    r"(?:phone|mobile|telephone|cell) number|tax id|national id)\b",
    re.IGNORECASE,
)
#: a sentence that asks for something (not one that only names it: "we never need a PIN.")
_ASKING = re.compile(
    r"\?|\b(?:provide|give|tell|share|send|enter|verify|confirm|spell) (?:me |us )?(?:with )?"
    r"(?:your|the)\b|(?<!never )(?<!not )\b(?:need|require) (?:your|the)\b|\blet me know\b|"
    r"^\s*(?:what|which)\b|\bplease[.!]?\s*$",
    re.IGNORECASE,
)
_PLACE = re.compile(
    r"\b(?:on|of|for|in|from|with|to|under|linked to|associated with) (?:your|the|my|this|that)"
    r"(?: \w+){1,2}",
    re.IGNORECASE,
)
#: a message no one writes to a customer: a policy or a pile of tool results pasted whole
DUMP_CHARS = 2000
DUMP_SENTENCES = 15


def _is_dump(message: str) -> bool:
    """Thousands of characters of many sentences, or of records (braces, quotes): far beyond
    any message a customer is asked to read and answer (the gold's longest is ~320)."""
    if len(message) < DUMP_CHARS:
        return False
    records = message.count("{") + message.count('"') // 2
    return len(A.sentences(message)) >= DUMP_SENTENCES or records >= 20 or len(message) >= 5000


_HELP = re.compile(r"\bhow (?:can|may|could) I (?:help|assist)|\bwhat can I do for you\b", re.I)
_WANT_SLOTS = ("order_id", "item_id", "product", "payment_method", "address", "reason")


def _join(words: list[str]) -> str:
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]

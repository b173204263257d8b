"""MiniWoB's small apps: tickets and flights, a food order, a search engine, a phone book, a
terminal and the email inbox (every variant)."""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from palaestra.envs.runtimes.axtree import (
    Node,
    OracleError,
    action,
    after,
    before,
    click,
    field_after,
    fill,
    find,
    norm,
    one,
    page,
    subtree,
    textboxes,
)
from palaestra.envs.web.policies.reading import ordinal, quoted, submit_button, widgets
from palaestra.envs.web.policies.widgets import autocomplete, pick_date


def priced_trips(nodes: list[Node]) -> list[tuple[Node, int, int]]:
    """(button, price in $, duration in minutes) for each bookable trip on a results page."""
    trips = []
    for button in find(nodes, "button"):
        price = re.search(r"\$(\d+)", button.name)
        durations = [n for n in before(nodes, button) if re.fullmatch(r"\d+h \d+m", norm(n.name))]
        if price and durations:
            hours, minutes = map(int, re.findall(r"\d+", durations[-1].name))
            trips.append((button, int(price.group(1)), hours * 60 + minutes))
    return trips


def buy_ticket(obs: dict[str, Any]) -> str:
    """buy-ticket: the ticket with the cheapest/most expensive price or shortest/longest trip."""
    nodes = widgets(obs)
    tickets = priced_trips(nodes)
    goal = obs["goal"]
    key = (lambda t: t[1]) if "cost" in goal else (lambda t: t[2])
    pick = max if ("longest" in goal or "expensive" in goal) else min
    return click(pick(tickets, key=key)[0])


def book_flight(obs: dict[str, Any]) -> str:
    """book-flight(-nodelay): origin and destination from the airport suggestions (which extend
    the city or code of the utterance), the date from the picker, Search, then book the cheapest
    or shortest flight of the results."""
    match = re.search(r"Book the (\w+) one-way flight from: (.+) to: (.+) on (\S+)\.", obs["goal"])
    if not match:
        raise OracleError(f"no flight in {obs['goal']!r}")
    want, origin, destination, date = match.groups()
    nodes = widgets(obs)
    flights = priced_trips(nodes)
    if flights:
        return click(min(flights, key=lambda f: f[1] if want == "cheapest" else f[2])[0])
    start, end = one(nodes, "textbox", "From:"), one(nodes, "textbox", "To:")
    when = field_after(nodes, one(nodes, "generic", "Departure Date"))
    return (
        autocomplete(nodes, start, origin, lambda text: origin in text)
        or autocomplete(nodes, end, destination, lambda text: destination in text)
        or pick_date(nodes, when, date)
        or click(one(nodes, "button", "Search"))
    )


def order_food(obs: dict[str, Any]) -> str:
    """order-food: "one of each item: A, B" or "N items that are vegan": adjust each dish's
    quantity with its -/+ controls (its count shows between them), then Order!."""
    nodes = widgets(obs)
    dishes = []
    for plus in find(nodes, None, "+"):
        minus = [n for n in before(nodes, plus) if norm(n.name) == "-"][-1]
        title = [n for n in before(nodes, minus) if n.role == "generic" and norm(n.name)][-1]
        types = {n.name for n in nodes if title.index < n.index < minus.index and n.role == "img"}
        count = [n for n in nodes if minus.index < n.index < plus.index and n.name.isdigit()]
        dishes.append((norm(title.name), types, int(count[0].name) if count else 0, minus, plus))
    goal = obs["goal"]
    by_name = re.search(r"one of each item: (.*)", goal)
    wanted: dict[str, int] = {}
    if by_name:
        wanted = {norm(item): 1 for item in by_name.group(1).split(",")}
    else:
        match = re.search(r"Order (\d+) items that are (\S+)", goal)
        if not match:
            raise OracleError(f"no order in {goal!r}")
        first = next(d for d in dishes if match.group(2) in d[1])
        wanted = {first[0]: int(match.group(1))}
    for name, _, have, minus, plus in dishes:
        if have != wanted.get(name, 0):
            return click(plus if have < wanted.get(name, 0) else minus)
    return click(submit_button(nodes, "Order!"))


def search_engine(obs: dict[str, Any]) -> str:
    """search-engine: search the quoted name, then open the result page holding the n-th result
    (three per page) and click it. The pager hides '<' on the first page and '>' on the last."""
    query, index = quoted(obs["goal"])[0], ordinal(obs["goal"])
    nodes = widgets(obs)
    box = textboxes(nodes)[0]
    if norm(box.value).lower() != query.lower():
        return fill(box, query)
    pager = find(nodes, "list")
    pages = [n for n in find(subtree(nodes, pager[0]), "link")] if pager else []
    if not pages:
        return click(one(nodes, "button", "Search"))
    names = {norm(p.name) for p in pages}
    numbers = sorted(int(n) for n in names if n.isdigit())
    current = numbers[0] if "<" not in names else numbers[-1] if ">" not in names else 2
    wanted = index // 3 + 1
    if current != wanted:
        return click(one(pages, "link", str(wanted)))
    results = [n for n in find(before(nodes, pager[0]), "link")]
    return click(results[index % 3])


def phone_book(obs: dict[str, Any]) -> str:
    """phone-book: page with '>' until the contact's card shows, then click the asked detail."""
    match = re.search(r"Find (.+) in the contact book and click on their (\w+)", obs["goal"])
    if not match:
        raise OracleError(f"no contact in {obs['goal']!r}")
    person, detail = match.groups()
    nodes = widgets(obs)
    if any(norm(h.name) == norm(person) for h in find(nodes, "heading")):
        label = one(nodes, "generic", f"{detail.capitalize()}:")
        # the detail is a span with a click handler: the tree reads it as a link
        return click(
            next(n for n in after(nodes, label) if n.bid and n.role in ("generic", "link"))
        )
    return click(one(nodes, "link", ">"))


def terminal(obs: dict[str, Any]) -> str:
    """terminal: type "ls", read the listing, type "rm <file>" for a file with the extension.
    The terminal echoes the line being typed after the last prompt ("user$"), one text node per
    key, which the tree joins with spaces: the echo is compared without spaces."""
    nodes = widgets(obs)
    box = textboxes(nodes)[0]
    if not box.focused:
        return click(box)
    texts = [n for n in nodes if n.role == "generic" and n.bid and norm(n.name) != "█"]
    prompts = [i for i, n in enumerate(texts) if norm(n.name) == "user$"]
    typed = norm(texts[prompts[-1] + 1].name) if prompts[-1] + 1 < len(texts) else ""
    listing: list[str] = []
    for i in prompts[:-1]:
        if norm(texts[i + 1].name) == "ls":
            listing = norm(texts[i + 2].name).split()
    if not listing:
        command = "ls"
    else:
        ext = re.search(r"extension (\.\S+)", obs["goal"])
        match = [f for f in listing if (f.endswith(ext.group(1)) if ext else "." not in f)]
        command = f"rm {match[0]}"
    if typed.replace(" ", "") == command.replace(" ", ""):
        return action("keyboard_press", "Enter")
    if typed:
        return action("keyboard_press", "Backspace")
    return action("keyboard_type", command)


_EMAIL = re.compile(
    r"Find the email by (?P<sender>.+?) and (?:reply to them with the text \"(?P<reply>.*)\"\."
    r"|forward that email to (?P<to>.+?)\."
    r"|click the (?P<icon>trash|star) icon)",
    re.S,
)


#: email-inbox-forward-nl's phrasings name the sender after from/by, before "sent", or first
_NL_SENDER = (
    r"(?:from|by) ([A-Z]\w*)",
    r"^([A-Z]\w*) wants his",
    r"Get ([A-Z]\w*) email",
    r"([A-Z]\w*) sent",
)
#: the capitalized words of those phrasings that are not names
_NL_WORDS = frozenset(
    {"Find", "Locate", "Forward", "Look", "Send", "Go", "Please", "The", "Give", "I"}
    | {"Navigate", "Search", "Get"}
)


class _EmailIntent(NamedTuple):
    """The sender and one of reply (text), to (a name), icon (trash/star)."""

    sender: str
    reply: str | None
    to: str | None
    icon: str | None


def _email_intent(goal: str) -> _EmailIntent:
    """What an email-inbox goal asks, read from its words."""
    match = _EMAIL.search(goal)
    if match is not None:
        return _EmailIntent(**match.groupdict())
    for pattern in _NL_SENDER:  # a forward request in free words
        found = re.search(pattern, goal)
        if found:
            rest = goal[: found.start(1)] + goal[found.end(1) :]
            names = [w for w in re.findall(r"\b[A-Z]\w*", rest) if w not in _NL_WORDS]
            if len(names) == 1:
                return _EmailIntent(found[1], None, names[0], None)
    raise OracleError(f"not an email-inbox goal: {goal!r}")


def _icon(nodes: list[Node], hint: str) -> Node | None:
    """The first clickable icon whose ``hint`` (its id or first class) is ``hint``."""
    return next((n for n in nodes if n.props.get("hint", "").split()[:1] == [hint]), None)


def email_inbox(obs: dict[str, Any]) -> str:
    """email-inbox and its variants: open the sender's email (or use its row's icons), then
    reply, forward, trash or star it. The icons are script-bound spans without text: the tree
    keeps them as ``clickable`` with a ``hint`` (``trash``, ``star``, ``send-reply``...)."""
    intent = _email_intent(norm(obs["goal"]))
    nodes = page(obs)
    for view, text in (("send-reply", intent.reply), ("send-forward", intent.to)):
        send = _icon(nodes, view)
        if send is not None:  # the reply or forward form: its first box takes the text
            box = textboxes(nodes)[0]
            return click(send) if norm(box.value) == norm(text or "") else fill(box, text or "")
    if _icon(nodes, "close-email") is not None:  # one email open
        if intent.icon:
            icon = _icon(nodes, intent.icon)
            if icon is None:
                raise OracleError(f"no {intent.icon} icon on the open email")
            return click(icon)
        return click(one(nodes, None, "Reply" if intent.reply is not None else "Forward"))
    for row in (n for n in nodes if "clickable" in n.props and n.name):
        inner = subtree(nodes, row)
        if inner and norm(inner[0].name) == norm(intent.sender):
            icon = _icon(inner, intent.icon) if intent.icon else None
            return click(icon or row)
    raise OracleError(f"no email from {intent.sender!r} in the inbox")

"""MiniWoB's small apps: tickets and flights, a food order, a search engine, a phone book, a
terminal and the email inbox (every variant)."""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from palaestra.envs.runtimes import axtree as ax
from palaestra.envs.web.policies.reading import ordinal, quoted, submit_button, widgets
from palaestra.envs.web.policies.widgets import autocomplete, pick_date


def priced_trips(nodes: list[ax.Node]) -> list[tuple[ax.Node, int, int]]:
    """(button, price in $, duration in minutes) for each bookable trip on a results page."""
    trips = []
    for button in ax.find(nodes, "button"):
        price = re.search(r"\$(\d+)", button.name)
        durations = [
            n for n in ax.before(nodes, button) if re.fullmatch(r"\d+h \d+m", ax.norm(n.name))
        ]
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
    return ax.click(pick(tickets, key=key)[0])


def book_flight(obs: dict[str, Any]) -> str:
    """book-flight(-nodelay): origin and destination from the airport suggestions (which extend
    the city or code of the utterance), the date from the picker, Search, then book the cheapest
    or shortest flight of the results."""
    match = re.search(r"Book the (\w+) one-way flight from: (.+) to: (.+) on (\S+)\.", obs["goal"])
    if not match:
        raise ax.OracleError(f"no flight in {obs['goal']!r}")
    want, origin, destination, date = match.groups()
    nodes = widgets(obs)
    flights = priced_trips(nodes)
    if flights:
        return ax.click(min(flights, key=lambda f: f[1] if want == "cheapest" else f[2])[0])
    start, end = ax.one(nodes, "textbox", "From:"), ax.one(nodes, "textbox", "To:")
    when = ax.field_after(nodes, ax.one(nodes, "generic", "Departure Date"))
    return (
        autocomplete(nodes, start, origin, lambda text: origin in text)
        or autocomplete(nodes, end, destination, lambda text: destination in text)
        or pick_date(nodes, when, date)
        or ax.click(ax.one(nodes, "button", "Search"))
    )


def order_food(obs: dict[str, Any]) -> str:
    """order-food: "one of each item: A, B" or "N items that are vegan": adjust each dish's
    quantity with its -/+ controls (its count shows between them), then Order!."""
    nodes = widgets(obs)
    dishes = []
    for plus in ax.find(nodes, None, "+"):
        minus = [n for n in ax.before(nodes, plus) if ax.norm(n.name) == "-"][-1]
        title = [n for n in ax.before(nodes, minus) if n.role == "generic" and ax.norm(n.name)][-1]
        types = {n.name for n in nodes if title.index < n.index < minus.index and n.role == "img"}
        count = [n for n in nodes if minus.index < n.index < plus.index and n.name.isdigit()]
        dishes.append((ax.norm(title.name), types, int(count[0].name) if count else 0, minus, plus))
    goal = obs["goal"]
    by_name = re.search(r"one of each item: (.*)", goal)
    wanted: dict[str, int] = {}
    if by_name:
        wanted = {ax.norm(item): 1 for item in by_name.group(1).split(",")}
    else:
        match = re.search(r"Order (\d+) items that are (\S+)", goal)
        if not match:
            raise ax.OracleError(f"no order in {goal!r}")
        first = next(d for d in dishes if match.group(2) in d[1])
        wanted = {first[0]: int(match.group(1))}
    for name, _, have, minus, plus in dishes:
        if have != wanted.get(name, 0):
            return ax.click(plus if have < wanted.get(name, 0) else minus)
    return ax.click(submit_button(nodes, "Order!"))


def search_engine(obs: dict[str, Any]) -> str:
    """search-engine: search the quoted name, then open the result page holding the n-th result
    (three per page) and click it. The pager hides '<' on the first page and '>' on the last."""
    query, index = quoted(obs["goal"])[0], ordinal(obs["goal"])
    nodes = widgets(obs)
    box = ax.textboxes(nodes)[0]
    if ax.norm(box.value).lower() != query.lower():
        return ax.fill(box, query)
    pager = ax.find(nodes, "list")
    pages = [n for n in ax.find(ax.subtree(nodes, pager[0]), "link")] if pager else []
    if not pages:
        return ax.click(ax.one(nodes, "button", "Search"))
    names = {ax.norm(p.name) for p in pages}
    numbers = sorted(int(n) for n in names if n.isdigit())
    current = numbers[0] if "<" not in names else numbers[-1] if ">" not in names else 2
    wanted = index // 3 + 1
    if current != wanted:
        return ax.click(ax.one(pages, "link", str(wanted)))
    results = [n for n in ax.find(ax.before(nodes, pager[0]), "link")]
    return ax.click(results[index % 3])


def phone_book(obs: dict[str, Any]) -> str:
    """phone-book: page with '>' until the contact's card shows, then click the asked detail."""
    match = re.search(r"Find (.+) in the contact book and click on their (\w+)", obs["goal"])
    if not match:
        raise ax.OracleError(f"no contact in {obs['goal']!r}")
    person, detail = match.groups()
    nodes = widgets(obs)
    if any(ax.norm(h.name) == ax.norm(person) for h in ax.find(nodes, "heading")):
        label = ax.one(nodes, "generic", f"{detail.capitalize()}:")
        # the detail is a span with a click handler: the tree reads it as a link
        return ax.click(
            next(n for n in ax.after(nodes, label) if n.bid and n.role in ("generic", "link"))
        )
    return ax.click(ax.one(nodes, "link", ">"))


def terminal(obs: dict[str, Any]) -> str:
    """terminal: type "ls", read the listing, type "rm <file>" for a file with the extension.
    The terminal echoes the line being typed after the last prompt ("user$"), one text node per
    key, which the tree joins with spaces: the echo is compared without spaces."""
    nodes = widgets(obs)
    box = ax.textboxes(nodes)[0]
    if not box.focused:
        return ax.click(box)
    texts = [n for n in nodes if n.role == "generic" and n.bid and ax.norm(n.name) != "█"]
    prompts = [i for i, n in enumerate(texts) if ax.norm(n.name) == "user$"]
    typed = ax.norm(texts[prompts[-1] + 1].name) if prompts[-1] + 1 < len(texts) else ""
    listing: list[str] = []
    for i in prompts[:-1]:
        if ax.norm(texts[i + 1].name) == "ls":
            listing = ax.norm(texts[i + 2].name).split()
    if not listing:
        command = "ls"
    else:
        ext = re.search(r"extension (\.\S+)", obs["goal"])
        match = [f for f in listing if (f.endswith(ext.group(1)) if ext else "." not in f)]
        command = f"rm {match[0]}"
    if typed.replace(" ", "") == command.replace(" ", ""):
        return ax.action("keyboard_press", "Enter")
    if typed:
        return ax.action("keyboard_press", "Backspace")
    return ax.action("keyboard_type", command)


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
    raise ax.OracleError(f"not an email-inbox goal: {goal!r}")


def _icon(nodes: list[ax.Node], hint: str) -> ax.Node | None:
    """The first clickable icon whose ``hint`` (its id or first class) is ``hint``."""
    return next((n for n in nodes if n.props.get("hint", "").split()[:1] == [hint]), None)


def email_inbox(obs: dict[str, Any]) -> str:
    """email-inbox and its variants: open the sender's email (or use its row's icons), then
    reply, forward, trash or star it. The icons are script-bound spans without text: the tree
    keeps them as ``clickable`` with a ``hint`` (``trash``, ``star``, ``send-reply``...)."""
    intent = _email_intent(ax.norm(obs["goal"]))
    nodes = ax.page(obs)
    for view, text in (("send-reply", intent.reply), ("send-forward", intent.to)):
        send = _icon(nodes, view)
        if send is not None:  # the reply or forward form: its first box takes the text
            box = ax.textboxes(nodes)[0]
            return (
                ax.click(send)
                if ax.norm(box.value) == ax.norm(text or "")
                else ax.fill(box, text or "")
            )
    if _icon(nodes, "close-email") is not None:  # one email open
        if intent.icon:
            icon = _icon(nodes, intent.icon)
            if icon is None:
                raise ax.OracleError(f"no {intent.icon} icon on the open email")
            return ax.click(icon)
        return ax.click(ax.one(nodes, None, "Reply" if intent.reply is not None else "Forward"))
    for row in (n for n in nodes if "clickable" in n.props and n.name):
        inner = ax.subtree(nodes, row)
        if inner and ax.norm(inner[0].name) == ax.norm(intent.sender):
            icon = _icon(inner, intent.icon) if intent.icon else None
            return ax.click(icon or row)
    raise ax.OracleError(f"no email from {intent.sender!r} in the inbox")

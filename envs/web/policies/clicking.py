"""MiniWoB's clicking tasks: a button, link, dialog button, checkbox, radio, tab, collapsible
section, widget or menu item the utterance names (click-*)."""

from __future__ import annotations

import re
from typing import Any

from palaestra.envs.runtimes import axtree as ax
from palaestra.envs.web.policies.reading import quoted, submit_button, widgets


def click_button(obs: dict[str, Any]) -> str:
    """click-button, unicode-test: the button the utterance quotes."""
    return ax.click(ax.one(widgets(obs), "button", quoted(obs["goal"])[0]))


def click_test(obs: dict[str, Any]) -> str:
    """click-test: the only button."""
    return ax.click(ax.one(widgets(obs), "button"))


def click_named(obs: dict[str, Any]) -> str:
    """click-test-2, click-test-transfer: "Click button ONE." names the button after "button".

    The two buttons sit at random absolute places and may overlap, so a pointer click could land
    on the other one: the button is pressed with Enter instead, which clicks it all the same.
    """
    match = re.search(r"button (\S+?)\.?$", obs["goal"])
    if not match:
        raise ax.OracleError(f"no button name in {obs['goal']!r}")
    return ax.press(ax.one(widgets(obs), "button", match.group(1)), "Enter")


def click_button_sequence(obs: dict[str, Any]) -> str:
    """click-button-sequence: the first button, then the second; a pressed button keeps the focus,
    which shows the first is done. Enter presses them, as they may overlap (see click_named)."""
    first, second = re.findall(r"button (\w+)", obs["goal"])[:2]
    nodes = widgets(obs)
    done = ax.one(nodes, "button", first).focused
    return ax.press(ax.one(nodes, "button", second if done else first), "Enter")


def click_link(obs: dict[str, Any]) -> str:
    """click-link: the text span named in quotes (MiniWoB's links are spans, not anchors)."""
    return ax.click(ax.one(widgets(obs), None, quoted(obs["goal"])[0]))


def click_dialog(obs: dict[str, Any]) -> str:
    """click-dialog: the dialog's close ("x") button, named 'Close' in the tree."""
    nodes = ax.page(obs)
    return ax.click(ax.one(ax.subtree(nodes, ax.one(nodes, "dialog")), "button", "Close"))


def click_dialog_2(obs: dict[str, Any]) -> str:
    """click-dialog-2: the dialog button the utterance quotes; its "x" is the 'Close' button."""
    wanted = quoted(obs["goal"])[0]
    nodes = ax.page(obs)
    return ax.click(
        ax.one(
            ax.subtree(nodes, ax.one(nodes, "dialog")),
            "button",
            "Close" if wanted == "x" else wanted,
        )
    )


def click_checkboxes(obs: dict[str, Any]) -> str:
    """click-checkboxes(-large, -transfer): make each box match the list, then Submit."""
    match = re.search(r"Select (.*) and click Submit", obs["goal"])
    if not match:
        raise ax.OracleError(f"no selection in {obs['goal']!r}")
    wanted = set() if match.group(1) == "nothing" else set(match.group(1).split(", "))
    nodes = widgets(obs)
    for box in ax.find(nodes, "checkbox"):
        if box.checked != (ax.norm(box.name) in wanted):
            return ax.click(box)
    return ax.click(submit_button(nodes))


def click_option(obs: dict[str, Any]) -> str:
    """click-option: the radio button named in the utterance, then Submit."""
    match = re.search(r"Select (.*) and click Submit", obs["goal"])
    if not match:
        raise ax.OracleError(f"no option in {obs['goal']!r}")
    nodes = widgets(obs)
    radio = ax.one(nodes, "radio", match.group(1))
    return ax.click(submit_button(nodes)) if radio.checked else ax.click(radio)


def _tab_link(nodes: list[ax.Node], tab: ax.Node) -> ax.Node:
    """What to click for a tab: its anchor when the tree shows one (the handler sits there)."""
    inner = [n for n in ax.subtree(nodes, tab) if n.bid]
    return inner[0] if inner else tab


def click_tab(obs: dict[str, Any]) -> str:
    """click-tab: the tab named "Tab #N"."""
    match = re.search(r"Tab #\d+", obs["goal"])
    if not match:
        raise ax.OracleError(f"no tab in {obs['goal']!r}")
    nodes = widgets(obs)
    return ax.click(_tab_link(nodes, ax.one(nodes, "tab", match.group(0))))


def _next_section(sections: list[ax.Node]) -> ax.Node:
    """The section after the open one (the first if none is open): a search of every section."""
    open_ = [i for i, s in enumerate(sections) if s.expanded]
    return sections[(open_[0] + 1) % len(sections) if open_ else 0]


def click_tab_2(obs: dict[str, Any]) -> str:
    """click-tab-2(-easy/-medium/-hard): click the link if the open tab shows it, else open the
    next tab (only the open tab's panel is in the tree)."""
    wanted = quoted(obs["goal"])[0]
    nodes = widgets(obs)
    for panel in ax.find(nodes, "tabpanel"):
        links = ax.find(ax.subtree(nodes, panel), None, wanted)
        if links:
            return ax.click(links[0])
    tabs = ax.find(nodes, "tab")
    return ax.click(_tab_link(nodes, _next_section(tabs)))


def click_collapsible(obs: dict[str, Any]) -> str:
    """click-collapsible: expand the section (its header is a tab), then Submit."""
    nodes = widgets(obs)
    section = next(t for t in ax.find(nodes, "tab") if ax.norm(t.name).startswith("Section"))
    return ax.click(ax.one(nodes, "button", "Submit")) if section.expanded else ax.click(section)


def click_collapsible_2(obs: dict[str, Any]) -> str:
    """click-collapsible-2: click the link if an open section shows it, else open the next."""
    wanted = quoted(obs["goal"])[0]
    nodes = widgets(obs)
    links = [n for n in ax.find(nodes, None, wanted) if n.role not in ("tab", "tablist")]
    if links:
        return ax.click(links[0])
    return ax.click(_next_section(ax.find(nodes, "tab")))


def click_widget(obs: dict[str, Any]) -> str:
    """click-widget: a widget of the quoted kind. Text inputs and textareas are both textboxes;
    a textarea shows its initial text as a child line, an input does not."""
    kind = quoted(obs["goal"])[0]
    nodes = widgets(obs)
    if kind in ("radio", "checkbox", "button"):
        return ax.click(ax.find(nodes, kind)[0])
    for box in ax.find(nodes, "textbox"):
        is_area = any(n.role == "StaticText" for n in ax.subtree(nodes, box))
        if is_area == (kind == "textarea"):
            return ax.click(box)
    raise ax.OracleError(f"no {kind} widget")


def click_menu(obs: dict[str, Any]) -> str:
    """click-menu: hover each item of the path "A>B>C" until its submenu shows, click the leaf.
    Submenus open after a short delay; hovering the same item again just waits for it."""
    path = [p.strip() for p in obs["goal"].removeprefix("Select ").split(">")]
    nodes = widgets(obs)
    for i, name in enumerate(path):
        if not ax.find(nodes, "menuitem", name):
            return ax.action("hover", ax.one(nodes, "menuitem", path[i - 1]).bid)
    return ax.click(ax.one(nodes, "menuitem", path[-1]))

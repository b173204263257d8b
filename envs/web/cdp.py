"""BrowserGym's observation objects, taken from Chrome itself through the DevTools protocol.

AgentLab/BrowserGym agents read ``axtree_object`` (``Accessibility.getFullAXTree``),
``dom_object`` (``DOMSnapshot.captureSnapshot``) and ``extra_element_properties`` (per element
id: visibility, bounding box, clickable, set-of-marks) and turn them into prompts with
``browsergym.utils.obs`` (``flatten_axtree_to_str``, ``flatten_dom_to_str``, ``prune_html``).
This module builds the same three objects for a page whose elements observe.js has already
marked with ``data-bid``, so the ids an agent reads here are the ids the action set accepts.

Unlike BrowserGym, the page is not written to for the occasion (BrowserGym smuggles ids through
``aria-roledescription`` into the AX tree and removes them after): the AX nodes name their DOM
node (``backendDOMNodeId``) and the snapshot names every node's ``backendNodeId``, so ids are
joined outside the page. The snapshot's ``data-bid`` attribute is renamed ``bid``, BrowserGym's
name for it, so its utilities find the ids. Visibility is the share of an element's box inside
the viewport (BrowserGym measures it with an IntersectionObserver); ``clickable`` is Chrome's
own ``isClickable`` (a click listener or a native control). Only the main frame's AX tree is
taken (MiniWoB and the synthesized apps have no iframes).
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

DATA_BID = "data-bid"
BID = "bid"  # BrowserGym's attribute for element ids (browsergym.core.constants.BID_ATTR)
#: tags BrowserGym-style set-of-marks overlays draw a box for, besides clickable elements
_MARKED_TAGS = {"A", "BUTTON", "INPUT", "SELECT", "TEXTAREA", "OPTION", "SUMMARY"}

_sessions: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


async def _session(page: Any) -> Any:
    """One CDP session per page, opened at its first use (opening costs a round trip)."""
    cdp = _sessions.get(page)
    if cdp is None:
        cdp = await page.context.new_cdp_session(page)
        _sessions[page] = cdp
    return cdp


async def capture(page: Any, viewport: tuple[int, int]) -> dict[str, Any]:
    """``axtree_object``, ``dom_object`` and ``extra_element_properties`` of ``page``."""
    cdp = await _session(page)
    try:
        dom, axtree = await asyncio.gather(
            cdp.send(
                "DOMSnapshot.captureSnapshot",
                {"computedStyles": [], "includeDOMRects": True, "includePaintOrder": True},
            ),
            cdp.send("Accessibility.getFullAXTree", {}),
        )
    except Exception:
        _sessions.pop(page, None)  # a detached session is not reused: the next call opens one
        raise
    bids = rename_bids(dom)
    for node in axtree.get("nodes", []):
        bid = bids.get(node.get("backendDOMNodeId"))
        if bid is not None:
            node["browsergym_id"] = bid
    return {
        "axtree_object": axtree,
        "dom_object": dom,
        "extra_element_properties": extra_properties(dom, viewport),
    }


def rename_bids(dom: dict[str, Any]) -> dict[int, str]:
    """Rename the snapshot's ``data-bid`` attribute to ``bid``; return backendNodeId -> bid."""
    strings: list[str] = dom["strings"]
    try:
        src = strings.index(DATA_BID)
    except ValueError:
        return {}
    try:
        dst = strings.index(BID)
    except ValueError:
        strings.append(BID)
        dst = len(strings) - 1
    bids: dict[int, str] = {}
    for document in dom["documents"]:
        nodes = document["nodes"]
        for backend, attrs in zip(nodes["backendNodeId"], nodes["attributes"], strict=False):
            for i in range(0, len(attrs) - 1, 2):
                if attrs[i] == src:
                    attrs[i] = dst
                    bids[backend] = strings[attrs[i + 1]]
    return bids


def extra_properties(dom: dict[str, Any], viewport: tuple[int, int]) -> dict[str, Any]:
    """BrowserGym's ``extra_element_properties``: per bid, visibility (0..1 share of its box in
    the viewport), bbox ``[x, y, w, h]`` in viewport pixels, clickable and set_of_marks."""
    strings: list[str] = dom["strings"]
    bid_id = strings.index(BID) if BID in strings else -1
    width, height = viewport
    out: dict[str, Any] = {}
    # frames other than the main one are placed at 0,0 (no nested offsets; see the docstring)
    for document in dom["documents"]:
        nodes, layout = document["nodes"], document["layout"]
        dx, dy = -document.get("scrollOffsetX", 0), -document.get("scrollOffsetY", 0)
        clickable = set(nodes.get("isClickable", {}).get("index", []))
        boxes = {
            node: bounds
            for node, bounds, rects in zip(
                layout["nodeIndex"], layout["bounds"], layout["clientRects"], strict=False
            )
            if rects
        }
        for index, attrs in enumerate(nodes["attributes"]):
            bid = next((strings[attrs[i + 1]] for i in range(0, len(attrs) - 1, 2)
                        if attrs[i] == bid_id), None)  # fmt: skip
            if bid is None:
                continue
            box = boxes.get(index)
            bbox = [box[0] + dx, box[1] + dy, box[2], box[3]] if box else None
            seen = _visible_share(bbox, width, height)
            tag = strings[nodes["nodeName"][index]].upper()
            out[bid] = {
                "visibility": seen,
                "bbox": bbox,
                "clickable": index in clickable,
                "set_of_marks": seen > 0 and (index in clickable or tag in _MARKED_TAGS),
            }
    return out


def _visible_share(bbox: list[float] | None, width: int, height: int) -> float:
    if not bbox:
        return 0.0
    x, y, w, h = bbox
    if w <= 0 or h <= 0:
        return 0.0
    seen_w = max(0.0, min(x + w, width) - max(x, 0.0))
    seen_h = max(0.0, min(y + h, height) - max(y, 0.0))
    return round(seen_w * seen_h / (w * h), 3)


async def focused_bid(page: Any) -> str:
    """The focused element's id ("" when the focus is on the page itself)."""
    script = (
        "() => { let e = document.activeElement; return (e && e.dataset && e.dataset.bid) || ''; }"
    )
    return str(await page.evaluate(script))

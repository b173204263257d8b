"""The dashboard in real headless Chromium: the pages load without console errors, a live
session's thumbnail changes while it steps (a MiniWoB session driven through the client), and
the trajectory viewer moves through recorded episodes of three worlds: a MiniWoB page (the
instruction, the clicked element marked on the screenshot and highlighted in the tree), a tau2
conversation (chat bubbles with the tool calls and their results) and a CAD part (its renders
and the target's), each with its verdict.

``PALAESTRA_DOC_SHOTS=1`` also saves the pages as docs/img/dashboard.png, viewer.png,
viewer-tau2.png and viewer-cad.png.
"""

import os
from pathlib import Path

import pytest

from palaestra.client import Client
from palaestra.envs.runtimes.browser import find_chromium
from palaestra.envs.web.policies import click_test

pytestmark = [pytest.mark.browser]
DOCS = Path(__file__).resolve().parents[2] / "docs" / "img"


@pytest.fixture(scope="module")
def page():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=find_chromium(), headless=True)
        tab = browser.new_page(viewport={"width": 1200, "height": 900})
        tab.errors = []
        tab.on("console", lambda m: m.type == "error" and tab.errors.append(m.text))
        tab.on("pageerror", lambda e: tab.errors.append(str(e)))
        yield tab
        browser.close()


def _shot(page, name):
    if os.environ.get("PALAESTRA_DOC_SHOTS"):
        DOCS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(DOCS / name), full_page=False)


def test_thumbnail_follows_a_stepping_session_and_the_viewer_steps_back(gateway, page):
    client = Client(gateway)
    parts = ["screenshot", "axtree", "goal", "extra_element_properties"]
    sid = client.create_session(task="miniwob/click-test", options={"observe": parts})["session_id"]
    try:
        client.reset(sid, seed=3)
        client.step(sid, "noop(0)")
        page.goto(gateway + "/")
        thumb = page.locator(f"#s-{sid} td.thumb img")
        first = thumb.get_attribute("src")
        assert first and first.endswith("_s0001_screenshot.png")

        last = client.step(sid, "noop(0)")  # the page hears of it over Server-Sent Events
        page.wait_for_function(
            "([id, old]) => { const i = document.querySelector(`#s-${id} td.thumb img`);"
            " return i && i.getAttribute('src') !== old && i.complete && i.naturalWidth > 0; }",
            arg=[sid, first],
            timeout=10_000,
        )
        assert page.locator(f"#s-{sid} td.steps").inner_text().startswith("2")
        end = client.step(sid, click_test(last["observation"]))
        assert end["terminated"] and end["info"]["verifier"]["success"]
        page.wait_for_selector(f"#s-{sid} td.steps >> text=3")
        _shot(page, "dashboard.png")

        page.locator(f"#s-{sid} a", has_text="view").click()
        page.wait_for_selector("#f-images img")
        assert page.locator("#where").inner_text() == "1 / 4"
        assert page.locator("#f-action").inner_text() == "(reset)"
        # the episode's own instruction, the one the agent was shown
        assert page.locator("#instruction").inner_text() == last["observation"]["goal"]
        image = page.locator("#f-images img").first.get_attribute("src")
        page.click("#next")
        assert page.locator("#where").inner_text() == "2 / 4"
        assert page.locator("#f-action").inner_text() == "noop(0)"
        assert page.locator("#f-images img").first.get_attribute("src") != image
        page.click("#next")  # the observation the click was made on: its target is marked
        clicked = click_test(last["observation"])
        assert page.locator("#f-target").inner_text() == clicked
        bid = clicked.split("(")[1].strip("'\")")
        assert f"[{bid}]" in page.locator("#f-tree .hit").inner_text()
        assert page.locator("#f-images .mark").count() == 1
        page.keyboard.press("End")  # not bound: nothing moves
        page.keyboard.press("ArrowRight")
        assert page.locator("#where").inner_text() == "4 / 4"
        assert '"success": true' in page.locator("#f-verifier").inner_text()
        assert "checks" not in page.locator("#f-verifier").inner_text()
        page.keyboard.press("ArrowLeft")
        _shot(page, "viewer.png")
        assert not page.errors, page.errors
    finally:
        client.close_session(sid)


def _evaluated(gateway, tmp_path, suite):
    """One oracle episode of ``suite`` played by the evaluation runner: its viewer's path."""
    from concurrent.futures import ThreadPoolExecutor

    from palaestra.evals import EvalConfig, read_results, run_eval
    from palaestra.evals.report import viewer_path

    config = EvalConfig(suite=suite, limit=1, agent="oracle", url=gateway, out=tmp_path)
    with ThreadPoolExecutor(1) as pool:  # Playwright's sync API holds this thread's loop
        pool.submit(run_eval, config).result()
    (r,) = read_results(tmp_path)
    assert r.success and r.run
    return viewer_path(r), r


def test_a_tau2_conversation_reads_as_chat(gateway, page, tmp_path):
    path, r = _evaluated(gateway, tmp_path, "tau2-retail")
    page.goto(gateway + path)
    page.wait_for_selector("#chat .bubble")
    assert "customer" in page.locator("#instruction").inner_text().lower()
    page.locator("#pos").fill(str(r.steps))  # the last frame: the whole conversation
    page.locator("#pos").dispatch_event("input")
    bubbles = page.locator("#chat .bubble")
    roles = {b.get_attribute("class").split()[1] for b in bubbles.all()}
    assert {"user", "assistant", "tool_call", "tool"} <= roles, roles
    first_call = page.locator("#chat .bubble.tool_call").first.inner_text()
    assert first_call.startswith("tool call ") and "{" in first_call
    assert page.locator("#chat .bubble.tool").first.inner_text().startswith("tool result")
    assert '"success": true' in page.locator("#f-verifier").inner_text()
    # the report's link leads here, and the page names the evaluation's results
    assert str(tmp_path) in page.locator("#eval-link").inner_text()
    page.locator("#pos").fill("3")
    page.locator("#pos").dispatch_event("input")
    page.locator("#chat").scroll_into_view_if_needed()
    _shot(page, "viewer-tau2.png")
    assert not page.errors, page.errors


def test_a_cad_episode_shows_its_renders(gateway, page, tmp_path):
    path, r = _evaluated(gateway, tmp_path, "cad-parts")
    page.goto(gateway + path + "?episode=1")
    page.wait_for_selector("#f-images img")
    captions = page.locator("#f-images figcaption").all_inner_texts()
    assert {"views", "target_views"} <= set(captions), captions
    assert "mm" in page.locator("#instruction").inner_text()  # the part's specification
    page.keyboard.press("ArrowRight")
    assert page.locator("#f-action").inner_text() != "(reset)"
    page.locator("#pos").fill(str(r.steps))
    page.locator("#pos").dispatch_event("input")
    assert '"success": true' in page.locator("#f-verifier").inner_text()
    page.wait_for_function(
        "() => [...document.querySelectorAll('#f-images img')].every(i => i.complete"
        " && i.naturalWidth > 0)"
    )
    page.locator("#f-images").scroll_into_view_if_needed()
    _shot(page, "viewer-cad.png")
    assert not page.errors, page.errors

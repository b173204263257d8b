"""The dashboard in real headless Chromium: the pages load without console errors, a live
session's thumbnail changes while it steps (a MiniWoB session driven through the client), and
the trajectory viewer moves through the recorded episode.

``PALAESTRA_DOC_SHOTS=1`` also saves both pages as docs/img/dashboard.png and viewer.png.
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
    sid = client.create_session(
        task="miniwob/click-test", options={"observe": ["screenshot", "axtree", "goal"]}
    )["session_id"]
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
        page.wait_for_selector("#f-image:not([hidden])")
        assert page.locator("#where").inner_text() == "1 / 4"
        assert page.locator("#f-action").inner_text() == "(reset)"
        image = page.locator("#f-image").get_attribute("src")
        page.click("#next")
        assert page.locator("#where").inner_text() == "2 / 4"
        assert page.locator("#f-action").inner_text() == "noop(0)"
        assert page.locator("#f-image").get_attribute("src") != image
        page.keyboard.press("End")  # not bound: nothing moves
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        assert page.locator("#where").inner_text() == "4 / 4"
        assert '"success": true' in page.locator("#f-verifier").inner_text()
        assert "checks" not in page.locator("#f-verifier").inner_text()
        _shot(page, "viewer.png")
        assert not page.errors, page.errors
    finally:
        client.close_session(sid)

"""The element list read while a page is still parsing: a navigation that commits after the
load the phone waited for left ``document.body`` null, and the read failed with "Cannot read
properties of null (reading 'querySelectorAll')" (a phone oracle's run crashed that way under
load). The read now waits for the parser to reach the body."""

import asyncio
import http.server
import threading
import time

from palaestra.envs.mobile.embedded import ELEMENTS_JS
from palaestra.envs.runtimes.browser import runtime


class SlowPage(http.server.BaseHTTPRequestHandler):
    """The head at once, the body a second later: a page caught mid-parse."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(b"<!doctype html><html><head><title>slow</title></head>" + b" " * 4096)
        self.wfile.flush()
        time.sleep(1.0)
        self.wfile.write(b"<body><button id='pay'>Pay now</button></body></html>")

    def log_message(self, *args: object) -> None:
        pass


def test_elements_are_read_once_the_body_arrives():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), SlowPage)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    rt = runtime()

    async def read() -> list[dict]:
        browser = await rt.browser()
        context = await browser.new_context()
        try:
            page = await context.new_page()
            await page.goto(f"http://127.0.0.1:{server.server_port}/", wait_until="commit")
            assert await page.evaluate("document.body") is None  # the race, reproduced
            return await page.evaluate(ELEMENTS_JS, [0, 1])
        finally:
            await context.close()

    try:
        items = rt.call(lambda: asyncio.wait_for(read(), 20), 30)
    finally:
        server.shutdown()
        server.server_close()
    assert [(i["text"], i["resource_id"]) for i in items] == [("Pay now", "pay")]

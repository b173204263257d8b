"""Synthesized apps: one session can never reach another session's app on the same worker.

All sessions of a worker are served by one app host on one loopback origin; a session's URL
(``/s/<token>/``) shows in observations and recordings, so it is no secret. The attacks here
hold another session's URL and try to use it: the agent's navigation (``goto``), a script in
the agent's page (``fetch`` with a POST that cancels the booking), and a plain HTTP client
outside the browser. Each must be refused, leave the victim's database as it was, and leave
the victim's verifier unsatisfied; the victim's own page keeps working (it then does the same
write and scores 1.0, so the verifier is one that the write would have satisfied).

Covered on the web family and on the mobile family's embedded phone (the same apps, in a
touch-emulating context; its launcher too).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from palaestra.synth_apps.app import host
from palaestra.synth_apps.generate import TaskGenerator
from palaestra.synth_apps.spec import load_spec
from palaestra.tasks import Task

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

#: a script in the page submitting a form as the page's own code could; returns the status
POST_JS = """async ([url, body]) => {
    const r = await fetch(url, {method: "POST", body: new URLSearchParams(body)});
    return r.status;
}"""
GET_JS = "async (url) => (await fetch(url)).status"


@pytest.fixture(scope="module")
def cancel_task() -> tuple[Task, int]:
    """A generated "Cancel booking BK-..." task and the id of the booking it cancels."""
    made = TaskGenerator(load_spec("train"), variant=0).generate(30, seed=5)
    task = next(g.task for g in made if g.task.instruction.startswith("Cancel booking"))
    check = next(c for c in task.verifier["checks"] if "status" in c.get("query", ""))
    return task, int(check["params"][0])


def _status(db: str, rid: int) -> str:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT status FROM booking WHERE id = ?", (rid,)).fetchone()[0]


def _cancel(url: str, rid: int) -> tuple[str, dict[str, str]]:
    """The request that confirms the cancellation (the operation has no input steps)."""
    return f"{url}do/cancel/{rid}", {"_step": "0"}


def _pair(make: Callable[[], Any]) -> Iterator[tuple[Any, Any]]:
    """Two sessions of one env class on this worker (attacker, victim), closed after the test."""
    a = make()
    try:
        b = make()
        try:
            yield a, b
        finally:
            b.close()
    finally:
        a.close()


def _outside_the_browser_is_refused(url: str, launcher: str | None, rid: int) -> None:
    target, body = _cancel(url, rid)
    assert httpx.post(target, data=body).status_code == 403
    assert httpx.get(url).status_code == 403
    assert httpx.get(f"{url}view/booking/{rid}").status_code == 403
    if launcher:
        assert httpx.get(launcher).status_code == 403
    # a guessed credential does not help either
    jar = {name: "guess" for name in ("palaestra_app", "session", "token")}
    assert httpx.post(target, data=body, cookies=jar).status_code == 403


# ----- web -----------------------------------------------------------------------------------
@pytest.fixture
def web_pair(cancel_task: tuple[Task, int]) -> Iterator[tuple[Any, Any]]:
    from palaestra.envs.web.env import WebEnv

    yield from _pair(lambda: WebEnv(task=cancel_task[0], observe=("axtree", "url", "goal")))


def test_web_session_cannot_write_another_sessions_app(
    web_pair: tuple[Any, Any], cancel_task: tuple[Task, int]
) -> None:
    a, b = web_pair
    _, rid = cancel_task
    obs_a, _ = a.reset(seed=0)
    obs_b, _ = b.reset(seed=0)
    url_a, url_b = obs_a["url"], obs_b["url"]
    assert url_a != url_b and url_b.endswith("/")
    db_b = b.state_probe().read()["app_db"]
    assert _status(db_b, rid) == "confirmed"

    # the agent's own navigation: B's booking page is refused, nothing of it is shown
    obs, *_ = a.step(f'goto("{url_b}view/booking/{rid}")')
    assert "Cancel booking" not in obs["axtree"]
    assert "BK-" not in obs["axtree"]
    # a script in A's page posts the cancellation to B's app
    target, body = _cancel(url_b, rid)
    page_a = a._b.page
    assert a._run(page_a.evaluate(POST_JS, [target, body])) == 403
    assert a._run(page_a.evaluate(GET_JS, url_b)) == 403
    _outside_the_browser_is_refused(url_b, None, rid)

    assert _status(db_b, rid) == "confirmed"
    assert not b.verify().success

    # A's own app still answers A's page; B's own page may do the write and then scores 1.0
    assert a._run(page_a.evaluate(GET_JS, url_a)) == 200
    obs, *_ = a.step(f'goto("{url_a}view/booking/{rid}")')
    assert "Cancel booking" in obs["axtree"]
    assert b._run(b._b.page.evaluate(POST_JS, [target, body])) == 200
    assert _status(db_b, rid) == "cancelled"
    assert b.verify().success


def test_web_credential_is_out_of_reach_of_the_page_and_the_agent(
    web_pair: tuple[Any, Any], cancel_task: tuple[Task, int]
) -> None:
    a, b = web_pair
    _, rid = cancel_task
    obs, _ = a.reset(seed=0)
    obs_b, _ = b.reset(seed=0)
    key = a._drivers["synth"].session.key
    assert key and key not in obs["url"] and key not in obs["axtree"]
    assert key not in str(a.state_probe().read())
    page_a = a._b.page
    assert key not in a._run(page_a.evaluate("document.cookie"))  # HttpOnly: scripts cannot read

    # even a leaked key of B cannot be planted by A's page: its cookie goes along with A's own
    # HttpOnly one, which a script cannot overwrite, and the app wants every value to match
    leaked, url_b = b._drivers["synth"].session.key, obs_b["url"]
    path_b = url_b.split("://", 1)[1].split("/", 1)[1]
    a._run(page_a.evaluate(f"document.cookie = 'palaestra_app={leaked}; path=/{path_b}'"))
    a._run(page_a.evaluate(f"document.cookie = 'palaestra_app={leaked}; path=/'"))
    target, body = _cancel(url_b, rid)
    assert a._run(page_a.evaluate(POST_JS, [target, body])) == 403
    assert _status(b.state_probe().read()["app_db"], rid) == "confirmed"


# ----- mobile (the embedded phone) -----------------------------------------------------------
@pytest.fixture
def phone_pair(cancel_task: tuple[Task, int]) -> Iterator[tuple[Any, Any]]:
    from palaestra.envs.mobile.env import MobileEnv

    yield from _pair(lambda: MobileEnv(task=cancel_task[0]))


def test_phone_session_cannot_write_another_sessions_app(
    phone_pair: tuple[Any, Any], cancel_task: tuple[Task, int]
) -> None:
    a, b = phone_pair
    _, rid = cancel_task
    a.reset(seed=0)
    b.reset(seed=0)
    phone_a, phone_b = a.phone, b.phone
    url_a, url_b = host().url(phone_a._main), host().url(phone_b._main)
    db_b = phone_b.state()["app_db"]
    assert url_a != url_b and _status(db_b, rid) == "confirmed"

    page_a = phone_a._page
    # A's page opens B's app and B's home screen: both refused
    response = phone_a._call(page_a.goto(f"{url_b}view/booking/{rid}"))
    assert response.status == 403
    response = phone_a._call(page_a.goto(phone_b._launcher))
    assert response.status == 403
    target, body = _cancel(url_b, rid)
    assert phone_a._call(page_a.evaluate(POST_JS, [target, body])) == 403
    _outside_the_browser_is_refused(url_b, phone_b._launcher, rid)

    assert _status(db_b, rid) == "confirmed"
    assert not b.verify().success

    # each phone's own apps keep working
    phone_a.home()
    assert phone_a.foreground() == "launcher"
    assert phone_a._call(page_a.evaluate(GET_JS, url_a)) == 200
    assert phone_b._call(phone_b._page.evaluate(POST_JS, [target, body])) == 200
    assert _status(db_b, rid) == "cancelled"
    assert b.verify().success

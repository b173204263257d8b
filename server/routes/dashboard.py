"""The dashboard: a caller's live sessions, pools and jobs, the gateway's workers and rates, and
a trajectory viewer, as server-rendered HTML kept current by Server-Sent Events.

Same key rules as the API: a key sees only its own sessions, pools, jobs and recordings; workers
and rates are health details (``public_monitoring``). A browser signs in once by posting its key
to ``/dashboard/login``, which answers a cookie holding the owner and an expiry signed with a
secret of this gateway process (HttpOnly, SameSite=Strict, and Secure when served over TLS,
directly or behind a ``trusted_proxies`` proxy): ``EventSource`` and ``<img>`` cannot
send an ``Authorization`` header, but they send the cookie. The key itself is never stored in the
browser, and the cookie is honoured by dashboard routes only (all GETs, so a forged cross-site
request changes nothing); the API keeps taking keys in headers.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import secrets
import time
import weakref
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

import orjson
from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from starlette.concurrency import run_in_threadpool

import palaestra
from palaestra import registry, tasks
from palaestra.errors import NotFound, PalaestraError, Unauthorized
from palaestra.server import live, transcript
from palaestra.server.metrics import Metrics
from palaestra.server.routes import runs
from palaestra.server.state import Gateway, State, key_from

router = APIRouter()
COOKIE = "palaestra_dashboard"
COOKIE_TTL_S = 12 * 3600
#: runs and episodes listed on the front page (the API pages through the rest)
_RECENT = 10
#: jobs shown (the latest, running or not)
_JOBS = 6
#: an event stream ends after this long and the browser reconnects at once: uvicorn waits for
#: open responses before it stops, so a dashboard left open delays a shutdown by at most this
STREAM_S = 10.0


# ----- who is looking -----------------------------------------------------------------------
def _secret(request: Request) -> bytes:
    state = request.app.state
    if not hasattr(state, "dashboard_secret"):
        state.dashboard_secret = secrets.token_bytes(32)
    return bytes(state.dashboard_secret)


def sign(request: Request, owner: str, ttl_s: float = COOKIE_TTL_S) -> str:
    body = base64.urlsafe_b64encode(orjson.dumps([owner, int(time.time() + ttl_s)])).decode()
    mac = hmac.new(_secret(request), body.encode(), hashlib.sha256).hexdigest()
    return f"{body}.{mac}"


def _verify(request: Request, token: str | None) -> str | None:
    if not token or "." not in token:
        return None
    body, mac = token.rsplit(".", 1)
    good = hmac.new(_secret(request), body.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(mac, good):
        return None
    try:
        owner, expires = orjson.loads(base64.urlsafe_b64decode(body))
    except (ValueError, orjson.JSONDecodeError):
        return None
    return str(owner) if expires > time.time() else None


def viewer_of(request: Request, gw: Gateway) -> str | None:
    """The owner behind a key header, else the signed cookie; None: not signed in."""
    key = key_from(request.headers)
    if key is not None or not gw.keys:
        try:
            return gw.authenticate(key)
        except Unauthorized:
            return None
    return _verify(request, request.cookies.get(COOKIE))


def _required(request: Request, gw: Gateway) -> str:
    who = viewer_of(request, gw)
    if who is None:
        raise Unauthorized("sign in at / with an API key (the dashboard keeps a signed cookie)")
    return who


def _may_monitor(request: Request, gw: Gateway, who: str | None) -> bool:
    return who is not None or gw.may_monitor(
        key_from(request.headers) or request.query_params.get("api_key")
    )


class CrossSite(PalaestraError, status=403, title="Forbidden"): ...


def _same_origin(request: Request, required: bool) -> bool:
    """Whether a form was posted from the dashboard's own page: its ``Origin`` (or, absent
    that, its ``Referer``) names this host. ``required``: a request naming neither is refused
    too (a browser names one on every cross-site POST, a script need not)."""
    origin = request.headers.get("origin") or request.headers.get("referer")
    if not origin:
        return not required
    return urlsplit(origin).netloc == request.headers.get("host")


def _tls(request: Request, gw: Gateway) -> bool:
    """Whether the browser reached the dashboard over TLS: directly, or through a proxy in
    ``trusted_proxies`` that says so (``X-Forwarded-Proto: https``); anyone else's header is
    ignored."""
    if request.url.scheme == "https":
        return True
    peer = request.client.host if request.client else None
    forwarded = request.headers.get("x-forwarded-proto", "").split(",")[0].strip().lower()
    return forwarded == "https" and gw.settings.trusted_proxy(peer)


@router.post("/dashboard/login")
async def login(request: Request, gw: State, api_key: str = Form(...)) -> Response:
    """Trade an API key for the dashboard's signed cookie (a 401 for an unknown key). A form
    posted from another site's page is refused: it would sign the browser in as someone else.
    The cookie is ``Secure`` when the dashboard is served over TLS."""
    if not _same_origin(request, required=False):
        raise Unauthorized("sign in from the dashboard's own page")
    who = gw.authenticate(api_key)
    out = RedirectResponse("/", status_code=303)
    out.set_cookie(
        COOKIE,
        sign(request, who),
        max_age=COOKIE_TTL_S,
        httponly=True,
        samesite="strict",
        secure=_tls(request, gw),
    )
    return out


@router.post("/dashboard/logout")
async def logout(request: Request, gw: State) -> Response:
    """Sign out, from the dashboard's own page only: another site must not end a session."""
    if not _same_origin(request, required=True):
        raise CrossSite("sign out from the dashboard's own page")
    out = RedirectResponse("/", status_code=303)
    out.delete_cookie(COOKIE, httponly=True, samesite="strict", secure=_tls(request, gw))
    return out


# ----- what is shown ------------------------------------------------------------------------
class View:
    """One viewer's dashboard state: the session rows seen so far and the rate's last tick."""

    def __init__(self, gw: Gateway, who: str | None, monitor: bool, page: int = 0) -> None:
        self.gw, self.who, self.monitor, self.page = gw, who, monitor, max(0, page)
        self.sessions = live.LiveSessions()
        self.rates = _rates(gw)
        self._jobs: tuple[float, list[dict[str, Any]]] = (-1e9, [])
        self.macros: Any = gw.templates.get_template("_live.html").module

    def session_rows(self) -> tuple[dict[str, dict[str, Any]], int]:
        """This page's rows, and how many live sessions the viewer has in all."""
        if self.who is None:
            return {}, 0
        owned = self.gw.sessions.owned(self.who)
        return self.sessions.rows(owned, self.page), len(owned)

    def stats(self) -> dict[str, Any]:
        gw, who = self.gw, self.who
        out: dict[str, Any] = {"monitor": self.monitor, "signed_in": who is not None}
        if self.monitor:
            out["workers"] = [w.describe() for w in gw.backend.workers]
            out["live"] = len(gw.sessions.sessions)
            out["rates"] = self.rates.tick(gw.metrics.step_seconds)
        if who is not None:
            out["pools"] = live.pool_rows(gw.pools, who)
            out["jobs"] = self.jobs()
        return out

    def jobs(self) -> list[dict[str, Any]]:
        """The latest jobs, from the job store (SQLite) at most every ``live.REREAD_S``."""
        now = time.monotonic()
        if now - self._jobs[0] >= live.REREAD_S and self.who is not None:
            gw, who = self.gw, self.who
            jobs = live.job_rows(gw.eval_jobs, "eval", who) + live.job_rows(
                gw.synth_jobs, "synth", who
            )
            self._jobs = (now, sorted(jobs, key=lambda j: -j["created"])[:_JOBS])
        return self._jobs[1]

    def stats_html(self, stats: dict[str, Any]) -> dict[str, str]:
        return {"rates": str(self.macros.rates(stats)), "panels": str(self.macros.stats(stats))}


def _rates(gw: Gateway) -> live.Rates:
    """The gateway's one :class:`live.Rates` (tests run several gateways in one process)."""
    if gw.metrics not in _RATES:
        _RATES[gw.metrics] = live.Rates()
    return _RATES[gw.metrics]


_RATES: weakref.WeakKeyDictionary[Metrics, live.Rates] = weakref.WeakKeyDictionary()


def _recent(gw: Gateway, who: str | None) -> list[dict[str, Any]]:
    """The caller's latest runs with their latest episodes, for the viewer's links."""
    if who is None:
        return []
    cat = gw.sessions.episodes
    out = []
    for run in cat.runs(who, limit=_RECENT)["items"]:
        eps = cat.episodes(who, run["run_id"], limit=_RECENT)["items"]
        out.append({**run, "recent": eps})
    return out


@router.get("/", response_class=HTMLResponse)
async def dashboard(request: Request, gw: State, page: int = 0) -> HTMLResponse:
    envs, suites = await run_in_threadpool(lambda: (registry.specs(), tasks.suite_names()))
    who = viewer_of(request, gw)
    view = View(gw, who, _may_monitor(request, gw, who), page)
    rows, total = view.session_rows()
    stats = view.stats()
    html = gw.templates.get_template("dashboard.html").render(
        version=palaestra.__version__,
        backend=gw.backend.name,
        envs=list(envs.values()),
        suites=suites,
        sessions=len(gw.sessions.sessions) if view.monitor else "?",
        auth=bool(gw.keys),
        who=who,
        rows=[live.row_html(r) for r in rows.values()],
        total=total,
        page=view.page,
        pages=-(-total // live.PAGE),
        per_page=live.PAGE,
        stats=stats,
        runs=await run_in_threadpool(_recent, gw, who),
    )
    return HTMLResponse(html)


def _sse(event: str, data: Any) -> bytes:
    return b"event: " + event.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"


@router.get("/dashboard/events")
async def events(
    request: Request, gw: State, every: float = 1.0, page: int = 0
) -> StreamingResponse:
    """Server-Sent Events: ``sessions`` (the rows that changed, as HTML, and the ids gone) and
    ``stats`` (the pools, jobs, workers and rates panel, when it changed), every ``every`` s.
    Only the rows of the page shown (``page``, :data:`live.PAGE` a page) are kept current: a
    tick's cost is bounded however many sessions the key holds."""
    who = _required(request, gw)
    every = min(10.0, max(0.2, every))
    view = View(gw, who, _may_monitor(request, gw, who), page)

    async def stream() -> AsyncIterator[bytes]:
        shown: dict[str, str] = {}
        last_stats: dict[str, str] = {}
        last_total = -1
        yield b"retry: 250\n\n"
        ends = time.monotonic() + STREAM_S
        while time.monotonic() < ends and not await request.is_disconnected():
            rows, total = view.session_rows()
            changed = {}
            for sid, row in rows.items():
                html = str(live.row_html(row))
                if shown.get(sid) != html:
                    changed[sid] = shown[sid] = html
            gone = [sid for sid in shown if sid not in rows]
            for sid in gone:
                del shown[sid]
            if changed or gone or total != last_total:
                last_total = total
                body = {"rows": changed, "gone": gone, "count": total, "per_page": live.PAGE}
                yield _sse("sessions", body)
            stats = view.stats_html(view.stats())
            if stats != last_stats:
                last_stats = stats
                yield _sse("stats", stats)
            await asyncio.sleep(every)

    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)


# ----- the trajectory viewer ----------------------------------------------------------------
#: episodes of the run listed beside the one shown
_RUN_EPISODES = 200


def _session_meta(gw: Gateway, run_id: str, sid: str) -> dict[str, Any]:
    """session.json (env, task, tags) of a recorded session the caller was shown already."""
    try:
        meta = orjson.loads((gw.settings.runs_dir / run_id / sid / "session.json").read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    return meta if isinstance(meta, dict) else {}


def _run_episodes(gw: Gateway, who: str, run_id: str) -> list[dict[str, Any]]:
    """The run's episodes (the catalog's page), oldest first: the viewer's links between them."""
    page = gw.sessions.episodes.episodes(who, run_id, limit=_RUN_EPISODES)["items"]
    return sorted(page, key=lambda e: (e.get("ended") or 0, e["session_id"], e["episode"]))


def _eval_outcome(gw: Gateway, who: str, run_id: str, sid: str) -> dict[str, Any] | None:
    """How the gateway's evaluation that recorded this session saw its episode (an error's
    kind, message and traceback: what the recording alone cannot say, e.g. that the agent
    raised); None for runs no eval job of the caller's recorded."""
    if not run_id.startswith("eval-"):
        return None
    try:
        job = gw.eval_jobs.get(who, run_id.removeprefix("eval-"))
    except PalaestraError:
        return None
    page = gw.eval_jobs.results(job, 0, 100_000)["episodes"]
    return next((e for e in page if e.get("session_id") == sid), None)


@router.get("/dashboard/runs/{run_id}/sessions/{sid}", response_class=HTMLResponse)
async def viewer(
    run_id: str, sid: str, request: Request, gw: State, episode: int | None = None
) -> HTMLResponse:
    """A recorded session, step by step, rendered for its world (:mod:`palaestra.server.
    transcript`), with the run's other episodes and the evaluation that recorded them."""
    who = _required(request, gw)
    recorded = orjson.loads((await runs.get_recording(run_id, sid, gw, who)).body)
    meta = await run_in_threadpool(_session_meta, gw, run_id, sid)
    shown = transcript.transcript(run_id, sid, recorded["events"], meta)
    frames = shown["frames"]
    start = next((i for i, f in enumerate(frames) if f["episode"] == episode), 0)
    html = gw.templates.get_template("viewer.html").render(
        version=palaestra.__version__,
        run_id=run_id,
        sid=sid,
        view=shown,
        frames=frames,
        start=start,
        corrupt=recorded.get("corrupt_lines") or [],
        siblings=await run_in_threadpool(_run_episodes, gw, who, run_id),
        outcome=await run_in_threadpool(_eval_outcome, gw, who, run_id, sid),
    )
    return HTMLResponse(html)


@router.get("/dashboard/runs/{run_id}/sessions/{sid}/images/{name}")
async def image(run_id: str, sid: str, name: str, request: Request, gw: State) -> Response:
    """A recorded image, for the signed-in owner: the API's owner check (a recorded session's
    owner never changes, so it is remembered) and the file's bytes. Thumbnails are small and
    fetched every tick, so they skip ``FileResponse``'s thread hop."""
    who = viewer_of(request, gw)
    owners: dict[tuple[str, str], str | None] = getattr(request.app.state, "image_owners", {})
    request.app.state.image_owners = owners
    if (run_id, sid) not in owners:
        if len(owners) > 10_000:
            owners.clear()
        owners[run_id, sid] = runs._owner(gw.settings.runs_dir, run_id, sid)
    path = gw.settings.runs_dir / run_id / sid / "images" / name
    try:
        if who is None or owners[run_id, sid] != who or not runs._IMAGE.match(name):
            raise OSError
        data = path.read_bytes()
    except OSError:
        raise NotFound(f"no image {name!r} in recorded session {run_id}/{sid}") from None
    media = "image/png" if name.endswith(".png") else "image/jpeg"
    # recorded images never change
    return Response(data, media_type=media, headers={"Cache-Control": "private, max-age=3600"})

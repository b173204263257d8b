"""The renderer: an AppSpec served as a real web app (Starlette + SQLite + Jinja2).

One :class:`AppHost` per worker process serves every session's app on one loopback port. An
app session is a token in the URL path (``/s/<token>/...``) mapped to its own database copy, its
spec, its variant and its layout, so parallel episodes never share state and a reset is a file
copy. The verifier reads that file directly on the worker; no route of the app exposes raw data
or the file, and nothing secret is in the pages.

**The path names an app session; it grants nothing.** URLs show in observations, recordings and
logs, so every app session also has a *key*: a random credential of the env session that owns
it, which the app host checks on every request (a phone's apps and its launcher share their
phone's key). The key reaches the owner's browser context as an ``HttpOnly`` cookie
(:data:`APP_COOKIE`, set by :func:`admit` on the context before its first request), and a
request whose cookie is missing or is not the key of the session its path names is refused
with 403 and changes nothing. Why a cookie:

- the browser attaches it to every request to the app host, so the agent's navigation, links,
  forms and ``fetch`` from page scripts work unchanged, at no cost per request (no request
  interception) and no cost per reset (a context keeps its cookie; one CDP call when a context
  is made);
- ``HttpOnly``: no script in a page can read it, and a script cannot overwrite it; it is never
  in a URL, a page, an observation or a recording, so the agent cannot learn or forge it;
- another session's context carries its own key, so a request for another session's path from
  it is refused; a client outside the browser has no key at all.

A per-session origin (a host name or port per session) was the alternative; it still needs a
credential to refuse clients outside the browser, and it would cost a listener or a resolver
entry per session. An extra HTTP header set on the context would be sent to every origin the
context reaches, and a page script could add a stolen one to ``fetch``; a cookie is scoped to
the app host's address and cannot be read, set or overwritten ``HttpOnly`` from a page. (Cookies
ignore ports, so other loopback servers the same context may reach, the worker's own task
sites, receive it too; they keep no request data.)

Pages: a home page that never reads the database (so a page loaded ahead of a reset stays true),
list pages with filters and pagination, detail pages with the operations a row offers, and
operations as multi-step forms ending in a confirmation. Rules are checked when the user
confirms; a violated rule is shown as an alert and changes nothing. A request that crashes the
app shows an error page and is logged, and never takes the server down.
"""

from __future__ import annotations

import json
import logging
import secrets
import shutil
import socket
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import uvicorn
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from palaestra.envs.runtimes.lazy import process_wide
from palaestra.synth_apps import data, expr
from palaestra.synth_apps.operations import (
    RuleViolation,
    app_now,
    apply,
    input_scope,
    matches,
    options,
    parse_field,
    to_int,
)
from palaestra.synth_apps.spec import AppSpec, FieldSpec, OperationSpec
from palaestra.synth_apps.variants import Variant
from palaestra.verifiers.app_state import visits_path

log = logging.getLogger("palaestra.synth_apps")
TEMPLATES = Environment(
    loader=FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)
WIDGETS = {
    "int": "number",
    "float": "number",
    "money": "number",
    "date": "date",
    "time": "time",
    "datetime": "datetime-local",
    "email": "email",
}


@dataclass
class AppSession:
    token: str
    spec: AppSpec
    variant: Variant
    template: Path
    db: Path
    #: the owner's credential (see the module's docstring); never in a URL or a page
    key: str
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def visits(self) -> Path:
        """The session's visit log (see :func:`visits_path`), beside its database."""
        return visits_path(self.db)

    def restore(self) -> None:
        """Back to the seeded state: the episode's database is a fresh copy of the template,
        and its visit log is empty."""
        with self.lock:
            shutil.copyfile(self.template, self.db)
            self.visits.write_text("")

    def log(self, visit: dict[str, Any]) -> None:
        """Record a page the session was served (under the session's lock): the evidence an
        infeasibility report needs (the agent looked at the record, tried the operation)."""
        with self.visits.open("a") as out:
            out.write(json.dumps(visit, separators=(",", ":")) + "\n")


#: the cookie that carries an env session's app key to the app host
APP_COOKIE = "palaestra_app"


def new_key() -> str:
    """A fresh credential for one env session's apps (256 bits)."""
    return secrets.token_urlsafe(32)


def presented(request: Request) -> list[str]:
    """Every value of :data:`APP_COOKIE` the request carries (a page script may add a decoy
    with another path; it does not replace the ``HttpOnly`` one, so all values must match)."""
    values = []
    for part in request.headers.get("cookie", "").split(";"):
        name, _, value = part.strip().partition("=")
        if name == APP_COOKIE:
            values.append(value)
    return values


def admitted(request: Request, key: str) -> bool:
    """The request carries ``key``, and no other app key."""
    values = presented(request)
    return bool(values) and all(secrets.compare_digest(v.encode(), key.encode()) for v in values)


FORBIDDEN = (
    "<h1>Forbidden</h1><p role='alert'>This app belongs to another session; "
    "this browser has no access to it.</p>"
)


async def admit(context: Any, key: str) -> None:
    """Give a Playwright browser context the credential of the apps opened with ``key``: an
    ``HttpOnly`` cookie for the app host, sent with every request the context makes to it."""
    await context.add_cookies(
        [
            {
                "name": APP_COOKIE,
                "value": key,
                "url": host().origin,
                "httpOnly": True,
                "sameSite": "Strict",
            }
        ]
    )


class AppHost:
    """Serves every app session of this process on one loopback port."""

    def __init__(self) -> None:
        self.sessions: dict[str, AppSession] = {}
        self.folder = Path(tempfile.mkdtemp(prefix="palaestra-apps-"))
        self.asgi = Starlette(
            routes=[
                Route("/s/{token}/", self.home),
                Route("/s/{token}/list/{index:int}", self.listing),
                Route("/s/{token}/view/{entity}/{rid:int}", self.detail),
                Route("/s/{token}/do/{op}", self.operation, methods=["GET", "POST"]),
                Route("/s/{token}/do/{op}/{rid:int}", self.operation, methods=["GET", "POST"]),
                Route("/launcher/{token}", self.launcher),
            ]
        )
        self.launchers: dict[str, tuple[str, list[dict[str, str]]]] = {}
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        self.origin = f"http://127.0.0.1:{sock.getsockname()[1]}"
        config = uvicorn.Config(
            self.asgi, log_level="warning", lifespan="off", access_log=False, ws="none"
        )
        self.server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [sock]}, name="app-host", daemon=True
        )
        self._thread.start()
        while not self.server.started and self._thread.is_alive():
            threading.Event().wait(0.005)

    # ----- sessions ------------------------------------------------------------------------
    def open(
        self, spec: AppSpec, variant: Variant, seed: int, key: str | None = None
    ) -> AppSession:
        """A new app session; only requests that carry ``key`` (default: a new one, see
        ``session.key``) reach it. An env session opens all its apps with its one key."""
        token = secrets.token_urlsafe(18)
        session = AppSession(
            token,
            spec,
            variant,
            data.template(spec, seed),
            self.folder / f"{token}.sqlite",
            key or new_key(),
        )
        session.restore()
        self.sessions[token] = session
        return session

    def close(self, token: str) -> None:
        session = self.sessions.pop(token, None)
        if session is not None:
            with session.lock:
                session.db.unlink(missing_ok=True)

    def url(self, session: AppSession) -> str:
        return f"{self.origin}/s/{session.token}/"

    def open_launcher(self, apps: list[AppSession], key: str) -> str:
        """A phone's home screen listing ``apps``, reached only with ``key`` (the phone's)."""
        token = secrets.token_urlsafe(18)
        self.launchers[token] = (
            key,
            [
                {"name": a.spec.title, "href": self.url(a), "accent": a.variant.theme["accent"]}
                for a in apps
            ],
        )
        return f"{self.origin}/launcher/{token}"

    def close_launcher(self, url: str) -> None:
        self.launchers.pop(url.rsplit("/", 1)[-1], None)

    async def launcher(self, request: Request) -> Response:
        entry = self.launchers.get(request.path_params["token"])
        if entry is None:
            return HTMLResponse("<h1>Not found</h1>", 404)
        key, apps = entry
        if not admitted(request, key):
            return HTMLResponse(FORBIDDEN, 403)
        return HTMLResponse(TEMPLATES.get_template("launcher.html").render(apps=apps))

    # ----- request plumbing ----------------------------------------------------------------
    async def _page(
        self, request: Request, build: Any, visit: dict[str, Any] | None = None
    ) -> Response:
        """Serve one page of a session's app; a page served (not refused, not an error) is
        logged with ``visit`` (what it shows) in the session's visit log, on the server: the
        agent's requests are its only way to add to it, and no route reads it back."""
        session = self.sessions.get(request.path_params["token"])
        if session is None:
            return HTMLResponse("<h1>Not found</h1><p role='alert'>No such app.</p>", 404)
        if not admitted(request, session.key):
            return HTMLResponse(FORBIDDEN, 403)  # checked before the body is even read
        form = await request.form() if request.method == "POST" else None
        try:
            with session.lock, data.opened(session.db) as conn:
                view = View(session, conn, request)
                result = build(view, form)
                conn.commit()
                if visit is not None and result.status_code < 400:
                    session.log({**visit, **view.note})
            return result
        except _NotFound as exc:
            return view.message("Not found", str(exc), error=True, status=404)
        except Exception:
            log.exception(
                "app %s crashed on %s %s", session.spec.name, request.method, request.url.path
            )
            return view_error(session, request)

    async def home(self, request: Request) -> Response:
        return await self._page(request, lambda v, _: v.render("home.html"))

    async def listing(self, request: Request) -> Response:
        index = request.path_params["index"]
        query = dict(request.query_params)
        return await self._page(request, lambda v, _: v.listing(index), {"list": index, **query})

    async def detail(self, request: Request) -> Response:
        p = request.path_params
        visit = {"view": p["entity"], "id": p["rid"]}
        return await self._page(request, lambda v, _: v.detail(p["entity"], p["rid"]), visit)

    async def operation(self, request: Request) -> Response:
        p = request.path_params
        visit = {"op": p["op"], "id": p.get("rid")}
        return await self._page(
            request, lambda v, form: v.operation(p["op"], p.get("rid"), form), visit
        )

    def shutdown(self) -> None:
        self.server.should_exit = True
        self._thread.join(5)
        shutil.rmtree(self.folder, ignore_errors=True)


class _NotFound(Exception):
    pass


def view_error(session: AppSession, request: Request) -> Response:
    html = TEMPLATES.get_template("message.html").render(
        app=session.spec,
        v=session.variant,
        mobile=session.variant.layout == "mobile",
        base=f"/s/{session.token}",
        nav=[],
        heading="Something went wrong",
        message="The app could not handle this request. Please go back and try again.",
        error=True,
        back=f"/s/{session.token}/",
        back_label=session.variant.label("Home"),
    )
    return HTMLResponse(html, 500)


class View:
    """One request's rendering, against one session's database."""

    def __init__(self, session: AppSession, conn: Any, request: Request) -> None:
        self.s = session
        self.spec = session.spec
        self.v = session.variant
        self.conn = conn
        self.scope = data.Scope(self.spec, conn)
        self.request = request
        self.base = f"/s/{session.token}"
        #: what the page showed beyond its address, for the visit log (a refusal's rule)
        self.note: dict[str, Any] = {}

    # ----- shared pieces -------------------------------------------------------------------
    def nav(self) -> list[dict[str, str]]:
        items = [
            {"label": self.v.label(p.label), "href": f"{self.base}/list/{i}"}
            for i, p in enumerate(self.spec.pages)
        ]
        items += [
            {"label": self.v.label(op.label), "href": f"{self.base}/do/{name}"}
            for name, op in self.spec.operations.items()
            if op.entity is None
        ]
        return items

    def render(self, name: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        html = TEMPLATES.get_template(name).render(
            app=self.spec,
            v=self.v,
            mobile=self.v.layout == "mobile",
            base=self.base,
            nav=self.nav(),
            **ctx,
        )
        return HTMLResponse(html, status)

    def message(
        self,
        heading: str,
        message: str,
        *,
        error: bool = False,
        status: int = 200,
        back: str | None = None,
        back_label: str | None = None,
    ) -> HTMLResponse:
        return self.render(
            "message.html",
            status,
            heading=heading,
            message=message,
            error=error,
            back=back or f"{self.base}/",
            back_label=back_label or self.v.label("Home"),
        )

    def label(self, name: str, f: FieldSpec) -> str:
        return self.v.label(f.title(name))

    def options(self, f: FieldSpec, where: str | None = None) -> list[tuple[Any, str]]:
        return options(self.scope, f, where)

    def row_or_404(self, entity: str, rid: int) -> dict[str, Any]:
        if entity not in self.spec.entities:
            raise _NotFound(f"There is no page for {entity!r}.")
        row = self.scope.row(entity, rid)
        if row is None:
            raise _NotFound(f"There is no {self.spec.entities[entity].label.lower()} {rid}.")
        return row

    # ----- list pages ----------------------------------------------------------------------
    def listing(self, index: int) -> Response:
        if not 0 <= index < len(self.spec.pages):
            raise _NotFound(f"There is no page {index}.")
        page_spec = self.spec.pages[index]
        entity = page_spec.entity
        e = self.spec.entities[entity]
        query = self.request.query_params
        rows = self.scope.rows(entity, page_spec.where, today=self.spec.today)
        filters = []
        for name in self.v.order(page_spec.filters, f"filters:{entity}"):
            f = e.fields[name]
            value = query.get(name, "")
            opts = self.options(f) if f.type in ("enum", "ref", "bool") else None
            filters.append(
                {
                    "name": name,
                    "label": self.label(name, f),
                    "value": value,
                    "options": opts,
                    "html_type": WIDGETS.get(f.type, "text"),
                }
            )
            if value:
                rows = [r for r in rows if matches(f, name, r, value)]
        cols = [c for c in page_spec.columns or list(e.fields) if not e.fields[c].hidden]
        first, rest = e.display, [c for c in cols if c != e.display]
        cols = [first, *self.v.order(rest, f"columns:{entity}")]
        size = self.v.page_size
        pages = max(1, -(-len(rows) // size))
        try:
            page = min(max(1, int(query.get("page", "1"))), pages)
        except ValueError:
            page = 1
        shown = rows[(page - 1) * size : page * size]
        args = {k: v for k, v in query.items() if k != "page" and v}

        def href(n: int) -> str:
            return f"?{urlencode({**args, 'page': n})}"

        heading = self.v.label(page_spec.label)
        return self.render(
            "list.html",
            heading=heading,
            plural=e.plural_label,
            filters=filters,
            columns=[{"name": c, "label": self.label(c, e.fields[c])} for c in cols],
            rows=[
                {
                    "href": f"{self.base}/view/{entity}/{r['id']}",
                    "cells": [expr.show(r[c]) for c in cols],
                    **self._gestures(entity, r),
                }
                for r in shown
            ],
            page=page,
            pages=pages,
            prev_href=href(page - 1) if page > 1 else None,
            next_href=href(page + 1) if page < pages else None,
        )

    def _row_ops(self, entity: str, row: dict[str, Any], trigger: str) -> list[dict[str, str]]:
        """The operations a row offers through ``trigger`` (the layout decides which triggers
        exist, see :func:`trigger_of`), as buttons: label and form address."""
        return [
            {"label": self.v.label(op.label), "href": f"{self.base}/do/{name}/{row['id']}"}
            for name, op in self.spec.operations.items()
            if op.entity == entity
            and trigger_of(op, self.v.layout) == trigger
            and (not op.when or self._holds(op.when, row))
        ]

    def _gestures(self, entity: str, row: dict[str, Any]) -> dict[str, Any]:
        """A list row's touch gestures (mobile layout): ``hold``, the operations its context
        menu lists on a long press; ``swipe``, the one operation a swipe to the left reveals."""
        if self.v.layout != "mobile":
            return {}
        swipe = self._row_ops(entity, row, "swipe")
        return {
            "hold": self._row_ops(entity, row, "long_press"),
            "swipe": swipe[:1],
            "menu": f"menu-{row['id']}",
        }

    # ----- detail pages --------------------------------------------------------------------
    def detail(self, entity: str, rid: int) -> Response:
        row = self.row_or_404(entity, rid)
        e = self.spec.entities[entity]
        fields = [
            (self.label(n, f), expr.show(row[n])) for n, f in e.fields.items() if not f.hidden
        ]
        ops = self._row_ops(entity, row, "button")
        page = self.spec.page_for(entity)
        index = self.spec.pages.index(page) if page else None
        return self.render(
            "detail.html",
            heading=f"{e.label} {expr.show(row[e.display])}",
            fields=fields,
            ops=ops,
            back=f"{self.base}/list/{index}" if page else f"{self.base}/",
            back_label=self.v.label(page.label) if page else self.v.label("Home"),
        )

    def _holds(self, source: str, record: dict[str, Any]) -> bool:
        return bool(
            expr.evaluate(
                source, {"record": record, "today": self.spec.today, "now": app_now(self.spec)}
            )
        )

    # ----- operations ----------------------------------------------------------------------
    def operation(self, name: str, rid: int | None, form: Any) -> Response:
        op = self.spec.operations.get(name)
        if op is None or (op.entity is None) != (rid is None):
            raise _NotFound(f"There is no action {name!r} here.")
        record = self.row_or_404(op.entity, rid) if op.entity and rid is not None else None
        if record is not None and op.when and not self._holds(op.when, record):
            return self.message(self.v.label(op.label), "This action is not available.", error=True)
        # a textarea submits its line breaks as CRLF; the app (and every task) stores LF
        values = (
            {k: str(form.get(k, "")).replace("\r\n", "\n") for k in op.inputs()}
            if form is not None
            else {}
        )
        step = to_int(form.get("_step")) if form is not None else None
        steps = len(op.steps)
        errors: dict[str, str] = {}
        if step is None:
            step = 0
        elif step < steps:
            errors = self._check_inputs(op, op.steps[step].inputs, values)
            if not errors:
                step += 1
        elif step == steps:  # the confirmation was submitted
            errors = self._check_inputs(op, op.inputs(), values)
            if not errors:
                return self._execute(name, op, record, values)
            step = 0
        if step == steps and not op.confirm and steps:
            return self._execute(name, op, record, values)
        return self._form(name, op, record, values, step, errors)

    def _form(
        self,
        name: str,
        op: OperationSpec,
        record: dict[str, Any] | None,
        values: dict[str, str],
        step: int,
        errors: dict[str, str],
    ) -> Response:
        steps = len(op.steps)
        subject = None
        if record is not None and op.entity is not None:  # a record is a row of op's entity
            e = self.spec.entities[op.entity]
            subject = f"{e.label}: {expr.show(record[e.display])}"
        back = (
            f"{self.base}/view/{op.entity}/{record['id']}"
            if record is not None
            else f"{self.base}/"
        )
        ctx: dict[str, Any] = {
            "heading": self.v.label(op.label),
            "subject": subject,
            "steps": steps,
            "step": step,
            "back": back,
            "back_label": "Cancel" if record is None else "Back",
            "error": "Please correct the highlighted fields." if errors else None,
        }
        if step < steps:
            current = op.steps[step].inputs
            carry = [(k, v) for k, v in values.items() if k not in current]
            order = self.v.order(list(current), f"step:{name}:{step}")
            ctx.update(
                step_title=self.v.label(op.steps[step].title),
                carry=carry,
                inputs=[
                    self._input(k, current[k], values.get(k, ""), errors.get(k)) for k in order
                ],
                summary=[],
                submit=self.v.label("Continue"),
            )
        else:
            summary = [
                (self.label(k, f), _shown_input(self, f, values.get(k, "")))
                for k, f in op.inputs().items()
            ]
            ctx.update(
                step_title=self.v.label("Confirm"),
                carry=list(values.items()),
                inputs=[],
                summary=summary,
                submit=self.v.label("Confirm"),
            )
        return self.render("form.html", **ctx)

    def _input(self, name: str, f: FieldSpec, value: str, error: str | None) -> dict[str, Any]:
        widget = WIDGETS.get(f.type, "text")
        options: list[tuple[Any, str]] = []
        if f.type in ("enum", "ref"):
            options = self.options(f, f.where)
            widget = "radio" if self.v.choices == "radio" and len(options) <= 6 else "select"
        elif f.type == "text":
            widget = "textarea"
        elif f.type == "bool":
            widget = "checkbox"
        return {
            "name": name,
            "label": self.label(name, f),
            "widget": widget,
            "value": value,
            "options": options,
            "error": error,
            "step": 1 if f.type == "int" else "any",
        }

    def _check_inputs(
        self, op: OperationSpec, inputs: dict[str, FieldSpec], values: dict[str, str]
    ) -> dict[str, str]:
        errors = {}
        for name, f in inputs.items():
            try:
                parse_field(f, values.get(name, ""), self.scope)
            except ValueError as exc:
                errors[name] = str(exc)
        return errors

    def _execute(
        self, name: str, op: OperationSpec, record: dict[str, Any] | None, values: dict[str, str]
    ) -> Response:
        inputs = input_scope(self.scope, op, values)
        try:
            message = apply(self.spec, self.conn, op, record, inputs)
        except RuleViolation as exc:
            self.conn.rollback()
            self.note = {"refused": str(exc)}
            return self.message(
                self.v.label(op.label),
                str(exc),
                error=True,
                back=self.request.url.path,
                back_label="Back",
            )
        return self.message(self.v.label(op.label), message)


def trigger_of(op: OperationSpec, layout: str) -> str:
    """How a row operation is reached: on the phone (mobile layout) as the spec's ``trigger``
    says (``long_press``: the list row's context menu, ``swipe``: swiping the row left,
    ``button``: the detail page), as the real app does; the desktop layout has no gestures, so
    every operation keeps its button on the detail page there."""
    return op.trigger if layout == "mobile" else "button"


def _shown_input(view: View, f: FieldSpec, raw: str) -> str:
    if f.type == "ref":
        return dict(view.options(f, f.where)).get(to_int(raw), raw)
    return raw


@process_wide
def host() -> AppHost:
    """This process's app host (started on first use)."""
    return AppHost()

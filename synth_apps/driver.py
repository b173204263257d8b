"""The web family's driver for synthesized apps (``setup.driver = "synth"``).

A task names its app (``app``: a built-in domain or a spec file), the variant, the layout and
the data seed. The session keeps one app session (token + database copy) for its whole life and
restores the database at every reset, which is a file copy. The start page is the app's home,
which never reads the database, so the page the env loads ahead of a reset stays true after the
restore; the rows a task plants (``setup["plant"]``, in this app only: a web task has one app)
are inserted after it, so every episode starts from the same rows. The verifier's state is the
database path, read on the worker; the page has no route to it. The app answers only the
session's own browser context: the driver's key (one per env session, see
:mod:`palaestra.synth_apps.app`) is installed in each context by :meth:`admit` before it loads a
page.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from palaestra.synth_apps import data
from palaestra.synth_apps.app import AppSession, admit, host, new_key
from palaestra.synth_apps.spec import AppSpec, load_spec
from palaestra.synth_apps.variants import make_variant


@lru_cache(maxsize=64)
def spec_for(app: str) -> AppSpec:
    return load_spec(app)


class SynthDriver:
    #: the app's state is its database, restored at every reset; the browser holds none
    #: (no cookies or storage), so episodes share one context instead of paying for a new one
    reuse_context = True

    def __init__(self) -> None:
        self.session: AppSession | None = None
        self.credential = new_key()  # every app this session opens answers this key only
        self._key: tuple[Any, ...] | None = None

    def _open(self, setup: dict[str, Any]) -> AppSession:
        if not setup.get("app"):
            raise ValueError("a synthesized task's setup must name its app (a domain or a spec)")
        key = (
            setup["app"],
            int(setup.get("variant", 0)),
            setup.get("layout", "desktop"),
            int(setup.get("data_seed", 0)),
        )
        if self.session is None or key != self._key:
            self.close()
            spec = spec_for(key[0])
            variant = make_variant(spec, key[1], key[2])
            self.session = host().open(spec, variant, key[3], key=self.credential)
            self._key = key
        return self.session

    def sites(self, setup: dict[str, Any]) -> dict[str, str]:
        self._open(setup)
        return {"app": host().origin}

    def start_url(self, setup: dict[str, Any], origins: dict[str, str]) -> str:
        return host().url(self._open(setup))

    async def admit(self, context: Any) -> None:
        """Let a browser context of this session reach its apps (before its first request)."""
        await admit(context, self.credential)

    async def begin(self, page: Any, setup: dict[str, Any], seed: int) -> None:
        session = self._open(setup)
        name = session.spec.name
        rows = data.check_plant(setup.get("plant", []), {name: session.spec}, name)
        session.restore()
        if rows:
            with session.lock:
                data.plant_rows(rows, {name: session.db})
        return None

    async def done(self, page: Any) -> bool:
        return False

    async def state(self, page: Any) -> dict[str, Any]:
        assert self.session is not None
        return {"app_db": str(self.session.db), "app": self.session.spec.name}

    def close(self) -> None:
        if self.session is not None:
            host().close(self.session.token)
            self.session = None

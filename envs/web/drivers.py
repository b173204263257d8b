"""Task drivers: what a web task needs beyond a start page.

A driver knows how to start a task's page (seed it, read its goal), when the page itself ends
the episode, and what privileged state the verifier reads. ``setup.driver`` names one; the
plain driver opens ``setup.start_url`` and leaves ending to the agent. Benchmarks add theirs
to :data:`DRIVERS` (``"miniwob"`` wraps MiniWoB++'s ``core.js`` protocol, ``"synth"`` serves a
synthesized app). A session keeps one instance per driver for its whole life, so a driver may
hold per-session resources (an app database) and release them in an optional ``close()``.
A driver whose server checks a credential installs it in each new browser context of the
session through an optional ``async admit(context)``, run before the context loads anything.
"""

from __future__ import annotations

from typing import Any, Protocol

from palaestra.resolve import resolve

DRIVERS: dict[str, str] = {
    "plain": "palaestra.envs.web.drivers:PlainDriver",
    "miniwob": "palaestra.envs.web.suites:MiniWobDriver",
    "synth": "palaestra.synth_apps.driver:SynthDriver",
}


class TaskDriver(Protocol):
    def sites(self, setup: dict[str, Any]) -> dict[str, str]:
        """What this task serves on loopback: name -> a folder, or the origin of a server."""
        ...

    def start_url(self, setup: dict[str, Any], origins: dict[str, str]) -> str | None:
        """The first page; ``origins`` maps each site name to the origin serving it."""
        ...

    async def begin(self, page: Any, setup: dict[str, Any], seed: int) -> str | None:
        """Start the episode on the loaded page; return the goal text if the page has one."""
        ...

    async def done(self, page: Any) -> bool: ...

    async def state(self, page: Any) -> dict[str, Any]: ...


class PlainDriver:
    def sites(self, setup: dict[str, Any]) -> dict[str, str]:
        return {}

    def start_url(self, setup: dict[str, Any], origins: dict[str, str]) -> str | None:
        url = setup.get("start_url")
        return url.format(**origins) if url else None

    async def begin(self, page: Any, setup: dict[str, Any], seed: int) -> str | None:
        return None

    async def done(self, page: Any) -> bool:
        return False

    async def state(self, page: Any) -> dict[str, Any]:
        return {"title": await page.title()}


def driver_for(setup: dict[str, Any], cache: dict[str, TaskDriver]) -> TaskDriver:
    """The session's instance of the task's driver (made on first use)."""
    name = setup.get("driver", "plain")
    if name not in DRIVERS:
        raise ValueError(f"unknown web task driver {name!r}; known: {sorted(DRIVERS)}")
    if name not in cache:
        cache[name] = resolve(DRIVERS[name])()
    return cache[name]

"""The web family's task loaders: MiniWoB++ as a built-in suite, from the ``miniwob`` package.

Every task the package ships is a task of the ``miniwob`` suite (``miniwob/click-button``, ...).
Its pages are served on loopback from the installed package folder. An episode follows MiniWoB's own
protocol in ``core.js``: ``Math.seedrandom(seed)`` then ``core.startEpisodeReal()``; the goal is
``core.getUtterance()``; the episode ends when the page sets ``WOB_DONE_GLOBAL``, and the reward
is MiniWoB's raw reward (``WOB_RAW_REWARD_GLOBAL``), so success rates compare with published
MiniWoB numbers (success = raw reward > 0). MiniWoB's 10-second episode clock is switched off,
as BrowserGym does, because agents think slower than that; ``setup.episode_ms`` turns it back on.
The verifier's check kind (``miniwob_reward``) is in :mod:`palaestra.verifiers.web`; a task's
oracle is the scripted policy of :mod:`palaestra.envs.web.policies` for it, where one exists.
"""

from __future__ import annotations

import functools
import inspect
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from palaestra.envs.web.policies import ORACLES
from palaestra.tasks import Oracle, PublicMetadata, Task

ENV_ID = "palaestra/web-v0"
NO_CLOCK_MS = 10**9
VIEWPORT = (500, 320)
FLIGHT_VIEWPORT = (600, 800)


def html_dir() -> Path:
    import miniwob

    return Path(miniwob.__file__).parent / "html"


@functools.cache
def task_names() -> dict[str, str]:
    """Every task the miniwob package ships: name -> its description."""
    from miniwob.envs import miniwob_envs

    out = {}
    for _, cls in inspect.getmembers(miniwob_envs, inspect.isclass):
        name = getattr(cls, "subdomain", None)
        if name:
            doc = inspect.getdoc(cls) or ""
            match = re.search(r"## Description\s+(.+?)(\n\n|$)", doc, re.S)
            out[name] = " ".join((match.group(1) if match else name).split())
    return dict(sorted(out.items()))


def miniwob_tasks() -> list[Task]:
    tasks = []
    for name, description in task_names().items():
        flight = name.startswith("flight.")
        tasks.append(
            Task(
                id=name,
                family="web",
                env=ENV_ID,
                instruction=description,
                setup={
                    "driver": "miniwob",
                    "miniwob": name,
                    "viewport": list(FLIGHT_VIEWPORT if flight else VIEWPORT),
                },
                verifier={"kind": "miniwob_reward"},
                max_steps=30,
                metadata={"source": "miniwob", "description": description},
                public=PublicMetadata(domain="miniwob"),
                oracle=Oracle(policy="miniwob", data=name) if name in ORACLES else None,
            )
        )
    return tasks


class MiniWobDriver:
    def sites(self, setup: dict[str, Any]) -> dict[str, str]:
        return {"miniwob": str(html_dir())}

    def start_url(self, setup: dict[str, Any], origins: dict[str, str]) -> str:
        name = setup["miniwob"]
        if name.startswith("flight."):
            return f"{origins['miniwob']}/{name.replace('.', '/')}/wrapper.html"
        return f"{origins['miniwob']}/miniwob/{name}.html"

    #: the task's own page (set by :meth:`begin`): only its verdict is the task's
    task_page = ""

    def _on_task_page(self, page: Any) -> bool:
        """Any MiniWoB page on the origin ends its own episode: another (an easier) one's
        verdict, or one started there by hand, is not the task's."""
        return bool(self.task_page) and _page_of(page.url) == self.task_page

    async def begin(self, page: Any, setup: dict[str, Any], seed: int) -> str:
        self.task_page = _page_of(page.url)
        episode_ms = int(setup.get("episode_ms", NO_CLOCK_MS))
        started = await page.evaluate(
            """([seed, ms, clockOff]) => {
                if (typeof core === 'undefined') return null;
                Math.seedrandom(seed);
                core.EPISODE_MAX_TIME = ms;
                core.startEpisodeReal();
                // with the clock off its countdown means nothing, and would make two runs of
                // one seed differ in the observation
                if (clockOff) core.clearTimer();
                const u = core.getUtterance();
                return {utterance: typeof u === 'string' ? u : u.utterance, ready: WOB_TASK_READY};
            }""",
            [seed, episode_ms, "episode_ms" not in setup],
        )
        if started is None:
            raise RuntimeError(f"{page.url} is not a MiniWoB page (no core.js)")
        if started["ready"] is False:  # some tasks build their problem asynchronously
            await page.wait_for_function("WOB_TASK_READY !== false", polling=10)
        return str(started["utterance"])

    async def done(self, page: Any) -> bool:
        return self._on_task_page(page) and bool(
            await page.evaluate("typeof WOB_DONE_GLOBAL !== 'undefined' && WOB_DONE_GLOBAL")
        )

    async def state(self, page: Any) -> dict[str, Any]:
        """MiniWoB's globals; an agent that left the task page has earned nothing."""
        wob = None
        if self._on_task_page(page):
            wob = await page.evaluate(
                "typeof WOB_DONE_GLOBAL === 'undefined' ? null : "
                "({done: WOB_DONE_GLOBAL, reward: WOB_REWARD_GLOBAL, "
                "raw_reward: WOB_RAW_REWARD_GLOBAL, reason: String(WOB_REWARD_REASON)})"
            )
        if wob is None:
            wob = {"done": False, "reward": 0, "raw_reward": 0, "reason": "left the task page"}
        return {"miniwob": wob}


def _page_of(url: str) -> str:
    """A page's address without its query and fragment."""
    return urlsplit(url)._replace(query="", fragment="").geturl()

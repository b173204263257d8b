"""Replay a recorded episode: the same actions from the same seed on a fresh session.

Reports the first step where what the agent saw (the observation's text fields, the reward,
the episode's end) or the verifier's outcome differs from the recording. Screenshots are
compared by content too but reported apart: pixels may legitimately move (a caret's blink)
where the page's text and state do not; so may a local site's port (one per worker) and a
synthesized app's per-session path, which the comparison ignores. An episode recorded by
another palaestra version says which. ``repeat`` replays it several times: the determinism
report of its family.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

import palaestra
from palaestra.client import Client
from palaestra.data.episodes import Episode
from palaestra.data.export import observation_text


@dataclass
class Replayed:
    episode: str
    steps: int
    diverged_at: int | None = None
    why: str | None = None
    image_diffs: list[int] = field(default_factory=list)
    version_note: str | None = None

    @property
    def deterministic(self) -> bool:
        return self.diverged_at is None


def version_note(ep: Episode) -> str | None:
    recorded = (ep.meta.get("versions") or {}).get("palaestra")
    if recorded is None:
        return "recorded before versions were kept: no version to compare"
    if recorded != palaestra.__version__:
        return f"recorded by palaestra {recorded}; replayed on {palaestra.__version__}"
    return None


def replay(ep: Episode, client: Client) -> Replayed:
    out = Replayed(ep.key, len(ep.steps), version_note=version_note(ep))
    made = client.create_session(
        env=ep.meta.get("env"),
        task=ep.meta.get("task"),
        options=ep.meta.get("options") or {},
        record=False,
    )
    sid = made["session_id"]
    try:
        got = client.reset(sid, seed=ep.seed)
        _compare(out, 0, ep, ep.reset, got)
        for i, recorded in enumerate(ep.steps, 1):
            if out.diverged_at is not None:
                break
            got = client.step(sid, recorded.get("action"))
            _compare(out, i, ep, recorded, got)
    finally:
        client.close_session(sid)
    return out


def _compare(out: Replayed, i: int, ep: Episode, recorded: dict[str, Any], got: Any) -> None:
    if out.diverged_at is not None:
        return
    want_obs = recorded.get("observation")
    if _text(want_obs) != _text(got["observation"]):
        out.diverged_at, out.why = i, "observation text differs"
        return
    if i and (recorded.get("reward"), recorded.get("terminated"), recorded.get("truncated")) != (
        got["reward"],
        got["terminated"],
        got["truncated"],
    ):
        out.diverged_at, out.why = (
            i,
            (
                f"reward/end differs: recorded {recorded.get('reward')}, "
                f"{recorded.get('terminated')}; replayed {got['reward']}, {got['terminated']}"
            ),
        )
        return
    if i == len(ep.steps):
        verdict = (got.get("info") or {}).get("verifier") or {}
        if verdict.get("success") != ep.verdict["success"]:
            out.diverged_at, out.why = i, "the verifier's outcome (end state) differs"
            return
    if _image_digest(ep, want_obs) != _image_digest(None, got["observation"]):
        out.image_diffs.append(i)


#: a local server's port (a web family's site, one per worker) and a synthesized app's
#: per-session path (``/s/<token>/``) are infrastructure, not behaviour
_LOCAL_URL = re.compile(r"\b(127\.0\.0\.1|localhost):\d+(/s/[A-Za-z0-9_-]+)?")


def _text(obs: Any) -> str:
    return _LOCAL_URL.sub(lambda m: f"{m[1]}:*" + ("/s/*" if m[2] else ""), observation_text(obs))


def _image_digest(ep: Episode | None, obs: Any) -> str | None:
    """A digest of the observation's decoded pixels (recorded file or live image)."""
    from palaestra.codec import IMAGE_KEY, decode, image_from_bytes

    if not isinstance(obs, dict):
        return None
    for value in obs.values():
        if isinstance(value, dict) and ep is not None and "__file__" in value:
            path = ep.session_dir / value["__file__"]
            if not path.is_file():  # never written (the gateway died mid-episode)
                return None
            data = path.read_bytes()
            return hashlib.sha1(image_from_bytes(data, value["shape"]).tobytes()).hexdigest()
        if getattr(value, "ndim", 0) >= 2:  # an image decoded by the client
            return hashlib.sha1(value.tobytes()).hexdigest()
        if isinstance(value, dict) and IMAGE_KEY in value:
            return hashlib.sha1(decode(value).tobytes()).hexdigest()
    return None


def determinism(results: list[Replayed]) -> dict[str, Any]:
    """Several replays summarised: how many matched the recording, where the others broke."""
    return {
        "replays": len(results),
        "deterministic": sum(r.deterministic for r in results),
        "diverged": [(r.diverged_at, r.why) for r in results if not r.deterministic],
        "screenshots_differ": sum(bool(r.image_diffs) for r in results),
    }

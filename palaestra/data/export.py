"""Export a recorded run as training data: Hugging Face datasets, Parquet, chat JSONL.

One row (or conversation) per finished episode, filtered by success, score and family. Images
stay files on disk until here: the ``hf`` and ``parquet`` formats embed them as a ``datasets``
``Image`` feature (``datasets.load_from_disk`` opens the ``hf`` folder), ``chat-jsonl`` as
OpenAI image parts (data URLs) between the assistant's tool calls. Every export writes a
dataset card (README.md: counts, success rates by family and task, what was skipped). A run
still being written exports what is complete and says so; corrupt lines are skipped and listed.
"""

from __future__ import annotations

import base64
import json
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from palaestra.codec import IMAGE_KEY
from palaestra.data.episodes import Episode, RunReport, read_run

FORMATS = ("hf", "parquet", "chat-jsonl")
#: the longest text kept of one observation field
MAX_TEXT = 20_000


@dataclass
class Filters:
    success_only: bool = False
    min_score: float | None = None
    family: str | None = None

    def keep(self, ep: Episode) -> bool:
        v = ep.verdict
        if self.success_only and not v["success"]:
            return False
        if self.min_score is not None and (v["score"] or 0.0) < self.min_score:
            return False
        return self.family is None or ep.family == self.family


@dataclass
class ExportResult:
    out: Path
    format: str
    episodes: int
    seconds: float
    report: RunReport
    by_family: dict[str, dict[str, int]] = field(default_factory=dict)

    def lines(self) -> list[str]:
        head = f"exported {self.episodes} episode(s) as {self.format} to {self.out}"
        return [head, *self.report.lines()]


def export(path: Path, fmt: str, out: Path, filters: Filters | None = None) -> ExportResult:
    """Export the run at ``path`` into the folder ``out`` (created; existing files replaced)."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}")
    filters = filters or Filters()
    started = time.perf_counter()
    report = RunReport()
    out.mkdir(parents=True, exist_ok=True)
    kept: list[Episode] = []

    def episodes() -> Iterator[Episode]:
        for ep in read_run(path, report):
            if filters.keep(ep):
                kept.append(ep)
                yield ep

    if fmt == "chat-jsonl":
        with open(out / "episodes.jsonl", "w") as fh:
            for ep in episodes():
                fh.write(json.dumps(conversation(ep)) + "\n")
    else:
        _write_dataset(episodes(), out, fmt)
    result = ExportResult(out, fmt, len(kept), time.perf_counter() - started, report)
    result.by_family = _counts(kept)
    (out / "README.md").write_text(card(path.name, fmt, filters, result, kept))
    return result


# ----- Hugging Face datasets / Parquet -----------------------------------------------------
def _features() -> Any:
    from datasets import Features, Image, Sequence, Value

    return Features(
        {
            "run_id": Value("string"),
            "session_id": Value("string"),
            "episode": Value("int32"),
            "env": Value("string"),
            "family": Value("string"),
            "task": Value("string"),
            "goal": Value("string"),
            "seed": Value("int64"),
            "agent": Value("string"),
            "score": Value("float32"),
            "success": Value("bool"),
            "steps": Value("int32"),
            "observations": Sequence(Value("string")),
            "images": Sequence(Image()),
            "actions": Sequence(Value("string")),
            "rewards": Sequence(Value("float32")),
        }
    )


def row(ep: Episode) -> dict[str, Any]:
    """One episode as a dataset row: observation ``i`` (text and screenshot) is what the agent
    saw before action ``i``; the last observation follows the last action."""
    events = [ep.reset, *ep.steps]
    images = []
    for e in events:
        img = _first_image(e.get("observation"), ep.session_dir)
        images.append({"bytes": (ep.session_dir / img).read_bytes(), "path": img} if img else None)
    v = ep.verdict
    return {
        "run_id": ep.session_dir.parent.name,
        "session_id": ep.session_dir.name,
        "episode": ep.number,
        "env": ep.meta.get("env"),
        "family": ep.family,
        "task": ep.meta.get("task"),
        "goal": ep.instruction,
        "seed": ep.seed,
        "agent": (ep.meta.get("tags") or {}).get("agent"),
        "score": float(v["score"] or 0.0),
        "success": bool(v["success"]),
        "steps": len(ep.steps),
        "observations": [observation_text(e.get("observation")) for e in events],
        "images": [i for i in images if i is not None],
        "actions": [_action_text(s.get("action")) for s in ep.steps],
        "rewards": [float(s.get("reward") or 0.0) for s in ep.steps],
    }


def _write_dataset(episodes: Iterator[Episode], out: Path, fmt: str) -> None:
    from datasets import Dataset

    rows = [row(ep) for ep in episodes]
    features = _features()
    if rows:
        ds = Dataset.from_list(rows, features=features)
    else:
        ds = Dataset.from_dict({k: [] for k in features}, features=features)
    if fmt == "parquet":
        ds.to_parquet(str(out / "episodes.parquet"))
        return
    with tempfile.TemporaryDirectory(dir=out) as tmp:  # written aside, then swapped in
        ds.save_to_disk(str(Path(tmp) / "data"))
        target = out / "data"
        if target.exists():
            shutil.rmtree(target)
        (Path(tmp) / "data").rename(target)


# ----- chat JSONL --------------------------------------------------------------------------
ACT_TOOL = {
    "type": "function",
    "function": {
        "name": "act",
        "description": "Perform one action in the environment",
        "parameters": {
            "type": "object",
            "properties": {"action": {"description": 'the action, e.g. click("a1")'}},
            "required": ["action"],
        },
    },
}


def conversation(ep: Episode) -> dict[str, Any]:
    """One episode as an OpenAI chat: the observation as a user turn (text and image parts),
    each action as an assistant tool call, its outcome as the tool's answer."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": f"You act in {ep.meta.get('env')}. Task: {ep.instruction}"},
        _user(ep, ep.reset.get("observation")),
    ]
    for i, step in enumerate(ep.steps, 1):
        call_id = f"call_{i}"
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {
                            "name": "act",
                            "arguments": json.dumps({"action": step.get("action")}),
                        },
                    }
                ],
            }
        )
        outcome = {k: step.get(k) for k in ("reward", "terminated", "truncated")}
        messages.append({"role": "tool", "tool_call_id": call_id, "content": json.dumps(outcome)})
        if i < len(ep.steps):
            messages.append(_user(ep, step.get("observation")))
    v = ep.verdict
    meta = {
        "run_id": ep.session_dir.parent.name,
        "episode": ep.key,
        "env": ep.meta.get("env"),
        "task": ep.meta.get("task"),
        "seed": ep.seed,
        "score": v["score"],
        "success": v["success"],
    }
    return {"messages": messages, "tools": [ACT_TOOL], "metadata": meta}


def _user(ep: Episode, obs: Any) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"type": "text", "text": observation_text(obs)}]
    img = _first_image(obs, ep.session_dir)
    if img:
        kind = "jpeg" if img.endswith(".jpg") else "png"
        data = base64.b64encode((ep.session_dir / img).read_bytes()).decode()
        parts.append(
            {"type": "image_url", "image_url": {"url": f"data:image/{kind};base64,{data}"}}
        )
    return {"role": "user", "content": parts}


# ----- helpers -----------------------------------------------------------------------------
def _first_image(obs: Any, session_dir: Path | None = None) -> str | None:
    """The first image file an observation names (one never written, after a crash, is
    skipped when ``session_dir`` is given)."""
    if isinstance(obs, dict):
        if "__file__" in obs:
            name = str(obs["__file__"])
            return name if session_dir is None or (session_dir / name).is_file() else None
        for value in obs.values():
            found = _first_image(value, session_dir)
            if found:
                return found
    return None


def observation_text(obs: Any) -> str:
    """The observation's text fields (images left out), one ``name: value`` block each."""
    if not isinstance(obs, dict):
        return "" if obs is None else str(obs)[:MAX_TEXT]
    parts = []
    for key, value in obs.items():
        if _is_image(value):
            continue
        if getattr(value, "ndim", None) == 0:
            value = value.item()  # a numpy scalar, as the client decodes it
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        if text not in ("", '""'):
            parts.append(f"{key}: {text[:MAX_TEXT]}")
    return "\n".join(parts)


def _is_image(value: Any) -> bool:
    """An image: recorded as a file, encoded on the wire, or decoded to an array."""
    if isinstance(value, dict):
        return "__file__" in value or IMAGE_KEY in value
    return getattr(value, "ndim", 0) >= 2


def _action_text(action: Any) -> str:
    return action if isinstance(action, str) else json.dumps(action, default=str)


def _counts(kept: list[Episode]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for ep in kept:
        c = out.setdefault(ep.family or "?", {"episodes": 0, "successes": 0})
        c["episodes"] += 1
        c["successes"] += bool(ep.verdict["success"])
    return out


def card(run_id: str, fmt: str, filters: Filters, result: ExportResult, kept: list[Episode]) -> str:
    """The dataset card: what is in it, how it was filtered, what was left out and why."""
    tasks = Counter(ep.meta.get("task") for ep in kept)
    wins = Counter(ep.meta.get("task") for ep in kept if ep.verdict["success"])
    total = len(kept)
    rate = f"{sum(wins.values()) / total:.1%}" if total else "n/a"
    lines = [
        f"# palaestra run `{run_id}` ({fmt})",
        "",
        f"- episodes: {total}; success rate: {rate}",
        f"- filters: success_only={filters.success_only}, min_score={filters.min_score}, "
        f"family={filters.family}",
        f"- exported in {result.seconds:.2f} s",
        "",
        "| family | episodes | successes | success rate |",
        "|---|---|---|---|",
    ]
    for fam, c in sorted(result.by_family.items()):
        lines.append(
            f"| {fam} | {c['episodes']} | {c['successes']} | {c['successes'] / c['episodes']:.1%} |"
        )
    lines += ["", "| task | episodes | successes |", "|---|---|---|"]
    lines += [f"| {t} | {n} | {wins[t]} |" for t, n in sorted(tasks.items(), key=str)]
    notes = result.report.lines()
    if notes:
        lines += ["", "## Left out", "", *[f"- {n}" for n in notes]]
    if result.report.still_written:
        lines += ["", "The run was still being written: only its finished episodes are here."]
    return "\n".join(lines) + "\n"

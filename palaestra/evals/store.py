"""The results folder of one evaluation: ``config.json`` and ``results.jsonl``.

Each finished episode is appended (and flushed) as one line, so a run stopped by Ctrl-C, a crash
or a gateway restart keeps everything that finished, and running it again plays only what is
missing: an episode counts as done once it was scored or skipped; one that ended in an
infrastructure error is played again. A folder whose ``config.json`` names another suite, agent,
agent options or step budget is refused with the difference, so two runs never mix.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from palaestra.errors import InvalidRequest
from palaestra.evals.config import EpisodeResult, EvalConfig

RESULTS = "results.jsonl"
CONFIG = "config.json"


def read_results(path: Path) -> list[EpisodeResult]:
    """Every episode of a results file (or folder), the last line of each key winning; a torn
    last line (a crash mid-write) is ignored."""
    path = Path(path)
    if path.is_dir():
        path = path / RESULTS
    if not path.exists():
        raise InvalidRequest(f"no results at {path}", field="results")
    latest: dict[tuple[str, int, int], EpisodeResult] = {}
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        try:
            result = EpisodeResult.model_validate_json(line)
        except ValidationError:
            continue
        latest[result.key] = result
    return list(latest.values())


class ResultStore:
    def __init__(self, out: Path, config: EvalConfig) -> None:
        self.out = Path(out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.path = self.out / RESULTS
        self._check(config)
        self.results: dict[tuple[str, int, int], EpisodeResult] = {}
        if self.path.exists():
            for r in read_results(self.path):
                self.results[r.key] = r
        self._file = self.path.open("a", encoding="utf-8")

    def _check(self, config: EvalConfig) -> None:
        meta = self.out / CONFIG
        mine = json.loads(config.model_dump_json(exclude={"out", "url"}))
        if meta.exists():
            theirs: dict[str, Any] = json.loads(meta.read_text())
            wanted = config.identity()
            diffs = [
                f"{k}: {theirs.get(k)!r} there, {json.loads(json.dumps(v, default=str))!r} now"
                for k, v in wanted.items()
                if theirs.get(k) != json.loads(json.dumps(v, default=str))
            ]
            if diffs:
                raise InvalidRequest(
                    f"{self.out} holds the results of another evaluation ({'; '.join(diffs)}); "
                    "resume it with the same settings or choose another --out",
                    field="out",
                )
        elif self.path.exists() and self.path.stat().st_size:
            raise InvalidRequest(
                f"{self.path} exists without its {CONFIG}: not resuming an unknown run",
                field="out",
            )
        meta.write_text(json.dumps(mine, indent=2) + "\n")

    def done(self, key: tuple[str, int, int]) -> bool:
        r = self.results.get(key)
        return r is not None and r.status != "error"

    def append(self, result: EpisodeResult) -> None:
        self.results[result.key] = result
        self._file.write(result.model_dump_json() + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()

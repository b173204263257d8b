"""``palaestra/cad-v0``: build a part step by step on OpenCascade, scored by geometry.

Decisions:

- Geometry lives on the worker. The agent sees text and pixels only: the feature history,
  the solid's properties (volume, area, bbox, counts, validity, holes), the faces and edges
  with the ids selectors accept, the target's specification (the instruction) and renders, and
  the feedback of its last action as a sentence. The target solid and the oracle never leave
  the worker; the verifier reads them through :class:`CadProbe`.
- Success (``cad_part`` verifier) needs IoU >= 0.95 and the dimensions, holes and faces right;
  the score pays for detail beyond the target's outline (an envelope read off the views scores
  0), and with ``dense_reward=True`` the reward of a step is the change of the score, so an
  episode's rewards sum to its end score (see :func:`palaestra.verifiers.cad.part_score`).
- Forking: the session *is* its list of call strings (``obs["history"]`` shows them,
  ``inspect('history')`` gives them as JSON). ``reset(options={"history": [...], "upto": k})``
  starts a session from the first k of them, on any worker, e.g. a new ``RemoteEnv``; in
  process, :meth:`CadEnv.fork` returns those options.
- Export: ``inspect('export step')`` / ``inspect('export stl')`` put the file's text (STEP,
  ASCII STL) into ``obs["inspect"]``, so it crosses the gateway like any observation; in
  process, :meth:`CadEnv.export` writes a file.
- Renders are 2x2 tiles of 128 px (256x256 RGB) so a step stays fast; ``observe=`` leaves out
  parts (e.g. the images) when speed matters more.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from build123d import Shape, export_step, export_stl
from gymnasium import spaces

import palaestra.verifiers.cad  # noqa: F401  (registers the cad_* check kinds)
from palaestra.actions import Action
from palaestra.envs.base import PalaestraEnv
from palaestra.envs.cad import render
from palaestra.envs.cad.actions import CAD_ACTIONS
from palaestra.envs.cad.model import MODEL_ACTIONS, Model
from palaestra.envs.cad.selectors import select
from palaestra.envs.cad.suites import build_target
from palaestra.errors import ActionError, InvalidRequest
from palaestra.spaces import FreeText, JSONText
from palaestra.tasks import Task
from palaestra.verifiers import geometry

PARTS = (
    "views",
    "target_views",
    "spec",
    "history",
    "properties",
    "topology",
    "feedback",
    "inspect",
)
MAX_TEXT = 20_000
MAX_EXPORT = 8_000_000


class CadEnv(PalaestraEnv):
    family = "cad"
    action_set = CAD_ACTIONS

    def __init__(
        self, task: Any = None, *, observe: tuple[str, ...] | list[str] = PARTS, **kwargs: Any
    ) -> None:
        super().__init__(task, **kwargs)
        if isinstance(observe, str) or set(observe) - set(PARTS):
            raise TypeError(f"observe must be a list of parts from {PARTS}, got {observe!r}")
        self.parts = tuple(p for p in PARTS if p in observe)
        image = spaces.Box(0, 255, (render.SIZE, render.SIZE, 3), np.uint8)
        space: dict[str, spaces.Space] = {
            "views": image,
            "target_views": image,
            "spec": FreeText(MAX_TEXT),
            "history": FreeText(200_000),
            "properties": JSONText(MAX_TEXT),
            "topology": JSONText(200_000),
            "feedback": FreeText(MAX_TEXT),
            "inspect": FreeText(MAX_EXPORT),
        }
        self.observation_space = spaces.Dict(
            {**{p: space[p] for p in self.parts}, "last_action_error": FreeText(2000)}
        )
        self.model = Model()
        self.target: Shape | None = None
        self._target_views: np.ndarray | None = None
        self._feedback = ""
        self._inspect = ""
        self._pending_history: list[str] | None = None
        self._views_cache: tuple[int, np.ndarray] | None = None

    # ----- reset with fork options --------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        options = dict(options or {})
        history = options.pop("history", None)
        upto = options.pop("upto", None)
        if history is not None:
            if not isinstance(history, list) or not all(isinstance(c, str) for c in history):
                raise InvalidRequest(
                    "options.history must be a list of call strings", field="options.history"
                )
            if upto is not None:
                if not isinstance(upto, int) or not 0 <= upto <= len(history):
                    raise InvalidRequest(
                        f"options.upto must be an int in 0..{len(history)}", field="options.upto"
                    )
                history = history[:upto]
        elif upto is not None:
            raise InvalidRequest("options.upto needs options.history", field="options.upto")
        self._pending_history = history
        return super().reset(seed=seed, options=options or None)

    def fork(self, upto: int | None = None) -> dict[str, Any]:
        """Reset options that rebuild this session's first ``upto`` steps (all by default)."""
        calls = self.model.calls()
        return {"history": calls if upto is None else calls[:upto]}

    # ----- hooks --------------------------------------------------------------------------
    def _setup(self, task: Task | None) -> None:
        # the sandbox (and its warm child) outlives the episode: resets must not pay for it
        self.model = Model(self.model._sandbox)
        self.target = build_target(task.setup) if task is not None else None
        self._target_views = None
        self._feedback = "a new, empty model: start with new_sketch(...) or run_code(...)"
        self._inspect = ""
        history, self._pending_history = self._pending_history, None
        if history:
            try:
                self.model.replay(history)
            except ActionError as exc:
                raise InvalidRequest(
                    f"cannot fork: {exc.detail}", field="options.history"
                ) from None
            self._feedback = f"forked at step {len(history)}: " + self.model.nodes[-1].feedback

    def _apply(self, action: Action) -> bool:
        self._inspect = ""
        if action.name == "submit":
            self._feedback = "submitted"
            return True
        if action.name == "undo":
            self._feedback = self.model.undo()
        elif action.name == "inspect":
            self._inspect = self._query(action.args["query"].strip())
            self._feedback = (
                f"inspect {action.args['query'].strip()!r}: {len(self._inspect)} characters"
            )
        elif action.name in MODEL_ACTIONS:
            self._feedback = self.model.do(action)
        return False

    def _query(self, query: str) -> str:
        part = self.model.state.part
        q = query.lower()
        if q == "properties":
            return json.dumps(geometry.properties(part))
        if q == "topology":
            return json.dumps(geometry.topology(part, limit=10_000))
        if q == "holes":
            return json.dumps(geometry.holes(part))
        if q == "history":
            return json.dumps(self.model.calls())
        if q.startswith("select "):
            sel = query[7:].strip()
            kind = (
                "faces" if sel.startswith("faces") else "edges" if sel.startswith("edges") else None
            )
            if part is None:  # no part: nothing to select, as every selector would find
                raise ActionError(f"inspect: {sel!r} selects nothing")
            out = {}
            for k in [kind] if kind else ["faces", "edges"]:
                try:
                    found = select(part, sel, k)
                except ActionError:
                    continue
                everything = part.faces() if k == "faces" else part.edges()
                ids = [
                    f"{k[0]}{i}"
                    for i, s in enumerate(everything)
                    if any(s.is_same(f) for f in found)
                ]
                out[k] = ids
            if not any(out.values()):
                raise ActionError(f"inspect: {sel!r} selects nothing")
            return json.dumps(out)
        if q in ("export step", "export stl"):
            if part is None:
                raise ActionError("inspect: there is no part to export yet")
            text = self.export(q.split()[1])
            if len(text) > MAX_EXPORT:
                raise ActionError(
                    f"inspect: the export is {len(text)} characters, over {MAX_EXPORT}"
                )
            return text
        raise ActionError(
            f"inspect: unknown query {query!r}; ask 'properties', 'topology', 'holes', "
            "'history', 'select <selector>', 'export step' or 'export stl'"
        )

    def export(self, fmt: str, path: str | Path | None = None) -> str:
        """The current part as STEP or ASCII STL text; also written to ``path`` if given."""
        part = self.model.state.part
        if part is None:
            raise ActionError("there is no part to export yet")
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / f"part.{fmt}"
            if fmt == "step":
                export_step(part, str(out))
            elif fmt == "stl":
                export_stl(part, str(out), ascii_format=True)
            else:
                raise ValueError(f"export format must be 'step' or 'stl', not {fmt!r}")
            text = out.read_text(errors="replace")
        if path is not None:
            Path(path).write_text(text)
        return text

    def _observe(self) -> dict[str, Any]:
        st = self.model.state
        obs: dict[str, Any] = {}
        if "views" in self.parts:
            obs["views"] = self._views().copy()
        if "target_views" in self.parts:
            if self._target_views is None:
                self._target_views = render.render(self.target, "target")
            obs["target_views"] = self._target_views.copy()
        if "spec" in self.parts:
            obs["spec"] = (self.task.instruction if self.task else "(free modeling: no target)")[
                :MAX_TEXT
            ]
        if "history" in self.parts:
            lines = [f"{i + 1}. {n.call}  -> {n.feedback}" for i, n in enumerate(self.model.nodes)]
            if st.plane is not None:
                lines.append(
                    f"(open sketch on {st.plane_text}: {', '.join(st.sketch_items) or 'empty'})"
                )
            obs["history"] = "\n".join(lines)[-200_000:]
        if "properties" in self.parts:
            obs["properties"] = _safe_json(geometry.properties, st.part)
        if "topology" in self.parts:
            obs["topology"] = _safe_json(geometry.topology, st.part)
        if "feedback" in self.parts:
            obs["feedback"] = self._feedback[:MAX_TEXT]
        if "inspect" in self.parts:
            obs["inspect"] = self._inspect
        return obs

    def _views(self) -> np.ndarray:
        part = self.model.state.part
        key = id(part)
        if self._views_cache is None or self._views_cache[0] != key:
            self._views_cache = (key, render.render(part))
        return self._views_cache[1]

    def state_probe(self) -> CadProbe:
        if self.target is None:
            raise RuntimeError("this episode has no target")
        return CadProbe(self.model.state.part, self.target)

    def render(self) -> np.ndarray:
        return render.render(self.model.state.part)

    def close(self) -> None:
        self.model.close()


def _safe_json(fn: Any, part: Any) -> str:
    """A measurement the kernel cannot make is reported in the text, never a failed session."""
    try:
        return json.dumps(fn(part))
    except Exception as exc:
        return json.dumps({"error": f"could not measure the part: {type(exc).__name__}: {exc}"})


class CadProbe:
    """Privileged read for verifiers: the current part and the target, as kernel shapes."""

    def __init__(self, part: Any, target: Any) -> None:
        self.part, self.target = part, target

    def read(self) -> dict[str, Any]:
        return {"part": self.part, "target": self.target}

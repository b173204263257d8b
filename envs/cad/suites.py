"""The ``cad-parts`` suite: tasks generated from seeds, targets rebuilt on the worker.

A task's ``setup`` is ``{"part_family": ..., "params": {...}}`` (or ``{"target_actions":
[...]}`` for a hand-written task): JSON, and nothing an agent sees (``setup`` is outside
:meth:`Task.agent_view`). The worker rebuilds the target from it and caches it by the setup's
content. Family targets are built by running the family's build123d script in-process: the
script is produced by our own generator from numbers, never taken from task data, so it needs
no sandbox; ``target_actions`` are replayed as semantic actions.

A task's oracle is ``{"policy": "replay", "data": [...calls, "submit()"]}``: the family's
semantic action list, played by the ``replay`` policy of :mod:`palaestra.envs.cad.policies`.

Only tasks that passed execution validation are emitted (``validation.json`` next to this
file records the last full run, written by ``palaestra validate cad-parts --record``; see
:class:`~palaestra.verifiers.validation.ValidationRecord`).
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
from build123d import Shape

from palaestra.envs.cad.families import FAMILIES
from palaestra.envs.cad.model import Model
from palaestra.envs.cad.ops import _clean
from palaestra.tasks import Oracle, PublicMetadata, Task
from palaestra.verifiers.validation import ValidationRecord, digest

SUITE = "cad-parts"
PER_FAMILY = 20
ENV_ID = "palaestra/cad-v0"
#: the last full validation run; a task is keyed by its setup (what the target is) and its
#: verifier (what is checked), so a changed check invalidates the record until the next run
RECORD = ValidationRecord(
    Path(__file__).with_name("validation.json"),
    SUITE,
    lambda task: digest({"setup": task.setup, "verifier": task.verifier}),
    family="cad",
    candidates="palaestra.envs.cad.suites:all_tasks",
)
_TARGETS: OrderedDict[str, Shape] = OrderedDict()
_CACHE_SIZE = 64


def task_id(family: str, index: int) -> str:
    return f"{family}-{index:03d}"


def make_task(family: str, index: int) -> Task:
    fam = FAMILIES[family]
    seed = 1000 * list(FAMILIES).index(family) + index
    params = fam.sample(np.random.default_rng(seed))
    oracle = [*fam.oracle(params), "submit()"]
    difficulty = "easy" if len(oracle) <= 7 else "medium" if len(oracle) <= 10 else "hard"
    return Task(
        id=task_id(family, index),
        family="cad",
        env=ENV_ID,
        instruction=fam.spec(params),
        setup={"part_family": family, "params": params},
        verifier=default_verifier(),
        max_steps=max(30, 3 * len(oracle)),
        public=PublicMetadata(difficulty=difficulty),
        metadata={
            "source": "palaestra.envs.cad.families",
            "part_family": family,
            "title": fam.title,
            "seed": seed,
            "difficulty": difficulty,
            "tags": ["cad", family],
        },
        oracle=Oracle(policy="replay", data=oracle),
    )


def default_verifier(iou: float = 0.95) -> dict[str, Any]:
    """Success needs every check; the score (whose change is the dense reward) pays for the
    detail beyond the target's outline (:func:`palaestra.verifiers.cad.part_score`)."""
    return {
        "kind": "cad_part",
        "checks": [
            {"kind": "cad_iou", "min": iou},
            {"kind": "cad_bbox", "tol": 0.1},
            {"kind": "cad_dims", "tol": 0.05},
            {"kind": "cad_holes", "tol": 0.1},
            {"kind": "cad_faces"},
            {"kind": "cad_chamfer_distance", "max_ratio": 0.02},
        ],
    }


def all_tasks(per_family: int = PER_FAMILY) -> list[Task]:
    return [make_task(f, i) for f in FAMILIES for i in range(per_family)]


def script_for(task: Task) -> str:
    """The equivalent build123d script (the ``run_code`` baseline) of a family task."""
    fam = FAMILIES[task.setup["part_family"]]
    return fam.script(task.setup["params"])


def build_target(setup: dict[str, Any]) -> Shape:
    """The target solid of a task's setup (cached per worker)."""
    key = digest(setup)
    if key in _TARGETS:
        _TARGETS.move_to_end(key)
        return _TARGETS[key]
    if "part_family" in setup:
        fam = FAMILIES[setup["part_family"]]
        namespace: dict[str, Any] = {}
        exec(compile(fam.script(setup["params"]), "<target>", "exec"), namespace)
        shape = namespace["result"]
    elif "target_actions" in setup:
        model = Model()
        model.replay(list(setup["target_actions"]))
        shape = model.state.part
    else:
        raise ValueError("a CAD task's setup needs 'part_family' + 'params' or 'target_actions'")
    shape = _clean(shape)
    _TARGETS[key] = shape
    while len(_TARGETS) > _CACHE_SIZE:
        _TARGETS.popitem(last=False)
    return shape


def load_suite() -> list[Task]:
    """The registered loader: the tasks the recorded run validated (see ValidationRecord)."""
    return RECORD.validated(all_tasks())

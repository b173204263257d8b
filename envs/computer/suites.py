"""The ``computer-basic`` suite: built-in desktop tasks with oracles, validated by execution.

Decisions:

- Tasks are data: one table (:data:`palaestra.envs.computer.basic_tasks.TABLE`) of rows, in
  five groups: file management, text editing, shell and scripting, archives and permissions,
  mixed GUI + code (plus one infeasible task, which the agent must refuse with ``fail``). A row
  names only what is particular to its task: small helpers (:mod:`palaestra.envs.computer.rows`)
  write the check specs (one per kind of check) and the kinds of task that recur (an answer
  written to a file, a file rewritten in place or moved away, an edit in the editor, a command
  typed in the terminal, a chmod), and :func:`_task` does the rest the same way for every row.
- Oracles are action lists, ``{"policy": "replay", "data": [...]}``. Where the task can be done
  with the GUI alone (typing in the terminal, editing in the editor, closing a window), the
  oracle uses only GUI actions, so the GUI path is proven too; elsewhere it is code.
- No instruction demands the GUI ("using the terminal on screen", "with the editor"): nothing
  the verifier can read tells keys typed from ``run_shell`` (the agent's code reaches the
  X server too), so a task names the outcome and the app it may use, and any way that reaches
  the outcome is right. :data:`GUI_CLAIM` finds such wording (a test keeps it out); a task
  that claims the GUI must say so in ``metadata.claims_gui`` and verify it, and the
  ``code_only`` adversary then plays it through code.
- Only tasks that passed execution validation (oracle twice, agreeing; doing nothing fails) are
  emitted: ``validation.json`` beside this file records the last run
  (``palaestra validate computer-basic --record``), keyed by a hash of each task
  so an edited task is held back until validated again.
"""

from __future__ import annotations

import re
from pathlib import Path

from palaestra.envs.computer.basic_tasks import TABLE
from palaestra.envs.computer.rows import Row, all_of
from palaestra.tasks import Oracle, Task
from palaestra.verifiers.validation import ValidationRecord, digest

SUITE = "computer-basic"
ENV_ID = "palaestra/computer-v0"
#: wording that demands the GUI as the means, which no check of this suite can verify
GUI_CLAIM = re.compile(
    r"\b(using|with|through|via) the (terminal|(text )?editor|GUI|mouse|keyboard)\b"
    r"|\b(type|click)\b.*\b(in|on) the (terminal|(text )?editor|screen)\b",
    re.IGNORECASE,
)


def _task(group: str, entry: Row) -> Task:
    gui = all(
        isinstance(a, str) and a.split("(", 1)[0] not in ("run_shell", "run_python", "write_file")
        for a in entry.oracle
    )
    verifier = entry.verifier
    return Task(
        id=entry.tid,
        family="computer",
        env=ENV_ID,
        instruction=entry.instruction,
        setup=entry.setup,
        verifier=verifier if verifier.get("kind") == "all" else all_of(verifier),
        max_steps=30,
        metadata={
            "source": "palaestra.envs.computer.suites",
            "group": group,
            "oracle": "gui" if gui else "code",
            "claims_gui": False,
            "tags": ["computer", group, *entry.tags],
        },
        oracle=Oracle(policy="replay", data=entry.oracle),
    )


def all_tasks() -> list[Task]:
    return [_task(group, row) for group, rows in TABLE.items() for row in rows]


def task_key(task: Task) -> str:
    """What the task is: its instruction, setup, verifier and oracle actions. The oracle is
    keyed by its action list alone, as before oracles named their policy, so the recorded run
    stays valid."""
    data = task.model_dump(include={"instruction", "setup", "verifier"})
    data["oracle"] = task.oracle.data if task.oracle is not None else None
    return digest(data)


#: the last full validation run (``palaestra validate computer-basic --record``)
RECORD = ValidationRecord(
    Path(__file__).with_name("validation.json"),
    SUITE,
    task_key,
    family="computer",
    candidates="palaestra.envs.computer.suites:all_tasks",
)


def load_suite() -> list[Task]:
    """The registered loader: the tasks the recorded run validated."""
    return RECORD.validated(all_tasks())

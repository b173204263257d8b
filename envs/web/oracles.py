"""Scripted reference solutions (oracles) for MiniWoB tasks: policies from observation to action.

An oracle reads only what an agent reads (goal and accessibility tree) and answers with actions
of the action set, so running it through the gateway proves the task, the env and the verifier
together. ``ORACLES`` maps a task name to its policy's import path.
"""

from __future__ import annotations

ORACLES: dict[str, str] = {}

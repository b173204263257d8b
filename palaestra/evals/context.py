"""What an agent is built from for one episode, and the error a model agent raises.

Below both the agent parser (:mod:`.agents`) and the model agents (:mod:`.openai_agent`), which
import it: the parser names a model agent, a model agent needs these two, and neither imports
the other back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from palaestra.actions import ActionSet
from palaestra.tasks import Task


class ModelUnavailable(Exception):
    """The agent's model (or HTTP agent) endpoint could not be reached or kept failing: the
    episode is an error, not the agent's failure."""


@dataclass
class EpisodeContext:
    """What building an agent for one episode may use."""

    family: str
    view: dict[str, Any]  # the task as an agent sees it (Task.agent_view)
    seed: int
    action_set: ActionSet | None = None
    task: Task | None = None  # the full task: only for privileged (scripted) agents
    #: "task/seed/attempt": tells an HTTP agent's episodes apart when several run at once
    episode: str = ""
    attempt: int = 0

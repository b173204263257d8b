"""The user of a tau2 episode: what the env asks of it (which one plays a task is the env's
choice, :func:`palaestra.envs.tau2.env.make_user`: the users import this module).

The default user is symbolic and deterministic (:mod:`.retail_user`, :mod:`.telecom_user`): its
goal and facts come from the task's scenario and gold actions, it reads the assistant with the
simulated-user reader of :mod:`palaestra.envs.runtimes.simuser`, answers what it is asked,
agrees only to what matches its goal, and in telecom acts on its own phone through the world's
user tools (``world.call("user", ...)``), reporting what the phone shows, never inventing it.
The LLM user (:mod:`.llm_user`) plays the same protocol from tau2's scenario text, for
comparison.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from palaestra.envs.tau2.world import Tau2World


@dataclass
class UserTurn:
    """One reply of the user."""

    text: str
    #: the user ends the conversation with this reply (tau2's ``###STOP###``)
    closed: bool = False
    #: the reply says yes to what the assistant's message proposed (a write may follow)
    agreed: bool = False
    #: the user's own tool calls made for this reply, in order: ``{"name", "arguments",
    #: "content", "error"}`` (the env logs them; the agent sees only ``text``)
    calls: list[dict[str, Any]] = field(default_factory=list)


class Tau2User(Protocol):
    @property
    def log(self) -> list[dict[str, Any]]:
        """One entry per reply: at least ``{"heard": [acts...], "said": [...], "text": ...}``,
        and ``"unread": True`` when the message could not be read (the fidelity report counts
        it). Read only: a user keeps its own log."""
        ...

    def opening(self) -> str: ...

    def reply(self, message: str, world: Tau2World) -> UserTurn: ...

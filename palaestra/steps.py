"""The step-result contract shared by worker, gateway, pools, recorder and client.

A worker answers ``reset`` with a :class:`ResetReply` and ``step`` with a :class:`StepReply`:
JSON-ready dicts (observations already encoded), so they cross processes, sockets and Ray
unchanged. ``privileged`` carries the full verifier report from the worker to the gateway's
recorder and is stripped by :func:`public` before anything reaches the agent.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict


class ResetReply(TypedDict):
    observation: dict[str, Any]
    info: dict[str, Any]


class StepReply(TypedDict):
    observation: dict[str, Any]
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any]
    privileged: NotRequired[dict[str, Any]]


def step_reply(
    observation: dict[str, Any],
    reward: float,
    terminated: bool,
    truncated: bool,
    info: dict[str, Any],
) -> StepReply:
    return {
        "observation": observation,
        "reward": float(reward),
        "terminated": bool(terminated),
        "truncated": bool(truncated),
        "info": info,
    }


def ended(reply: StepReply) -> bool:
    """The episode is over (terminated or truncated): the next call must be a reset."""
    return reply["terminated"] or reply["truncated"]


def public(reply: StepReply) -> tuple[StepReply, dict[str, Any] | None]:
    """Split a worker's reply into what the agent may see and the privileged part."""
    privileged = reply.pop("privileged", None)
    return reply, privileged

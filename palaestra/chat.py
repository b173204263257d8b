"""The chat-line contract between the GUI families and the checks that read their chat.

An agent's ``send_msg_to_user`` / ``report_infeasible`` / ``ask_user`` become chat lines with
these prefixes; answer and infeasibility checks read them back. Keeping the prefixes here is
what keeps writers (envs) and readers (verifiers, policies) from drifting apart.
"""

from __future__ import annotations

ANSWER = "assistant: "
INFEASIBLE = "assistant (infeasible): "
QUESTION = "assistant (question): "
USER = "user: "


def answers(lines: list[str]) -> list[str]:
    """The agent's answers, oldest first, without their prefix."""
    return [line.removeprefix(ANSWER) for line in lines if line.startswith(ANSWER)]

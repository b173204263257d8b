"""What every task of a dialogue family says alike: the assistant's brief and what is public.

Both families (usersim, tau2) make customer-service tasks: the agent is told who it serves and
the same rules of the job (help with the request, follow the policy, use the tools, ask for
what it needs), and of a task's metadata only the domain is public; the private metadata opens
with the task's source and domain. A family fixes its part once (:class:`TaskForm`) and gives
each task its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from palaestra.tasks import Oracle, PublicMetadata, Task


@dataclass(frozen=True)
class TaskForm:
    """One dialogue family's part of every task it makes."""

    family: str
    env: str
    #: the ``metadata.source`` of every task (where the family's tasks come from)
    source: str
    #: what the brief calls the person the assistant serves ("user", "customer")
    party: str
    max_steps: int

    def task(
        self,
        id: str,
        domain: str,
        role: str,
        *,
        setup: dict[str, Any],
        verifier: dict[str, Any],
        oracle: Oracle,
        metadata: dict[str, Any],
        note: str = "",
    ) -> Task:
        """A task whose agent is the ``role`` (``"customer-service agent of ..."``); ``note``
        ends the brief with the family's own rule, ``metadata`` follows source and domain."""
        return Task(
            id=id,
            family=self.family,
            env=self.env,
            instruction=f"You are the {role}. Help the {self.party} with their request, "
            f"following the policy. Use the tools; ask the {self.party} for what you "
            f"need{note}.",
            setup=setup,
            verifier=verifier,
            max_steps=self.max_steps,
            public=PublicMetadata(domain=domain),
            metadata={"source": self.source, "domain": domain, **metadata},
            oracle=oracle,
        )

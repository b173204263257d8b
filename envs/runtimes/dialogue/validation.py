"""How a dialogue family's tasks are validated: what usersim and tau2 declare alike.

Episodes run in one env a thread, each on its own seed (the simulated user's persona changes
with it, and the policy is given it too), three oracle runs; an assistant's refused move is
scored, never raised (the reference assistant's too: a conversation ends rather than fails),
and only the oracle's end state is read (the one the mutants start from). A family adds its
env, its record, its mutants (:meth:`DialoguePlan.mutant`) and its search.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from palaestra.verifiers.validation import Mutator, ValidationPlan


class DialoguePlan(ValidationPlan):
    repeats = 3
    strict = ()
    seeded = True

    def end_state(self, env: Any, task: Any, role: str, scratch: Path) -> Mapping[str, Any]:
        return env.state_probe().read() if role == "oracle" else {}

    def mutate(self, task: Any) -> Mutator:
        @contextlib.contextmanager
        def mutate(state: Mapping[str, Any], mutation: Mapping[str, Any]) -> Iterator[Mapping]:
            yield self.mutant(dict(state), str(mutation["name"]))

        return mutate

    def mutant(self, state: dict[str, Any], name: str) -> dict[str, Any]:
        """The oracle's end state (a copy) changed as the mutation ``name`` says."""
        raise NotImplementedError

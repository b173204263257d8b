"""The persistent model: every modeling step is a node holding the state it produced.

Nodes keep their (immutable) states, so ``undo`` is instant and the model at any step is at
hand. A node also keeps its action as a canonical call string: the list of call strings *is*
the session, portable to any worker, which is what forking and export of a session replay.
Steps that do not change the model (``inspect``, ``undo`` itself, ``submit``) are not nodes.
"""

from __future__ import annotations

from dataclasses import dataclass

from palaestra.actions import Action
from palaestra.envs.cad import ops
from palaestra.envs.cad.actions import CAD_ACTIONS
from palaestra.envs.cad.ops import CadState
from palaestra.envs.cad.sandbox import Sandbox
from palaestra.errors import ActionError

MODEL_ACTIONS = frozenset({*ops.OPS, "run_code"})


@dataclass(frozen=True)
class Node:
    call: str
    state: CadState
    feedback: str


class Model:
    def __init__(self, sandbox: Sandbox | None = None) -> None:
        self.nodes: list[Node] = []
        self._sandbox = sandbox

    @property
    def state(self) -> CadState:
        return self.nodes[-1].state if self.nodes else CadState()

    def calls(self) -> list[str]:
        return [n.call for n in self.nodes]

    def do(self, action: Action) -> str:
        """Apply a model-changing action; ActionError leaves the model as it was."""
        if action.name == "run_code":
            state, feedback = self._run_code(action.args["script"])
        else:
            state, feedback = ops.apply(self.state, action)
        self.nodes.append(Node(action.to_call(), state, feedback))
        return feedback

    def undo(self) -> str:
        if not self.nodes:
            raise ActionError("there is nothing to undo: the model is at its empty start")
        gone = self.nodes.pop()
        return f"undid step {len(self.nodes) + 1}, {gone.call[:80]}; " + ops._summary(
            self.state.part
        )

    def replay(self, calls: list[str]) -> None:
        """Rebuild from call strings (a fork); ActionError names the step that failed."""
        for i, call in enumerate(calls):
            try:
                action = CAD_ACTIONS.parse(call)
                if action.name not in MODEL_ACTIONS:
                    raise ActionError(f"{action.name} is not a modeling step")
                self.do(action)
            except ActionError as exc:
                raise ActionError(
                    f"history step {i + 1} ({str(call)[:80]}): {exc.detail}"
                ) from None

    def _run_code(self, script: str) -> tuple[CadState, str]:
        if self._sandbox is None:
            self._sandbox = Sandbox()
        outcome = self._sandbox.run(script)
        if outcome.shape is None:
            raise ActionError(f"run_code: {outcome.error}")
        part = ops._clean(outcome.shape)
        if not part.solids():
            raise ActionError("run_code: the script's result has no solid")
        return CadState(
            part=part
        ), f"run_code: the script's result is the model; {ops._summary(part)}"

    def close(self) -> None:
        if self._sandbox is not None:
            self._sandbox.close()

"""tau2-bench's domains as palaestra worlds (groundwork: the retail world and its DB check).

What is here mirrors tau2-bench (sierra-research/tau2-bench, MIT; data in ``../shared/tau2``):
the retail database, one private SQLite copy per episode (:mod:`.store`), the agent's retail
tools with tau2's semantics and error texts (:mod:`.retail`), and the ``DB`` reward basis: the
final database compared with the one produced by replaying the task's gold actions
(:mod:`.evaluate`).

Left for the next session: the deterministic symbolic user, the ``COMMUNICATE`` and action
checks and their combination per ``reward_basis``, initialization actions (retail tasks have
none), telecom (its agent DB, the user's device and tools), and the ``tau2-retail`` /
``tau2-telecom`` suites registered in the usersim FAMILY.
"""

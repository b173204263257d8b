"""tau2-bench's retail and telecom domains as palaestra worlds (``palaestra/tau2-v0``).

What each module is, from the bottom: the task files (:mod:`.tasks`, checked at load) and data
(``data/``, tau2's, MIT); the worlds (:mod:`.store` and :mod:`.retail` for retail;
:mod:`.telecom_world`, :mod:`.telecom_device` and :mod:`.telecom_eval` for telecom's two sides)
behind one protocol (:mod:`.world`: tool calls from either side, state, gold state, assertions);
the tools as an LLM sees them (:mod:`.schemas`); the users (:mod:`.user`: the symbolic
:mod:`.retail_user` and :mod:`.telecom_user`, and :mod:`.llm_user`); the env (:mod:`.env`); the
gold assistants (:mod:`.gold`, :mod:`.retail_gold`, :mod:`.telecom_gold`), the family's
adversaries on tau2 tasks (:mod:`.adversaries`), the suites and their validation
(:mod:`.suites`) and the user's fidelity report (:mod:`.fidelity`). Scoring is the ``tau2`` check
kind (:mod:`palaestra.verifiers.tau2`). The guide: ``docs/tau2.md``.
"""

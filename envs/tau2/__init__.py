"""The tau2 family: tau2-bench's retail and telecom domains as palaestra worlds
(``palaestra/tau2-v0``), the suites ``tau2-retail`` and ``tau2-telecom``.

The dialogue itself (the moves, the observation, the adversaries' strategy set, the search
space) is the dialogue runtime's (:mod:`palaestra.envs.runtimes.dialogue`), shared with the
``usersim`` family; this package brings tau2's worlds, users, gold assistants and tasks.

What each module is, from the bottom: the task files (:mod:`.tasks`, checked at load) and data
(``data/``, tau2's, MIT); the worlds (:mod:`.store` and :mod:`.retail` for retail;
:mod:`.telecom_world`, :mod:`.telecom_device` and :mod:`.telecom_eval` for telecom's two sides)
behind one protocol (:mod:`.world`: tool calls from either side, state, gold state, assertions);
the tools as an LLM sees them (:mod:`.schemas`); the users (:mod:`.user`: the symbolic
:mod:`.retail_user` and :mod:`.telecom_user`, and :mod:`.llm_user`); the env (:mod:`.env`); the
gold assistants (:mod:`.gold`, :mod:`.retail_gold`, :mod:`.telecom_gold`), the family's
policies (:mod:`.policies`) and adversaries (:mod:`.adversaries`), the suites (:mod:`.suites`),
how their tasks are validated (:mod:`.validation`) and the user's fidelity report
(:mod:`.fidelity`). Scoring is the
``tau2`` check kind (:mod:`palaestra.verifiers.tau2`). The guide: ``README.md`` here and
``docs/tau2.md``.
"""

from __future__ import annotations

from palaestra.family import Family, SuiteSpec
from palaestra.registry import EnvSpec

FAMILY = Family(
    name="tau2",
    envs=(
        EnvSpec(
            "palaestra/tau2-v0",
            "palaestra.envs.tau2.env:Tau2Env",
            family="tau2",
            description="tau2-bench's retail and telecom worlds with tau2's tools and scoring; "
            "a deterministic symbolic user (in telecom, acting on its own phone).",
        ),
    ),
    suites=(
        SuiteSpec(
            "tau2-retail",
            "palaestra.envs.tau2.suites:retail",
            "tau2-bench retail (train/test splits in metadata), symbolic user, validated",
        ),
        SuiteSpec(
            "tau2-telecom",
            "palaestra.envs.tau2.suites:telecom",
            "tau2-bench telecom, the user acting on their phone; splits in metadata; validated",
        ),
    ),
    package="palaestra.envs.tau2",
    options="palaestra.envs.runtimes.dialogue.options:DialogueOptions",
    description="tau2-bench retail and telecom: tool-using dialogues in tau2's worlds, scored "
    "as tau2 scores them.",
)

"""The web family's scripted policies, behind the one ``Policy`` protocol (see ``POLICIES``).

``miniwob`` plays the scripted oracle of a MiniWoB task, ``plan`` the planned oracle of a
synthesized app's task, ``random`` clicks and types on elements of the tree, ``noop`` does
nothing. Every one reads only what an agent reads (goal and accessibility tree, through
:mod:`palaestra.envs.runtimes.axtree`) and answers with actions of the web action set, so
running an oracle through the gateway proves the task, the env and the verifier together.

MiniWoB's oracles are functions from observation to action; ``ORACLES`` maps a task name to
its oracle, and a MiniWoB task's ``oracle`` is ``{"policy": "miniwob", "data": "<task name>"}``.

Every MiniWoB oracle is stateless: it is called once per step with the latest observation and
works out how far the episode has got from the tree itself (a textbox already holding its value,
a checkbox already checked, which element has the focus). That keeps an oracle usable through
any client, including a remote one that only relays observations. Tasks whose solution needs
something the tree does not show (icons with neither names nor ids/classes, SVG shapes, canvas
drawings, file-vs-folder) have no oracle here.

The modules, by job: :mod:`.reading` (the page as an agent reads it: widgets, quoted words,
ordinals, the submit button, arithmetic), the oracles by MiniWoB task group (:mod:`.clicking`,
:mod:`.forms`, :mod:`.reckoning`, :mod:`.widgets`, :mod:`.apps`), :mod:`.miniwob` (the table
of oracles and the ``miniwob`` policy), :mod:`.plan` (synthesized tasks' plans and their
adversaries) and :mod:`.baseline` (``random``, ``noop``).
"""

from __future__ import annotations

from palaestra.envs.web.policies.apps import email_inbox
from palaestra.envs.web.policies.baseline import CLICKABLE, NOOP, WORDS, RandomPolicy
from palaestra.envs.web.policies.clicking import click_test
from palaestra.envs.web.policies.miniwob import ORACLES, MiniWobPolicy
from palaestra.envs.web.policies.plan import (
    ADVERSARIES,
    GAVE_UP,
    TEXT_ROLES,
    AdversaryPlan,
    PlanPolicy,
    set_field,
)
from palaestra.envs.web.policies.reading import quoted, submit_button, widgets
from palaestra.policies import ConstantPolicy

__all__ = [
    "ADVERSARIES",
    "CLICKABLE",
    "GAVE_UP",
    "NOOP",
    "ORACLES",
    "POLICIES",
    "TEXT_ROLES",
    "WORDS",
    "AdversaryPlan",
    "MiniWobPolicy",
    "PlanPolicy",
    "RandomPolicy",
    "click_test",
    "email_inbox",
    "quoted",
    "set_field",
    "submit_button",
    "widgets",
]

#: the web family's scripted policies (``oracle`` is generic: it plays what ``task.oracle`` names)
POLICIES = {
    "miniwob": MiniWobPolicy,
    "plan": PlanPolicy,
    "random": RandomPolicy,
    "noop": lambda: ConstantPolicy(NOOP),
}

"""The shipped phone suite, ``phone``: synthesized phone tasks on every built-in app domain.

The tasks are made by the synthesis pipeline (``family="mobile"``) from fixed seeds,
execution-validated on the embedded phone, and **committed** as one JSON file beside this module
(``phone.json``, every task carrying its validation report). This module only loads it; its
maker is synthesis, above the families (:mod:`palaestra.synthesis.phone`). Re-make it with::

    python -m palaestra.synthesis.phone

Why committed rather than generated at first use with a content-hash cache (as the usersim
suite is): validating a phone task drives Chromium through the oracle, noop, the mutants and six
adversaries (the last build: 40 candidates in 420 s on a busy 2-core machine), so the suite costs
minutes to make, and a cache keyed by the code that plays the tasks would be invalidated by every
change to the app runtime, re-spending those minutes inside ``make test`` and at a user's first
``palaestra eval``. A committed file loads in milliseconds, is the same on every machine, and is
reproducible: the seeds are fixed and validation runs serially (``parallel=1``), so which
candidates are kept does not depend on timing. ``tests/envs/mobile/test_suite.py`` checks that
the file still matches what the generator makes from those seeds, and plays an oracle.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

from palaestra.tasks import Suite, task_from_file

SUITE = "phone"
FILE = Path(__file__).with_name("phone.json")
DESCRIPTION = (
    "Synthesized phone tasks on every built-in app domain (bank, calendar, email, shop, "
    "train), two app variants each, AndroidWorld actions; every task execution-validated on "
    "the embedded phone."
)


@functools.cache
def suite() -> Suite:
    """The registered loader: the committed tasks (only validated ones are ever written)."""
    data = json.loads(FILE.read_text())
    tasks = [task_from_file(t, str(FILE)) for t in data["tasks"]]
    return Suite(name=SUITE, description=DESCRIPTION, tasks=tasks)

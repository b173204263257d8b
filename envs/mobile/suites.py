"""The shipped phone suite, ``phone``: synthesized phone tasks on every built-in app domain.

The tasks are made by the synthesis pipeline's public :func:`~palaestra.synth_apps.pipeline.
synthesize` (``family="mobile"``) from fixed seeds, execution-validated on the embedded phone,
and **committed** as one JSON file beside this module (``phone.json``, every task carrying its
validation report). Regenerate it with::

    python -m palaestra.envs.mobile.suites

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
import shutil
import tempfile
from pathlib import Path
from typing import Any

from palaestra.tasks import Suite, task_from_file
from palaestra.verifiers.validation import code_digest

SUITE = "phone"
FILE = Path(__file__).with_name("phone.json")
#: what the suite is made from; changing any of these changes the tasks
SEED = 0
VARIANTS = 2
TASKS = 30
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


def build(out: Path = FILE, parallel: int = 1) -> dict[str, Any]:
    """Synthesize and validate the suite from its fixed seeds and write it to ``out``; the
    pipeline's report is returned (and kept in the file, without the per-task drop list)."""
    from palaestra.synth_apps.pipeline import synthesize
    from palaestra.synth_apps.spec import domain_names

    work = Path(tempfile.mkdtemp(prefix="palaestra-phone-suite-"))
    try:
        report = synthesize(
            domain_names(),
            variants=VARIANTS,
            tasks=TASKS,
            out=work,
            seed=SEED,
            parallel=parallel,
            name=SUITE,
            family="mobile",
        ).to_json()
        made = [json.loads(p.read_text()) for p in sorted((work / "tasks").glob("*.json"))]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    # per-task reports ride on the tasks themselves; the drops name tasks no one ships
    summary = {k: v for k, v in report.items() if k not in ("out", "drops", "tasks")}
    payload = {
        "suite": SUITE,
        "seed": SEED,
        "variants": VARIANTS,
        "report": summary,
        "code": code_digest("mobile"),  # the code that validated them (tests check it)
    }
    out.write_text(json.dumps({**payload, "tasks": made}, indent=1, sort_keys=True) + "\n")
    suite.cache_clear()
    return report


if __name__ == "__main__":
    result = build()
    print(
        f"{result['validated']} of {result['generated']} tasks validated "
        f"in {result['seconds']} s -> {FILE}"
    )

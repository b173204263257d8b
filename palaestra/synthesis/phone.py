"""The maker of the shipped phone suite, ``phone`` (``envs/mobile/phone.json``).

The mobile family only loads the committed file (``palaestra.envs.mobile.suites``, where the
reasons for committing it are); making it is synthesis, which plays the family's envs and
policies, so the maker lives here, above the families. Re-make the file with::

    python -m palaestra.synthesis.phone

It runs :func:`~palaestra.synthesis.pipeline.synthesize` (``family="mobile"``) from fixed seeds
with serial validation (``parallel=1``), so which candidates are kept does not depend on timing:
the same file on every machine. ``tests/envs/mobile/test_suite.py`` checks that the committed
tasks are what these seeds generate.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from palaestra.envs.mobile.suites import FILE, SUITE, suite
from palaestra.synth_apps.spec import domain_names
from palaestra.synthesis.pipeline import synthesize
from palaestra.validation import code_digest

#: what the suite is made from; changing any of these changes the tasks
SEED = 0
VARIANTS = 2
TASKS = 30


def build(out: Path = FILE, parallel: int = 1) -> dict[str, Any]:
    """Synthesize and validate the suite from its fixed seeds and write it to ``out``; the
    pipeline's report is returned (and kept in the file, without the per-task drop list)."""
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

"""Our tau2 port against tau2-bench's own code, on every task of both domains (``crosscheck``).

tau2's source is read from ``PALAESTRA_TAU2_SRC``, else from ``../shared/tau2/src`` beside the
repository (where CI has it), and runs in ``.venv-tau2`` (``make setup`` builds it with
``scripts/setup-tau2.sh``; ``PALAESTRA_TAU2_PYTHON`` names another interpreter). Either one
missing fails these tests, naming it: the check is never skipped silently. Set
``PALAESTRA_TAU2_CROSSCHECK=skip`` to skip it on purpose (a machine without tau2's source).

One run compares both domains (tau2's side imports once, and works on a task while ours plays
the next); each test asserts on its domain's report.
"""

import os
from pathlib import Path

import pytest

from palaestra.envs.tau2 import crosscheck
from palaestra.envs.tau2 import tasks as tau2_tasks

#: about a minute on two idle cores (docs/tau2.md); the limit is for a shared, loaded machine
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]
ROOT = Path(__file__).resolve().parents[3]
OPT_OUT = "PALAESTRA_TAU2_CROSSCHECK"


#: where this workplace keeps tau2-bench's source: beside the checkout, or the machine's own
#: shared folder when the checkout is a clone made elsewhere (CI's clean clone)
SHARED = (ROOT / ".." / "shared" / "tau2" / "src", Path("/work/shared/tau2/src"))


def _where() -> tuple[Path, Path]:
    found = next((p for p in SHARED if (p / "tau2").is_dir()), SHARED[0])
    src = Path(os.environ.get("PALAESTRA_TAU2_SRC") or found)
    python = Path(os.environ.get("PALAESTRA_TAU2_PYTHON") or ROOT / ".venv-tau2" / "bin" / "python")
    return src.resolve(), python


@pytest.fixture(scope="module")
def reports() -> dict[str, crosscheck.Report]:
    if os.environ.get(OPT_OUT) == "skip":
        pytest.skip(f"{OPT_OUT}=skip: the tau2 cross-check is switched off on purpose")
    src, python = _where()
    missing = [
        f"{what} ({path}): {fix}"
        for what, path, fix in (
            (
                "tau2-bench's source",
                src / "tau2" / "evaluator" / "evaluator.py",
                "set PALAESTRA_TAU2_SRC to tau2-bench's src/",
            ),
            (
                "tau2-bench's data",
                src.parent / "data" / "tau2" / "domains" / "retail" / "db.json",
                "lay data/tau2/domains/ beside that src/",
            ),
            ("the tau2 venv", python, "run `make setup` (scripts/setup-tau2.sh)"),
        )
        if not path.exists()
    ]
    if missing:
        pytest.fail(
            "the tau2 cross-check cannot run: missing "
            + "; ".join(missing)
            + f" (or set {OPT_OUT}=skip to skip it on purpose)"
        )
    return crosscheck.run(src, python)


@pytest.mark.parametrize("domain", tau2_tasks.DOMAINS)
def test_agrees_with_tau2s_own_code_on_every_task(domain, reports):
    """Every call's answer and the world after it, the final worlds, and tau2's own reward
    beside ours for the gold assistant and each adversary: equal, except the terms
    ``verifiers/tau2.py`` documents as stricter (or more lenient) than tau2's."""
    report = reports[domain]
    assert report.differences == [], "\n".join(report.differences[:20])
    tasks = len(tau2_tasks.tasks(domain))
    runs = 2 + 1 + len(crosscheck.FAMILY.adversary_names())  # probes, gold, adversaries
    assert report.counts["tasks"] == tasks
    assert report.counts["episodes"] == tasks * (runs - 2)
    assert report.counts["answers"] > tasks * 50 and report.counts["states"] > tasks
    # the documented differences do occur (so the relation is exercised, not vacuous)
    assert any("RULES" in s for s in report.stricter)

"""The dialogue runtime shared by the usersim and tau2 families: one strategy set for both
families' adversaries, and two families that stand on it without importing each other."""

from __future__ import annotations

import subprocess
import sys

import pytest

from palaestra.envs.runtimes.dialogue import adversaries as dialogue
from palaestra.errors import InvalidRequest
from palaestra.family import family


@pytest.mark.parametrize("name", ["usersim", "tau2"])
def test_each_dialogue_family_plays_the_one_strategy_set(name: str) -> None:
    assert family(name).adversary_names() == ["refuse_fixed", *dialogue.STRATEGIES]


def test_a_family_that_leaves_out_a_strategy_is_refused() -> None:
    class Partial(dialogue.Adversary):
        PLAYS = {"refuse_stuffed": lambda a: iter(())}

    with pytest.raises(TypeError, match="must play exactly"):
        dialogue.table(Partial)
    with pytest.raises(TypeError, match="no play of"):
        dialogue.plays({"_refuse_stuffed": lambda a: iter(())})


def test_an_unknown_strategy_is_refused() -> None:
    with pytest.raises(InvalidRequest, match="no policy 'bribe'"):
        family("tau2").policy("bribe")
    with pytest.raises(ValueError, match="unknown adversary 'bribe'"):
        dialogue.Adversary("bribe")


@pytest.mark.parametrize(
    ("loaded", "foreign"),
    [
        ("palaestra.envs.tau2.policies, palaestra.envs.tau2.suites, palaestra.envs.tau2.fidelity",
         "palaestra.envs.usersim"),
        ("palaestra.envs.usersim.policies, palaestra.envs.usersim.suites, "
         "palaestra.envs.usersim.fidelity", "palaestra.envs.tau2"),
    ],
)  # fmt: skip
def test_neither_dialogue_family_loads_the_other(loaded: str, foreign: str) -> None:
    """At run time too (import-linter reads the imports written down): playing and validating
    one family's tasks never brings the other family's modules into the process (its package,
    the descriptor, is read by the plugin loader like every family's)."""
    code = (
        f"import sys, {loaded}\n"
        f"print(sorted(m for m in sys.modules if m.startswith({foreign + '.'!r})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "[]", out.stdout


def test_each_dialogue_familys_record_hangs_on_its_own_code_and_the_runtimes() -> None:
    """A validation record keeps the digest of the code that decided it: tau2's covers tau2
    and the dialogue runtime, never usersim (an edit there does not stale tau2's records)."""
    from palaestra.validation import code_sources

    tau2, usersim = code_sources("tau2"), code_sources("usersim")
    for shared in ("adversaries", "env", "search"):
        name = f"palaestra/envs/runtimes/dialogue/{shared}.py"
        assert name in tau2 and name in usersim, name
    assert {"palaestra/envs/tau2/adversaries.py", "palaestra/verifiers/tau2.py"} <= set(tau2)
    assert not [n for n in tau2 if n.startswith("palaestra/envs/usersim/")]
    assert not [n for n in usersim if n.startswith("palaestra/envs/tau2/")]

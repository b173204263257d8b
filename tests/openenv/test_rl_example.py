"""examples/miniwob_reinforce.py, short: a policy trained from zero weights through
RemoteVectorEnv pools beats the random clicker by a margin chance cannot explain."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "miniwob_reinforce.py"

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(600)]


def _example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("miniwob_reinforce", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_features_and_untrained_policy_is_uniform() -> None:
    ex = _example()
    tree = "\n".join(
        [
            "RootWebArea 'T'",
            "\t[2] generic 'Click on the \"ok\" button.'",
            "\t[4] button 'ok'",
            "\t[5] button 'no'",
        ]
    )
    els = ex.elements(tree)
    assert [e.bid for e in els] == ["2", "4", "5"]
    phi = [ex.features('Click on the "ok" button.', e) for e in els]
    assert phi[1][0] == 1.0 and phi[2][0] == 0.0 and phi[0][2] == 1.0
    assert np.allclose(ex.Policy().probs(np.stack(phi)), 1 / 3)  # zero weights: random clicker


def test_short_training_beats_random_beyond_chance(gateway: str, tmp_path: Path) -> None:
    ex = _example()
    result = ex.train(
        gateway,
        tasks=("click-button", "click-link"),
        envs_per_task=2,
        minutes=1.5,
        target=0.9,
        eval_rounds=3,
        log=False,
    )
    n = result["eval_episodes"]
    k = round(result["trained_success"] * n)
    # chance: a clicker at least as good as the measured random one (and never below 1 in 4,
    # more than a uniform click on these pages gets) scoring k of n or better
    p0 = max(result["random_success"], 0.25)
    assert ex.binomial_tail(k, n, p0) < 1e-4, result
    ex.plot(result, tmp_path / "curve.png")
    assert (tmp_path / "curve.png").stat().st_size > 1000

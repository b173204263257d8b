"""The strategies of synth_apps.adversaries as a family's policies: the one factory the web and
mobile families both build their ``ADVERSARIES`` with."""

from typing import Any

import pytest

from palaestra.envs.runtimes.axtree import OracleError
from palaestra.family import family
from palaestra.policies import GiveUpPolicy
from palaestra.synth_apps import adversaries
from palaestra.synth_apps.adversaries import STRATEGIES

FALLBACK = "report_infeasible('gave up')"


class Lost:
    """A plan policy that never finds its step (the row is not there)."""

    def __init__(self, build: adversaries.Build) -> None:
        self.build = build

    def reset(self, task: Any) -> None:
        pass

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> str:
        raise OracleError("no such row")


def test_each_strategy_plays_its_own_plan_and_gives_up_with_the_fallback():
    table = adversaries.policies(Lost, FALLBACK)
    assert list(table) == list(STRATEGIES)
    for name, factory in table.items():
        policy = factory()
        assert isinstance(policy, GiveUpPolicy) and policy.inner.build is STRATEGIES[name]
        policy.reset(None)
        assert policy.act({}, {}) == FALLBACK  # a failed attack, not a crash
        with pytest.raises(StopIteration):
            policy.act({}, {})
    assert table["every_row"]() is not table["every_row"]()  # a fresh policy per episode


@pytest.mark.parametrize("name", ["web", "mobile"])
def test_the_app_families_offer_every_strategy(name):
    assert set(STRATEGIES) <= set(family(name).policy_names())
    policy = family(name).policy("repeat_last")
    assert isinstance(policy, GiveUpPolicy) and policy.inner.build is STRATEGIES["repeat_last"]

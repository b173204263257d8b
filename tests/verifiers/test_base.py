import pytest

from palaestra.verifiers import DeclarativeVerifier, check_kind, check_kinds
from palaestra.verifiers.base import CheckResult


class Probe:
    def __init__(self, state):
        self.state = state

    def read(self):
        return self.state


STATE = {"order": {"status": "paid", "items": [{"sku": "a"}]}, "answer": "42", "n": 5}


@pytest.mark.parametrize(
    ("spec", "success"),
    [
        ({"kind": "equals", "path": "order.status", "value": "paid"}, True),
        ({"kind": "equals", "path": "order.items.0.sku", "value": "b"}, False),
        ({"kind": "not_equals", "path": "n", "value": 4}, True),
        ({"kind": "exists", "path": "order.refund"}, False),
        ({"kind": "in_range", "path": "n", "min": 1, "max": 5}, True),
        ({"kind": "contains", "path": "answer", "value": "4"}, True),
        ({"kind": "regex", "path": "answer", "pattern": "^4[0-9]$"}, True),
    ],
)
def test_leaf_kinds(spec, success):
    result = DeclarativeVerifier(spec).verify(Probe(STATE))
    assert result.success is success and result.error is None


def test_composites_and_partial_scores():
    yes = {"kind": "equals", "path": "n", "value": 5}
    no = {"kind": "equals", "path": "n", "value": 6}
    v = DeclarativeVerifier({"kind": "all", "checks": [yes, no]}).verify(Probe(STATE))
    assert not v.success and v.score == 0.5 and len(v.checks) == 2
    v = DeclarativeVerifier({"kind": "any", "checks": [yes, no]}).verify(Probe(STATE))
    assert v.success and v.score == 1.0
    spec = {
        "kind": "weighted",
        "threshold": 0.7,
        "checks": [{"weight": 3, "check": yes}, {"weight": 1, "check": no}],
    }
    v = DeclarativeVerifier(spec).verify(Probe(STATE))
    assert v.success and v.score == 0.75


def test_a_broken_verifier_reports_an_error_not_a_silent_zero():
    missing = DeclarativeVerifier({"kind": "equals", "path": "nope", "value": 1}).verify(
        Probe(STATE)
    )
    assert missing.error and "KeyError" in missing.error
    unknown = DeclarativeVerifier({"kind": "telepathy"}).verify(Probe(STATE))
    assert "unknown check kind" in unknown.error

    class Exploding:
        def read(self):
            raise RuntimeError("db gone")

    assert (
        "db gone" in DeclarativeVerifier({"kind": "exists", "path": "n"}).verify(Exploding()).error
    )


def test_families_register_their_own_kinds():
    @check_kind("test_even")
    def _even(probe, spec):
        n = probe.read()[spec["path"]]
        return CheckResult("test_even", n % 2 == 0, float(n % 2 == 0))

    assert "test_even" in check_kinds()
    assert not DeclarativeVerifier({"kind": "test_even", "path": "n"}).verify(Probe(STATE)).success

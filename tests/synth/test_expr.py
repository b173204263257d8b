"""The spec expression language evaluates data, never Python objects or code."""

import datetime as dt

import pytest

from palaestra.synth_apps.expr import ExprError, evaluate, names, render


def test_arithmetic_comparisons_dates_and_conditionals():
    scope = {"record": {"price": 10.0, "date": dt.date(2026, 12, 2)}, "today": dt.date(2026, 12, 1)}
    assert evaluate("record.price * 3 if record.date <= today + days(1) else 0", scope) == 30.0
    assert evaluate("1 < 2 <= 2 and not False", {}) is True
    assert evaluate("record['price'] in [10.0, 11]", scope) is True
    assert names("record.a + input.b * max(1, x)") == {"record", "input", "x"}


@pytest.mark.parametrize(
    "source",
    [
        "__import__('os').system('true')",
        "record.__class__",
        "(lambda: 1)()",
        "open('/etc/passwd')",
        "[x for x in record]",
        "record.keys()",
    ],
)
def test_code_is_refused(source):
    with pytest.raises(ExprError):
        evaluate(source, {"record": {"a": 1}})


def test_errors_name_the_problem():
    with pytest.raises(ExprError, match="unknown name 'nope'"):
        evaluate("nope + 1", {"record": {}})
    with pytest.raises(ExprError, match="no field 'b'"):
        evaluate("record.b", {"record": {"a": 1}})
    with pytest.raises(ExprError, match="ZeroDivisionError"):
        evaluate("1 / 0", {})


def test_templates_format_values_like_the_app():
    scope = {"r": {"p": 4.5, "d": dt.date(2026, 12, 3), "ok": True}}
    assert render("{r.p} on {r.d}: {r.ok}", scope) == "4.50 on 2026-12-03: yes"

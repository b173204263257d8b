"""The structured-fields benchmark runs end to end (its figures are reported, not asserted)."""

from palaestra.bench.fidelity import measure, report


def test_fidelity_benchmark_measures_text_and_structured_fields():
    results = measure(steps=20, rounds=1)
    assert {"gateway-http structured", "gateway-ws text"} <= set(results)
    assert all(len(v) == 20 and min(v) > 0 for v in results.values())
    assert report(results).row_count == 5

"""The benchmark runs end to end (its figures are reported, not asserted)."""

from palaestra.bench.http import measure, report


def test_http_benchmark_measures_every_transport():
    results = measure(steps=40, rounds=2, openenv=False)
    assert set(results) == {"in-process", "gateway-http", "gateway-ws", "gateway-ws+record"}
    assert all(len(v) == 40 and min(v) > 0 for v in results.values())
    assert report(results).row_count == 4

"""Synthesis events cross from a child process that drives browsers on generated pages into the
gateway: they are JSON of known kinds, never objects the bytes choose (they were pickles)."""

import pickle

import pytest

from palaestra.synthesis.events import Failed, Finished, Progress, decode, encode


@pytest.mark.parametrize(
    "event",
    [Progress("validate", 3, 8, 2, 1), Finished({"kept": 2, "suite": "s"}), Failed("bad spec")],
)
def test_every_kind_round_trips(event):
    assert decode(encode(event)) == event


class Boom:
    def __reduce__(self):
        return (exec, ("raise SystemExit('unpickled')",))


@pytest.mark.parametrize(
    "data",
    [
        pickle.dumps(Boom()),  # a pickle is refused, never loaded
        b'{"kind": "shell", "cmd": "id"}',
        b'{"kind": "progress", "phase": "x"}',  # missing fields
        b'{"kind": "failed", "error": "e", "extra": 1}',  # a field no event has
        b"[1, 2]",
    ],
)
def test_anything_else_is_refused(data):
    with pytest.raises((ValueError, TypeError)):
        decode(data)

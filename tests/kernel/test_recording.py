import numpy as np

from palaestra import codec
from palaestra.recording import SessionRecorder, list_runs, read_events


def test_events_images_and_torn_last_line(tmp_path):
    run = tmp_path / "run1"
    rec = SessionRecorder(run, "s1", {"env": "x/y-v0", "owner": "o"})
    img = np.arange(12, dtype=np.uint8).reshape(2, 2, 3)
    rec.reset(3, {"observation": codec.encode({"screen": img}), "info": {}})
    rec.step(
        "ok()",
        {
            "observation": codec.encode({"screen": img}),
            "reward": 1.0,
            "terminated": True,
            "truncated": False,
            "info": {},
        },
        {"verifier": {"score": 1.0, "checks": []}},
        0.5,
    )
    # a crash mid-write leaves half a line; readers skip it
    with open(run / "s1" / "events.jsonl", "ab") as fh:
        fh.write(b'{"type": "step", "ind')
    events = list(read_events(run / "s1", load_images=True))
    assert [e["type"] for e in events] == ["reset", "step"]
    assert np.array_equal(events[1]["observation"]["screen"], img)
    assert events[1]["verifier"]["score"] == 1.0
    assert (run / "s1" / "images").is_dir()
    assert list_runs(tmp_path)[0]["sessions"] == ["s1"]

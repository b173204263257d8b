import numpy as np
import pytest
from gymnasium import spaces

from palaestra import codec
from palaestra.actions import ActionSet, primitive
from palaestra.spaces import FreeText, space_from_json, space_to_json


@pytest.mark.parametrize("shape", [(5, 7, 3), (4, 6), (3, 3, 4), (2, 2, 1)])
def test_png_round_trips_exactly(shape):
    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, size=shape, dtype=np.uint8)
    back = codec.decode(codec.encode({"screen": img}))["screen"]
    assert back.dtype == np.uint8 and back.shape == img.shape
    assert np.array_equal(back, img)


def test_jpeg_is_lossy_but_keeps_shape():
    img = np.full((16, 16, 3), 120, np.uint8)
    encoded = codec.encode(img, "jpeg")
    assert encoded["__image__"] == "jpeg"
    back = codec.decode(encoded)
    assert back.shape == img.shape and abs(int(back.mean()) - 120) < 3


def test_other_arrays_and_scalars():
    arr = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = codec.decode(codec.encode({"a": arr, "n": np.int64(4), "l": [np.float32(1.5)]}))
    assert np.array_equal(out["a"], arr) and out["a"].dtype == np.float32
    assert out["n"] == 4 and out["l"] == [1.5]


@pytest.mark.parametrize(
    "space",
    [
        spaces.Box(0, 255, (4, 5, 3), np.uint8),
        spaces.Box(-np.inf, np.inf, (2,), np.float32),
        spaces.Box(np.array([0, 1]), np.array([2, 3]), dtype=np.int64),
        spaces.Discrete(5, start=-2),
        spaces.MultiDiscrete([2, 3]),
        spaces.MultiBinary(4),
        spaces.Text(10),
        FreeText(100),
        spaces.Tuple([spaces.Discrete(2), FreeText(5)]),
        spaces.Sequence(spaces.Discrete(3)),
        spaces.Dict({"a": spaces.Discrete(2), "b": FreeText(3)}),
        ActionSet([primitive("noop")]).space(),
    ],
)
def test_spaces_round_trip(space):
    again = space_from_json(space_to_json(space))
    assert type(again) is type(space)
    assert again == space or repr(again) == repr(space)


def test_free_text_accepts_any_characters_within_length():
    space = FreeText(5)
    assert space.contains("é✓ ()")
    assert not space.contains("toolong")
    assert not space.contains(3)

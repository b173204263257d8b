"""Observations <-> JSON.

Images (uint8 arrays shaped HxW, HxWx1, HxWx3 or HxWx4) travel as base64 PNG (lossless, the
default) or JPEG (smaller, lossy) with their shape, so the client rebuilds an array that matches
the published ``Box``. Other arrays travel as raw base64 bytes with dtype and shape. The encoded
form is plain JSON, the same over REST, WebSocket, the worker protocol and in recordings.
"""

from __future__ import annotations

import base64
import contextlib
import io
from collections.abc import Callable
from typing import Any

import numpy as np
import orjson
from PIL import Image

IMAGE_KEY = "__image__"
ARRAY_KEY = "__ndarray__"
FORMATS = ("png", "jpeg")


def is_image(arr: np.ndarray) -> bool:
    return arr.dtype == np.uint8 and (
        arr.ndim == 2 or (arr.ndim == 3 and arr.shape[2] in (1, 3, 4))
    )


def image_to_bytes(arr: np.ndarray, fmt: str = "png") -> bytes:
    squeezed = arr[:, :, 0] if arr.ndim == 3 and arr.shape[2] == 1 else arr
    img = Image.fromarray(np.ascontiguousarray(squeezed))
    buf = io.BytesIO()
    if fmt == "jpeg":
        img.convert("RGB").save(buf, format="JPEG", quality=90)
    else:
        img.save(buf, format="PNG", compress_level=1)
    return buf.getvalue()


def image_from_bytes(data: bytes, shape: list[int] | tuple[int, ...]) -> np.ndarray:
    img = Image.open(io.BytesIO(data))
    arr = np.asarray(img)
    if len(shape) == 3 and arr.ndim == 2:
        arr = arr[:, :, None]
    if len(shape) == 3 and arr.shape[2] != shape[2]:
        mode = {3: "RGB", 4: "RGBA"}[shape[2]]
        arr = np.asarray(img.convert(mode))
    return arr.reshape(shape)


class EncodedImage(np.ndarray):
    """An image array that remembers the PNG/JPEG bytes it was decoded from.

    A browser hands over a PNG; keeping its bytes lets :func:`encode` send them as they are
    instead of compressing the same pixels again on the way out.
    """

    encoded: bytes
    encoded_format: str

    @classmethod
    def from_bytes(cls, data: bytes, fmt: str = "png") -> EncodedImage:
        arr = np.asarray(Image.open(io.BytesIO(data)).convert("RGB")).view(cls)
        arr.encoded, arr.encoded_format = data, fmt
        return arr


def encode(value: Any, image_format: str = "png") -> Any:
    """Make an observation JSON-ready (recursively)."""
    if isinstance(value, np.ndarray):
        if is_image(value):
            reuse = getattr(value, "encoded_format", None) == image_format
            data = value.encoded if reuse else image_to_bytes(value, image_format)  # type: ignore[attr-defined]
            return {
                IMAGE_KEY: image_format,
                "shape": list(value.shape),
                "data": base64.b64encode(data).decode(),
            }
        return {
            ARRAY_KEY: str(value.dtype),
            "shape": list(value.shape),
            "data": base64.b64encode(np.ascontiguousarray(value).tobytes()).decode(),
        }
    if isinstance(value, dict):
        return {k: encode(v, image_format) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [encode(v, image_format) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def decode(value: Any, image: Callable[[bytes, list[int]], Any] | None = None) -> Any:
    """Rebuild numpy arrays from :func:`encode` output; ``image`` can replace image decoding."""
    if isinstance(value, dict):
        if IMAGE_KEY in value:
            raw = base64.b64decode(value["data"])
            return image(raw, value["shape"]) if image else image_from_bytes(raw, value["shape"])
        if ARRAY_KEY in value:
            raw = base64.b64decode(value["data"])
            return np.frombuffer(raw, dtype=value[ARRAY_KEY]).reshape(value["shape"]).copy()
        return {k: decode(v, image) for k, v in value.items()}
    if isinstance(value, list):
        return [decode(v, image) for v in value]
    return value


def structure(obs: Any, keys: tuple[str, ...] | list[str]) -> Any:
    """An observation with the JSON text of ``keys`` parsed into values (lists, objects), for
    clients that ask for structured fields. Text that does not parse (cut at its length
    bound) stays text."""
    if not keys or not isinstance(obs, dict):
        return obs
    out = dict(obs)
    for key in keys:
        text = out.get(key)
        if isinstance(text, str):
            with contextlib.suppress(orjson.JSONDecodeError):
                out[key] = orjson.loads(text)
    return out

"""Shaded views of a solid, rasterized on the CPU from the kernel's tessellation.

No GPU, display or plotting library: the solid is meshed by OpenCascade (BRepMesh), and the
triangles are rasterized with numpy into a z-buffer, every triangle's pixel candidates at once
(no Python loop over triangles or pixels), with two-sided Lambert shading and dark outlines
where one B-rep face meets another. The outlines are what make a render readable as a CAD
drawing: they show the faces and edges that the selectors talk about.

Four views are tiled 2x2 (isometric, top, front, right), all at one scale so sizes compare
between views; the image size is fixed so the observation space is a fixed Box.
"""

from __future__ import annotations

import math

import numpy as np
from build123d import Shape
from PIL import Image, ImageDraw

from palaestra.verifiers.geometry import mesh

TILE = 128
SIZE = 2 * TILE
BACKGROUND = np.array([246, 247, 250], np.uint8)
BASE = np.array([96, 140, 200], np.float32)
OUTLINE = np.array([30, 40, 60], np.uint8)


def _rot(yaw: float, pitch: float) -> np.ndarray:
    """World -> view rotation: rows are the screen right, screen up and toward-viewer axes."""
    cy, sy, cp, sp = math.cos(yaw), math.sin(yaw), math.cos(pitch), math.sin(pitch)
    toward = np.array([cp * cy, cp * sy, sp])
    right = np.array([-sy, cy, 0.0])
    up = np.cross(toward, right)
    return np.stack([right, up, toward])


VIEWS = {
    "iso": _rot(math.radians(-60), math.radians(30)),
    "top": np.array([[1.0, 0, 0], [0, 1, 0], [0, 0, 1]]),
    "front": np.array([[1.0, 0, 0], [0, 0, 1], [0, -1, 0]]),
    "right": np.array([[0, 1.0, 0], [0, 0, 1], [1, 0, 0]]),
}
ORDER = ("iso", "top", "front", "right")


def _raster(
    pts: np.ndarray, tris: np.ndarray, shade: np.ndarray, fids: np.ndarray, size: int
) -> tuple[np.ndarray, np.ndarray]:
    """Rasterize projected triangles: (color index image, face id image); -1 is background."""
    p = pts[tris]  # (T, 3, 3): x, y in pixels, z toward the viewer
    lo = np.floor(p[:, :, :2].min(axis=1)).astype(np.int64).clip(0, size - 1)
    hi = np.ceil(p[:, :, :2].max(axis=1)).astype(np.int64).clip(0, size - 1)
    bw, bh = hi[:, 0] - lo[:, 0] + 1, hi[:, 1] - lo[:, 1] + 1
    (a, b, c) = (p[:, 0], p[:, 1], p[:, 2])
    area = (b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (b[:, 1] - a[:, 1]) * (c[:, 0] - a[:, 0])
    keep = np.abs(area) > 1e-9
    n = np.where(keep, bw * bh, 0)
    total = int(n.sum())
    best = np.full(size * size, -np.inf)
    owner = np.full(size * size, -1, np.int64)
    if total == 0:
        return owner.reshape(size, size), owner.reshape(size, size)
    tri = np.repeat(np.arange(len(p)), n)
    local = np.arange(total) - np.repeat(np.cumsum(n) - n, n)
    x = lo[tri, 0] + local % bw[tri]
    y = lo[tri, 1] + local // bw[tri]
    px, py = x + 0.5, y + 0.5
    A, B, C = a[tri], b[tri], c[tri]
    w0 = (B[:, 0] - px) * (C[:, 1] - py) - (B[:, 1] - py) * (C[:, 0] - px)
    w1 = (C[:, 0] - px) * (A[:, 1] - py) - (C[:, 1] - py) * (A[:, 0] - px)
    w2 = (A[:, 0] - px) * (B[:, 1] - py) - (A[:, 1] - py) * (B[:, 0] - px)
    ar = area[tri]
    w0, w1, w2 = w0 / ar, w1 / ar, w2 / ar
    inside = (w0 >= -1e-9) & (w1 >= -1e-9) & (w2 >= -1e-9)
    z = w0 * A[:, 2] + w1 * B[:, 2] + w2 * C[:, 2]
    idx, z, tri = (y * size + x)[inside], z[inside], tri[inside]
    order = np.lexsort((-z, idx))  # per pixel, the nearest (largest z) first
    idx, tri = idx[order], tri[order]
    first = np.r_[True, idx[1:] != idx[:-1]]
    owner[idx[first]] = tri[first]
    del best
    img = owner.reshape(size, size)
    return img, np.where(img >= 0, fids[np.maximum(img, 0)], -1)


def render_view(
    verts: np.ndarray,
    tris: np.ndarray,
    fids: np.ndarray,
    rot: np.ndarray,
    center: np.ndarray,
    scale: float,
    size: int = TILE,
) -> np.ndarray:
    img = np.empty((size, size, 3), np.uint8)
    img[:] = BACKGROUND
    if len(tris) == 0:
        return img
    v = (verts - center) @ rot.T
    pts = np.stack([v[:, 0] * scale + size / 2, size / 2 - v[:, 1] * scale, v[:, 2]], axis=1)
    a, b, c = v[tris[:, 0]], v[tris[:, 1]], v[tris[:, 2]]
    normal = np.cross(b - a, c - a)
    normal /= np.maximum(np.linalg.norm(normal, axis=1, keepdims=True), 1e-12)
    light = np.array([0.35, 0.45, 0.82])
    light /= np.linalg.norm(light)
    shade = 0.35 + 0.65 * np.abs(normal @ light)
    owner, face = _raster(pts, tris, shade, fids, size)
    hit = owner >= 0
    colors = (BASE[None, :] * shade[:, None] + 40).clip(0, 255).astype(np.uint8)
    img[hit] = colors[owner[hit]]
    edge = np.zeros_like(hit)
    edge[:, 1:] |= face[:, 1:] != face[:, :-1]
    edge[1:, :] |= face[1:, :] != face[:-1, :]
    img[edge] = OUTLINE
    return img


def render(shape: Shape | None, label: str = "") -> np.ndarray:
    """The 2x2 tiled views (``SIZE`` x ``SIZE`` x 3, uint8)."""
    tiles = []
    if shape is None or not shape.solids():
        verts, tris, fids = np.zeros((0, 3)), np.zeros((0, 3), np.int64), np.zeros(0, np.int64)
        center, scale = np.zeros(3), 1.0
    else:
        verts, tris, fids = mesh(shape)
        bb = shape.bounding_box()
        center = np.array([bb.center().X, bb.center().Y, bb.center().Z])
        scale = TILE * 0.8 / max(bb.diagonal, 1e-6)
    for name in ORDER:
        tiles.append(render_view(verts, tris, fids, VIEWS[name], center, scale))
    out = np.empty((SIZE, SIZE, 3), np.uint8)
    out[:TILE, :TILE], out[:TILE, TILE:] = tiles[0], tiles[1]
    out[TILE:, :TILE], out[TILE:, TILE:] = tiles[2], tiles[3]
    out[TILE - 1 : TILE + 1, :] = 200
    out[:, TILE - 1 : TILE + 1] = 200
    image = Image.fromarray(out)
    draw = ImageDraw.Draw(image)
    for i, name in enumerate(ORDER):
        draw.text(((i % 2) * TILE + 3, (i // 2) * TILE + 2), name, fill=(90, 90, 110))
    if label:
        draw.text((3, SIZE - 12), label[:40], fill=(90, 90, 110))
    return np.asarray(image)

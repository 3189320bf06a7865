#!/usr/bin/env python3
"""Draws the Franka Kitchen's wood texture, the studio's own.

D4RL's kitchen model names adept_models/kitchen/textures/wood1.png (the oven's and the hinge
cabinet's wood) but its repository does not carry the image, and MuJoCo will not compile the model
without it. This script draws a wood grain that tiles (the materials repeat it 3 x 3) from a fixed
lattice of pseudo-random values, with nothing but the standard library, so the same bytes come out
on every machine:

    python3 packaging/make-wood-texture.py \
        resources/environments/kitchen/adept_models/kitchen/textures/wood1.png
"""

import math
import struct
import sys
import zlib

SIZE = 256  # pixels a side: the texture is a cube map's face, so square


def lattice(ix, iy, seed):
    """A value in [0, 1) per lattice point, from an integer hash (no platform-dependent RNG)."""
    h = (ix * 374761393 + iy * 668265263 + seed * 2246822519) & 0xFFFFFFFF
    h = ((h ^ (h >> 13)) * 1274126177) & 0xFFFFFFFF
    return ((h ^ (h >> 16)) & 0xFFFFFF) / float(1 << 24)


def noise(x, y, cells_x, cells_y, seed):
    """Smooth value noise over [0, 1)^2 that repeats at the edges (cells_x by cells_y cells)."""
    fx, fy = x * cells_x, y * cells_y
    ix, iy = int(math.floor(fx)), int(math.floor(fy))
    tx, ty = fx - ix, fy - iy
    sx, sy = tx * tx * (3 - 2 * tx), ty * ty * (3 - 2 * ty)

    def at(i, j):
        return lattice(i % cells_x, j % cells_y, seed)

    top = at(ix, iy) * (1 - sx) + at(ix + 1, iy) * sx
    bottom = at(ix, iy + 1) * (1 - sx) + at(ix + 1, iy + 1) * sx
    return top * (1 - sy) + bottom * sy


def wood(x, y):
    """An RGB colour in [0, 1] at (x, y) in [0, 1)^2: growth rings running along x, bent by a
    slow noise, with fine fibres along them."""
    bend = 0.0
    for octave, (cx, cy) in enumerate([(2, 4), (4, 8), (8, 16)]):
        bend += noise(x, y, cx, cy, 11 + octave) / (2**octave)
    rings = 0.5 + 0.5 * math.sin(2 * math.pi * (9 * y + 1.6 * bend))
    rings = rings**3  # thin dark late-wood lines on wide light early-wood bands
    fibres = noise(x, y, 4, 64, 5) * 0.6 + noise(x, y, 2, 128, 7) * 0.4
    light, dark = (0.76, 0.56, 0.35), (0.47, 0.30, 0.16)
    t = min(1.0, 0.75 * rings + 0.25 * fibres)
    return [l + (d - l) * t for l, d in zip(light, dark)]


def png(width, height, rows):
    """The bytes of an 8-bit RGB PNG (no filtering, zlib level 9)."""

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + bytes(row) for row in rows)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) +
            chunk(b"IEND", b""))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make-wood-texture.py OUT.png")
    rows = []
    for j in range(SIZE):
        row = []
        for i in range(SIZE):
            row.extend(int(round(255 * c)) for c in wood(i / SIZE, j / SIZE))
        rows.append(row)
    with open(sys.argv[1], "wb") as out:
        out.write(png(SIZE, SIZE, rows))


if __name__ == "__main__":
    main()

"""The per-call plot: matplotlib when it is importable, else a tiny pure-Python PNG writer.

The fallback draws a log-log line chart with a 5x7 bitmap font (lower case, digits and a
few signs), and writes it with zlib and struct only, so the bench needs no new dependency.
"""

from __future__ import annotations

import itertools
import math
import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

Color = tuple[int, int, int]


@dataclass(frozen=True)
class Series:
    label: str
    color: Color
    points: tuple[tuple[float, float], ...]  # (x, y), both positive


def line_chart(
    path: Path, series: Sequence[Series], *, title: str, x_label: str, y_label: str
) -> str:
    """Write a log-log chart to ``path``; returns which renderer drew it."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        _fallback(path, series, title=title, x_label=x_label, y_label=y_label)
        return "pure-Python PNG writer"
    fig, ax = plt.subplots(figsize=(8, 5), dpi=100)
    for one in series:
        xs, ys = zip(*one.points, strict=True)
        ax.plot(xs, ys, marker="o", label=one.label, color=tuple(c / 255 for c in one.color))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_title(title)
    ax.set_xlabel(x_label)
    ax.set_ylabel(y_label)
    ax.grid(visible=True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return "matplotlib"


# --- the fallback --------------------------------------------------------------------------

# 5x7 glyphs, one byte per column, bit 0 at the top (the classic GLCD font).
_GLYPHS: dict[str, tuple[int, ...]] = {
    " ": (0, 0, 0, 0, 0),
    "0": (0x3E, 0x51, 0x49, 0x45, 0x3E),
    "1": (0x00, 0x42, 0x7F, 0x40, 0x00),
    "2": (0x42, 0x61, 0x51, 0x49, 0x46),
    "3": (0x21, 0x41, 0x45, 0x4B, 0x31),
    "4": (0x18, 0x14, 0x12, 0x7F, 0x10),
    "5": (0x27, 0x45, 0x45, 0x45, 0x39),
    "6": (0x3C, 0x4A, 0x49, 0x49, 0x30),
    "7": (0x01, 0x71, 0x09, 0x05, 0x03),
    "8": (0x36, 0x49, 0x49, 0x49, 0x36),
    "9": (0x06, 0x49, 0x49, 0x29, 0x1E),
    "a": (0x20, 0x54, 0x54, 0x54, 0x78),
    "b": (0x7F, 0x48, 0x44, 0x44, 0x38),
    "c": (0x38, 0x44, 0x44, 0x44, 0x20),
    "d": (0x38, 0x44, 0x44, 0x48, 0x7F),
    "e": (0x38, 0x54, 0x54, 0x54, 0x18),
    "f": (0x08, 0x7E, 0x09, 0x01, 0x02),
    "g": (0x0C, 0x52, 0x52, 0x52, 0x3E),
    "h": (0x7F, 0x08, 0x04, 0x04, 0x78),
    "i": (0x00, 0x44, 0x7D, 0x40, 0x00),
    "j": (0x20, 0x40, 0x44, 0x3D, 0x00),
    "k": (0x7F, 0x10, 0x28, 0x44, 0x00),
    "l": (0x00, 0x41, 0x7F, 0x40, 0x00),
    "m": (0x7C, 0x04, 0x18, 0x04, 0x78),
    "n": (0x7C, 0x08, 0x04, 0x04, 0x78),
    "o": (0x38, 0x44, 0x44, 0x44, 0x38),
    "p": (0x7C, 0x14, 0x14, 0x14, 0x08),
    "q": (0x08, 0x14, 0x14, 0x18, 0x7C),
    "r": (0x7C, 0x08, 0x04, 0x04, 0x08),
    "s": (0x48, 0x54, 0x54, 0x54, 0x20),
    "t": (0x04, 0x3F, 0x44, 0x40, 0x20),
    "u": (0x3C, 0x40, 0x40, 0x20, 0x7C),
    "v": (0x1C, 0x20, 0x40, 0x20, 0x1C),
    "w": (0x3C, 0x40, 0x30, 0x40, 0x3C),
    "x": (0x44, 0x28, 0x10, 0x28, 0x44),
    "y": (0x0C, 0x50, 0x50, 0x50, 0x3C),
    "z": (0x44, 0x64, 0x54, 0x4C, 0x44),
    ".": (0x00, 0x60, 0x60, 0x00, 0x00),
    ",": (0x00, 0x50, 0x30, 0x00, 0x00),
    "(": (0x00, 0x1C, 0x22, 0x41, 0x00),
    ")": (0x00, 0x41, 0x22, 0x1C, 0x00),
    "-": (0x08, 0x08, 0x08, 0x08, 0x08),
    "+": (0x08, 0x08, 0x3E, 0x08, 0x08),
    "=": (0x14, 0x14, 0x14, 0x14, 0x14),
    "/": (0x20, 0x10, 0x08, 0x04, 0x02),
    ":": (0x00, 0x36, 0x36, 0x00, 0x00),
    "%": (0x23, 0x13, 0x08, 0x64, 0x62),
    "_": (0x40, 0x40, 0x40, 0x40, 0x40),
}

WHITE: Color = (255, 255, 255)
BLACK: Color = (0, 0, 0)
GRID: Color = (225, 225, 225)


class _Canvas:
    def __init__(self, width: int, height: int) -> None:
        self.width = width
        self.height = height
        self.pixels = bytearray(WHITE * (width * height))

    def dot(self, x: int, y: int, color: Color) -> None:
        if 0 <= x < self.width and 0 <= y < self.height:
            i = 3 * (y * self.width + x)
            self.pixels[i : i + 3] = bytes(color)

    def rect(self, x0: int, y0: int, x1: int, y1: int, color: Color) -> None:
        for y in range(min(y0, y1), max(y0, y1) + 1):
            for x in range(min(x0, x1), max(x0, x1) + 1):
                self.dot(x, y, color)

    def line(self, x0: int, y0: int, x1: int, y1: int, color: Color, width: int = 1) -> None:
        steps = max(abs(x1 - x0), abs(y1 - y0), 1)
        half = width // 2
        for s in range(steps + 1):
            x = round(x0 + (x1 - x0) * s / steps)
            y = round(y0 + (y1 - y0) * s / steps)
            self.rect(x - half, y - half, x - half + width - 1, y - half + width - 1, color)

    def text(self, x: int, y: int, text: str, color: Color = BLACK, scale: int = 2) -> int:
        """Draw ``text`` with its top-left at (x, y); returns its width in pixels."""
        cursor = x
        for char in text.lower().replace("µ", "u"):
            for col, bits in enumerate(_GLYPHS.get(char, _GLYPHS[" "])):
                for row in range(7):
                    if bits >> row & 1:
                        px, py = cursor + col * scale, y + row * scale
                        self.rect(px, py, px + scale - 1, py + scale - 1, color)
            cursor += 6 * scale
        return cursor - x

    def text_width(self, text: str, scale: int = 2) -> int:
        return len(text) * 6 * scale

    def vertical_text(self, x: int, y: int, text: str, scale: int = 2) -> None:
        """Text read bottom to top, its baseline at ``x``, centred on ``y``."""
        length = self.text_width(text, scale)
        temp = _Canvas(length, 7 * scale)
        temp.text(0, 0, text, scale=scale)
        for ty in range(temp.height):
            for tx in range(temp.width):
                i = 3 * (ty * temp.width + tx)
                if temp.pixels[i] == 0:
                    self.dot(x + ty, y + length // 2 - tx, BLACK)

    def png(self) -> bytes:
        raw = b"".join(
            b"\x00" + bytes(self.pixels[3 * y * self.width : 3 * (y + 1) * self.width])
            for y in range(self.height)
        )

        def chunk(kind: bytes, data: bytes) -> bytes:
            body = kind + data
            return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

        header = struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0)
        return (
            b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(raw, 9))
            + chunk(b"IEND", b"")
        )


def _decades(low: float, high: float) -> list[int]:
    return list(range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1))


def _tick_label(exponent: int) -> str:
    value = 10.0**exponent
    if exponent >= 6:
        return f"{value / 1e6:g}m"
    if exponent >= 3:
        return f"{value / 1e3:g}k"
    return f"{value:g}"


def _fallback(
    path: Path, series: Sequence[Series], *, title: str, x_label: str, y_label: str
) -> None:
    width, height = 900, 560
    left, right, top, bottom = 110, 30, 60, 80
    canvas = _Canvas(width, height)
    xs = [x for one in series for x, _ in one.points]
    ys = [y for one in series for _, y in one.points]
    x_dec = _decades(min(xs), max(xs))
    y_dec = _decades(min(ys), max(ys))
    if len(y_dec) < 2:
        y_dec.append(y_dec[-1] + 1)
    if len(x_dec) < 2:
        x_dec.append(x_dec[-1] + 1)
    plot_w, plot_h = width - left - right, height - top - bottom

    def px(x: float) -> int:
        span = x_dec[-1] - x_dec[0]
        return left + round((math.log10(x) - x_dec[0]) / span * plot_w)

    def py(y: float) -> int:
        span = y_dec[-1] - y_dec[0]
        return top + plot_h - round((math.log10(y) - y_dec[0]) / span * plot_h)

    for exponent in x_dec:
        x = px(10.0**exponent)
        canvas.line(x, top, x, top + plot_h, GRID)
        label = _tick_label(exponent)
        canvas.text(x - canvas.text_width(label) // 2, top + plot_h + 10, label)
    for exponent in y_dec:
        y = py(10.0**exponent)
        canvas.line(left, y, left + plot_w, y, GRID)
        label = f"{10.0**exponent:g}"
        canvas.text(left - 10 - canvas.text_width(label), y - 7, label)
    canvas.line(left, top, left, top + plot_h, BLACK, 2)
    canvas.line(left, top + plot_h, left + plot_w, top + plot_h, BLACK, 2)
    canvas.text((width - canvas.text_width(title)) // 2, 18, title)
    canvas.text(left + (plot_w - canvas.text_width(x_label)) // 2, height - 40, x_label)
    canvas.vertical_text(20, top + plot_h // 2, y_label)
    for one in series:
        points = [(px(x), py(y)) for x, y in one.points]
        for (x0, y0), (x1, y1) in itertools.pairwise(points):
            canvas.line(x0, y0, x1, y1, one.color, 3)
        for x, y in points:
            canvas.rect(x - 4, y - 4, x + 4, y + 4, one.color)
    legend_y = top + 10
    for one in series:
        canvas.rect(left + 20, legend_y + 2, left + 40, legend_y + 12, one.color)
        canvas.text(left + 50, legend_y, one.label)
        legend_y += 24
    path.write_bytes(canvas.png())

"""Tests for tokengauge.counting.images: published examples per provider, sizes read from real
headers.

The image files are built here byte by byte (no Pillow): a complete PNG (zlib + CRCs), and GIF,
BMP, JPEG and WebP files whose headers carry the chosen width and height.
"""

from __future__ import annotations

import base64
import math
import struct
import time
import zlib
from collections.abc import Callable
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokengauge.counting.images import (
    WORST_CASE,
    ImageRule,
    anthropic_image_tokens,
    gemini_image_tokens,
    image_size,
    image_tokens,
    openai_image_tokens,
)

# --- building real image files ------------------------------------------------------------------


def _png_chunk(kind: bytes, body: bytes) -> bytes:
    crc = zlib.crc32(kind + body) & 0xFFFFFFFF
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)


def png(width: int, height: int) -> bytes:
    """A complete, decodable 1-bit greyscale PNG of all-black pixels."""
    ihdr = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    row = b"\x00" * (1 + math.ceil(width / 8))  # filter byte + packed bits
    idat = zlib.compress(row * height, 9)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", ihdr)
        + _png_chunk(b"IDAT", idat)
        + _png_chunk(b"IEND", b"")
    )


def gif(width: int, height: int) -> bytes:
    """A GIF89a: logical screen and one image of the given size, two-colour palette."""
    screen = struct.pack("<HHBBB", width, height, 0x80, 0, 0)
    palette = b"\x00\x00\x00\xff\xff\xff"
    descriptor = b"\x2c" + struct.pack("<HHHHB", 0, 0, width, height, 0)
    pixels = b"\x02\x02\x44\x01\x00"  # LZW min code size 2, one sub-block, terminator
    return b"GIF89a" + screen + palette + descriptor + pixels + b"\x3b"


def bmp(width: int, height: int) -> bytes:
    """A 24-bit BMP with a BITMAPINFOHEADER (pixel rows left out: only the header matters)."""
    info = struct.pack("<IiiHHIIiiII", 40, width, height, 1, 24, 0, 0, 2835, 2835, 0, 0)
    file_header = b"BM" + struct.pack("<IHHI", 14 + len(info), 0, 0, 14 + len(info))
    return file_header + info


def jpeg(width: int, height: int) -> bytes:
    """SOI, a JFIF APP0, a baseline SOF0 segment with the dimensions, EOI."""
    app0 = b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    sof0 = struct.pack(">BHHB", 8, height, width, 3) + b"\x01\x22\x00\x02\x11\x01\x03\x11\x01"
    return (
        b"\xff\xd8"
        + b"\xff\xe0"
        + struct.pack(">H", 2 + len(app0))
        + app0
        + b"\xff\xc0"
        + struct.pack(">H", 2 + len(sof0))
        + sof0
        + b"\xff\xd9"
    )


def webp(width: int, height: int) -> bytes:
    """A RIFF/WEBP file with an extended-format `VP8X` chunk (24-bit width-1 and height-1)."""
    vp8x = (
        b"\x00\x00\x00\x00" + (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    )
    chunk = b"VP8X" + struct.pack("<I", len(vp8x)) + vp8x
    return b"RIFF" + struct.pack("<I", 4 + len(chunk)) + b"WEBP" + chunk


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


FORMATS: dict[str, Callable[[int, int], bytes]] = {
    "png": png,
    "gif": gif,
    "bmp": bmp,
    "jpeg": jpeg,
    "webp": webp,
}
FORMULAS: dict[ImageRule, Callable[[int, int], int]] = {
    ImageRule.OPENAI: openai_image_tokens,
    ImageRule.ANTHROPIC: anthropic_image_tokens,
    ImageRule.GEMINI: gemini_image_tokens,
}


def test_png_builder_is_a_real_png() -> None:
    data = png(3, 2)
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    # Every chunk's CRC checks and the pixel data inflates to height × (1 + row bytes).
    position, chunks = 8, {}
    while position < len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        kind = data[position + 4 : position + 8]
        body = data[position + 8 : position + 8 + length]
        (crc,) = struct.unpack(">I", data[position + 8 + length : position + 12 + length])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF
        chunks[kind] = body
        position += 12 + length
    assert list(chunks) == [b"IHDR", b"IDAT", b"IEND"]
    assert len(zlib.decompress(chunks[b"IDAT"])) == 2 * (1 + 1)


# --- OpenAI -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("width", "height", "expected"),
    [
        # platform.openai.com vision guide, "Calculating costs" worked examples (high detail).
        pytest.param(1024, 1024, 765, id="doc-1024-square"),
        pytest.param(2048, 4096, 1105, id="doc-2048x4096"),
        pytest.param(4096, 8192, 1105, id="doc-4096x8192-high"),
        pytest.param(512, 512, 85 + 170, id="one-tile"),
        pytest.param(513, 512, 85 + 170 * 2, id="just-over-one-tile"),
        pytest.param(1, 1, 85 + 170, id="one-pixel"),
        pytest.param(768, 2048, 85 + 170 * 8, id="largest-grid"),
        pytest.param(1920, 1080, 85 + 170 * 6, id="full-hd"),  # → 1365×768: 3×2 tiles
    ],
)
def test_openai_documented_examples(width: int, height: int, expected: int) -> None:
    assert openai_image_tokens(width, height) == expected
    assert openai_image_tokens(height, width) == expected


def _openai_exact(width: int, height: int) -> int:
    """OpenAI's rule in exact rational arithmetic: fit 2048², shortest side to 768, 512² tiles."""
    w, h = Fraction(width), Fraction(height)
    fit = min(Fraction(1), Fraction(2048) / max(w, h))
    fit *= min(Fraction(1), Fraction(768) / (min(w, h) * fit))
    return 85 + 170 * math.ceil(w * fit / 512) * math.ceil(h * fit / 512)


@settings(max_examples=500, deadline=None)
@given(st.integers(1, 20_000), st.integers(1, 20_000))
def test_openai_matches_exact_arithmetic(width: int, height: int) -> None:
    tokens = openai_image_tokens(width, height)
    assert tokens == _openai_exact(width, height)
    assert tokens <= WORST_CASE[ImageRule.OPENAI]


# --- Anthropic ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("width", "height"),
    [
        # docs.anthropic.com vision guide, "Calculate image costs": ~54, ~1334, ~1590 tokens.
        pytest.param(200, 200, id="doc-200-square"),
        pytest.param(1000, 1000, id="doc-1000-square"),
        pytest.param(1092, 1092, id="doc-1092-square"),
        pytest.param(1, 1, id="one-pixel"),
        pytest.param(640, 480, id="vga"),
    ],
)
def test_anthropic_documented_examples(width: int, height: int) -> None:
    # Images within the documented maximum sizes are not resized: tokens = w·h/750.
    assert anthropic_image_tokens(width, height) == math.ceil(width * height / 750)


def test_anthropic_documented_numbers() -> None:
    assert math.ceil(200 * 200 / 750) == 54
    assert math.ceil(1000 * 1000 / 750) == 1334
    assert math.ceil(1092 * 1092 / 750) == 1590


@pytest.mark.parametrize(
    ("width", "height", "largest"),
    [
        # The vision guide's table of the largest sizes that are not resized, by aspect ratio.
        pytest.param(4000, 4000, (1092, 1092), id="1:1"),
        pytest.param(3000, 4000, (951, 1268), id="3:4"),
        pytest.param(2000, 3000, (896, 1344), id="2:3"),
        pytest.param(2250, 4000, (819, 1456), id="9:16"),
        pytest.param(4000, 8000, (784, 1568), id="1:2"),
    ],
)
def test_anthropic_downscales_big_images(width: int, height: int, largest: tuple[int, int]) -> None:
    tokens = anthropic_image_tokens(width, height)
    # Downscaled to about the documented maximum for its aspect ratio: ~1,600 tokens at most ...
    assert tokens <= math.ceil(784 * 1568 / 750)
    # ... and within 4% of the cost of that largest unresized image (the table is approximate).
    assert tokens >= 0.96 * largest[0] * largest[1] / 750


def test_anthropic_long_edge_is_capped() -> None:
    # 1568 long edge: 5000×100 becomes 1568×31.36.
    assert anthropic_image_tokens(5000, 100) == math.ceil(1568 * (100 * 1568 / 5000) / 750)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 20_000), st.integers(1, 20_000))
def test_anthropic_never_exceeds_its_worst_case(width: int, height: int) -> None:
    assert 1 <= anthropic_image_tokens(width, height) <= WORST_CASE[ImageRule.ANTHROPIC]


def test_anthropic_worst_case_covers_documented_sizes() -> None:
    assert WORST_CASE[ImageRule.ANTHROPIC] >= math.ceil(1092 * 1092 / 750)


# --- Gemini -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("width", "height", "expected"),
    [
        # ai.google.dev token guide: both sides ≤ 384 → 258; larger → 258 per 768×768 tile.
        pytest.param(384, 384, 258, id="small-limit"),
        pytest.param(100, 50, 258, id="tiny"),
        pytest.param(385, 384, 258, id="just-over-small-is-one-tile"),
        pytest.param(768, 768, 258, id="one-tile"),
        pytest.param(1000, 1000, 258 * 4, id="1000-square"),
        pytest.param(1920, 1080, 258 * 3 * 2, id="full-hd"),
    ],
)
def test_gemini(width: int, height: int, expected: int) -> None:
    assert gemini_image_tokens(width, height) == expected


# --- sizes from real headers --------------------------------------------------------------------

SIZES = [(1, 1), (512, 512), (1024, 1024), (1920, 1080), (640, 4000), (4096, 8192)]


@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_image_size_from_header(fmt: str, size: tuple[int, int]) -> None:
    assert image_size(b64(FORMATS[fmt](*size))) == size


@pytest.mark.parametrize("rule", list(ImageRule))
@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_image_tokens_from_header_match_formula(
    rule: ImageRule, fmt: str, size: tuple[int, int]
) -> None:
    assert image_tokens(b64(FORMATS[fmt](*size)), rule) == FORMULAS[rule](*size)


def test_image_tokens_with_line_wrapped_base64() -> None:
    wrapped = base64.encodebytes(png(1024, 1024)).decode("ascii")
    assert "\n" in wrapped
    assert image_tokens(wrapped, ImageRule.OPENAI) == 765


GARBAGE = [
    pytest.param("", id="empty"),
    pytest.param("!!!! not base64 ####", id="not-base64"),
    pytest.param("QUJD", id="three-bytes"),
    pytest.param(b64(b"just some text, not an image at all"), id="text"),
    pytest.param(b64(png(100, 100)[:20]), id="truncated-png"),
    pytest.param(b64(b"\x89PNG\r\n\x1a\n" + b"\x00" * 30), id="png-without-ihdr"),
    pytest.param(b64(b"RIFF\x10\x00\x00\x00WEBPXXXX" + b"\x00" * 20), id="webp-unknown-chunk"),
    pytest.param(b64(bmp(0, 10)), id="zero-width"),
    pytest.param(b64(b"\xff\xd8\xff\xd9"), id="jpeg-without-sof"),
    pytest.param("A" * 3, id="bad-padding"),
]


@pytest.mark.parametrize("rule", list(ImageRule))
@pytest.mark.parametrize("data", GARBAGE)
def test_unreadable_image_costs_the_worst_case(data: str, rule: ImageRule) -> None:
    assert image_size(data) is None
    tokens = image_tokens(data, rule)
    assert tokens == WORST_CASE[rule]
    assert tokens > 0


@pytest.mark.parametrize("rule", list(ImageRule))
def test_worst_case_is_not_below_a_real_large_image(rule: ImageRule) -> None:
    # A 2000×2000 screenshot is ordinary; an unreadable image must not cost less.
    assert WORST_CASE[rule] >= FORMULAS[rule](2000, 2000)


# --- hostile headers: formats the APIs do not take are never parsed ------------------------------

HOSTILE = [
    pytest.param(b"P6\n" + b"1" * 1_000_000, id="netpbm-1MB-digits"),
    pytest.param(b"P1\n#" + b"#" * 500_000, id="netpbm-comment"),
    pytest.param(
        b'<svg xmlns="http://www.w3.org/2000/svg" width="' + b"9" * 400 + b'" height="10"/>',
        id="svg-400-digit-width",
    ),
    pytest.param(b"II*\x00" + b"\x00" * 100, id="tiff"),
    pytest.param(
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", struct.pack(">IIBBBBB", 2**31 - 1, 7, 1, 0, 0, 0, 0)),
        id="png-2^31-wide",
    ),
    pytest.param(bmp(70_000, 10), id="bmp-beyond-65535"),
]


@pytest.mark.parametrize("rule", list(ImageRule))
@pytest.mark.parametrize("data", HOSTILE)
def test_hostile_headers_cost_the_worst_case_at_once(data: bytes, rule: ImageRule) -> None:
    start = time.perf_counter()
    assert image_tokens(b64(data), rule) == WORST_CASE[rule]
    assert time.perf_counter() - start < 0.5  # was ~13 s per MB of Netpbm header

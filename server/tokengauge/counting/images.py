"""Image token costs by each provider's published rule, sized from the image header.

OpenAI (high detail): fit in 2048×2048, shortest side down to 768, then `85 + 170 × tiles`
of 512×512. Anthropic: long edge at most 1568 and at most ~1.23 megapixels, then `w × h / 750`.
Google Gemini: 258 per 768×768 tile (one tile when both sides ≤ 384). An image whose header cannot
be read is priced as the largest image the rule allows (for Gemini, which has no cap, as a
3072×3072 one): never 0.

Only the formats the APIs take are sized (PNG, JPEG, GIF, WebP, BMP, recognised by their magic
bytes): `imagesize` also parses SVG, Netpbm and others, whose headers are text a sender controls
(a Netpbm header costs it ~13 s per MB, an SVG width may have 400 digits). Anything else, and any
side beyond 65,535 pixels, is priced as the worst case.
"""

from __future__ import annotations

import binascii
import enum
import io
import math


class ImageRule(str, enum.Enum):
    """Which provider's formula prices an image."""

    OPENAI = "openai"
    ANTHROPIC = "anthropic"
    GEMINI = "gemini"


OPENAI_BASE, OPENAI_PER_TILE = 85, 170
# Anthropic recommends ≤1.15 MP, but its largest unresized sizes (1092², 784×1568) reach 1.23 MP.
ANTHROPIC_MAX_EDGE, ANTHROPIC_MAX_PIXELS, ANTHROPIC_PIXELS_PER_TOKEN = 1568, 784 * 1568, 750
GEMINI_PER_TILE, GEMINI_SMALL_EDGE, GEMINI_TILE = 258, 384, 768

MAX_EDGE = 65_535
"""Largest side the formats the APIs take can have (PNG and BMP could claim more)."""
_SIGNATURES = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"BM")

WORST_CASE: dict[ImageRule, int] = {
    ImageRule.OPENAI: OPENAI_BASE + OPENAI_PER_TILE * 8,  # 768×2048 → 2×4 tiles
    ImageRule.ANTHROPIC: math.ceil(ANTHROPIC_MAX_PIXELS / ANTHROPIC_PIXELS_PER_TOKEN),
    ImageRule.GEMINI: GEMINI_PER_TILE * 16,  # priced as a 3072×3072 image
}


def is_api_image(raw: bytes) -> bool:
    """Whether `raw` starts like a PNG, JPEG, GIF, WebP or BMP file."""
    return raw.startswith(_SIGNATURES) or (raw[:4] == b"RIFF" and raw[8:12] == b"WEBP")


def image_size(data_base64: str) -> tuple[int, int] | None:
    """Width and height from a base64 PNG/JPEG/GIF/WebP/BMP, or None if the header is unreadable
    or the image is not one of those formats."""
    try:
        raw = binascii.a2b_base64(data_base64)
    except (binascii.Error, ValueError):
        return None
    if not is_api_image(raw):
        return None
    import imagesize  # with the first image: it brings urllib.request, the server's start does not

    width, height = imagesize.get(io.BytesIO(raw))
    if not (0 < width <= MAX_EDGE and 0 < height <= MAX_EDGE):
        return None
    return int(width), int(height)


def openai_image_tokens(width: int, height: int) -> int:
    """OpenAI high-detail image cost."""
    fit = min(1.0, 2048 / max(width, height))
    fit *= min(1.0, 768 / (min(width, height) * fit))
    tiles = math.ceil(width * fit / 512) * math.ceil(height * fit / 512)
    return OPENAI_BASE + OPENAI_PER_TILE * tiles


def anthropic_image_tokens(width: int, height: int) -> int:
    """Anthropic image cost after its automatic downscaling."""
    scale = min(1.0, ANTHROPIC_MAX_EDGE / max(width, height))
    scale = min(scale, math.sqrt(ANTHROPIC_MAX_PIXELS / (width * height)))
    return max(1, math.ceil(width * scale * height * scale / ANTHROPIC_PIXELS_PER_TOKEN))


def gemini_image_tokens(width: int, height: int) -> int:
    """Gemini image cost: one tile for small images, else 258 per 768×768 crop."""
    if width <= GEMINI_SMALL_EDGE and height <= GEMINI_SMALL_EDGE:
        return GEMINI_PER_TILE
    return GEMINI_PER_TILE * math.ceil(width / GEMINI_TILE) * math.ceil(height / GEMINI_TILE)


def image_tokens(data_base64: str, rule: ImageRule) -> int:
    """Tokens an image costs under `rule`; the rule's worst case when the size is unknown."""
    size = image_size(data_base64)
    if size is None:
        return WORST_CASE[rule]
    if rule is ImageRule.ANTHROPIC:
        return anthropic_image_tokens(*size)
    if rule is ImageRule.GEMINI:
        return gemini_image_tokens(*size)
    return openai_image_tokens(*size)

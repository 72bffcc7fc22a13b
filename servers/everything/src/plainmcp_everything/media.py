"""The fixture's binary payloads, built from their file formats rather than pasted in as base64.

``PNG``: a 1x1 red pixel (8-bit RGB). ``WAV``: 10 ms of silence (PCM, mono, 16-bit, 8 kHz).
Both are valid files that any decoder opens; they are computed once, on import, without I/O.
"""

from __future__ import annotations

import struct
import zlib


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def red_pixel_png() -> bytes:
    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)  # width, height, bit depth, RGB, defaults
    scanline = b"\x00" + b"\xff\x00\x00"  # filter type 0, then one red pixel
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", zlib.compress(scanline))
        + _png_chunk(b"IEND", b"")
    )


def silent_wav(rate: int = 8000, milliseconds: int = 10) -> bytes:
    samples = b"\x00\x00" * (rate * milliseconds // 1000)
    channels, bits = 1, 16
    block = channels * bits // 8
    fmt = struct.pack("<HHIIHH", 1, channels, rate, rate * block, block, bits)  # 1 = PCM
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(samples)) + samples
    return b"RIFF" + struct.pack("<I", len(body)) + body


PNG = red_pixel_png()
WAV = silent_wav()

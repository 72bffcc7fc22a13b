"""The fixture's binary payloads, built from their file formats rather than pasted in as base64.

``PNG``: a 1x1 red pixel (8-bit RGB). ``WAV``: 10 ms of silence (PCM, mono, 16-bit, 8 kHz).
Both are valid files that any decoder opens; they are computed once, on import, without I/O, and
without ``zlib`` (a shared library the fixture's cold start would load for these few bytes): the
PNG's pixel data is a zlib stream of one stored, uncompressed, deflate block.
"""

from __future__ import annotations

import binascii
import struct


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", binascii.crc32(kind + data))


def _adler32(data: bytes) -> int:
    """RFC 1950's checksum, which ends a zlib stream."""
    low, high = 1, 0
    for byte in data:
        low = (low + byte) % 65521
        high = (high + low) % 65521
    return high << 16 | low


def _zlib_stored(data: bytes) -> bytes:
    """``data`` as a zlib stream (RFC 1950) of one final stored deflate block (RFC 1951, 3.2.4)."""
    assert len(data) <= 0xFFFF  # one stored block holds at most 64 KiB
    header = b"\x78\x01"  # deflate, 32 KiB window, no preset dictionary, fastest (the check bits make it % 31)
    block = b"\x01" + struct.pack("<HH", len(data), len(data) ^ 0xFFFF)  # BFINAL=1, BTYPE=00 (stored)
    return header + block + data + struct.pack(">I", _adler32(data))


def red_pixel_png() -> bytes:
    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)  # width, height, bit depth, RGB, defaults
    scanline = b"\x00" + b"\xff\x00\x00"  # filter type 0, then one red pixel
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", _zlib_stored(scanline))
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

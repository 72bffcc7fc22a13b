"""MIME types from file names, and telling text from binary by content.

One fixed table, so a file gets the same type on every machine (the ``mimetypes`` module reads the
host's ``/etc/mime.types`` and answers differently from system to system).
"""

from __future__ import annotations

import os

OCTET_STREAM = "application/octet-stream"

_TYPES: dict[str, str] = {
    # images
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".bmp": "image/bmp",
    ".svg": "image/svg+xml",
    ".ico": "image/x-icon",
    ".tif": "image/tiff",
    ".tiff": "image/tiff",
    ".avif": "image/avif",
    ".heic": "image/heic",
    # audio
    ".mp3": "audio/mpeg",
    ".wav": "audio/wav",
    ".ogg": "audio/ogg",
    ".oga": "audio/ogg",
    ".opus": "audio/opus",
    ".flac": "audio/flac",
    ".m4a": "audio/mp4",
    ".aac": "audio/aac",
    ".weba": "audio/webm",
    ".mid": "audio/midi",
    ".midi": "audio/midi",
    # documents and data
    ".pdf": "application/pdf",
    ".zip": "application/zip",
    ".gz": "application/gzip",
    ".tar": "application/x-tar",
    ".wasm": "application/wasm",
    ".json": "application/json",
    ".jsonl": "application/jsonl",
    ".xml": "application/xml",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".toml": "application/toml",
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".ts": "text/x-typescript",
    ".sql": "application/sql",
    # text
    ".txt": "text/plain",
    ".log": "text/plain",
    ".ini": "text/plain",
    ".cfg": "text/plain",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".rst": "text/x-rst",
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".html": "text/html",
    ".htm": "text/html",
    ".css": "text/css",
    ".py": "text/x-python",
    ".rs": "text/x-rust",
    ".go": "text/x-go",
    ".c": "text/x-c",
    ".h": "text/x-c",
    ".cpp": "text/x-c++",
    ".java": "text/x-java",
    ".sh": "text/x-shellscript",
    ".rb": "text/x-ruby",
}

_TEXTUAL_APPLICATIONS = {
    "application/json",
    "application/jsonl",
    "application/xml",
    "application/yaml",
    "application/toml",
    "application/sql",
    "image/svg+xml",
}


def mime_type(name: str) -> str | None:
    """The MIME type a file name suggests, or None when its extension is not in the table."""
    return _TYPES.get(os.path.splitext(name)[1].lower())


def is_textual(mime: str | None) -> bool:
    return mime is not None and (mime.startswith("text/") or mime in _TEXTUAL_APPLICATIONS)


def looks_binary(sample: bytes) -> bool:
    """Whether the first bytes of a file look binary: a NUL byte, as ``grep`` and git decide."""
    return b"\x00" in sample

"""The server's settings: one frozen value, built from the command line (or directly in tests)."""

from __future__ import annotations

from dataclasses import dataclass

KIB = 1024
MIB = 1024 * KIB


@dataclass(frozen=True, slots=True)
class Config:
    """What the operator decided. Every limit bounds memory or time; none is unlimited.

    Attributes:
        roots: the allowed directories, as given (``~`` expanded and made absolute by the policy).
        allow_write: register the tools that change files.
        allow_delete: also register ``delete_file`` (needs ``allow_write``).
        use_roots: narrow the allowed directories to the client's roots when it offers them
            (legacy sessions; roots never widen the operator's set).
        watch: run the file watcher that feeds resource subscriptions and list changes.
        max_read_bytes: cap on the text one read returns (``read_text_file``, each file of
            ``read_multiple_files``); longer files are truncated with a notice.
        max_media_bytes: cap on a file ``read_media_file`` or ``resources/read`` returns whole
            (never above about 3 MB, whatever is set: base64 of more would not fit a 4 MiB message).
        max_entries: default cap on entries a listing, tree or search walk returns.
        max_entries_limit: the most a client may ask for with ``maxEntries`` / ``maxResults``.
        max_depth: the deepest a walk descends, whatever a client asks.
        max_search_file_bytes: ``search_content`` skips larger files.
        max_resources: cap on ``resources/list`` (the whole list, over every page).
        debounce_ms: the watcher's longest wait to group a burst of changes into one batch.
        search_timeout: seconds a regular-expression ``search_content`` may run (in its worker
            process) before it is stopped with a tool error.
        max_result_bytes: about the most a listing, tree or search result may weigh (its text and
            structured forms together); past it the result is cut and says so. Below the stdio
            transport's 4 MiB message limit, which would otherwise replace the result with an error.
    """

    roots: tuple[str, ...]
    allow_write: bool = False
    allow_delete: bool = False
    use_roots: bool = False
    watch: bool = True
    max_read_bytes: int = 1 * MIB
    max_media_bytes: int = 3 * MIB
    max_entries: int = 10_000
    max_entries_limit: int = 200_000
    max_depth: int = 64
    max_search_file_bytes: int = 4 * MIB
    max_resources: int = 1_000
    debounce_ms: int = 400
    max_result_bytes: int = 3_800_000
    search_timeout: float = 10.0

    def __post_init__(self) -> None:
        if not self.roots:
            raise ValueError("name at least one allowed directory")
        if self.allow_delete and not self.allow_write:
            raise ValueError("--allow-delete needs --allow-write")
        for name in ("max_read_bytes", "max_media_bytes", "max_entries", "max_entries_limit", "max_depth",
                     "max_search_file_bytes", "max_resources", "debounce_ms", "max_result_bytes", "search_timeout"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")

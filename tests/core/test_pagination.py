from __future__ import annotations

import pytest
from plainmcp.errors import ErrorCode, MCPError
from plainmcp.pagination import decode_cursor, encode_cursor, paginate


def test_paginate_walks_every_item_once() -> None:
    items = list(range(7))
    seen, cursor, pages = [], None, 0
    while True:
        page, cursor = paginate("tools", items, cursor, 3)
        seen.extend(page)
        pages += 1
        if cursor is None:
            break
    assert seen == items and pages == 3


def test_paginate_exact_multiple_has_no_empty_last_page() -> None:
    page, cursor = paginate("tools", [1, 2, 3], None, 3)
    assert list(page) == [1, 2, 3] and cursor is None


def test_paginate_empty_string_cursor_is_the_first_page() -> None:
    assert paginate("tools", [1, 2], "", 1) == ([1], encode_cursor("tools", 1))


@pytest.mark.parametrize(
    "cursor",
    [
        42,
        "not-base64!",
        encode_cursor("prompts", 1),
        encode_cursor("tools", -1),
        "dG9vbHM6MDE",
        encode_cursor("tools", 99),
    ],
)
def test_paginate_invalid_cursor_is_invalid_params(cursor: object) -> None:
    with pytest.raises(MCPError) as raised:
        paginate("tools", [1, 2, 3], cursor, 1)
    assert raised.value.code == ErrorCode.INVALID_PARAMS


def test_cursor_round_trip() -> None:
    assert decode_cursor("resources", encode_cursor("resources", 250)) == 250

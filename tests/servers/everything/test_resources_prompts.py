"""Resources and prompts of the 2025-11-25 suite, with their exact contents, in both eras."""

from __future__ import annotations

import anyio
import pytest
from plainmcp import MCPError

from .support import ERAS, LEGACY, MODERN, QUICK, connect, png_size

pytestmark = pytest.mark.anyio


@pytest.fixture(params=ERAS)
def era(request):
    return request.param


async def read(client, uri):
    with anyio.fail_after(QUICK):
        return await client.read_resource(uri)


async def test_static_text(era):
    async with connect(era) as client:
        result = await read(client, "test://static-text")
    assert result["contents"] == [
        {
            "uri": "test://static-text",
            "mimeType": "text/plain",
            "text": "This is the content of the static text resource.",
        }
    ]
    if era == MODERN:
        assert (result["resultType"], result["ttlMs"], result["cacheScope"]) == ("complete", 0, "private")


async def test_static_binary_is_a_png_blob(era):
    async with connect(era) as client:
        result = await read(client, "test://static-binary")
    (contents,) = result["contents"]
    assert (contents["uri"], contents["mimeType"]) == ("test://static-binary", "image/png")
    assert "text" not in contents
    assert png_size(contents["blob"]) == (1, 1)


@pytest.mark.parametrize(
    ("uri", "text"),
    [
        ("test://template/123/data", '{"id":"123","templateTest":true,"data":"Data for ID: 123"}'),
        ("test://template/abc-9/data", '{"id":"abc-9","templateTest":true,"data":"Data for ID: abc-9"}'),
        ("test://template/a%20b/data", '{"id":"a b","templateTest":true,"data":"Data for ID: a b"}'),
    ],
)
async def test_template_substitutes_the_id(era, uri, text):
    async with connect(era) as client:
        result = await read(client, uri)
    assert result["contents"] == [{"uri": uri, "mimeType": "application/json", "text": text}]


async def test_watched_resource(era):
    async with connect(era) as client:
        result = await read(client, "test://watched-resource")
    assert result["contents"] == [
        {"uri": "test://watched-resource", "mimeType": "text/plain", "text": "Watched resource content"}
    ]


@pytest.mark.parametrize(
    "uri",
    ["test://nonexistent-resource-for-conformance-testing", "test://template//data", "test://template/1/2/data"],
)
async def test_unknown_resource_is_an_error_naming_the_uri(era, uri):
    """-32002 in 2025-11-25; 2026-07-28 (SEP-2164) makes it -32602. Never empty contents."""
    async with connect(era) as client:
        with pytest.raises(MCPError) as caught:
            await read(client, uri)
    assert caught.value.code == (-32602 if era == MODERN else -32002)
    assert caught.value.data == {"uri": uri}


async def test_subscribe_and_unsubscribe_return_empty_results():
    async with connect(LEGACY) as client:
        with anyio.fail_after(QUICK):
            assert await client.request("resources/subscribe", {"uri": "test://watched-resource"}) == {}
            assert await client.request("resources/unsubscribe", {"uri": "test://watched-resource"}) == {}


async def test_subscribing_to_an_unknown_resource_is_an_error():
    async with connect(LEGACY) as client:
        with pytest.raises(MCPError) as caught, anyio.fail_after(QUICK):
            await client.subscribe("test://nope")
    assert (caught.value.code, caught.value.data) == (-32002, {"uri": "test://nope"})


# ------------------------------------------------------------------------------------------- prompts


async def get(client, name, arguments=None):
    with anyio.fail_after(QUICK):
        return await client.get_prompt(name, arguments)


async def test_simple_prompt(era):
    async with connect(era) as client:
        result = await get(client, "test_simple_prompt")
    assert result["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "This is a simple prompt for testing."}}
    ]
    assert result["description"] == "A simple prompt without arguments"
    if era == MODERN:
        assert result["resultType"] == "complete"
        assert "ttlMs" not in result  # prompts/get is not a cacheable result


@pytest.mark.parametrize(
    ("arguments", "text"),
    [
        ({"arg1": "hello", "arg2": "world"}, "Prompt with arguments: arg1='hello', arg2='world'"),
        ({"arg1": "testValue1", "arg2": "testValue2"}, "Prompt with arguments: arg1='testValue1', arg2='testValue2'"),
    ],
)
async def test_prompt_with_arguments(era, arguments, text):
    async with connect(era) as client:
        result = await get(client, "test_prompt_with_arguments", arguments)
    assert result["messages"] == [{"role": "user", "content": {"type": "text", "text": text}}]


@pytest.mark.parametrize("arguments", [None, {"arg1": "only one"}, {"arg1": "a", "arg2": 2}])
async def test_prompt_with_arguments_rejects_missing_or_bad_ones(era, arguments):
    async with connect(era) as client:
        with pytest.raises(MCPError) as caught:
            await get(client, "test_prompt_with_arguments", arguments)
    assert caught.value.code == -32602


async def test_prompt_with_embedded_resource(era):
    async with connect(era) as client:
        result = await get(client, "test_prompt_with_embedded_resource", {"resourceUri": "test://static-text"})
    assert result["messages"] == [
        {
            "role": "user",
            "content": {
                "type": "resource",
                "resource": {
                    "uri": "test://static-text",
                    "mimeType": "text/plain",
                    "text": "Embedded resource content for testing.",
                },
            },
        },
        {"role": "user", "content": {"type": "text", "text": "Please process the embedded resource above."}},
    ]


async def test_prompt_with_image(era):
    async with connect(era) as client:
        result = await get(client, "test_prompt_with_image")
    image, text = result["messages"]
    assert image["role"] == "user"
    assert (image["content"]["type"], image["content"]["mimeType"]) == ("image", "image/png")
    assert png_size(image["content"]["data"]) == (1, 1)
    assert text == {"role": "user", "content": {"type": "text", "text": "Please analyze the image above."}}


async def test_dynamic_prompt(era):
    async with connect(era) as client:
        result = await get(client, "test_dynamic_prompt")
    assert result["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "This prompt can be removed and added back at run time."}}
    ]


async def test_unknown_prompt_is_invalid_params(era):
    async with connect(era) as client:
        with pytest.raises(MCPError) as caught:
            await get(client, "test_no_such_prompt")
    assert caught.value.code == -32602

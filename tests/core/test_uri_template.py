from __future__ import annotations

import pytest
from plainmcp.uri_template import TemplateError, UriTemplate


@pytest.mark.parametrize(
    ("template", "uri", "expected"),
    [
        ("test://template/{id}/data", "test://template/123/data", {"id": "123"}),
        ("test://template/{id}/data", "test://template/a%20b/data", {"id": "a b"}),
        ("file:///{+path}", "file:///etc/hosts", {"path": "etc/hosts"}),
        (
            "weather://{city}/forecast{?days,units}",
            "weather://Oslo/forecast?days=3&units=metric",
            {"city": "Oslo", "days": "3", "units": "metric"},
        ),
        ("weather://{city}/forecast{?days,units}", "weather://Oslo/forecast", {"city": "Oslo"}),
        ("x://{a}{/b,c}", "x://q/r/s", {"a": "q", "b": "r", "c": "s"}),
        ("x://{name}{.ext}", "x://report.pdf", {"name": "report", "ext": "pdf"}),
    ],
)
def test_uri_template_match_returns_variables(template: str, uri: str, expected: dict[str, str]) -> None:
    assert UriTemplate(template).match(uri) == expected


@pytest.mark.parametrize(
    ("template", "uri"),
    [
        ("test://template/{id}/data", "test://template/1/2/data"),  # a simple variable never spans "/"
        ("test://template/{id}/data", "test://template//data"),
        ("test://template/{id}/data", "test://other/1/data"),
        ("test://template/{id}/data", "test://template/1/data/extra"),
    ],
)
def test_uri_template_match_rejects_other_uris(template: str, uri: str) -> None:
    assert UriTemplate(template).match(uri) is None


def test_uri_template_expand_encodes_per_operator() -> None:
    assert UriTemplate("x://{id}").expand({"id": "a/b c"}) == "x://a%2Fb%20c"
    assert UriTemplate("file:///{+path}").expand({"path": "a/b c"}) == "file:///a/b%20c"
    assert UriTemplate("w://f{?days,units}").expand({"days": "3"}) == "w://f?days=3"


def test_uri_template_expand_then_match_round_trips() -> None:
    template = UriTemplate("db://{table}/rows{?limit}")
    uri = template.expand({"table": "weird name/ü", "limit": "10"})
    assert template.match(uri) == {"table": "weird name/ü", "limit": "10"}


@pytest.mark.parametrize("template", ["x://{unclosed", "x://}{a}", "x://{a b}", "x://{}"])
def test_uri_template_invalid_templates_raise(template: str) -> None:
    with pytest.raises(TemplateError):
        UriTemplate(template)


def test_uri_template_lists_its_variables() -> None:
    assert UriTemplate("w://{city}/f{?days,units}").variables == ("city", "days", "units")

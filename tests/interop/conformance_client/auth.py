"""The suite's ``auth/*`` client scenarios, played with :class:`plainmcp.oauth.OAuth`.

Each is what an application does: ``connect_http(url, auth=OAuth(...))`` at the suite's revision,
list the tools, call ``test-tool``. The suite's authorization servers approve without a person, so
the authorizer is :class:`~plainmcp.oauth.HeadlessAuthorizer`. What differs per scenario is only
configuration an application would have: the Client ID Metadata Document URL the suite expects, the
pre-registered credentials it passes in ``MCP_CONFORMANCE_CONTEXT``, the client-credentials
grant for the machine-client scenarios, and the JWT-bearer grant with the workload JWT it hands
over for ``auth/wif-jwt-bearer``, and for ``auth/enterprise-managed-authorization`` the same grant
with an ID-JAG exchanged at the suite's identity provider for the ID token it hands over. The scenarios where a correct client must refuse
(``auth/resource-mismatch``, ``auth/iss-*`` rejections, ``auth/metadata-issuer-mismatch``,
``auth/scope-retry-limit``) end with :class:`~plainmcp.oauth.AuthorizationError`, raised here, so
the process exits non-zero (the suite allows it there).
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
from plainmcp.http_client import connect_http
from plainmcp.oauth import HeadlessAuthorizer, IdJagExchange, OAuth

from . import protocol_version

logger = logging.getLogger(__name__)

#: The client_id URL the suite's CIMD scenarios expect (it need not resolve: the suite's
#: authorization server takes it as it is).
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
#: Seconds a scenario may take here (the suite's --timeout bounds the process; all scenarios run at once).
SCENARIO_TIMEOUT = 100.0
CLIENT_CREDENTIALS = {"auth/client-credentials-basic", "auth/client-credentials-jwt"}


def oauth_for(scenario: str, context: dict[str, Any]) -> OAuth:
    """The OAuth configuration an application would have for this scenario."""
    if scenario == "auth/enterprise-managed-authorization":
        exchange = IdJagExchange(context["idp_token_endpoint"], context["idp_id_token"], context["idp_client_id"])
        return OAuth(
            grant="jwt_bearer",
            assertion=exchange,
            client_id=context["client_id"],
            client_secret=context.get("client_secret"),
        )
    if scenario == "auth/wif-jwt-bearer":
        return OAuth(grant="jwt_bearer", client_id=context["client_id"], assertion=context["valid_jwt"])
    if scenario in CLIENT_CREDENTIALS:
        return OAuth(
            grant="client_credentials",
            client_id=context["client_id"],
            client_secret=context.get("client_secret"),
            private_key=context.get("private_key_pem"),
            signing_algorithm=context.get("signing_algorithm"),
        )
    return OAuth(
        authorizer=HeadlessAuthorizer(),
        client_name="plainmcp-conformance-client",
        client_metadata_url=CLIENT_METADATA_URL,
        client_id=context.get("client_id"),
        client_secret=context.get("client_secret"),
    )


async def run(scenario: str, url: str, context: dict[str, Any]) -> None:
    """Connect with OAuth, list the tools and call ``test-tool``; raises when authorization fails."""
    with anyio.fail_after(SCENARIO_TIMEOUT):
        async with connect_http(url, auth=oauth_for(scenario, context), protocol_version=protocol_version()) as client:
            tools = await client.list_all_tools()
            logger.info("tools: %s", [tool.get("name") for tool in tools])
            result = await client.call_tool("test-tool", {})
            logger.info("test-tool: %s", result.get("content"))

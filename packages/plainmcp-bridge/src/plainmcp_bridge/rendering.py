"""Whether the model server renders the request's ``tools`` into the prompt itself (its chat template does).

When it does, the tools reach the model twice if the system prompt describes them too: once as the
template's JSON, once in the bridge's words. The bridge asks the server once per conversation, with the
endpoints each server documents for it, and describes the tools in words only when the server does not
render them, or cannot say:

- llama.cpp's ``llama-server``: ``GET /props`` has ``chat_template_caps.supports_tools`` (false for a
  template without tool support, whose request ``tools`` it drops);
- Ollama: ``POST /api/show`` with the model has ``capabilities``, which lists ``"tools"`` when the model's
  template renders them.

Any other answer (vLLM, a hosted API, an error, a timeout) is "cannot say" (None).
"""

from __future__ import annotations

from typing import Any

import httpx

from .chat_apis import OLLAMA
from .shapes import mapping

#: Seconds the question may take: it is asked once, before the first turn.
PROBE_TIMEOUT = 5.0


def props_url(base_url: str) -> str:
    """llama-server's ``/props``, beside its OpenAI-compatible ``/v1``."""
    base = base_url.rstrip("/")
    return (base[: -len("/v1")] if base.endswith("/v1") else base) + "/props"


def renders_tools_from(api: str, document: Any) -> bool | None:
    """What ``/props`` (OpenAI-compatible API) or ``/api/show`` (Ollama) answered, read: True, False or None."""
    if not isinstance(document, dict):
        return None
    if api == OLLAMA:
        capabilities = document.get("capabilities")
        return "tools" in capabilities if isinstance(capabilities, list) else None
    supports = mapping(document.get("chat_template_caps")).get("supports_tools")
    return supports if isinstance(supports, bool) else None


async def server_renders_tools(
    api: str, base_url: str, model: str, *, headers: dict[str, str] | None = None
) -> bool | None:
    """Ask the model server (see the module's docstring); None when it cannot say."""
    try:
        async with httpx.AsyncClient(timeout=PROBE_TIMEOUT, headers=headers) as http:
            if api == OLLAMA:
                answer = await http.post(base_url.rstrip("/") + "/api/show", json={"model": model})
            else:
                answer = await http.get(props_url(base_url))
            if answer.status_code != 200 or len(answer.content) > 4 * 1024 * 1024:
                return None
            return renders_tools_from(api, answer.json())
    except (httpx.HTTPError, ValueError):
        return None

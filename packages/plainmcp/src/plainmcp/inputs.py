"""Input a handler needs from the client: elicitation, sampling, roots — in either era.

A handler asks with :meth:`Context.ask` (or the shortcuts ``elicit``, ``sample``, ``list_roots``)
and gets the answers back, whatever the era:

- legacy: the requests go to the client as JSON-RPC requests, and ``ask`` returns their results;
- 2026-07-28: servers send no requests, so ``ask`` raises :class:`InputRequired`; the request is
  answered with ``resultType: "input_required"``, and the client retries with ``inputResponses``.
  The handler then runs again from the top, and this time ``ask`` returns the answers.

Answers from earlier rounds travel in ``requestState``, signed with HMAC-SHA256 under the server's
key ring (:mod:`plainmcp.state.keyring`: the first key seals, every key verifies, so every replica
sharing the ring accepts what any of them sealed) and bound to the method, the target (tool, prompt
or URI), the arguments and the authenticated principal, so a client cannot forge them, replay them
on another request or as another user, or keep them past their lifetime. The state is signed,
not encrypted: the client can decode it, so it must never carry secrets.
"""

from __future__ import annotations

import base64
import json
import time
from typing import Any

from . import protocol
from .errors import ErrorCode, MCPError
from .state.keyring import KeyRing

STATE_LIFETIME_SECONDS = 3600


class InputRequest:
    """One request for input: the JSON-RPC method and params, and the client capability it needs."""

    __slots__ = ("method", "params", "capability")

    method: str
    params: dict[str, Any]
    capability: str

    def __init__(self, method: str, params: dict[str, Any], capability: str) -> None:
        # Immutable: the fields are set once, here, past __setattr__.
        object.__setattr__(self, "method", method)
        object.__setattr__(self, "params", params)
        object.__setattr__(self, "capability", capability)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.method, self.params, self.capability) == (other.method, other.params, other.capability)

    def __hash__(self) -> int:
        return hash((self.method, self.params, self.capability))  # TypeError, as params is a dict

    def __repr__(self) -> str:
        return f"{type(self).__name__}(method={self.method!r}, params={self.params!r}, capability={self.capability!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # copy and pickle would restore the fields with setattr, which refuses.
        return (type(self), (self.method, self.params, self.capability))

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "params": self.params}


def elicitation(message: str, requested_schema: dict[str, Any]) -> InputRequest:
    """Ask the user for structured input (form mode)."""
    return InputRequest(
        protocol.ELICITATION_CREATE,
        {"mode": "form", "message": message, "requestedSchema": requested_schema},
        "elicitation",
    )


def sampling(messages: list[dict[str, Any]], max_tokens: int, **options: Any) -> InputRequest:
    """Ask the client's model for a completion; ``options`` are further fields as on the wire."""
    return InputRequest(
        protocol.SAMPLING_CREATE_MESSAGE, {"messages": messages, "maxTokens": max_tokens, **options}, "sampling"
    )


def roots() -> InputRequest:
    """Ask for the client's roots."""
    return InputRequest(protocol.ROOTS_LIST, {}, "roots")


class InputRequired(BaseException):
    """Raised by :meth:`Context.ask` in the modern era when answers are missing.

    Control flow, not an error: like cancellation it derives from BaseException, so a handler's
    ``except Exception`` cannot swallow it; the modern dispatcher turns it into the
    ``input_required`` result.
    """

    def __init__(self, requests: dict[str, InputRequest]) -> None:
        super().__init__(", ".join(requests))
        self.requests = requests


class InputRound:
    """What one modern request knows of the client's answers: earlier rounds' (from the state) and
    this round's ``inputResponses``; plus the handler's own state, carried between rounds."""

    __slots__ = ("answers", "state", "used")

    def __init__(self, answers: dict[str, Any], state: dict[str, Any]) -> None:
        self.answers = answers
        self.state = state
        #: The answers the handler actually consumed: only these are sealed into the next state,
        #: so a client cannot pad the state with keys nobody asked for.
        self.used: dict[str, Any] = {}

    def answers_for(self, requests: dict[str, InputRequest]) -> dict[str, Any]:
        """The answers to ``requests``; raises InputRequired for those missing or malformed."""
        found = {
            k: self.answers[k] for k, r in requests.items() if k in self.answers and is_valid_answer(r, self.answers[k])
        }
        self.used.update(found)
        missing = {key: request for key, request in requests.items() if key not in found}
        if missing:
            raise InputRequired(missing)
        return found


def is_valid_answer(request: InputRequest, answer: Any) -> bool:
    """Whether ``answer`` has the shape of a result of ``request``'s method (cheap structural check)."""
    if not isinstance(answer, dict):
        return False
    if request.method == protocol.ELICITATION_CREATE:
        return answer.get("action") in ("accept", "decline", "cancel")
    if request.method == protocol.SAMPLING_CREATE_MESSAGE:
        return isinstance(answer.get("content"), (dict, list)) and isinstance(answer.get("role"), str)
    if request.method == protocol.ROOTS_LIST:
        return isinstance(answer.get("roots"), list)
    return True


def invalid_state() -> MCPError:
    return MCPError(ErrorCode.INVALID_PARAMS, "Invalid or expired requestState", {"reason": "invalid_request_state"})


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


# hashlib and hmac are imported where used: with OpenSSL behind them they cost milliseconds of
# every server's start-up, and only servers that ask for input (2026-07-28) need them.


def binding(method: str, params: dict[str, Any], principal: str | None = None) -> str:
    """A digest of what a state belongs to: the method, its target, its arguments and who asked
    (nothing of the replica: any replica holding the key ring must accept it)."""
    import hashlib

    target = {key: params.get(key) for key in ("name", "uri", "arguments")}
    encoded = json.dumps([method, target, principal], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(encoded.encode("utf-8")).hexdigest()


def seal_state(ring: KeyRing, bound_to: str, answers: dict[str, Any], state: dict[str, Any]) -> str:
    """A signed, opaque ``requestState`` token, sealed with the ring's first key."""
    import hashlib
    import hmac

    payload = json.dumps(
        {"b": bound_to, "t": int(time.time()), "a": answers, "s": state}, separators=(",", ":"), ensure_ascii=False
    ).encode("utf-8")
    signature = hmac.new(ring.sealing, payload, hashlib.sha256).digest()
    return f"{_b64(payload)}.{_b64(signature)}"


def open_state(ring: KeyRing, bound_to: str, token: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The (answers, handler state) sealed in ``token``. Raises MCPError(-32602) unless the token
    was sealed by a key of ``ring``, is intact, unexpired and bound to this very request."""
    import hashlib
    import hmac

    if not isinstance(token, str) or token.count(".") != 1:
        raise invalid_state()
    payload_text, signature_text = token.split(".")
    try:
        payload, signature = _unb64(payload_text), _unb64(signature_text)
    except (ValueError, TypeError):
        raise invalid_state() from None
    if not any(hmac.compare_digest(hmac.new(key, payload, hashlib.sha256).digest(), signature) for key in ring.keys):
        raise invalid_state()
    content = json.loads(payload)
    if content["b"] != bound_to or time.time() - content["t"] > STATE_LIFETIME_SECONDS:
        raise invalid_state()
    return content["a"], content["s"]

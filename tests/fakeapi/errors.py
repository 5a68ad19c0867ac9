"""`metav1.Status` error bodies exactly as a real API server writes them, and the `ApiError` that carries one.

Handlers, the store and the fault hook raise `ApiError`; the HTTP layer turns it into the response.
Messages follow k8s.io/apimachinery `errors.New*` and the apiserver's `forbiddenMessage`, because the
client code under test parses them (kresched's RBAC hint, 410 handling, 409 retries).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.fakeapi.store import Resource

__all__ = ["REASONS", "ApiError", "status_body"]

#: `StatusReason` per code, for errors that have no more specific reason.
REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    409: "Conflict",
    410: "Expired",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    501: "NotImplemented",
    503: "ServiceUnavailable",
    504: "Timeout",
}

_DEFAULT_MESSAGES = {
    429: "Too many requests, please try again later.",
    500: "Internal error occurred: injected fault",
    503: "the server is currently unable to handle the request",
    504: "the server was unable to return a response in the time allotted, but may still be processing the request",
}

EXPIRED_MESSAGE = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new "
    "list without the continue parameter, or use the continue token in this response to retrieve the "
    "remainder of the results. Continuing with the provided token results in an inconsistent list - objects "
    "that were created, modified, or deleted between the time the first chunk was returned and now may show "
    "up in the list."
)


def status_body(code: int, reason: str, message: str, details: dict[str, Any] | None = None,
                metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": metadata or {},
                            "status": "Failure", "message": message, "reason": reason}
    if details:
        body["details"] = details
    body["code"] = code
    return body


def _details(resource: Resource, name: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    if name:
        out["name"] = name
    if resource.group:
        out["group"] = resource.group
    out["kind"] = resource.plural
    return out


def _qualified(resource: Resource, name: str) -> str:
    return f'{resource.key} "{name}"' if name else resource.key


class ApiError(Exception):
    """An error response: HTTP status `code` and a Status body (plus optional headers)."""

    def __init__(self, code: int, reason: str, message: str, *, details: dict[str, Any] | None = None,
                 metadata: dict[str, Any] | None = None, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.metadata = metadata
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        return status_body(self.code, self.reason, self.message, self.details, self.metadata)

    # -- the errors a real server sends, by name ---------------------------------------------
    @classmethod
    def for_code(cls, code: int, message: str = "", *, retry_after: int | None = None) -> ApiError:
        """A generic error of this code (what the fault hook injects)."""
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
        details = {"retryAfterSeconds": retry_after} if retry_after is not None else None
        if code == 500 and message:
            details = {**(details or {}), "causes": [{"message": message}]}
            message = f"Internal error occurred: {message}"
        return cls(code, REASONS.get(code, "Unknown"), message or _DEFAULT_MESSAGES.get(code, f"injected {code}"),
                   details=details, headers=headers)

    @classmethod
    def unauthorized(cls) -> ApiError:
        return cls(401, "Unauthorized", "Unauthorized")

    @classmethod
    def forbidden(cls, resource: Resource, verb: str, user: str, *, namespace: str = "", name: str = "",
                  subresource: str = "") -> ApiError:
        rbac = f"{resource.plural}/{subresource}" if subresource else resource.plural
        scope = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
        why = f'User "{user}" cannot {verb} resource "{rbac}" in API group "{resource.group}" {scope}'
        return cls(403, "Forbidden", f"{_qualified(resource, name)} is forbidden: {why}",
                   details=_details(resource, name))

    @classmethod
    def not_found(cls, resource: Resource, name: str) -> ApiError:
        return cls(404, "NotFound", f"{_qualified(resource, name)} not found", details=_details(resource, name))

    @classmethod
    def path_not_found(cls) -> ApiError:
        return cls(404, "NotFound", "the server could not find the requested resource", details={})

    @classmethod
    def method_not_allowed(cls, method: str) -> ApiError:
        return cls(405, "MethodNotAllowed", f"the server does not allow this method on the requested resource "
                   f"({method})", details={})

    @classmethod
    def already_exists(cls, resource: Resource, name: str) -> ApiError:
        return cls(409, "AlreadyExists", f"{_qualified(resource, name)} already exists",
                   details=_details(resource, name))

    @classmethod
    def conflict(cls, resource: Resource, name: str) -> ApiError:
        return cls(409, "Conflict", f"Operation cannot be fulfilled on {_qualified(resource, name)}: the object "
                   "has been modified; please apply your changes to the latest version and try again",
                   details=_details(resource, name))

    @classmethod
    def expired(cls, continue_token: str = "") -> ApiError:
        return cls(410, "Expired", EXPIRED_MESSAGE, metadata={"continue": continue_token} if continue_token else {})

    @classmethod
    def bad_request(cls, message: str) -> ApiError:
        return cls(400, "BadRequest", message)

    @classmethod
    def not_implemented(cls, what: str) -> ApiError:
        return cls(501, "NotImplemented", f"{what} is not implemented by the fake API server (yet)")

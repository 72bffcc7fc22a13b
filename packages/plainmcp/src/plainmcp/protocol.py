"""Method names, method sets, notification names, ``_meta`` keys and log levels, verbatim from the specification.

Every other module takes these spellings from here, so a typo cannot hide in one handler.
"""

from __future__ import annotations

# Lifecycle and utilities
INITIALIZE = "initialize"
INITIALIZED = "notifications/initialized"
PING = "ping"
CANCELLED = "notifications/cancelled"
PROGRESS = "notifications/progress"

# Server features
TOOLS_LIST = "tools/list"
TOOLS_CALL = "tools/call"
RESOURCES_LIST = "resources/list"
RESOURCES_TEMPLATES_LIST = "resources/templates/list"
RESOURCES_READ = "resources/read"
RESOURCES_SUBSCRIBE = "resources/subscribe"
RESOURCES_UNSUBSCRIBE = "resources/unsubscribe"
PROMPTS_LIST = "prompts/list"
PROMPTS_GET = "prompts/get"
COMPLETION_COMPLETE = "completion/complete"
LOGGING_SET_LEVEL = "logging/setLevel"

# Server -> client notifications
MESSAGE = "notifications/message"
RESOURCE_UPDATED = "notifications/resources/updated"
RESOURCES_LIST_CHANGED = "notifications/resources/list_changed"
TOOLS_LIST_CHANGED = "notifications/tools/list_changed"
PROMPTS_LIST_CHANGED = "notifications/prompts/list_changed"

# Server -> client requests (legacy era) and the client's notification about roots
ROOTS_LIST = "roots/list"
SAMPLING_CREATE_MESSAGE = "sampling/createMessage"
ELICITATION_CREATE = "elicitation/create"
ROOTS_LIST_CHANGED = "notifications/roots/list_changed"

# Modern era (2026-07-28)
SERVER_DISCOVER = "server/discover"
SUBSCRIPTIONS_LISTEN = "subscriptions/listen"
SUBSCRIPTIONS_ACKNOWLEDGED = "notifications/subscriptions/acknowledged"

# The tasks extension (SEP-2663, 2026-07-28)
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
TASKS_GET = "tasks/get"
TASKS_UPDATE = "tasks/update"
TASKS_CANCEL = "tasks/cancel"
# ... and the 2025-11-25 tasks (v1, the experimental ``tasks`` capability), which 2026-07-28 removed
TASKS_RESULT = "tasks/result"
TASKS_LIST = "tasks/list"
TASKS_STATUS = "notifications/tasks/status"

# Method sets: which methods a rule applies to, kept here beside the names.

#: Requests that change nothing on the server, and so may be retried after a timeout.
IDEMPOTENT_METHODS = frozenset(
    {
        PING,
        TOOLS_LIST,
        RESOURCES_LIST,
        RESOURCES_TEMPLATES_LIST,
        RESOURCES_READ,
        PROMPTS_LIST,
        PROMPTS_GET,
        COMPLETION_COMPLETE,
        LOGGING_SET_LEVEL,
        RESOURCES_SUBSCRIBE,
        RESOURCES_UNSUBSCRIBE,
    }
)
#: Methods that exist only in 2026-07-28: naming one makes a request modern.
MODERN_ONLY_METHODS = frozenset({SERVER_DISCOVER, SUBSCRIPTIONS_LISTEN})
#: The only methods whose 2026-07-28 results may be ``input_required``.
MULTI_ROUND_METHODS = frozenset({TOOLS_CALL, PROMPTS_GET, RESOURCES_READ})
#: The tasks extension's methods (2026-07-28 only; each names its task in ``params.taskId``).
TASK_METHODS = frozenset({TASKS_GET, TASKS_UPDATE, TASKS_CANCEL})
#: The paginated list methods.
LIST_METHODS = frozenset({TOOLS_LIST, PROMPTS_LIST, RESOURCES_LIST, RESOURCES_TEMPLATES_LIST})
#: Every request method a server serves, in either era (metrics label the others "other").
SERVER_REQUEST_METHODS = frozenset(
    {
        INITIALIZE,
        PING,
        TOOLS_LIST,
        TOOLS_CALL,
        RESOURCES_LIST,
        RESOURCES_TEMPLATES_LIST,
        RESOURCES_READ,
        RESOURCES_SUBSCRIBE,
        RESOURCES_UNSUBSCRIBE,
        PROMPTS_LIST,
        PROMPTS_GET,
        COMPLETION_COMPLETE,
        LOGGING_SET_LEVEL,
        SERVER_DISCOVER,
        SUBSCRIPTIONS_LISTEN,
        TASKS_GET,
        TASKS_UPDATE,
        TASKS_CANCEL,
        TASKS_RESULT,
        TASKS_LIST,
    }
)

# Request _meta keys
PROGRESS_TOKEN = "progressToken"
META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
META_RELATED_TASK = "io.modelcontextprotocol/related-task"

#: Syslog severities as MCP names them, lowest first.
LOG_LEVELS: tuple[str, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
LOG_LEVEL_RANK: dict[str, int] = {name: rank for rank, name in enumerate(LOG_LEVELS)}

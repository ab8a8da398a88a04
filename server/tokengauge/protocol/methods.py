"""The custom LSP methods' names (ARCHITECTURE §3): the requests the extension sends and the
notifications the server sends."""

from __future__ import annotations

from typing import Final

MODELS: Final = "tokenGauge/models"
COUNT_TOKENS: Final = "tokenGauge/countTokens"
USAGE: Final = "tokenGauge/usage"
RECORD_USAGE: Final = "tokenGauge/recordUsage"
RECORD_ERROR: Final = "tokenGauge/recordError"
CHAT: Final = "tokenGauge/chat"
CHAT_PART: Final = "tokenGauge/chatPart"
DISCOVER_MODELS: Final = "tokenGauge/discoverModels"
WARM_COUNTS: Final = "tokenGauge/warmCounts"
STATUS: Final = "tokenGauge/status"
MODELS_CHANGED: Final = "tokenGauge/modelsChanged"
CALIBRATION: Final = "tokenGauge/calibration"
ADD_PROVIDER: Final = "tokenGauge/addProvider"
CHECK_KEY: Final = "tokenGauge/checkKey"
DASHBOARD: Final = "tokenGauge/dashboard"
ACTIVITY: Final = "tokenGauge/activity"
"""Notification: a request was added to the usage history (the dashboard reads it again)."""
NOTICE: Final = "tokenGauge/notice"
"""Notification: something a person must know and can fix (`Notice`), shown once."""

REQUESTS: Final = frozenset(
    {
        MODELS,
        COUNT_TOKENS,
        USAGE,
        RECORD_USAGE,
        RECORD_ERROR,
        CHAT,
        DISCOVER_MODELS,
        WARM_COUNTS,
        ADD_PROVIDER,
        CHECK_KEY,
        DASHBOARD,
    }
)
"""The requests, extension → server (tests and the bench send `recordUsage`, `recordError`)."""
NOTIFICATIONS: Final = frozenset({CHAT_PART, STATUS, MODELS_CHANGED, CALIBRATION, ACTIVITY, NOTICE})
"""The notifications, server → extension."""

"""The built-in session kinds, offered as any plugin offers its own (entry point ``sessions``)."""

from __future__ import annotations

from collections.abc import Sequence

from svc_host.plugin import SessionKindSpec, hookimpl

SVC_PLUGIN_API = ">=1.1,<2"


@hookimpl
def svc_session_kinds() -> Sequence[SessionKindSpec]:
    from svc_plugin_sessions.kinds import BUILT_IN

    return BUILT_IN

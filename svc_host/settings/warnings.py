"""What the configuration asks for that nothing installed will do.

``notifications.chat_webhook_url`` is core configuration (the spec's), but svc itself sends nothing: a plugin
delivers it, declaring so with ``SVC_DELIVERS`` (``svc_plugin_chat``). A webhook stored with no such plugin
installed, or with it disabled, would be silently ignored: ``svc plugins``, ``GET /api/config``, the Settings
page and the server's log at start say so instead. The webhook may also come from the ``CHAT_WEBHOOK_URL``
variable alone (the chat plugin reads it when no config layer sets the key): it is the same key, and warned about
the same way.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping

from svc_host.settings.config import SvcConfig

WEBHOOK = "notifications.chat_webhook_url"
WEBHOOK_VARIABLE = "CHAT_WEBHOOK_URL"


def config_warnings(config: SvcConfig, delivered: Collection[str], env: Mapping[str, str] | None = None) -> list[str]:
    """One sentence per configured value no plugin in ``delivered`` (keys plugins deliver) acts on; ``env`` (the
    process environment unless given) is where ``CHAT_WEBHOOK_URL`` is looked for."""
    if WEBHOOK in delivered:
        return []
    variable = (os.environ if env is None else env).get(WEBHOOK_VARIABLE)
    if config.notifications.chat_webhook_url:
        named = WEBHOOK
    elif variable:
        named = WEBHOOK_VARIABLE
    else:
        return []
    return [
        f"{named} is set but no installed plugin delivers chat notifications, so nothing will be sent: "
        "install svc-plugin-chat (pip install svc-plugin-chat), or remove 'chat' from SVC_DISABLE_PLUGINS"
    ]

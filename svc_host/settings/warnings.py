"""What the configuration asks for that nothing installed will do (pure).

``notifications.chat_webhook_url`` is core configuration (the spec's), but svc itself sends nothing: a plugin
delivers it, declaring so with ``SVC_DELIVERS`` (``svc_plugin_chat``). A webhook stored with no such plugin
installed, or with it disabled, would be silently ignored: ``svc plugins``, ``GET /api/config``, the Settings
page and the server's log at start say so instead.
"""

from __future__ import annotations

from collections.abc import Collection

from svc_host.settings.config import SvcConfig

WEBHOOK = "notifications.chat_webhook_url"


def config_warnings(config: SvcConfig, delivered: Collection[str]) -> list[str]:
    """One sentence per configured value no plugin in ``delivered`` (keys plugins deliver) acts on."""
    if config.notifications.chat_webhook_url and WEBHOOK not in delivered:
        return [
            f"{WEBHOOK} is set but no installed plugin delivers chat notifications, so nothing will be sent: "
            "install svc-plugin-chat (pip install svc-plugin-chat), or remove 'chat' from SVC_DISABLE_PLUGINS"
        ]
    return []

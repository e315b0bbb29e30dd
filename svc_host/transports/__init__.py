"""How the host reaches a cluster: the transport and sync-backend contracts (with the sync-backend protocol every
backend keeps: ``sync_claim``, ``sync_files``, ``sync_lock``, ``sync_excludes``), the live transports,
local processes."""

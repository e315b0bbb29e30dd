"""How the host reaches a cluster: the transport and sync-backend contracts, the live transports, local processes."""

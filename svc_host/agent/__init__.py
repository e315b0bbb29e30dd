"""The per-user svc agent: a process that keeps the store and one SSH connection per profile open, so that
``svc jobs|status|submit|logs -t PROFILE`` skip the imports and the handshake a new process would pay.

``place`` says where an agent listens, ``protocol`` what is said on its socket (both standard library only:
the CLI imports them on every SSH command), ``client`` asks it, ``server`` is the agent, ``launch`` starts one,
and ``calls`` is the work itself, which the CLI runs in its own process when no agent answers. ``session_ports``
serves ``svc session open``'s sessions on ports of the agent's own, through its held connections.
"""

"""``python -m svc_host`` runs the ``svc`` command."""

from svc_host.cli import main

main()

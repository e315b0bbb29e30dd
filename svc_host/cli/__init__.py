"""The ``svc`` command. Subcommands import what they need when they run, so ``svc --version`` stays fast."""

from __future__ import annotations

import sys

import click

from svc_host import __version__
from svc_host.cli.groups import LazyGroup

COMMANDS = {
    "plugins": "svc_host.cli.plugins:plugins",
    "serve": "svc_host.cli.servers:serve",
    "login-link": "svc_host.cli.servers:login_link",
    "mcp": "svc_host.cli.servers:mcp",
    "submit": "svc_host.cli.jobs:submit",
    "jobs": "svc_host.cli.jobs:jobs",
    "status": "svc_host.cli.jobs:status",
    "cancel": "svc_host.cli.jobs:cancel",
    "logs": "svc_host.cli.jobs:logs",
    "why": "svc_host.cli.pending:why",
    "config": "svc_host.cli.config:config",
    "profile": "svc_host.cli.profiles:profile",
    "resources": "svc_host.cli.jobs:resources",
    "history": "svc_host.cli.jobs:history",
    "eff": "svc_host.cli.efficiency:eff",
    "limits": "svc_host.cli.limits:limits",
    "flow": "svc_host.cli.flow:flow",
    "sweep": "svc_host.cli.sweep:sweep",
    "schedule": "svc_host.cli.schedule:schedule",
    "session": "svc_host.cli.session:session",
    "sync": "svc_host.cli.sync:sync",
    "inspect": "svc_host.cli.sync:inspect",
    "files": "svc_host.cli.sync:files",
    "agent": "svc_host.cli.agent:agent",
}


@click.group(cls=LazyGroup, commands=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="svc")
def cli() -> None:
    """svc: submit and watch Slurm jobs, run workflows and sweeps, keep code in sync with the cluster."""


def main() -> None:
    """Console entry point: expected failures print one line and exit 1, never a traceback."""
    from svc_host.errors import SvcError

    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except SvcError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)

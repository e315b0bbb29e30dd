"""Where svc keeps its files. Every location follows XDG and can be moved with an environment variable."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

PROJECT_CONFIG_NAME = ".svc.json"
"""The project-level config file in a project (mount) directory."""
PROJECT_CONFIG_CANDIDATES = (".svc.json", "svc.json")
"""Project config names listed by ``GET /api/config/paths``; the first one found wins."""


@dataclass(frozen=True)
class SvcPaths:
    """The files of one svc installation for one user."""

    system_config: Path
    user_config_dir: Path
    state_dir: Path
    project_dir: Path
    extra_roots: tuple[Path, ...] = ()
    """Directories the MCP tools may also read and write workflow files in (``svc mcp --root DIR``)."""

    @property
    def user_config(self) -> Path:
        return self.user_config_dir / "config.json"

    @property
    def profiles_file(self) -> Path:
        return self.user_config_dir / "profiles.json"

    @property
    def database_url(self) -> str:
        return os.environ.get("SVC_DATABASE_URL") or f"sqlite:///{self.state_dir / 'svc.db'}"

    @property
    def api_token_file(self) -> Path:
        """The token ``svc serve`` generated when ``SVC_API_TOKEN`` is not set (mode 0600)."""
        return self.state_dir / "api-token"

    @property
    def workflows_dir(self) -> Path:
        return self.state_dir / "workflows"

    @classmethod
    def from_env(cls, project_dir: Path | None = None) -> SvcPaths:
        """``SVC_SYSTEM_CONFIG``, ``XDG_CONFIG_HOME``, ``XDG_STATE_HOME`` and ``HOME`` decide; see docs."""
        home = Path.home()
        config_home = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
        state_home = Path(os.environ.get("XDG_STATE_HOME") or home / ".local" / "state")
        return cls(
            system_config=Path(os.environ.get("SVC_SYSTEM_CONFIG") or "/etc/svc/config.json"),
            user_config_dir=config_home / "svc",
            state_dir=state_home / "svc",
            project_dir=project_dir or Path.cwd(),
        )

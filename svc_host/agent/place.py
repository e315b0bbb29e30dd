"""Where the agent of one svc setup listens: a socket, a lock and a log, named by a fingerprint of the setup.

An agent serves exactly one setup: this user, this interpreter and svc version, these config and state
directories and these ``SVC_*`` variables (they choose the store, the env profile, job defaults and plugins).
A CLI in another setup computes another fingerprint, finds another socket and never reaches an agent whose
answers could differ from what it would compute itself. ``SVC_AGENT*`` variables only say whether to use an
agent, so they are not part of it.

Sockets live in ``$XDG_RUNTIME_DIR/svc``, else ``$TMPDIR/svc-UID`` (``/tmp`` by default, as tmux does): short
paths (a Unix socket path may not exceed 107 bytes) in a directory of this user's alone, mode 0700, checked
before use, so no other user can connect, replace the socket or read the names in it.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from svc_host import __version__
from svc_host.errors import ConfigError
from svc_host.settings.paths import SvcPaths

AGENT_VARIABLE = "SVC_AGENT"
"""``auto`` (the default): use the running agent, start one when an SSH command finds none; ``manual``: use the
agent ``svc agent start`` started, never start one; ``off``: never use one."""
AGENT_MODES = ("auto", "manual", "off")


def agent_mode(env: Mapping[str, str]) -> str:
    """What ``SVC_AGENT`` asks for (``auto`` when unset or empty); any other value is a ``ConfigError``."""
    mode = env.get(AGENT_VARIABLE, "").strip().lower() or "auto"
    if mode not in AGENT_MODES:
        raise ConfigError(f"{AGENT_VARIABLE}={env[AGENT_VARIABLE]!r}: expected one of {', '.join(AGENT_MODES)}")
    return mode


def fingerprint(paths: SvcPaths, env: Mapping[str, str]) -> str:
    """The setup an agent serves, as a hex digest (see the module docstring for what counts)."""
    facts = [
        f"uid={os.getuid()}",
        f"python={sys.executable}",
        f"svc={__version__}",
        f"system_config={paths.system_config}",
        f"user_config_dir={paths.user_config_dir}",
        f"state_dir={paths.state_dir}",
    ]
    facts += sorted(f"{k}={v}" for k, v in env.items() if k.startswith("SVC_") and not k.startswith(AGENT_VARIABLE))
    return hashlib.sha256("\0".join(facts).encode()).hexdigest()


def runtime_dir(env: Mapping[str, str]) -> Path:
    """The directory of this user's agent sockets (not checked or made here: see ``Place.secure_dir``)."""
    if env.get("XDG_RUNTIME_DIR"):
        return Path(env["XDG_RUNTIME_DIR"]) / "svc"
    # S108: a directory of this user's alone, made 0700 and checked (owner, mode, no symlink) before each use
    return Path(env.get("TMPDIR") or "/tmp") / f"svc-{os.getuid()}"  # noqa: S108


@dataclass(frozen=True)
class Place:
    """The files of the agent of one setup."""

    directory: Path
    fingerprint: str
    log_file: Path

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Place:
        env = os.environ if env is None else env
        paths = SvcPaths.from_env()
        return cls(runtime_dir(env), fingerprint(paths, env), paths.state_dir / "agent.log")

    @property
    def socket(self) -> Path:
        return self.directory / f"agent-{self.fingerprint[:16]}.sock"

    @property
    def lock(self) -> Path:
        """Held (``flock``) by the running agent for its whole life; it holds the agent's pid."""
        return self.directory / f"agent-{self.fingerprint[:16]}.lock"

    def secure_dir(self, *, create: bool) -> None:
        """Make sure the directory is this user's alone (a real directory, owner us, mode 0700), making it
        when ``create``; ``ConfigError`` names what is wrong (another user's or a symlinked directory would
        let someone else read or replace the socket)."""
        if create:
            try:
                self.directory.mkdir(mode=0o700, parents=False)
            except FileExistsError:
                pass
            except OSError as exc:
                raise ConfigError(f"cannot make the svc agent's directory {self.directory}: {exc.strerror}") from None
        try:
            info = self.directory.lstat()
        except OSError as exc:
            raise ConfigError(f"the svc agent's directory {self.directory} is not usable: {exc.strerror}") from None
        if not stat.S_ISDIR(info.st_mode):
            raise ConfigError(f"{self.directory} is not a directory (a symlink?); remove it to use the svc agent")
        if info.st_uid != os.getuid():
            raise ConfigError(
                f"{self.directory} belongs to uid {info.st_uid}, not to you; the svc agent will not use it"
            )
        if stat.S_IMODE(info.st_mode) & 0o077:
            raise ConfigError(
                f"{self.directory} is open to other users (mode {stat.S_IMODE(info.st_mode):o}); "
                f"`chmod 700 {self.directory}` to use the svc agent"
            )

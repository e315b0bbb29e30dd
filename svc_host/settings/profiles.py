"""SSH profiles and their mounts, persisted in one JSON file (atomic writes, mode 0600).

The file is ``{"current": name | null, "profiles": {name: SSHProfile}}``. Key paths are stored as given
(``~/.ssh/id_ed25519`` stays that way and is expanded when used); key contents are never stored.
Every change reads, modifies and rewrites the file under an exclusive ``flock`` on ``<file>.lock``, so
``svc serve``, ``svc mcp`` and CLI commands changing profiles at the same time lose nothing.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from svc_host.domain.profiles import PROFILE_NAME_PATTERN, HostConfig, Mount, SSHProfile
from svc_host.domain.validation_words import describe_validation_error
from svc_host.errors import ConfigError, ConflictError, NotFoundError
from svc_host.settings.files import locked, read_json_object, write_json_atomic
from svc_host.settings.secrets import keep_redacted_values

log = logging.getLogger(__name__)

UPDATABLE_FIELDS = frozenset(
    {"hostname", "username", "key_filename", "port", "description", "ssh_host", "proxy_jump", "env_vars"}
)
"""The fields ``update`` applies (the REST spec's list); anything else in a partial update is ignored."""

ENV_PROFILE = "env"
"""The profile defined by ``SVC_SSH_HOSTNAME`` (+ ``SVC_SSH_USERNAME``, ``SVC_SSH_KEY``, ``SVC_SSH_PORT``)."""

RESERVED_NAMES = frozenset({"local"})

UNKNOWN_HOST_REFUSED = (
    "accept_unknown_host cannot be set through the API: it would turn off host key checking for every "
    "command of the profile; add the cluster's host key to known_hosts (or to the profile's known_hosts file) "
    "instead, e.g. `ssh-keyscan -p PORT HOST >> ~/.ssh/known_hosts`"
)
"""The one refusal of create and update requests (REST) that ask for ``accept_unknown_host``."""


def refuse_unknown_host(requested: object) -> None:
    """``ConfigError`` when an API request asks to accept unknown host keys (the profiles file still may)."""
    if requested is True:
        raise ConfigError(UNKNOWN_HOST_REFUSED)


class ProfilesFile(BaseModel):
    """The content of the profiles file."""

    model_config = ConfigDict(extra="forbid")

    current: str | None = None
    profiles: dict[str, SSHProfile] = Field(default_factory=dict)


def check_profile_name(name: str) -> None:
    """A profile name doubles as a transport name: lowercase letters, digits, ``_.-``; never ``local``."""
    if name in RESERVED_NAMES:
        raise ConfigError(f"profile name {name!r} is reserved for the local scheduler; choose another name")
    if not re.fullmatch(PROFILE_NAME_PATTERN, name):
        hint = " (use lowercase)" if re.fullmatch(PROFILE_NAME_PATTERN, name.lower()) else ""
        raise ConfigError(
            f"invalid profile name {name!r}{hint}: use 1-64 lowercase letters, digits, '_', '.' or '-',"
            " starting with a letter or digit"
        )


def default_cluster(env: Mapping[str, str] | None, current_profile: str | None) -> str:
    """The server's default cluster: ``SVC_TRANSPORT`` (when ``env`` is read), else the current SSH profile,
    else ``local`` (this machine's Slurm)."""
    if env is not None and env.get("SVC_TRANSPORT"):
        return env["SVC_TRANSPORT"]
    return current_profile or "local"


def resolve_mount_local(local: str) -> str:
    """The mount's local root, ``~`` expanded and symlinks resolved; refuses what is not a safe project directory.

    ``/``, the home directory and any directory containing it are refused: syncing them would copy far
    more than a project.
    """
    raw = Path(local).expanduser()
    if not raw.is_absolute():
        raise ConfigError(f"mount local path {local!r} must be absolute (or start with ~)")
    resolved = raw.resolve()
    if not resolved.is_dir():
        raise ConfigError(f"mount local path {local!r} is not an existing directory")
    home = Path.home().resolve()
    if resolved == Path(resolved.anchor):
        raise ConfigError(f"mount local path {local!r} is the filesystem root; choose a project directory")
    if resolved == home or resolved in home.parents:
        raise ConfigError(f"mount local path {local!r} is (or contains) the home directory; choose a project directory")
    return str(resolved)


class ProfileStore:
    """Reads and writes the profiles file; every change is one atomic rewrite."""

    def __init__(self, path: Path, *, held_names: Callable[[], Mapping[str, str]] | None = None) -> None:
        """``held_names`` gives the transport names plugins hold, each with who holds it (the plugin manager's
        ``held_transport_names``): a profile doubles as a transport of the same name, so ``create`` refuses
        those names rather than leave two transports called the same."""
        self.path = path
        self.lock_path = path.with_name(path.name + ".lock")
        self._held_names = held_names

    # -- reading -----------------------------------------------------------------------------------------

    def load(self) -> ProfilesFile:
        """The file's content (empty when there is no file); an invalid file is a ``ConfigError`` naming it."""
        data = read_json_object(self.path)
        if data is None:
            return ProfilesFile()
        try:
            content = ProfilesFile.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(describe_validation_error(exc, where=str(self.path))) from None
        for name in content.profiles:
            try:
                check_profile_name(name)
            except ConfigError as exc:
                raise ConfigError(f"{self.path}: profiles: {exc}") from None
        if content.current is not None and content.current not in content.profiles:
            raise ConfigError(
                f"{self.path}: current names unknown profile {content.current!r}; set it to one of"
                f" {_choices(content.profiles)} or null"
            )
        return content

    def list(self) -> dict[str, SSHProfile]:
        """Every stored profile by name."""
        return self.load().profiles

    def current(self) -> str | None:
        """The stored current profile (``svc profile use``), ignoring environment variables."""
        return self.load().current

    def get(self, name: str) -> SSHProfile:
        """One profile; ``NotFoundError`` naming it when there is none."""
        return self._profile(self.load(), name)

    def signature(self) -> tuple[int, int, int, int] | None:
        """What tells one version of the file from the next (inode, size, mtime, ctime); ``None``: no file.

        Every write replaces the file (a new inode), so a change made by any process shows here.
        """
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            return None
        return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)

    # -- writing -----------------------------------------------------------------------------------------

    def create(self, name: str, profile: SSHProfile) -> SSHProfile:
        """Add a profile; it needs a ``hostname`` or an ``ssh_host`` alias. Its mounts follow the mount rules."""
        with self._locked():
            check_profile_name(name)
            if not profile.hostname and not profile.ssh_host:
                raise ConfigError(f"profile {name!r} needs a hostname (or an ssh_host alias from ~/.ssh/config)")
            content = self.load()
            if name in content.profiles:
                raise ConflictError(f"SSH profile {name!r} already exists; update it or choose another name")
            holder = (self._held_names() if self._held_names is not None else {}).get(name)
            if holder is not None:
                raise ConflictError(
                    f"profile name {name!r} is taken by the transport {name!r} of plugin {holder}, and a profile is "
                    "a transport of the same name; choose another name"
                )
            mounts = [
                self._checked_mount(name, profile.mounts[:index], mount) for index, mount in enumerate(profile.mounts)
            ]
            created = profile.model_copy(update={"mounts": mounts})
            content.profiles[name] = created
            self._save(content)
            return created

    def update(self, name: str, partial: Mapping[str, Any]) -> SSHProfile:
        """Apply the ``UPDATABLE_FIELDS`` of ``partial`` to a profile (other keys are ignored); an ``env_vars``
        value sent as ``<redacted>`` keeps the stored one."""
        with self._locked():
            content = self.load()
            profile = self._profile(content, name)
            changes = {key: value for key, value in partial.items() if key in UPDATABLE_FIELDS}
            if isinstance(changes.get("env_vars"), Mapping):  # values shown masked come back masked
                changes["env_vars"] = keep_redacted_values(changes["env_vars"], profile.env_vars)
            try:
                updated = SSHProfile.model_validate({**profile.model_dump(), **changes})
            except ValidationError as exc:
                raise ConfigError(describe_validation_error(exc, where=f"profile {name!r}")) from None
            if not updated.hostname and not updated.ssh_host:
                raise ConfigError(f"profile {name!r} needs a hostname (or an ssh_host alias from ~/.ssh/config)")
            content.profiles[name] = updated
            self._save(content)
            return updated

    def delete(self, name: str) -> None:
        """Remove a profile and its mounts; if it was current, no profile is current afterwards."""
        with self._locked():
            content = self.load()
            self._profile(content, name)
            del content.profiles[name]
            if content.current == name:
                content.current = None
            self._save(content)

    def activate(self, name: str) -> None:
        """Make ``name`` the current profile; ``local`` makes none current (this machine's Slurm is the default)."""
        with self._locked():
            content = self.load()
            if name not in RESERVED_NAMES:
                self._profile(content, name)
            content.current = None if name in RESERVED_NAMES else name
            self._save(content)

    def add_mount(self, profile_name: str, mount: Mount) -> Mount:
        """Add a mount; the local root must be an existing project directory and is stored resolved."""
        with self._locked():
            content = self.load()
            profile = self._profile(content, profile_name)
            checked = self._checked_mount(profile_name, profile.mounts, mount)
            profile.mounts.append(checked)
            self._save(content)
            return checked

    def set_mount_exclude(self, profile_name: str, mount_name: str, patterns: Sequence[str]) -> Mount:
        """Replace a mount's ``exclude`` patterns (``ValidationError`` for a pattern the mount refuses)."""
        with self._locked():
            content = self.load()
            profile = self._profile(content, profile_name)
            for index, mount in enumerate(profile.mounts):
                if mount.name == mount_name:
                    changed = Mount.model_validate({**mount.model_dump(), "exclude": list(patterns)})
                    profile.mounts[index] = changed
                    self._save(content)
                    return changed
            raise NotFoundError(
                f"mount {mount_name!r} not found in profile {profile_name!r}; it has {_choices(profile.mounts)}"
            )

    def remove_mount(self, profile_name: str, mount_name: str) -> None:
        """Remove a mount by name."""
        with self._locked():
            content = self.load()
            profile = self._profile(content, profile_name)
            kept = [mount for mount in profile.mounts if mount.name != mount_name]
            if len(kept) == len(profile.mounts):
                raise NotFoundError(
                    f"mount {mount_name!r} not found in profile {profile_name!r}; it has {_choices(profile.mounts)}"
                )
            profile.mounts = kept
            self._save(content)

    # -- what the host hands to transports --------------------------------------------------------------

    def host_config(self, *, env: Mapping[str, str] | None) -> HostConfig:
        """Profiles and the current one. With ``env``, ``SVC_SSH_HOSTNAME`` defines a profile named ``env``
        that becomes current (with the mounts of a stored profile ``env``, if any), and ``SVC_SSH_PROFILE``
        selects the current profile (it wins when both are set).
        ``env=None`` uses the file alone."""
        content = self.load()
        profiles = dict(content.profiles)
        current = content.current
        if env is not None:
            if env.get("SVC_SSH_HOSTNAME"):
                stored = profiles.get(ENV_PROFILE)  # where its mounts are kept (POST /api/files/mounts)
                mounts = stored.mounts if stored is not None else []
                profiles[ENV_PROFILE] = _profile_from_env(env).model_copy(update={"mounts": mounts})
                current = ENV_PROFILE
            selected = env.get("SVC_SSH_PROFILE")
            if selected:
                if selected not in profiles:
                    raise ConfigError(
                        f"SVC_SSH_PROFILE names unknown SSH profile {selected!r}; choose one of {_choices(profiles)}"
                    )
                current = selected
        return HostConfig(profiles=profiles, current_profile=current)

    # -- helpers -----------------------------------------------------------------------------------------

    def _profile(self, content: ProfilesFile, name: str) -> SSHProfile:
        try:
            return content.profiles[name]
        except KeyError:
            raise NotFoundError(
                f"SSH profile {name!r} not found; known profiles: {_choices(content.profiles)}"
            ) from None

    def _checked_mount(self, profile_name: str, existing: Sequence[Mount], mount: Mount) -> Mount:
        if any(other.name == mount.name for other in existing):
            raise ConflictError(f"mount {mount.name!r} already exists in profile {profile_name!r}")
        return mount.model_copy(update={"local": resolve_mount_local(mount.local)})

    def _locked(self) -> AbstractContextManager[None]:
        """The exclusive lock held across a read-modify-write."""
        return locked(self.path)

    def _save(self, content: ProfilesFile) -> None:
        write_json_atomic(self.path, content.model_dump(mode="json"))


class ProfilesWatch:
    """The profiles as a long-running process should see them: re-read when the file changes.

    ``poll`` costs one ``stat``; only a changed file is read again. A file that became invalid keeps the last
    valid profiles in use (logged once per version of the file) rather than stopping every command of a server;
    the first read, at start, raises as usual.
    """

    def __init__(self, store: ProfileStore, *, env: Mapping[str, str] | None) -> None:
        self.store = store
        self.env = env
        self._seen = store.signature()
        self.config = store.host_config(env=env)

    def poll(self) -> HostConfig | None:
        """The profiles if the file changed since the last look (and is valid), else ``None``."""
        seen = self.store.signature()
        if seen == self._seen:
            return None
        self._seen = seen
        try:
            self.config = self.store.host_config(env=self.env)
        except ConfigError as exc:
            log.warning("profiles file changed but is not valid; still using the previous profiles: %s", exc)
            return None
        return self.config


def _profile_from_env(env: Mapping[str, str]) -> SSHProfile:
    port = env.get("SVC_SSH_PORT") or "22"
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        raise ConfigError(f"SVC_SSH_PORT must be a port number from 1 to 65535, not {port!r}")
    return SSHProfile(
        hostname=env["SVC_SSH_HOSTNAME"],
        username=env.get("SVC_SSH_USERNAME") or "",
        key_filename=env.get("SVC_SSH_KEY") or "",
        port=int(port),
        description="from SVC_SSH_* environment variables",
    )


def _choices(items: Mapping[str, Any] | Sequence[Mount]) -> str:
    names = sorted(items) if isinstance(items, Mapping) else [mount.name for mount in items]
    return ", ".join(repr(name) for name in names) if names else "none"

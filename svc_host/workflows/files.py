"""Where workflow files live, and which files a request may read or write.

* REST works on one directory, :func:`workflows_dir`: ``SVC_WORKFLOWS_DIR`` when set (a relative value is
  relative to the project directory, i.e. where svc was started), else ``$XDG_STATE_HOME/svc/workflows``.
  A workflow there is ``<name>.yaml`` (or ``.yml``), ``name`` being letters, digits, ``-`` and ``_``;
  no request can name a path, so none can read or write outside it.
* MCP tools take paths. They are confined to :func:`allowed_roots`: the MCP server's working directory (the
  project an agent was started in: the spec's ``list_workflows(directory=".")`` and a file beside the agent
  work with no flag), the workflows directory, the local directories of the SSH profiles' mounts and the
  directories given with ``svc mcp --root``. Every symlink is resolved before the check. The working
  directory is not gated on trusting its project config: that trust decides what the directory's
  ``.svc.json`` may *change* (``svc_host.settings.config``), while a file an agent asks for is no more than
  what ``submit_job`` already reaches as the same user.

Files are at most 1 MB and written atomically (a reader sees the old file or the new one).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from svc_host.domain.profiles import SSHProfile
from svc_host.errors import ConflictError, NotFoundError, WorkflowError
from svc_host.settings.files import write_atomic, write_temp
from svc_host.settings.mounts import FileTooLargeError, PathForbiddenError
from svc_host.settings.paths import SvcPaths
from svc_host.workflows.load import MAX_WORKFLOW_BYTES

log = logging.getLogger(__name__)
NAME_PATTERN = r"^[A-Za-z0-9_-]{1,100}$"
EXTENSIONS = (".yaml", ".yml")
RESERVED_NAMES = frozenset({"runs", "validate", "upload", "create"})
"""Names that are REST paths under ``/api/workflows``."""
SKIPPED_DIRS = frozenset({"node_modules", ".venv", "__pycache__"})
"""Never scanned by ``list_workflows`` (nor any hidden directory)."""


def workflows_dir(paths: SvcPaths, env: Mapping[str, str] | None = None) -> Path:
    """The directory REST keeps workflows in (see the module docstring)."""
    configured = (os.environ if env is None else env).get("SVC_WORKFLOWS_DIR")
    if configured:
        return (paths.project_dir / Path(configured).expanduser()).resolve()
    return paths.workflows_dir


def check_name(name: str) -> str:
    """A workflow name usable as a file name; ``WorkflowError`` (REST 422) otherwise."""
    if not re.match(NAME_PATTERN, name):
        raise WorkflowError([f"invalid workflow name {name!r}: use 1-100 letters, digits, '-' or '_'"])
    if name in RESERVED_NAMES:
        raise WorkflowError([f"workflow name {name!r} is reserved; choose another name"])
    return name


def check_filename(filename: str) -> str:
    """The workflow name of an upload's ``filename`` (``<name>.yaml`` or ``<name>.yml``)."""
    stem, dot, extension = filename.rpartition(".")
    if not dot or f".{extension}" not in EXTENSIONS:
        raise WorkflowError([f"invalid filename {filename!r}: the extension must be .yaml or .yml"])
    try:
        return check_name(stem)
    except WorkflowError:
        raise WorkflowError(
            [f"invalid filename {filename!r}: use letters, digits, '-' and '_' before the .yaml/.yml extension"]
        ) from None


def check_size(text: str) -> bytes:
    data = text.encode(errors="surrogatepass")
    if len(data) > MAX_WORKFLOW_BYTES:
        raise FileTooLargeError(f"workflow is {len(data)} bytes, over the {MAX_WORKFLOW_BYTES} byte limit")
    return data


def read_text(path: Path, *, shown: str | None = None) -> str:
    """A workflow file's text (UTF-8, at most 1 MB)."""
    shown = shown or str(path)
    try:
        size = path.stat().st_size
        if size > MAX_WORKFLOW_BYTES:
            raise FileTooLargeError(f"{shown} is {size} bytes, over the {MAX_WORKFLOW_BYTES} byte limit")
        return path.read_bytes().decode("utf-8", errors="replace")
    except FileNotFoundError:
        raise NotFoundError(f"workflow file {shown} not found") from None
    except IsADirectoryError:
        raise WorkflowError([f"{shown} is a directory, not a workflow file"]) from None
    except PermissionError:
        raise PathForbiddenError(f"permission denied: {shown}") from None


@dataclass(frozen=True)
class WorkflowDirectory:
    """The REST workflows directory: files named by workflow name only."""

    root: Path

    def path(self, name: str) -> Path | None:
        """The existing file of ``name`` (``.yaml`` before ``.yml``), or None."""
        check_name(name)
        for extension in EXTENSIONS:
            candidate = self.root / f"{name}{extension}"
            if candidate.is_file() and _inside(candidate.resolve(), [self.root.resolve()]):
                return candidate
        return None

    def read(self, name: str) -> str:
        path = self.path(name)
        if path is None:
            raise NotFoundError(f"workflow {name!r} not found")
        return read_text(path, shown=path.name)

    def names(self) -> list[str]:
        """Every workflow name in the directory, sorted."""
        if not self.root.is_dir():
            return []
        found = {
            entry.name.rsplit(".", 1)[0]
            for entry in self.root.iterdir()
            if entry.suffix in EXTENSIONS and re.match(NAME_PATTERN, entry.stem) and entry.is_file()
        }
        return sorted(found)

    def write(self, name: str, text: str, *, extension: str = ".yaml", overwrite: bool) -> Path:
        """Save ``text`` as ``<name><extension>`` atomically; ``ConflictError`` when it exists and not
        ``overwrite`` (checked by the filesystem itself: two concurrent creates cannot both win)."""
        data = check_size(text)
        check_name(name)
        target = self.root / f"{name}{extension}"
        others = [self.root / f"{name}{other}" for other in EXTENSIONS if other != extension]
        if overwrite:
            write_atomic(target, data)
            for other in others:  # one file per name: an upload as .yml replaces a .yaml
                other.unlink(missing_ok=True)
            return target
        if any(other.exists() for other in others):
            raise ConflictError(f"workflow {name!r} already exists")
        staging = write_temp(self.root, data, prefix=f".{name}.", suffix=".new")
        try:
            os.link(staging, target)
        except FileExistsError:
            raise ConflictError(f"workflow {name!r} already exists") from None
        finally:
            staging.unlink(missing_ok=True)
        return target

    def delete(self, name: str) -> None:
        path = self.path(name)
        if path is None:
            raise NotFoundError(f"workflow {name!r} not found")
        for extension in EXTENSIONS:
            (self.root / f"{name}{extension}").unlink(missing_ok=True)


def allowed_roots(paths: SvcPaths, profiles: Mapping[str, SSHProfile]) -> list[Path]:
    """The directories MCP tools may read and write workflow files in (symlinks resolved; see the module)."""
    roots = [paths.project_dir, workflows_dir(paths), *paths.extra_roots]
    roots += [Path(mount.local).expanduser() for profile in profiles.values() for mount in profile.mounts]
    resolved: list[Path] = []
    for root in roots:
        real = root.resolve()
        if real not in resolved:
            resolved.append(real)
    return resolved


def confine(path: str, roots: Iterable[Path], *, what: str = "Path", base: Path | None = None) -> Path:
    """``path`` (relative to ``base``, the working directory by default) resolved, if inside a root.

    Raises:
        PathForbiddenError: ``<what> '<path>' is outside allowed directories``.
    """
    if not path or "\0" in path:
        raise WorkflowError([f"{what.lower()} must be a non-empty path"])
    resolved = ((base or Path.cwd()) / Path(path).expanduser()).resolve()
    if not _inside(resolved, list(roots)):
        raise PathForbiddenError(f"{what} '{path}' is outside allowed directories")
    return resolved


def _inside(path: Path, roots: list[Path]) -> bool:
    return any(path == root or path.is_relative_to(root) for root in roots)


def write_workflow_file(path: Path, text: str) -> None:
    """Write a workflow to a confined path: refuses to replace a file that is not a workflow."""
    data = check_size(text)
    if path.suffix not in EXTENSIONS:
        raise WorkflowError([f"output_path {str(path)!r} must end in .yaml or .yml"])
    if path.is_dir():
        raise WorkflowError([f"output_path {str(path)!r} is a directory"])
    if path.exists() and summarize(path) is None:
        raise ConflictError(f"{path} exists and is not a workflow file (no 'name' and 'jobs'); not replacing it")
    write_atomic(path, data)


@dataclass(frozen=True)
class Summary:
    """What ``list_workflows`` shows of a file."""

    path: str
    name: str
    job_count: int
    job_names: list[str]


def summarize(path: Path) -> Summary | None:
    """A file's name and jobs if it is a YAML mapping with both ``name`` and ``jobs``, else None."""
    from svc_host.workflows.source import YamlSyntaxError, parse

    try:
        if path.stat().st_size > MAX_WORKFLOW_BYTES:
            log.debug("not listed: %s is over %d bytes", path, MAX_WORKFLOW_BYTES)
            return None
        parsed = parse(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, YamlSyntaxError) as exc:
        log.debug("not listed: %s: %s", path, exc)
        return None
    data = parsed.data
    if not isinstance(data, dict) or "name" not in data or "jobs" not in data:
        return None
    jobs = data["jobs"] if isinstance(data["jobs"], list) else []
    names = [str(job["name"]) for job in jobs if isinstance(job, dict) and "name" in job]
    return Summary(path=str(path), name=str(data["name"]), job_count=len(jobs), job_names=names)


def scan(directory: Path, roots: list[Path], *, limit: int = 10_000) -> list[Summary]:
    """Workflow files under ``directory`` (hidden directories, node_modules, .venv, __pycache__ skipped;
    symlinked directories not followed; files whose real path leaves the roots skipped). A file that cannot be
    read is left out and logged: the spec's entries have no field for an error."""
    found: list[Summary] = []
    seen = 0
    for current, dirs, files in os.walk(directory, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS)
        for filename in sorted(files):
            if Path(filename).suffix not in EXTENSIONS:
                continue
            seen += 1
            if seen > limit:
                return found
            path = Path(current) / filename
            if not _inside(path.resolve(), roots):
                continue
            try:
                summary = summarize(path)
            except Exception:  # one file's unforeseen failure must not hide every other workflow
                log.exception("not listed: reading workflow file %s failed", path)
                continue
            if summary is not None:
                found.append(summary)
    return found

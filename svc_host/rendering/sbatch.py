"""The ``default`` renderer: a :class:`JobDefinition` becomes an sbatch script through a sandboxed Jinja2 template.

Quoting happens in two languages:

* ``#SBATCH`` lines are read by sbatch, not by a shell, and sbatch splits them into words itself: whitespace
  separates words, ``"..."`` and ``'...'`` group, a backslash escapes the next character (inside quotes too),
  an unquoted ``#`` ends the line (checked against sbatch 22.05 and its source). ``--job-name=a b`` is rejected
  ("Invalid directive found in batch script: b") and ``--job-name=x#y`` silently becomes ``x``. So a value that
  is not a plain word is written as ``"..."`` with ``\\`` and ``"`` escaped (:func:`sbatch_word`), which sbatch
  reads back verbatim; :func:`sbatch_words` is the same splitter in Python.
* Everything that reaches bash (env var values, conda env name, venv path, container image, list-command
  items) goes through the template's ``q`` filter (:func:`shlex.quote`). A string ``command`` is the user's own
  shell line and is placed verbatim: it runs as the user's job, which is the point.

The script never uses ``set -e`` or ``pipefail``: the job's exit code is the command's. Setup that cannot be
done stops the job before the command with an ``svc:`` line on stderr: exit 127 when conda (or both apptainer
and singularity) is missing, exit 1 when a conda env or venv does not activate.

Containers: with ``environment.container`` the command runs as ``apptainer exec <image> ...``, or
``singularity exec`` when ``apptainer`` is not on PATH: argv for a list command, ``bash -c <command>`` for a
string. Env vars, conda and venv are set up on the host first; apptainer passes the environment in.

A user ``script`` is kept intact. Its leading ``#SBATCH``/``#SLURM`` block, read the way sbatch reads it (up to
the first line that is neither blank nor a comment), is parsed, and only directives for options the user did
not set are inserted after the shebang (``#!/bin/bash`` is added when there is none). Related options count as
set: ``--ntasks`` blocks our ``--ntasks-per-node``, ``--mem-per-cpu`` our ``--mem``, ``--gres``/``--gpus*``
our ``--gres``, ``--cpus-per-gpu`` our ``--cpus-per-task``. Resource fields left at their defaults (one node,
task and CPU) are not added to scripts at all: they are Slurm's defaults too, and would fight the script's own
layout. Env vars, conda and venv go right after the directive block (sh-family scripts only); ``container`` is
ignored for scripts. ``#PBS``/``#BSUB`` lines are not looked at.

Log paths: ``RenderedScript`` paths are relative to the directory sbatch runs in (``log_dir`` is
``join_remote(work_dir, log_dir)``), while ``--output``/``--error`` are written relative to the job's working
directory, because Slurm resolves a relative ``--output`` against ``--chdir``. When a script sets its own
``--output``/``--error``, those are reported: ``%x`` becomes the job name and ``%%`` a ``%``; ``%j`` is kept for
:meth:`RenderedScript.log_paths_for`. A path with any other pattern (``%u``, ``%A``, ``%a``, ``%N``, ``%4j``...)
or a backslash cannot be known before the job runs and is reported as written; ``log_dir`` is then the nearest
directory above it without a pattern. A script that sets ``--output`` but not ``--error`` gets no ``--error``
(Slurm then writes both streams to the output file) and reports that path for both.
"""

from __future__ import annotations

import functools
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from svc_host.domain.submission import JobDefinition, RenderedScript, Resources, join_remote
from svc_host.errors import RenderError

if TYPE_CHECKING:
    from jinja2 import Template
    from jinja2.sandbox import SandboxedEnvironment

TEMPLATE_NAME = "sbatch.sh.j2"

_SPACE = " \t\n\v\f\r"  # C isspace() in the C locale: what sbatch splits #SBATCH words on
_PLAIN_WORD = re.compile(r"[A-Za-z0-9_.,:=/@+%\[\]-]+")
_HET_SEPARATOR = re.compile(r"(het|pack)(job)", re.IGNORECASE)
"""Older sbatch (the 18.x source) starts a new job component on any #SBATCH line containing "packjob", quoted or
not; 22.05 on a separate word "hetjob". A backslash before the ``j`` is read back as a plain ``j`` by both."""
_DIRECTIVE_PREFIXES = ("#SBATCH", "#SLURM")
_SHELLS = {"bash": "bash", "zsh": "zsh", "sh": "posix", "dash": "posix", "ksh": "posix"}
"""Interpreters that can run our setup lines, with the matching ``conda shell.<x> hook``."""

_SHORT_WITH_ARGUMENT = "aAbBcdDeFGiJLmMnNopqStwx"  # sbatch 22.05 short options that take a value
_SHORT_NAMES = {
    "J": "job-name", "o": "output", "e": "error", "N": "nodes", "n": "ntasks", "c": "cpus-per-task",
    "p": "partition", "t": "time", "w": "nodelist", "D": "chdir", "G": "gpus", "d": "dependency", "F": "nodefile",
}  # fmt: skip
_BLOCKS = {
    "job-name": "job-name", "output": "output", "error": "error", "nodes": "nodes",
    "ntasks": "ntasks-per-node", "ntasks-per-node": "ntasks-per-node", "ntasks-per-gpu": "ntasks-per-node",
    "cpus-per-task": "cpus-per-task", "cpus-per-gpu": "cpus-per-task",
    "gres": "gres", "gpus": "gres", "gpus-per-node": "gres", "gpus-per-task": "gres", "gpus-per-socket": "gres",
    "mem": "mem", "mem-per-cpu": "mem", "mem-per-gpu": "mem",
    "time": "time", "partition": "partition", "nodelist": "nodelist", "nodefile": "nodelist",
    "chdir": "chdir", "dependency": "dependency",
}  # fmt: skip
"""A user option (long name) -> the directive of ours it replaces."""
_COUNTS = (("nodes", "nodes"), ("ntasks-per-node", "ntasks_per_node"), ("cpus-per-task", "cpus_per_task"))


@functools.cache
def template_environment() -> SandboxedEnvironment:
    """The sandboxed Jinja2 environment batch-script templates render in (built once, on first use).

    Filters: ``q`` quotes a value for bash, ``sbatch_word`` writes a value for an ``#SBATCH`` line.
    """
    from jinja2 import PackageLoader, StrictUndefined
    from jinja2.sandbox import SandboxedEnvironment

    environment = SandboxedEnvironment(
        undefined=StrictUndefined,
        autoescape=False,  # a shell script, not HTML: values are quoted for bash or sbatch by the filters
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        loader=PackageLoader("svc_host.rendering", "templates"),
    )
    environment.filters["q"] = shlex.quote
    environment.filters["sbatch_word"] = sbatch_word
    return environment


def render_sbatch(definition: JobDefinition, *, template: Template | None = None) -> RenderedScript:
    """Render ``definition`` into an sbatch script (``template`` defaults to the packaged ``sbatch.sh.j2``).

    Raises:
        RenderError: the definition cannot be expressed (NUL bytes, a log directory with Slurm filename
            patterns, environment setup for a non-shell script, a malformed ``#SBATCH`` line) or the
            template failed.
    """
    from jinja2 import TemplateError

    _reject_nul(definition)
    if definition.script is not None:
        context, logs = _script_context(definition, definition.script)
    else:
        context, logs = _command_context(definition)
    for option, value in context["directives"]:
        if any(ch in value for ch in "\r\n\0"):
            raise RenderError(f"job {definition.name!r}: --{option} value {value!r} may not contain line breaks")
    try:
        chosen = template or template_environment().get_template(TEMPLATE_NAME)
        text = chosen.render(context)
    except TemplateError as exc:
        raise RenderError(f"cannot render the batch script of job {definition.name!r}: {exc}") from exc
    return RenderedScript(text=text, log_dir=logs.log_dir, stdout_path=logs.stdout, stderr_path=logs.stderr)


def sbatch_word(value: str) -> str:
    """Write ``value`` so that sbatch reads it back from an ``#SBATCH`` line as one word, verbatim."""
    if any(ch in value for ch in "\r\n\0"):
        raise ValueError(f"an #SBATCH value cannot hold line breaks or NUL: {value!r}")
    if _PLAIN_WORD.fullmatch(value) and not _HET_SEPARATOR.search(value):
        return value
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + _HET_SEPARATOR.sub(r"\1\\\2", escaped) + '"'  # het\job is read back as hetjob


def sbatch_words(text: str) -> list[str]:
    """Split the rest of an ``#SBATCH`` line into words the way sbatch does (an empty word ends the line).

    Raises:
        ValueError: a quote is not closed (sbatch refuses the script).
    """
    words: list[str] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in _SPACE:
            i += 1
        word: list[str] = []
        quote = ""
        escaped = False
        while i < n and (quote or text[i] not in _SPACE):
            ch = text[i]
            i += 1
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
                continue
            elif quote:
                if ch == quote:
                    quote = ""
                    continue
            elif ch in "\"'":
                quote = ch
                continue
            elif ch == "#":
                return [*words, "".join(word)] if word else words
            word.append(ch)
        if quote:
            raise ValueError(f"unmatched {quote} in {text!r}")
        if not word:
            return words
        words.append("".join(word))


@dataclass(frozen=True)
class _Logs:
    log_dir: str
    stdout: str
    stderr: str


def _command_context(definition: JobDefinition) -> tuple[dict[str, Any], _Logs]:
    command = definition.command
    if isinstance(command, str) and _directive_block(_lines(command), definition.name)[1]:
        raise RenderError(
            f"the command of job {definition.name!r} starts with #SBATCH lines: set them through resources, "
            "or submit the text as 'script'"
        )
    log_dir, out, err = _own_log_paths(definition, definition.work_dir)
    directives = [
        ("job-name", definition.name),
        ("output", out),
        ("error", err),
        *_resource_directives(definition.resources, skip_defaults=False),
        *_place_directives(definition),
    ]
    logs = _Logs(log_dir, join_remote(definition.work_dir, out), join_remote(definition.work_dir, err))
    context = _setup_context(definition, "bash") | {
        "shebang": "#!/bin/bash",
        "directives": directives,
        "header": "",
        "command": command,
        "container": definition.environment.container,
        "body": None,
    }
    return context, logs


def _script_context(definition: JobDefinition, script: str) -> tuple[dict[str, Any], _Logs]:
    lines = _lines(script)
    shebang = lines[0].removesuffix("\n") if lines and lines[0].startswith("#!") else None
    rest = lines[1:] if shebang is not None else lines
    end, words = _directive_block(rest, definition.name)
    header = "".join(rest[:end])
    if header and not header.endswith("\n"):
        header += "\n"
    user = _user_options(words)
    blocked = {_BLOCKS[name] for name in user}

    cwd = user.get("chdir", definition.work_dir)
    job_name = user.get("job-name", definition.name)
    own: list[tuple[str, str]] = []
    if "output" in user:
        stdout = join_remote(cwd, _expand_patterns(user["output"], job_name))
        log_dir = _pattern_free_parent(stdout)
        stderr = stdout  # Slurm writes both streams to a lone --output; adding our --error would split them
    else:
        log_dir, out, err = _own_log_paths(definition, cwd)
        own = [("output", out), ("error", err)]
        stdout, stderr = join_remote(cwd, out), join_remote(cwd, err)
    if "error" in user:
        stderr = join_remote(cwd, _expand_patterns(user["error"], job_name))

    candidates = [
        ("job-name", definition.name),
        *own,
        *_resource_directives(definition.resources, skip_defaults=True),
        *_place_directives(definition),
    ]
    shell = _shell_of(shebang)
    environment = definition.environment
    if shell is None and (environment.env_vars or environment.conda or environment.venv):
        raise RenderError(
            f"the script of job {definition.name!r} runs with {shebang!r}: env_vars, conda and venv need an sh-family "
            "script (bash, sh, zsh...); set them up inside the script instead"
        )
    context = _setup_context(definition, shell or "bash") | {
        "shebang": shebang or "#!/bin/bash",
        "directives": [(option, value) for option, value in candidates if option not in blocked],
        "header": header,
        "command": None,
        "container": None,
        "body": "".join(rest[end:]),
    }
    return context, _Logs(log_dir, stdout, stderr)


def _setup_context(definition: JobDefinition, shell: str) -> dict[str, Any]:
    environment = definition.environment
    venv = environment.venv
    if venv is not None and venv.startswith("-"):
        venv = "./" + venv  # not an option to `.` or `[`
    return {
        "env_vars": list(environment.env_vars.items()),
        "conda": environment.conda,
        "conda_shell": _SHELLS[shell],
        "venv": venv,
    }


def _own_log_paths(definition: JobDefinition, cwd: str | None) -> tuple[str, str, str]:
    """Our log directory as the transport sees it, and the --output/--error values as the job sees them."""
    log_dir = join_remote(cwd, definition.log_dir)
    if "%" in log_dir or "\\" in log_dir:
        raise RenderError(
            f"job {definition.name!r}: log directory {log_dir!r} contains '%' or '\\', which Slurm reads as a "
            "filename pattern; choose another log_dir or work_dir"
        )
    base = log_dir if PurePosixPath(log_dir).is_absolute() else str(PurePosixPath(definition.log_dir))
    stem = definition.file_stem
    return log_dir, f"{base}/{stem}-%j.out", f"{base}/{stem}-%j.err"


def _resource_directives(resources: Resources, *, skip_defaults: bool) -> list[tuple[str, str]]:
    directives: list[tuple[str, str]] = []
    for option, field in _COUNTS:
        value = getattr(resources, field)
        if not (skip_defaults and value == Resources.model_fields[field].default):
            directives.append((option, str(value)))
    if resources.gpus_per_node > 0:
        kind = f"{resources.gpu_type}:" if resources.gpu_type else ""
        directives.append(("gres", f"gpu:{kind}{resources.gpus_per_node}"))
    optional = (
        ("mem", resources.memory_per_node),
        ("time", resources.time_limit),
        ("partition", resources.partition),
        ("nodelist", resources.nodelist),
    )
    directives.extend((option, value) for option, value in optional if value is not None)
    return directives


def _place_directives(definition: JobDefinition) -> list[tuple[str, str]]:
    optional = (("chdir", definition.work_dir), ("dependency", definition.dependency))
    return [(option, value) for option, value in optional if value is not None]


def _reject_nul(definition: JobDefinition) -> None:
    environment = definition.environment
    command = definition.command
    values: list[str | None] = [definition.script, environment.conda, environment.venv, environment.container]
    values += list(environment.env_vars.values())
    values += [command] if isinstance(command, str) else list(command or [])
    if any("\0" in value for value in values if value is not None):
        raise RenderError(f"job {definition.name!r}: a NUL byte cannot be passed through a shell script")


def _lines(text: str) -> list[str]:
    """Lines with their ``\\n`` kept, split on ``\\n`` only, as sbatch splits them."""
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _directive_block(lines: list[str], job_name: str) -> tuple[int, list[str]]:
    """Where the leading comment block ends (the first command line) and the words of its directives."""
    words: list[str] = []
    for index, line in enumerate(lines):
        content = line.removesuffix("\n")
        prefix = next((p for p in _DIRECTIVE_PREFIXES if content.startswith(p)), None)
        if prefix is not None:
            try:
                words.extend(sbatch_words(content[len(prefix) :]))
            except ValueError as exc:
                raise RenderError(f"job {job_name!r}: sbatch would refuse line {content!r}: {exc}") from exc
        elif content.lstrip(_SPACE)[:1] not in ("", "#"):
            return index, words
    return len(lines), words


def _user_options(words: Iterable[str]) -> dict[str, str]:
    """The options among ours (long names) that a user's directive words set, with their last value."""
    found: dict[str, str] = {}
    pending = iter(words)
    for word in pending:
        if word.startswith("--") and len(word) > 2:
            name, has_value, value = word[2:].partition("=")
            names = [name] if name in _BLOCKS else [known for known in _BLOCKS if name and known.startswith(name)]
            if names and not has_value:
                value = next(pending, "")
            for known in names:  # an abbreviation sbatch would call ambiguous blocks all it could mean
                found[known] = value
        elif word.startswith("-") and len(word) > 1 and word[1] != "-":
            for position, letter in enumerate(word[1:], start=2):
                if letter in _SHORT_WITH_ARGUMENT:
                    value = word[position:] or next(pending, "")
                    if letter in _SHORT_NAMES:
                        found[_SHORT_NAMES[letter]] = value
                    break
    return found


def _shell_of(shebang: str | None) -> str | None:
    """The sh-family shell a script runs with (``bash`` without a shebang), or None for anything else."""
    if shebang is None:
        return "bash"
    words = shebang[2:].split()
    if words and PurePosixPath(words[0]).name == "env":
        words = [word for word in words[1:] if not word.startswith("-") and "=" not in word]
    program = PurePosixPath(words[0]).name if words else ""
    return program if program in _SHELLS else None


_PATTERN = re.compile(r"%(\d*)(.?)", re.DOTALL)


def _expand_patterns(path: str, job_name: str) -> str:
    """Resolve the Slurm filename patterns known before the job runs; any other makes the path stay as written."""
    if "\\" in path:
        return path
    pieces: list[str] = []
    kept = 0
    last = 0
    for match in _PATTERN.finditer(path):
        pieces.append(path[last : match.start()])
        last = match.end()
        digits, letter = match.groups()
        if letter == "x":  # Slurm ignores a padding width for non-numeric patterns
            pieces.append(job_name)
        elif letter == "%" and not digits:
            pieces.append("%")
        elif letter == "j" and not digits:
            pieces.append("%j")
            kept += 1
        else:
            return path
    pieces.append(path[last:])
    expanded = "".join(pieces)
    return expanded if expanded.count("%j") == kept else path  # a literal "%j" would be mistaken for the id


def _pattern_free_parent(path: str) -> str:
    parent = PurePosixPath(path).parent
    while "%" in str(parent) or "\\" in str(parent):
        parent = parent.parent
    return str(parent)

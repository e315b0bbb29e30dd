"""Every dashboard file ships in the distribution: `pip install svc` and `svc serve` are all a user runs."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "svc_host" / "web"


def glob_regex(glob: str) -> re.Pattern[str]:
    """A package-data glob as setuptools reads it: ``*`` within one folder, ``**/`` across folders."""
    parts = re.split(r"(\*\*/|\*\*|\*)", glob)
    table = {"**/": "(?:.*/)?", "**": ".*", "*": "[^/]*"}
    return re.compile("".join(table.get(part, re.escape(part)) for part in parts) + "$")


def test_the_package_data_globs_cover_every_static_file() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = [glob_regex(glob) for glob in config["tool"]["setuptools"]["package-data"]["svc_host.web"]]
    files = [path.relative_to(WEB).as_posix() for path in (WEB / "static").rglob("*") if path.is_file()]
    assert "static/index.html" in files
    missing = [name for name in files if not any(pattern.match(name) for pattern in patterns)]
    assert not missing, f"add these to [tool.setuptools.package-data] svc_host.web: {missing}"
    assert not glob_regex("static/js/*.js").match("static/js/pages/jobs.js")  # one folder deep only

"""Hostile paths against ``GET /api/files/browse`` and ``/read``: none escapes the mount, none leaks a local path.

Every answer to a hostile path must be ``{detail}`` with 400, 403 or 404. Where the outcome is certain the
exact code is asserted: traversal and absolute paths 403, NUL and over-long paths 400, names that only look
like traversal (encoded twice, backslashes, unicode dots) are literal names that do not exist: 404.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from svc_host.domain.profiles import Mount, SSHProfile
from svc_host.host import Host
from svc_host.settings import mounts

FORBIDDEN, INVALID, MISSING, ANY = 403, 400, 404, 0
OUTSIDE_CONTENT = "svc-content-outside-the-mount"

# (path, expected status); sent through httpx's own query encoding
DECODED: list[tuple[str, int]] = [
    # `..` in many forms
    ("..", FORBIDDEN),
    ("../", FORBIDDEN),
    ("../..", FORBIDDEN),
    ("../../../../../../etc/passwd", FORBIDDEN),
    ("./..", FORBIDDEN),
    ("./../", FORBIDDEN),
    (".//..//", FORBIDDEN),
    ("a/../..", FORBIDDEN),
    ("src/../../", FORBIDDEN),
    ("src/pkg/../../../outside.txt", FORBIDDEN),
    ("src/./../../outside.txt", FORBIDDEN),
    ("../project/README.md", FORBIDDEN),
    ("../outside.txt", FORBIDDEN),
    ("../" * 40 + "etc/passwd", FORBIDDEN),
    ("src/" + "../" * 3 + "etc", FORBIDDEN),
    ("./" * 50 + "../", FORBIDDEN),
    ("../.", FORBIDDEN),
    ("..//", FORBIDDEN),
    ("../\t", FORBIDDEN),
    ("nope/../../x", FORBIDDEN),
    # absolute paths
    ("/", FORBIDDEN),
    ("/etc", FORBIDDEN),
    ("/etc/passwd", FORBIDDEN),
    ("//etc/passwd", FORBIDDEN),
    ("///etc///passwd", FORBIDDEN),
    ("/proc/self/environ", FORBIDDEN),
    ("/proc/self/cwd", FORBIDDEN),
    ("/dev/zero", FORBIDDEN),
    ("/dev/stdin", FORBIDDEN),
    ("/tmp", FORBIDDEN),
    ("/./etc/passwd", FORBIDDEN),
    ("/../etc/passwd", FORBIDDEN),
    # NUL
    ("\x00", INVALID),
    ("README.md\x00", INVALID),
    ("README.md\x00.txt", INVALID),
    ("src\x00/../../", INVALID),
    ("../\x00", INVALID),
    # very long
    ("a/" * 3000, INVALID),
    ("../" * 2000, INVALID),
    ("x" * 5000, INVALID),
    ("x" * 300, INVALID),  # one name longer than the filesystem allows
    ("src/" + "y" * 256 + "/z", INVALID),
    # backslashes are ordinary characters on POSIX: a literal name that does not exist
    ("..\\", MISSING),
    ("..\\..\\etc\\passwd", MISSING),
    ("\\etc\\passwd", MISSING),
    ("src\\..\\..\\outside.txt", MISSING),
    ("\\\\server\\share", MISSING),
    ("..\\/..\\/", MISSING),
    # unicode lookalikes of dots and slashes are literal names too
    ("\u2025/", MISSING),  # two dot leader
    ("\u2024\u2024/", MISSING),  # one dot leader x2
    ("\uff0e\uff0e/", MISSING),  # fullwidth full stops
    ("\uff0e\uff0e\uff0fetc\uff0fpasswd", MISSING),  # fullwidth solidus
    ("..\u2215etc\u2215passwd", MISSING),  # division slash
    ("..\u2044etc", MISSING),  # fraction slash
    ("..\u29f8etc", MISSING),  # big solidus
    ("\u0131\u0307", MISSING),
    ("..\u200b/", MISSING),  # zero-width space after the dots
    ("\u202e../", MISSING),  # right-to-left override
    ("\ufe52\ufe52/", MISSING),  # small full stops
    ("\u3002\u3002/", MISSING),  # ideographic full stops
    # names that look like other schemes or shells
    ("~", MISSING),
    ("~/", MISSING),
    ("~root", MISSING),
    ("$HOME", MISSING),
    ("file:///etc/passwd", MISSING),
    ("...", MISSING),
    (".../...", MISSING),
    ("....//", MISSING),
    ("..;/", MISSING),
    ("%2e%2e%2f", MISSING),  # the literal characters: httpx encodes the '%', the server decodes once
    # symlinks that leave the mount
    ("escape", FORBIDDEN),
    ("escape/outside.txt", FORBIDDEN),
    ("passwd", FORBIDDEN),
    ("etc-dir", FORBIDDEN),
    ("etc-dir/passwd", FORBIDDEN),
    ("chain1", FORBIDDEN),
    ("chain1/outside.txt", FORBIDDEN),
    ("src/deep-escape", FORBIDDEN),
    ("src/deep-escape/outside.txt", FORBIDDEN),
    ("up", FORBIDDEN),
    ("up/outside.txt", FORBIDDEN),
    ("up/up/up", FORBIDDEN),
    ("relative-out/outside.txt", FORBIDDEN),
    ("code/../escape", FORBIDDEN),
    ("proc-link", FORBIDDEN),
    ("loop1", ANY),  # a symlink loop: never followed, whatever the error
    ("loop1/x", ANY),
]

# (raw query value, expected status); written into the URL as is, so the server decodes it exactly once
RAW: list[tuple[str, int]] = [
    ("%2e%2e%2f", FORBIDDEN),
    ("%2e%2e/", FORBIDDEN),
    ("..%2f", FORBIDDEN),
    ("%2e%2e%2f%2e%2e%2fetc%2fpasswd", FORBIDDEN),
    ("%2E%2E%2F", FORBIDDEN),
    ("%2fetc%2fpasswd", FORBIDDEN),
    ("%2F", FORBIDDEN),
    ("..%2F..%2F..%2Fetc%2Fpasswd", FORBIDDEN),
    ("src%2f%2e%2e%2f%2e%2e%2f", FORBIDDEN),
    ("%00", INVALID),
    ("README.md%00", INVALID),
    ("README.md%00.txt", INVALID),
    ("%00../", INVALID),
    ("%252e%252e%252f", MISSING),  # encoded twice: after one decoding, the literal name '%2e%2e%2f'
    ("%25252e%25252e", MISSING),
    ("%2e%2e%5c", MISSING),  # '..\' is a name
    ("%5c%2e%2e%5c", MISSING),
    ("%c0%ae%c0%ae/", MISSING),  # overlong UTF-8 dots: invalid UTF-8, not dots
    ("%c0%ae%c0%ae%c0%af", MISSING),
    ("..%c0%af", MISSING),
    ("..%e0%80%af", MISSING),
    ("%e2%80%a5/", MISSING),  # two dot leader, UTF-8
    ("%ef%bc%8e%ef%bc%8e%ef%bc%8f", MISSING),  # fullwidth './'
    ("%uff0e%uff0e%u2215", MISSING),  # IIS-style %u escapes are not decoded
    ("%ff%fe", MISSING),
    ("..%255c..%255c", MISSING),
    ("%2e%2e%2f%00", INVALID),
    ("%2e%2e+%2f", MISSING),  # '+' is a space: '.. /' names a directory '.. '
]


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory next to the mount holding a secret, the target of every symlink that points out."""
    directory = tmp_path / "outside"
    directory.mkdir()
    (directory / "outside.txt").write_text(OUTSIDE_CONTENT)
    (tmp_path / "outside.txt").write_text(OUTSIDE_CONTENT)
    return directory


@pytest.fixture
def project(tmp_path: Path, outside: Path) -> Path:
    root = tmp_path / "project"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "README.md").write_text("# readme\n")
    (root / "code").symlink_to("src")
    (root / "escape").symlink_to(outside)
    (root / "passwd").symlink_to("/etc/passwd")
    (root / "etc-dir").symlink_to("/etc")
    (root / "chain3").symlink_to(outside)
    (root / "chain2").symlink_to("chain3")
    (root / "chain1").symlink_to("chain2")
    (root / "src" / "deep-escape").symlink_to("../../outside")
    (root / "up").symlink_to("..")
    (root / "relative-out").symlink_to("../outside")
    (root / "proc-link").symlink_to("/proc/self/root")
    (root / "loop1").symlink_to("loop2")
    (root / "loop2").symlink_to("loop1")
    return root


@pytest.fixture
async def client(svc_test_host: Host, project: Path, svc_api_client: httpx.AsyncClient) -> httpx.AsyncClient:
    svc_test_host.profiles.create("gpu", SSHProfile(hostname="login.example.org"))
    svc_test_host.profiles.add_mount("gpu", Mount(name="proj", local=str(project), remote="proj"))
    svc_test_host.profiles.activate("gpu")
    await svc_test_host.reload_profiles()
    return svc_api_client


def check(response: httpx.Response, expected: int, tmp_path: Path) -> None:
    """A ``{detail}`` answer with 400/403/404 (exactly ``expected`` when given), no secret, no local path."""
    assert response.status_code in (INVALID, FORBIDDEN, MISSING), (response.status_code, response.text)
    if expected != ANY:
        assert response.status_code == expected, response.text
    body = response.json()
    assert list(body) == ["detail"]
    assert isinstance(body["detail"], str)
    for leak in (str(tmp_path), os.path.realpath(tmp_path), OUTSIDE_CONTENT, "root:x:0:0"):
        assert leak not in response.text, response.text


def test_there_are_at_least_100_hostile_paths() -> None:
    assert len(DECODED) + len(RAW) >= 100


@pytest.mark.parametrize("endpoint", ["browse", "read"])
@pytest.mark.parametrize(("path", "expected"), DECODED, ids=[repr(path)[:40] for path, _ in DECODED])
async def test_decoded_hostile_path(
    client: httpx.AsyncClient, tmp_path: Path, endpoint: str, path: str, expected: int
) -> None:
    response = await client.get(f"/api/files/{endpoint}", params={"mount": "proj", "path": path})
    check(response, expected, tmp_path)


@pytest.mark.parametrize("endpoint", ["browse", "read"])
@pytest.mark.parametrize(("raw", "expected"), RAW, ids=[raw[:40] for raw, _ in RAW])
async def test_raw_encoded_hostile_path(
    client: httpx.AsyncClient, tmp_path: Path, endpoint: str, raw: str, expected: int
) -> None:
    response = await client.get(f"/api/files/{endpoint}?mount=proj&path={raw}")
    assert response.request.url.query.endswith(raw.encode())  # sent as written, decoded once by the server
    check(response, expected, tmp_path)


@pytest.mark.parametrize("which", ["project", "outside", "tmp"])
@pytest.mark.parametrize("endpoint", ["browse", "read"])
async def test_the_servers_own_absolute_paths_are_refused(
    client: httpx.AsyncClient, tmp_path: Path, project: Path, outside: Path, endpoint: str, which: str
) -> None:
    path = {"project": project, "outside": outside / "outside.txt", "tmp": tmp_path}[which]
    response = await client.get(f"/api/files/{endpoint}", params={"mount": "proj", "path": str(path)})
    check(response, FORBIDDEN, tmp_path)


@pytest.mark.parametrize("mount", ["../proj", "proj/..", "/proj", "proj\x00", "%2e%2e", "PROJ", "proj "])
@pytest.mark.parametrize("endpoint", ["browse", "read"])
async def test_hostile_mount_names_are_unknown_mounts(
    client: httpx.AsyncClient, tmp_path: Path, endpoint: str, mount: str
) -> None:
    response = await client.get(f"/api/files/{endpoint}", params={"mount": mount, "path": "README.md"})
    check(response, MISSING, tmp_path)
    assert response.json()["detail"] == f"Mount '{mount}' not found in profile 'gpu'"


async def test_symlink_swapped_in_after_listing(
    client: httpx.AsyncClient, project: Path, outside: Path, tmp_path: Path
) -> None:
    swap = project / "swap"
    swap.mkdir()
    (swap / "outside.txt").write_text("harmless")
    listed = await client.get("/api/files/browse", params={"mount": "proj", "path": "swap"})
    assert [entry["name"] for entry in listed.json()["entries"]] == ["outside.txt"]
    read = await client.get("/api/files/read", params={"mount": "proj", "path": "swap/outside.txt"})
    assert read.json()["content"] == "harmless"

    shutil.rmtree(swap)
    swap.symlink_to("/etc")
    for endpoint, path in (("read", "swap/passwd"), ("browse", "swap"), ("read", "swap/hostname")):
        response = await client.get(f"/api/files/{endpoint}", params={"mount": "proj", "path": path})
        check(response, FORBIDDEN, tmp_path)

    swap.unlink()
    swap.symlink_to(outside)
    response = await client.get("/api/files/read", params={"mount": "proj", "path": "swap/outside.txt"})
    check(response, FORBIDDEN, tmp_path)
    listing = await client.get("/api/files/browse", params={"mount": "proj"})
    swapped = next(entry for entry in listing.json()["entries"] if entry["name"] == "swap")
    assert swapped == {"name": "swap", "type": "symlink", "size": None, "accessible": False, "target_kind": None}


async def test_file_swapped_for_a_symlink_between_check_and_open_is_refused(
    client: httpx.AsyncClient, project: Path, outside: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last moment a swap can happen: after the path was resolved, before it is opened."""
    (project / "late.txt").write_text("harmless")
    real_open: Callable[..., int] = os.open

    def swap_then_open(path: str | os.PathLike[str], flags: int, *args: object) -> int:
        if str(path).endswith("late.txt"):
            os.unlink(path)
            os.symlink(outside / "outside.txt", path)
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", swap_then_open)
    response = await client.get("/api/files/read", params={"mount": "proj", "path": "late.txt"})
    check(response, FORBIDDEN, tmp_path)


async def test_directory_swapped_for_a_symlink_between_check_and_open_is_refused(
    client: httpx.AsyncClient, project: Path, outside: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A parent directory replaced mid-request: the opened file is checked to be inside the mount."""
    (project / "late").mkdir()
    (project / "late" / "outside.txt").write_text("harmless")
    real_open: Callable[..., int] = os.open

    def swap_then_open(path: str | os.PathLike[str], flags: int, *args: object) -> int:
        if str(path).endswith("late/outside.txt"):
            (project / "late" / "outside.txt").unlink()
            (project / "late").rmdir()
            (project / "late").symlink_to(outside)
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", swap_then_open)
    response = await client.get("/api/files/read", params={"mount": "proj", "path": "late/outside.txt"})
    check(response, FORBIDDEN, tmp_path)


@pytest.mark.parametrize("proc", [True, False], ids=["proc", "no-proc"])
@pytest.mark.parametrize("listed", ["late", "late/sub"])
async def test_directory_swapped_for_a_symlink_between_check_and_listing_is_refused(
    client: httpx.AsyncClient,
    project: Path,
    outside: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    listed: str,
    proc: bool,
) -> None:
    """The listed directory (or its parent) replaced by a symlink out, after the path was checked."""
    (project / "late" / "sub").mkdir(parents=True)
    (outside / "sub").mkdir()
    (outside / "sub" / "outside.txt").write_text(OUTSIDE_CONTENT)
    real_resolve = mounts.resolve_inside

    def resolve_then_swap(root: str, relative: str) -> str:
        resolved = real_resolve(root, relative)
        if (project / "late").is_dir() and not (project / "late").is_symlink():
            shutil.rmtree(project / "late")
            (project / "late").symlink_to(outside)
        return resolved

    monkeypatch.setattr(mounts, "resolve_inside", resolve_then_swap)
    if not proc:  # where the open descriptor's path cannot be read, the path is resolved and compared again
        monkeypatch.setattr(mounts, "_opened_path", lambda fd: None)
    response = await client.get("/api/files/browse", params={"mount": "proj", "path": listed})
    check(response, FORBIDDEN, tmp_path)

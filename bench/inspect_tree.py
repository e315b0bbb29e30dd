"""Benchmark: ``inspect_mount`` on a 20,000-file tree vs one raw ``rsync -n -i`` pass over the same ssh.

Needs the dev cluster (``scripts/devcluster up``). Builds a local tree of 200 directories x 100 files, syncs
it to a fresh directory under the dev user's home (so there is an upload record to compare with), then
changes it the way a working day does (edits, new files, deletions) and times ``RsyncBackend.inspect``
against a plain ``rsync -a -n -i --delete`` of the same tree with the same ssh options. Removes the
remote directory afterwards. Goal: <= 1.5x.

    python bench/inspect_tree.py [--repeat 5] [--dirs 200] [--files 100]
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from devcluster import dev_profile

from svc_host.domain.profiles import Mount, SSHProfile
from svc_plugin_rsync.argv import destination, ssh_argv
from svc_plugin_rsync.backend import RsyncBackend
from svc_plugin_ssh.transport import SSHTransport


def build_tree(root: Path, dirs: int, files: int) -> None:
    for d in range(dirs):
        directory = root / f"pkg{d:03d}"
        directory.mkdir(parents=True)
        for f in range(files):
            (directory / f"module{f:03d}.py").write_text(f"# {d}/{f}\nVALUE = {d * files + f}\n")


def a_working_day(root: Path) -> None:
    """Edit 100 files, add 100, delete 50: what inspect exists to report."""
    for d in range(100):
        (root / f"pkg{d:03d}" / "module000.py").write_text(f"# edited {d}\n")
        (root / f"pkg{d:03d}" / "new.py").write_text("NEW = True\n")
    for d in range(50):
        (root / f"pkg{d:03d}" / "module001.py").unlink()


async def raw_rsync(profile: SSHProfile, local: Path, remote: str) -> int:
    argv = [
        "rsync", "-a", "-n", "-i", "--delete", "-e", shlex.join(ssh_argv(profile)),
        f"{local}/", destination(profile, remote),
    ]  # fmt: skip
    proc = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.PIPE)
    out, _ = await proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"raw rsync failed with exit {proc.returncode}")
    return len(out.splitlines())


async def main(repeat: int, dirs: int, files: int) -> None:
    profile = dev_profile()
    base = f"svc-bench-inspect-{uuid.uuid4().hex[:12]}"
    with tempfile.TemporaryDirectory() as scratch:
        local = Path(scratch) / "tree"
        build_tree(local, dirs, files)
        mount = Mount(name="bench", local=str(local), remote=f"{base}/tree")
        transport = SSHTransport("dev", profile)
        backend = RsyncBackend("dev", profile, transport=transport, state_dir=Path(scratch) / "state")
        try:
            start = time.perf_counter()
            first = await backend.sync(mount)
            first_sync = time.perf_counter() - start
            a_working_day(local)
            await backend.inspect(mount)  # warm: the transport's ssh connection, rsync version checks
            inspect_times, raw_times = [], []
            for _ in range(repeat):
                start = time.perf_counter()
                report = await backend.inspect(mount)
                inspect_times.append(time.perf_counter() - start)
                start = time.perf_counter()
                raw_lines = await raw_rsync(profile, local, mount.remote)
                raw_times.append(time.perf_counter() - start)
        finally:
            cleanup = await asyncio.create_subprocess_exec(
                *ssh_argv(profile), profile.hostname, shlex.join(["rm", "-rf", "--", base])
            )
            await cleanup.wait()
            await backend.close()
            await transport.close()
    inspect_p50, raw_p50 = statistics.median(inspect_times), statistics.median(raw_times)
    print(f"tree: {dirs * files} files in {dirs} dirs; first sync sent {first.files_transferred} in {first_sync:.1f} s")
    print(
        f"inspect: {report.files_would_transfer} would transfer, {report.mirror_delete_candidates} delete "
        f"candidates, {report.stale_uploads} stale uploads (known: {report.stale_uploads_known}); "
        f"raw rsync itemized {raw_lines} lines"
    )
    print(
        f"inspect_mount p50:         {inspect_p50 * 1000:7.0f} ms ({repeat} runs, min {min(inspect_times) * 1e3:.0f})"
    )
    print(f"raw rsync -n -i pass p50:  {raw_p50 * 1000:7.0f} ms ({repeat} runs, min {min(raw_times) * 1e3:.0f})")
    print(f"ratio inspect / raw rsync: {inspect_p50 / raw_p50:.2f}x (goal <= 1.5x)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--dirs", type=int, default=200)
    parser.add_argument("--files", type=int, default=100)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.repeat, arguments.dirs, arguments.files))

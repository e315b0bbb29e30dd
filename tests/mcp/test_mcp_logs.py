"""An agent reads the end of a multi-MiB job log (where the traceback is) and pages through all of it, on the
dev cluster through the real stdio client."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from svc_host.services.jobs import last_lines
from svc_host.transports.base import LOG_CHUNK_LIMIT, LogChunk
from svc_plugin_local.transport import LocalTransport

# ~3.4 MiB of numbered lines with a two-byte character in each, then a traceback, all on stdout.
WRITER = (
    "python3 -c 'import sys\n"
    'for i in range(40000): print(f"line {i:05d} caf\\u00e9 " + "x" * 70)\n'
    "sys.stdout.flush()\n"
    'raise RuntimeError("boom at the very end")\' 2>&1'
)


async def finished(mcp: Callable[..., Any], job_id: str) -> None:
    for _ in range(240):
        status = await mcp("get_job_status", job_id=job_id)
        assert status["success"], status
        if status["status"] not in {"PENDING", "RUNNING", "CONFIGURING", "COMPLETING"}:
            return
        await asyncio.sleep(0.5)
    raise AssertionError(f"job {job_id} did not end: {status}")


@pytest.mark.cluster
async def test_tail_then_page_through_a_large_log(
    mcp_factory: Callable[[], Any], svc_home: dict[str, str], slurm_cluster: None
) -> None:
    work = Path(svc_home["SVC_WORK"])
    async with mcp_factory() as mcp:
        job = await mcp("submit_job", command=WRITER, name="big-log")
        assert job["success"], job
        job_id = job["job_id"]
        await finished(mcp, job_id)
        on_disk = (work / "logs" / f"big-log-{job_id}.out").read_bytes()
        size = len(on_disk)
        assert size > 3 * 1024 * 1024

        first = await mcp("get_job_logs", job_id=job_id)
        assert first["success"], first
        assert first["stdout"].startswith("line 00000 café ")
        assert "Traceback" not in first["stdout"]
        assert (first["stdout_offset"], first["stdout_next_offset"], first["stdout_size"]) == (0, LOG_CHUNK_LIMIT, size)
        assert first["stdout_truncated"] is True
        assert first["log_files"] == [str(work / "logs" / f"big-log-{job_id}.{ext}") for ext in ("out", "err")]

        tail = await mcp("get_job_logs", job_id=job_id, tail_lines=3)
        assert tail["stdout"].splitlines()[0] == "Traceback (most recent call last):"
        assert tail["stdout"].endswith("RuntimeError: boom at the very end\n")
        assert len(tail["stdout"].splitlines()) == 3
        assert (tail["stdout_next_offset"], tail["stdout_truncated"]) == (size, False)
        assert on_disk[tail["stdout_offset"] :].decode() == tail["stdout"]

        odd = await mcp("get_job_logs", job_id=job_id, tail_bytes=1001)
        assert odd["stdout"].endswith("RuntimeError: boom at the very end\n")
        assert "\ufffd" not in odd["stdout"]  # never starts inside the two-byte 'é'
        assert size - 1001 <= odd["stdout_offset"] <= size - 998
        assert on_disk[odd["stdout_offset"] :].decode() == odd["stdout"]

        pages, offset = [], 0
        while True:
            page = await mcp("get_job_logs", job_id=job_id, offset=offset)
            assert page["success"], page
            assert page["stdout_offset"] == offset
            pages.append(page["stdout"])
            if not page["stdout_truncated"]:
                break
            offset = page["stdout_next_offset"]
        assert len(pages) == -(-size // LOG_CHUNK_LIMIT)
        assert "".join(pages).encode() == on_disk
        assert (page["stderr"], page["stderr_truncated"]) == ("", False)  # the empty .err, paged alongside


async def test_a_tail_offset_inside_a_character_starts_at_the_next_one(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_bytes("aé€😀b\n".encode())  # 1 + 2 + 3 + 4 + 2 bytes
    local = LocalTransport()
    for offset, text in ((2, "€😀b\n"), (3, "€😀b\n"), (4, "😀b\n"), (5, "😀b\n"), (7, "b\n"), (9, "b\n"), (10, "b\n")):
        chunk = await local.read_log(str(log), offset=offset)
        assert chunk.content == text, offset
        assert log.read_bytes()[chunk.offset :].decode() == text


def testlast_lines_counts_a_final_newline_as_the_end_of_a_line() -> None:
    chunk = LogChunk(path="p", content="a\nbé\nc\n", offset=10, next_offset=18, size=18)
    assert last_lines(chunk, 2).content == "bé\nc\n"
    assert last_lines(chunk, 2).offset == 12
    assert last_lines(chunk, 3) == chunk
    assert last_lines(chunk.model_copy(update={"content": "a\nb"}), 1).content == "b"

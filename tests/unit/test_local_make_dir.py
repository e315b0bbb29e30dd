"""The local transport makes a submission's log directory in its own process (no ``mkdir`` process per
submission), with the error of a failed ``mkdir -p``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from svc_host.domain.submission import RenderedScript
from svc_host.errors import TransportError
from svc_host.transports.base import CommandResult
from svc_plugin_local.transport import LocalTransport


class Recording(LocalTransport):
    """The local transport, keeping the argv of every process it starts."""

    def __init__(self) -> None:
        super().__init__()
        self.started: list[list[str]] = []

    async def run(self, argv: Sequence[str], **kwargs: Any) -> CommandResult:
        self.started.append(list(argv))
        return await super().run(argv, **kwargs)


async def test_submit_makes_the_log_directory_and_starts_only_sbatch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "sbatch").write_text("#!/bin/sh\ncat > /dev/null\necho 4242\n")
    (bin_dir / "sbatch").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    logs = tmp_path / "runs" / "xs" / "0.1" / "logs"
    transport = Recording()
    out = str(logs / "%j.out")
    script = RenderedScript(text="#!/bin/bash\ntrue\n", log_dir=str(logs), stdout_path=out, stderr_path=out)
    assert await transport.submit(script) == "4242"
    assert logs.is_dir()
    assert [argv[0] for argv in transport.started] == ["sbatch"]
    assert await transport.submit(script) == "4242"  # the directory exists already: fine


async def test_a_directory_that_cannot_be_made_is_a_transport_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(TransportError, match=r"^mkdir failed on transport 'local': .*Not a directory") as caught:
        await LocalTransport().make_dir(str(blocker / "logs"))
    assert caught.value.argv == ["mkdir", "-p", "--", str(blocker / "logs")]
    assert not (blocker / "logs").exists()

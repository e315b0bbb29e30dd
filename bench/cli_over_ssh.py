"""Benchmark: whole-process wall time of ``svc jobs|submit|status|logs -t PROFILE`` vs the raw ``ssh host CMD``,
each svc command both without an agent (``SVC_AGENT=off``: it connects itself) and through a running svc agent.

Needs the dev cluster (``scripts/devcluster up``). Every sample is a new process (cold: no svc server, no
SSH master; the agent, started once before the samples, is the only thing kept warm), raw and svc interleaved
so all see the same load. The profile ``dev`` points at the dev cluster's loopback sshd; it lives in a
temporary svc home (with its own agent), so nothing of yours is read or changed.

Raw commands are OpenSSH's ``ssh`` running the same Slurm command line svc sends (``squeue`` with svc's
columns, ``sbatch --parsable``, ``cat`` of the log). Also measured: the idle interpreter (``python3 -c pass``,
which on a sandbox with a certifi ``.pth`` is not free), ``svc --version`` and the floor under any command
without an agent: a bare interpreter that imports asyncssh, connects and runs that ``squeue`` (``FLOOR``), what
svc's SSH transport does with nothing of svc around it. Prints medians of wall time
and of CPU time (user + sys of the child: less sensitive to other load on the machine).

    python bench/cli_over_ssh.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

from svc_host.domain.profiles import SSHProfile
from svc_host.settings.paths import SvcPaths
from svc_host.settings.profiles import ProfileStore
from svc_host.slurm.argv import squeue_argv

ROOT = Path(__file__).resolve().parent.parent
PROFILE = "dev"
FLOOR = """
import asyncio, sys
import asyncssh
host, port, user, key, known_hosts, command = sys.argv[1:]
async def main():
    async with asyncssh.connect(
        host, port=int(port), username=user, client_keys=[key], known_hosts=known_hosts, config=None
    ) as conn:
        sys.stdout.write((await conn.run(command, check=True)).stdout)
asyncio.run(main())
"""
"""One ``squeue`` over one asyncssh connection from a bare interpreter: the floor of ``svc jobs`` without an agent."""


def dev_env() -> dict[str, str]:
    out = subprocess.run([ROOT / "scripts" / "devcluster", "env"], capture_output=True, text=True, check=True).stdout
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def timed(argv: Sequence[str], env: dict[str, str], stdin: str | None = None) -> tuple[float, float, str]:
    """Wall and CPU seconds of one child process, and its stdout; a failure stops the bench."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, input=stdin, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{shlex.join(argv)} failed ({done.returncode}): {done.stderr.strip()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


class Samples:
    def __init__(self) -> None:
        self.wall: dict[str, list[float]] = {}
        self.cpu: dict[str, list[float]] = {}

    def run(self, label: str, argv: Sequence[str], env: dict[str, str], stdin: str | None = None) -> str:
        wall, cpu, out = timed(argv, env, stdin)
        self.wall.setdefault(label, []).append(wall)
        self.cpu.setdefault(label, []).append(cpu)
        return out

    def median(self, label: str) -> tuple[float, float]:
        return statistics.median(self.wall[label]), statistics.median(self.cpu[label])


PAIRS = (
    ("ssh squeue", "svc jobs"),
    ("ssh sbatch", "svc submit"),
    ("ssh squeue -j", "svc status"),
    ("ssh cat log", "svc logs"),
)
"""Each raw command and the svc command that does its work; svc is sampled without and with the agent."""


def main(repeat: int) -> None:
    facts = dev_env()
    with tempfile.TemporaryDirectory() as home:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SVC_")}
        env.update(
            XDG_CONFIG_HOME=f"{home}/config",
            XDG_STATE_HOME=f"{home}/state",
            SVC_SYSTEM_CONFIG=f"{home}/etc.json",
        )
        paths = SvcPaths(Path(home) / "etc.json", Path(home) / "config" / "svc", Path(home) / "state" / "svc", ROOT)
        ProfileStore(paths.profiles_file).create(
            PROFILE,
            SSHProfile(
                hostname=facts["SVC_DEV_SSH_HOST"],
                port=int(facts["SVC_DEV_SSH_PORT"]),
                username=facts["SVC_DEV_SSH_USER"],
                key_filename=facts["SVC_DEV_SSH_KEY"],
                known_hosts=facts["SVC_DEV_SSH_KNOWN_HOSTS"],
            ),
        )
        floor = [
            sys.executable, "-c", FLOOR, facts["SVC_DEV_SSH_HOST"], facts["SVC_DEV_SSH_PORT"],
            facts["SVC_DEV_SSH_USER"], facts["SVC_DEV_SSH_KEY"], facts["SVC_DEV_SSH_KNOWN_HOSTS"],
            shlex.join(squeue_argv()),
        ]  # fmt: skip
        ssh = [
            "ssh", "-F", "/dev/null", "-o", "BatchMode=yes", "-p", facts["SVC_DEV_SSH_PORT"],
            "-i", facts["SVC_DEV_SSH_KEY"], "-o", f"UserKnownHostsFile={facts['SVC_DEV_SSH_KNOWN_HOSTS']}",
            f"{facts['SVC_DEV_SSH_USER']}@{facts['SVC_DEV_SSH_HOST']}",
        ]  # fmt: skip
        # the console script next to this interpreter: a version manager's shim (pyenv) would add its own start-up
        script = Path(sys.executable).with_name("svc")
        svc = [str(script)] if script.exists() else [sys.executable, "-m", "svc_host"]
        work_dir = f"svc-bench-{uuid.uuid4().hex[:12]}"
        samples = Samples()
        submitted: list[str] = []
        started = subprocess.run(
            [*svc, "agent", "start", "--connect", PROFILE], env=env, capture_output=True, text=True, check=False
        )
        if started.returncode != 0:
            raise SystemExit(f"svc agent start failed: {started.stderr.strip()}")
        try:
            sample(samples, repeat, svc=svc, ssh=ssh, floor=floor, env=env, work_dir=work_dir, submitted=submitted)
        finally:
            subprocess.run([*svc, "agent", "stop"], env=env, capture_output=True, check=False)
            live = [job for job in submitted if job.split(";")[0].isdigit()]
            if live:
                subprocess.run([*ssh, shlex.join(["scancel", *live])], check=False)
            subprocess.run([*ssh, shlex.join(["rm", "-rf", "--", work_dir])], check=False)
    report(samples, repeat)


def sample(
    samples: Samples,
    repeat: int,
    *,
    svc: list[str],
    ssh: list[str],
    floor: list[str],
    env: dict[str, str],
    work_dir: str,
    submitted: list[str],
) -> None:
    """``repeat`` rounds of every raw command, then its svc command without the agent, then through it."""
    # one job svc tracks, finished, with a log: what status and logs are asked about
    made = samples.run(
        "setup",
        [*svc, "submit", "--json", "-t", PROFILE, "-p", "debug", "--work-dir", work_dir, "--", "echo", "hi"],
        env,
    )
    job, log_path = json.loads(made)["job_id"], json.loads(made)["stdout"]
    submitted.append(job)
    deadline = time.monotonic() + 120
    while subprocess.run([*ssh, "test", "-s", log_path], check=False).returncode != 0:
        if time.monotonic() > deadline:
            raise SystemExit(f"job {job} wrote no log in 120 s")
        time.sleep(0.5)
    sbatch = shlex.join(["sbatch", "--parsable", "-p", "debug", "-D", work_dir, "-o", "/dev/null"])
    submit = [*svc, "submit", "-t", PROFILE, "-p", "debug", "--work-dir", work_dir, "--", "true"]
    raw = {
        "ssh squeue": ([*ssh, shlex.join(squeue_argv())], None),
        "ssh sbatch": ([*ssh, sbatch], "#!/bin/bash\ntrue\n"),
        "ssh squeue -j": ([*ssh, shlex.join(squeue_argv([job]))], None),
        "ssh cat log": ([*ssh, shlex.join(["cat", "--", log_path])], None),
    }
    ours = {
        "svc jobs": [*svc, "jobs", "-t", PROFILE],
        "svc submit": submit,
        "svc status": [*svc, "status", "-t", PROFILE, job],
        "svc logs": [*svc, "logs", "-t", PROFILE, job],
    }
    direct = {**env, "SVC_AGENT": "off"}
    for _ in range(repeat):
        samples.run("python3 -c pass", [sys.executable, "-c", "pass"], env)
        samples.run("svc --version", [*svc, "--version"], env)
        samples.run("floor", floor, env)
        for raw_label, svc_label in PAIRS:
            argv, stdin = raw[raw_label]
            outputs = [samples.run(raw_label, argv, env, stdin=stdin)]
            outputs.append(samples.run(svc_label, ours[svc_label], direct))
            outputs.append(samples.run(f"{svc_label} (agent)", ours[svc_label], env))
            if svc_label == "svc submit":
                submitted.extend(out.strip() for out in outputs)


def report(samples: Samples, repeat: int) -> None:
    print(f"cold processes, medians of {repeat}; wall s (cpu s = user+sys of the child)")
    base_wall, base_cpu = samples.median("python3 -c pass")
    ver_wall, ver_cpu = samples.median("svc --version")
    print(f"  {'python3 -c pass':16} {base_wall:6.3f} ({base_cpu:5.3f})")
    print(
        f"  {'svc --version':16} {ver_wall:6.3f} ({ver_cpu:5.3f})   +{ver_wall - base_wall:.3f} s over the idle "
        "interpreter (goal < 0.1)"
    )
    print(
        f"  {'raw':14} {'wall':>6} {'(cpu)':>7}   {'no agent':11} {'wall':>6} {'(cpu)':>7} {'ratio':>6}   "
        f"{'agent: wall':>11} {'(cpu)':>7} {'ratio':>6}   (goal <= 2x)"
    )
    floor_wall, floor_cpu = samples.median("floor")
    squeue_wall, _ = samples.median("ssh squeue")
    print(
        f"  {'python + asyncssh':16} {floor_wall:6.3f} ({floor_cpu:5.3f})   the same squeue, nothing of svc: "
        f"{floor_wall / squeue_wall:.2f}x ssh squeue (the floor without an agent)"
    )
    for raw, ours in PAIRS:
        raw_wall, raw_cpu = samples.median(raw)
        our_wall, our_cpu = samples.median(ours)
        agent_wall, agent_cpu = samples.median(f"{ours} (agent)")
        print(
            f"  {raw:14} {raw_wall:6.3f} ({raw_cpu:5.3f})   {ours:11} {our_wall:6.3f} ({our_cpu:5.3f}) "
            f"{our_wall / raw_wall:5.2f}x   {agent_wall:11.3f} ({agent_cpu:5.3f}) {agent_wall / raw_wall:5.2f}x"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=7)
    main(parser.parse_args().repeat)

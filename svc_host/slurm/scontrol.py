"""Splitting one ``scontrol --oneliner show job|node`` record into its ``Key=value`` pairs.

scontrol joins pairs with single spaces and does not quote values, so a job name such as
``a b=c`` is ambiguous on its face. The line is cut before every ``Key=``; a piece whose key is
not one scontrol prints is glued back onto the value before it when that value is free text
(a job name, a path, a comment). Only a free-text value that itself holds `` <known key>=`` is
still cut wrongly.
"""

from __future__ import annotations

import re
from typing import Final

_FREE_TEXT: Final = frozenset(
    {"JobName", "Comment", "AdminComment", "SystemComment", "Command", "WorkDir", "StdIn", "StdOut", "StdErr"}
)
"""Keys whose values are user-supplied text and may contain spaces and ``=``."""

# fmt: off
KNOWN_KEYS: Final = frozenset(
    {
        # show job (22.05 and later)
        "JobId", "ArrayJobId", "ArrayTaskId", "ArrayTaskThrottle", "HetJobId", "HetJobOffset",
        "HetJobIdSet", "JobName", "UserId", "GroupId", "MCS_label", "Priority", "Nice", "Account",
        "QOS", "WCKey", "JobState", "Reason", "Dependency", "Requeue", "Restarts", "BatchFlag",
        "Reboot", "ExitCode", "DerivedExitCode", "RunTime", "TimeLimit", "TimeMin", "SubmitTime",
        "EligibleTime", "AccrueTime", "StartTime", "EndTime", "Deadline", "PreemptEligibleTime",
        "PreemptTime", "SuspendTime", "SecsPreSuspend", "LastSchedEval", "Scheduler", "Partition",
        "AllocNode:Sid", "ReqNodeList", "ExcNodeList", "NodeList", "BatchHost", "NumNodes",
        "NumCPUs", "NumTasks", "CPUs/Task", "ReqB:S:C:T", "TRES", "ReqTRES", "AllocTRES",
        "Socks/Node", "NtasksPerN:B:S:C", "CoreSpec", "MinCPUsNode", "MinMemoryNode",
        "MinMemoryCPU", "MinTmpDiskNode", "Features", "DelayBoot", "OverSubscribe", "Contiguous",
        "Licenses", "Network", "Command", "WorkDir", "AdminComment", "Comment", "SystemComment",
        "StdErr", "StdIn", "StdOut", "Power", "TresPerNode", "TresPerJob", "TresPerSocket",
        "TresPerTask", "TresBind", "TresFreq", "MemPerTres", "CpusPerTres", "MailUser", "MailType",
        "Reservation", "Partitions", "ClusterFeatures", "Clusters", "NtasksPerTRES",
        "BurstBuffer", "BurstBufferState", "CpuFreqMin", "CpuFreqMax", "CpuFreqGov", "Container",
        "ContainerID", "Prolog", "Epilog", "ResvPorts", "Nodes", "CPU_IDs", "Mem", "GRES",
        "SiblingsActive", "SiblingsViable", "FedOrigin", "FedViableSiblings", "FedActiveSiblings",
        "KillOInInvalidDependent", "OOMKillStep", "Selinux", "SegmentSize", "StepMgrEnabled",
        "ResvName",
        # show node
        "NodeName", "Arch", "CoresPerSocket", "CPUAlloc", "CPUEfctv", "CPUTot", "CPULoad",
        "AvailableFeatures", "ActiveFeatures", "Gres", "GresDrain", "GresUsed", "NodeAddr",
        "NodeHostName", "Version", "OS", "RealMemory", "AllocMem", "FreeMem", "Sockets", "Boards",
        "State", "ThreadsPerCore", "TmpDisk", "Weight", "Owner", "BootTime",
        "SlurmdStartTime", "LastBusyTime", "ResumeAfterTime", "CfgTRES", "CapWatts",
        "CurrentWatts", "AveWatts", "ExtSensorsJoules", "ExtSensorsWatts", "ExtSensorsTemp",
        "Extra", "InstanceId", "InstanceType", "CPUSpecList", "MemSpecLimit",
        "NextState", "Port", "Topology", "CoreSpecCount", "RestrictedCoresPerGPU",
    }
)
# fmt: on
"""Every key ``scontrol show job`` and ``show node`` print, as of Slurm 22.05-24.x."""

_CUT = re.compile(r" (?=[A-Za-z][\w:/]*=)")


def split_oneliner(line: str) -> dict[str, str]:
    """Return the ``Key=value`` pairs of one scontrol ``--oneliner`` record, in order.

    >>> split_oneliner("JobId=7 JobName=a b=c UserId=root(0)")
    {'JobId': '7', 'JobName': 'a b=c', 'UserId': 'root(0)'}
    """
    fields: dict[str, str] = {}
    previous = ""
    for piece in _CUT.split(line.strip()):
        key, sep, value = piece.partition("=")
        if previous in _FREE_TEXT and (key not in KNOWN_KEYS or not sep):
            fields[previous] += f" {piece.strip()}"
            continue
        if not sep:
            continue
        fields[key] = value.strip()
        previous = key
    return fields

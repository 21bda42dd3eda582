"""The machine header recorded in every results file and printed at the top of every run.

``machine_header()`` is a plain dict: the CPU, its logical cores, torch's threads, the GPU if
any, Python and the versions of the libraries the studies compare, the date (UTC), the skdp
commit the run measured (and whether ``skdp/`` had uncommitted changes), the load average at
the start, and the thread variables of the environment. Wall times on a shared machine move
with other load; the load average is there to say how much.
"""

from __future__ import annotations

import os
import platform
import shlex
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

#: Keys every machine header has (the page generator and its test insist on them).
REQUIRED = ("cpu", "cores", "torch_threads", "versions", "date")
LIBRARIES = ("skdp", "torch", "numpy", "scikit-learn", "opacus", "diffprivlib", "dp-accounting")
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def load_average() -> str:
    try:
        return "/".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "unknown"


def version(name: str) -> str:
    try:
        from importlib.metadata import version as _version

        return _version(name)
    except Exception:  # noqa: BLE001 - any failure means "not installed"
        return "not installed"


def skdp_commit() -> str:
    """``<short hash>`` of the checkout skdp is imported from, ``+uncommitted: <files>`` when
    ``skdp/`` differs from it."""
    try:
        import skdp

        root = Path(skdp.__file__).resolve().parent.parent
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "skdp"],
                               capture_output=True, text=True, check=True).stdout.splitlines()
    except Exception:  # noqa: BLE001 - not a git checkout, no git, skdp not importable
        return "unknown (not a git checkout)"
    changed = [line[3:] for line in dirty if line.strip()]
    if changed:
        shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5
                                          else "")
        return f"{head}+uncommitted: {shown}"
    return head


def gpu() -> str:
    try:
        import torch

        if torch.cuda.is_available():
            return torch.cuda.get_device_name(0)
    except Exception:  # noqa: BLE001
        pass
    return "none"


def machine_header() -> dict:
    """What ran the study (see the module docstring)."""
    try:
        import torch

        threads = torch.get_num_threads()
    except Exception:  # noqa: BLE001
        threads = None
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "torch_threads": threads,
        "gpu": gpu(),
        "python": platform.python_version(),
        "versions": {name: version(name) for name in LIBRARIES},
        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "skdp_commit": skdp_commit(),
        "load_average": load_average(),
        "environment": {v: os.environ[v] for v in THREAD_VARIABLES if v in os.environ},
    }


def command_line(argv: Sequence[str] | None = None) -> str:
    """The command that ran this process, as a user would type it from the repository root."""
    argv = list(sys.argv if argv is None else argv)
    script = Path(argv[0])
    try:
        script = script.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        pass
    from .threads import USER_ENVIRONMENT

    env = " ".join(f"{v}={USER_ENVIRONMENT[v]}" for v in THREAD_VARIABLES[:1]
                   if v in USER_ENVIRONMENT)
    return (env + " " if env else "") + shlex.join(["python", str(script), *argv[1:]])


def describe(header: dict) -> str:
    """One line: CPU (cores), threads, GPU, date, commit."""
    parts = [f"{header.get('cpu', '?')} ({header.get('cores', '?')} logical cores)",
             f"torch threads {header.get('torch_threads', '?')}"]
    if header.get("gpu") not in (None, "none"):
        parts.append(f"GPU {header['gpu']}")
    parts.append(str(header.get("date", "?")))
    if header.get("skdp_commit"):
        parts.append(f"skdp {header['skdp_commit']}")
    return "; ".join(parts)


def print_header(title: str, lines: Sequence[str] = (), header: dict | None = None,
                 command: str | None = None) -> None:
    """Print the run's title, command and machine, then ``lines`` (the protocol)."""
    header = machine_header() if header is None else header
    print(f"# {title}\n")
    print(f"Command: `{command or command_line()}`  ")
    print(f"Machine: {describe(header)}  ")
    print(f"Load average at start (1/5/15 min): {header.get('load_average')} -- other "
          "processes on this machine inflate wall times; ratios are taken between fits of the "
          "same run.  ")
    versions = header.get("versions", {})
    print(f"Python {header.get('python')}; "
          + ", ".join(f"{name} {value}" for name, value in versions.items()) + "\n")
    for line in lines:
        print(line)
    print(flush=True)

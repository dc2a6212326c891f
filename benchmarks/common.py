"""Helpers shared by the benchmark scripts."""

from __future__ import annotations

import os
import platform


def hardware() -> str:
    """Processor name (from /proc/cpuinfo, else platform) and core count."""
    name = ""
    if os.path.exists("/proc/cpuinfo"):
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            models = [line.split(":", 1)[1].strip() for line in cpuinfo if "model name" in line]
        name = models[0] if models else ""
    name = name or platform.processor() or platform.machine() or "unknown CPU"
    return f"{name}, {os.cpu_count()} cores"

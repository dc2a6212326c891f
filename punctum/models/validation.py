"""Config validation shared by the model files."""

import math


def require(ok: bool, field: str, value: object, allowed: str) -> None:
    """Raise ValueError naming the config field, its value and what is allowed, unless ok."""
    if not ok:
        raise ValueError(f"{field} must be {allowed}, got {value!r}")


def is_number(value: object) -> bool:
    """A finite int or float (not a bool, a string or nan/inf)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(value)

"""Config validation shared by the model files."""


def require(ok: bool, field: str, value: object, allowed: str) -> None:
    """Raise ValueError naming the config field, its value and what is allowed, unless ok."""
    if not ok:
        raise ValueError(f"{field} must be {allowed}, got {value!r}")

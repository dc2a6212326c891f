"""punctum: restore punctuation, casing and sentence boundaries in speech transcripts."""

from punctum.version import __version__

__all__ = ["__version__"]

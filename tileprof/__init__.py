"""tileprof: tile-accelerator profiles, side by side with GPU runs.

>>> import tileprof
>>> profile = tileprof.load("dump.json")
>>> summary = profile.summary(epoch=1)
"""

from tileprof._version import __version__
from tileprof.diff_inputs import diff
from tileprof.filters import Filters
from tileprof.model import Profile, load
from tileprof.summary import Summary

__all__ = ["Filters", "Profile", "Summary", "__version__", "diff", "load"]

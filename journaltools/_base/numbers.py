"""Numeric bounds that know no journal: what fits Go's int64, and how large a factor of an int64 may be."""

from __future__ import annotations

import sys
from typing import Final

INT64_MAX: Final = (1 << 63) - 1
#: The largest float whose product with any int64 is still a finite float.
FINITE_TIMES_INT64: Final = sys.float_info.max / (1 << 63)

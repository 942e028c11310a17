"""Numeric bounds that know no journal: how large a factor of an int64 may be."""

from __future__ import annotations

import sys
from typing import Final

#: The largest float whose product with any int64 is still a finite float.
FINITE_TIMES_INT64: Final = sys.float_info.max / (1 << 63)

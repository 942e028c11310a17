"""Where the tests find the checkout's files, wherever in tests/ a test file sits."""

from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parent.parent
TESTS: Final = ROOT / "tests"
SAMPLES: Final = ROOT / "data" / "samples"

"""``make demo``: the main job on the bundled samples, start to finish.

The listing, one folded conversation, the audit findings, and (when the JetStream backend is
available) the samples migrated into an embedded JetStream server with both listings compared.
"""

from __future__ import annotations

import sys
from pathlib import Path

from journaltools.cli import main as cli

SAMPLES = Path(__file__).resolve().parent.parent / "data" / "samples"


def banner(text: str) -> None:
    print(f"\n=== {text} " + "=" * max(0, 76 - len(text)), flush=True)


def run_demo(samples: Path = SAMPLES, out: Path | None = None) -> int:
    source = str(samples)
    banner(f"journaltools ls {source}")
    status = cli(["ls", source])
    banner("journaltools show ... resumed-after-crash   (a claim between a turn and its results)")
    status |= cli(["show", source, "resumed-after-crash"])
    banner("journaltools show ... suspended-approval   (a deferred call waiting for an operator)")
    status |= cli(["show", source, "suspended-approval"])
    banner(f"journaltools audit {source}")
    status |= cli(["audit", source])
    try:
        import journaltools.backends.jetstream
        import journaltools.compare
        import journaltools.ops.migrate  # noqa: F401
    except ImportError:
        print("\n(JetStream backend not installed in this build: comparison skipped)")
        return status
    from journaltools.embedded import embedded_url

    url = embedded_url()
    banner(f"journaltools migrate {source} {url}")
    cli(["migrate", source, url])  # refuses the broken samples by design, and says so
    banner(f"journaltools ls {url}   (two-record summary)")
    status |= cli(["ls", url])
    banner(f"journaltools compare {source} {url}")
    status |= cli(["compare", source, url])
    return status


if __name__ == "__main__":
    sys.exit(run_demo())

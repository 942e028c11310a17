import sys

from journaltools.cli import main

sys.exit(main())

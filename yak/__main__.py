"""``python -m yak``: the same entry point as the ``yak`` command."""

import sys

from yak.cli import main

if __name__ == "__main__":
    sys.exit(main())

"""Entry script for the PyInstaller bundle."""

import sys

from yak.cli import main

sys.exit(main())

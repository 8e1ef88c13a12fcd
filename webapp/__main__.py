"""`python -m webapp`: the `webapp` command."""

import sys

from webapp.server.cli import main

sys.exit(main())

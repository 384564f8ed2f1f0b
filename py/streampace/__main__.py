"""`python -m streampace serve ...`"""

import sys

from streampace.server.cli import main

sys.exit(main())

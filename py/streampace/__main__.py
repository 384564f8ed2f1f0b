"""`python -m streampace serve ...`"""

import sys

from streampace.cli import main

sys.exit(main())

import sys
from pathlib import Path

# Helpers (commonmark_spec, fake_dom, xss_corpus) are imported by name.
sys.path.insert(0, str(Path(__file__).parent))

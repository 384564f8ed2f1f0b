"""The session protocol's version (docs/protocol.md), in one place.

2: the `attached` message (session epoch) and `resume.epoch`.
"""

PROTOCOL_VERSION = 2

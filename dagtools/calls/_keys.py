"""Object keys, where the session state has long imported them from: the rules are in registry/_identity.py.

Nothing here decides anything; import from registry/_identity.py instead.
"""

from __future__ import annotations

from ..registry._identity import Key, identifies, key_field

__all__ = ["Key", "identifies", "key_field"]

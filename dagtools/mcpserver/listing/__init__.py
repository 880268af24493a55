"""What a client is shown of its tools over time: the first tool list kept from an earlier start, the
warm-up that start defers, and the tool-list changes a client is told of."""

from ._changes import WATCH_SECONDS, tell_tools_changed, watch_store
from ._first_list import cached_listing, cached_size, listable_from_cache, opens_keyed, opens_session, remember_listing
from ._warm_up import WarmUp

__all__ = [
    "WATCH_SECONDS",
    "WarmUp",
    "cached_listing",
    "cached_size",
    "listable_from_cache",
    "opens_keyed",
    "opens_session",
    "remember_listing",
    "tell_tools_changed",
    "watch_store",
]

"""The gate of `dagtools mcp --transport http`: who may call, behind one interface (`Authenticator`).

Static bearer tokens and OAuth 2.1 access tokens both answer as an `Authenticator`; `check_exposure`
picks the one the config asks for; discovery (metadata and challenges) tells clients what to send;
`caller_of` and `read_only` read what the gate marked on a request.
"""

from ._authenticator import Authenticator, Refused
from ._callers import CALLER_SCOPE_KEY, READ_ONLY_SCOPE_KEY, caller_of, read_only
from ._discovery import WELL_KNOWN, metadata_url, protected_resource_metadata, unauthorized
from ._exposure import check_exposure
from ._oauth import OAuthResource
from ._tokens import BearerTokens

__all__ = [
    "Authenticator",
    "BearerTokens",
    "CALLER_SCOPE_KEY",
    "OAuthResource",
    "READ_ONLY_SCOPE_KEY",
    "Refused",
    "WELL_KNOWN",
    "caller_of",
    "check_exposure",
    "metadata_url",
    "protected_resource_metadata",
    "read_only",
    "unauthorized",
]

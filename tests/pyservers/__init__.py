"""GraphQL apps on Python server libraries someone else wrote (not strawberry), served on loopback by tests/servers.py."""

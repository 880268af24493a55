"""GraphQL apps on Python server libraries someone else wrote, served on loopback by tests/servers.py."""

"""Tests against GraphQL servers someone else wrote (tests/thirdparty.py, tests/pyservers/, tests/js/)."""

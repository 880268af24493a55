"""GraphQL servers written on Python families other than strawberry, served under uvicorn by the tests."""

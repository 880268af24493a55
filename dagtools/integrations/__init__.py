"""dagtools inside agent frameworks: each subpackage hands a framework the session's tools as that
framework expects them, and runs every call through the session, which stays the one owner of
objects, outputs and the conversation context (seed 001).

    pydantic_ai     DagtoolsToolset(session): a toolset asked for its tools at every step
    openai_agents   DagtoolsTools(session): an Agent's tool list, kept equal to the session's
    langchain       DagtoolsMiddleware(session) for create_agent; langchain_tools(session) to bind
    mellea          mellea_tools(session) and call_tools(session, result): tools in, calls through

Each needs its framework (an optional extra, `pip install "dagtools-graphql[pydantic-ai]"`); importing
`dagtools` or this package imports none of them.
"""

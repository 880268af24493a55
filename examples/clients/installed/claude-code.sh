#!/usr/bin/env bash
# Claude Code: add the GitHub API as an MCP server, run by the dagtools installed in a virtualenv (replace
# /path/to/.venv with yours). The token is read from your shell when you run this; dagtools expands
# ${GITHUB_TOKEN} in the header itself (single quotes keep it from the shell).
claude mcp add github -e GITHUB_TOKEN="$GITHUB_TOKEN" -- \
  /path/to/.venv/bin/dagtools mcp https://api.github.com/graphql \
  --header 'Authorization: Bearer ${GITHUB_TOKEN}'

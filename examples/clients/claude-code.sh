#!/usr/bin/env bash
# Claude Code: add the GitHub API as an MCP server. The token is read from your shell when you run this;
# dagtools expands ${GITHUB_TOKEN} in the header itself (single quotes keep it from the shell).
claude mcp add github -e GITHUB_TOKEN="$GITHUB_TOKEN" -- \
  uvx --from dagtools-graphql dagtools mcp https://api.github.com/graphql \
  --header 'Authorization: Bearer ${GITHUB_TOKEN}'

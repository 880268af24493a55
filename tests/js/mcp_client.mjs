// The official TypeScript SDK's MCP client, as a desktop client uses it: it starts a server over stdio
// (or reaches one over streamable HTTP), lists its tools and at once calls a tool while listing again.
//
//   node mcp_client.mjs '{"command": "...", "args": [...], "env": {...}}'
//   node mcp_client.mjs '{"url": "http://127.0.0.1:PORT/mcp"}'
//
// Given "select" and "call" ({"name": ..., "arguments": ...}), it calls "select" right after the first
// list, alongside a second list, then "call". Prints one JSON line: the tool names of each list and the
// text and isError of each call. Any error exits 1 with the message on stderr.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const options = JSON.parse(process.argv[2]);
const transport = options.url
  ? new StreamableHTTPClientTransport(new URL(options.url))
  : new StdioClientTransport({
      command: options.command,
      args: options.args,
      env: { ...getDefaultEnvironment(), ...(options.env || {}) },
      cwd: options.cwd,
      stderr: "inherit",
    });
const client = new Client({ name: "dagtools-tests", version: "1.0.0" });
const text = (result) => ({ text: result.content.map((c) => c.text).join(""), isError: Boolean(result.isError) });
const names = (listed) => listed.tools.map((t) => t.name);

try {
  await client.connect(transport);
  const first = await client.listTools();
  const out = { first: names(first) };
  if (options.select) {
    const [selected, second] = await Promise.all([client.callTool(options.select), client.listTools()]);
    out.selected = text(selected);
    out.second = names(second);
  }
  if (options.call) {
    out.called = text(await client.callTool(options.call));
  }
  console.log(JSON.stringify(out));
  await client.close();
} catch (error) {
  console.error(`mcp_client: ${error && error.stack ? error.stack : error}`);
  process.exit(1);
}

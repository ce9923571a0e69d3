// Drives `intentgate mcp` with the official TypeScript MCP client, the way an
// agent would: list the tools, select an intent, write inside its scope, write
// outside it. Prints one JSON object with what came back, for
// TestMCPTypeScriptClient to check.
//
//   node client.mjs INTENTGATE_BINARY WORKSPACE
//
// The transport keeps the server's stdin open until client.close(), after
// every reply has been read.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [bin, workspace] = process.argv.slice(2);
if (!bin || !workspace) {
  console.error("usage: node client.mjs INTENTGATE_BINARY WORKSPACE");
  process.exit(2);
}

const transport = new StdioClientTransport({
  command: bin,
  args: ["mcp", "--workspace", workspace],
  stderr: "inherit",
});
const client = new Client({ name: "intentgate-ts-client", version: "1.0.0" });

const call = async (name, args) => {
  const r = await client.callTool({ name, arguments: args });
  return { isError: r.isError === true, text: r.content.map((c) => c.text).join("\n") };
};

try {
  await client.connect(transport);
  const { tools } = await client.listTools();
  const out = {
    server: client.getServerVersion(),
    tools: tools.map((t) => ({ name: t.name, required: t.inputSchema.required ?? [] })),
    select: await call("select_active_intent", { intent_id: "INT-001" }),
    inScope: await call("write_to_file", { path: "src/hello.txt", content: "hello from node\n", line_count: 1 }),
    outOfScope: await call("write_to_file", { path: "docs/nope.md", content: "no\n", line_count: 1 }),
  };
  console.log(JSON.stringify(out));
} finally {
  await client.close();
}

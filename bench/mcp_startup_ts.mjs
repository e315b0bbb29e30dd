// One TypeScript SDK client (@modelcontextprotocol/sdk 1.x) timing a freshly spawned MCP server; run by
// bench/mcp_startup.py from the temporary directory the SDK was installed into. Prints one JSON line (seconds).
//   node mcp_startup_ts.mjs '{"command": ..., "args": [...], "env": {...}, "cwd": ..., "tool": "get_resources",
//                            "at": null | 2.0, "warm": 3, "pause": 1.2}'
// Once initialize is answered the client asks for the tool list without waiting for it (as agent hosts do at
// connect). at null: the tool is called right after (back to back); at 2.0: 2 s after spawn ("sent": when it was
// sent), then "warm" more calls, each after "pause" seconds.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const spec = JSON.parse(process.argv[2]);
const sleep = (seconds) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));
const now = () => performance.now() / 1000;

async function call(client) {
  const started = now();
  const result = await client.callTool({ name: spec.tool, arguments: spec.arguments ?? {} });
  if (result.isError) throw new Error(`${spec.tool} failed: ${JSON.stringify(result.content)}`);
  return now() - started;
}

const client = new Client({ name: "bench-ts", version: "1" });
const transport = new StdioClientTransport({
  command: spec.command, args: spec.args, env: spec.env, cwd: spec.cwd, stderr: "ignore",
});
const spawned = now();
await client.connect(transport);
const out = { initialize: now() - spawned };
const listing = client.listTools(); // as an agent host does at connect, to show its model the tools; not awaited
if (spec.at === null) {
  await call(client);
  out.first = now() - spawned;
} else {
  await sleep(Math.max(0, spec.at - (now() - spawned)));
  out.sent = now() - spawned;
  out.later = await call(client);
  out.warm = [];
  for (let i = 0; i < spec.warm; i++) {
    await sleep(spec.pause);
    out.warm.push(await call(client));
  }
}
await listing;
await client.close();
console.log(JSON.stringify(out));

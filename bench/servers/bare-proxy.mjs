// Baseline for scenario 8: the least a streamed reply can cost on this machine. A node:http server
// that, for each POST, asks the model (argv[2], an OpenAI-compatible base URL) to stream over a
// kept-alive connection, and relays each `data:` line's content as an `event: delta`, as chatsvc
// does: the same two loopback hops each way, without a knowledge base, a database or a framework.
import { Agent, createServer, request } from "node:http";

const model = new URL(`${process.argv[2].replace(/\/+$/, "")}/chat/completions`);
const agent = new Agent({ keepAlive: true });

const server = createServer((req, res) => {
  const parts = [];
  req.on("data", (d) => parts.push(d));
  req.on("end", () => {
    const { message } = JSON.parse(Buffer.concat(parts).toString("utf8"));
    const upstream = request(model, { method: "POST", agent, headers: { "content-type": "application/json", accept: "text/event-stream" } }, (answer) => {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      answer.setEncoding("utf8");
      let buffer = "";
      answer.on("data", (text) => {
        buffer += text;
        let end;
        while ((end = buffer.indexOf("\n\n")) !== -1) {
          const data = buffer.slice(0, end).replace(/^data: /, "");
          buffer = buffer.slice(end + 2);
          if (data === "[DONE]") continue;
          const content = JSON.parse(data).choices?.[0]?.delta?.content;
          if (content) res.write(`event: delta\ndata: ${JSON.stringify({ text: content })}\n\n`);
        }
      });
      answer.on("end", () => res.end("event: done\ndata: {}\n\n"));
    });
    upstream.end(JSON.stringify({ model: "bench-fake", messages: [{ role: "user", content: message }], stream: true }));
  });
});
server.keepAliveTimeout = 5_000;
server.listen(0, "127.0.0.1", () => process.stdout.write(`listening on http://127.0.0.1:${server.address().port}\n`));
process.on("SIGTERM", () => server.close(() => process.exit(0)));

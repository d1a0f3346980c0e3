// Teaches a chatbot your documents with the library, then shows what it would draw on for a question.
// Run: node examples/ingest-docs/ingest.mjs [slug] [files, folders or URLs...]
//      (defaults: the "demo" chatbot and examples/ingest-docs/docs; CHATSVC_DB optional)
import { fileURLToPath } from "node:url";
import { createChatService } from "chatsvc";

const [slug = "demo", ...inputs] = process.argv.slice(2);
const service = await createChatService({ db: process.env.CHATSVC_DB ?? "./.chatsvc/chatsvc.db" });
try {
  if (await service.isEmpty()) {
    const { key } = await service.bootstrap();
    console.log(`First run: created the "demo" chatbot and an API key, shown only now:\n  ${key.key}`);
  }
  const sources = inputs.length > 0 ? inputs : [fileURLToPath(new URL("./docs", import.meta.url))];
  const report = await service.knowledge.ingest(slug, sources, {
    onProgress: ({ done, total, current }) => console.log(`[${done}/${total}] ${current}`),
  });
  console.log(`added ${report.added}, updated ${report.updated}, unchanged ${report.skipped}, ${report.chunks} chunks in ${report.ms} ms`);
  for (const failure of report.failed) console.error(`failed: ${failure.input}: ${failure.error}`);

  const question = "How long do I have to return an order?";
  const [best] = await service.knowledge.search(slug, question);
  console.log(best ? `"${question}" -> ${best.name} (score ${best.score.toFixed(2)}): ${best.content.slice(0, 120)}` : `Nothing relevant for "${question}"`);
  process.exitCode = report.failed.length > 0 ? 1 : 0;
} finally {
  await service.close();
}

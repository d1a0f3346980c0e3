import { expect } from "vitest";
import { DOCS, ingestDocs, openConversation } from "../chat/helpers.js";
import type { Harness } from "../support/harness.js";
import { sqlOf } from "../support/sql.js";

/** A visitor message through the chatbot API; `message_id` is null while a person has the conversation. */
export async function send(h: Harness, slug: string, conversation: number, message: string) {
  const res = await h.call(`/chatbots/${slug}/conversations/${conversation}/messages`, { json: { message } });
  expect(res.status, res.text).toBe(200);
  return res.body.data as { message_id: number | null; cannot_answer: boolean };
}

/** Rates a reply through the chatbot API. */
export async function rate(h: Harness, slug: string, conversation: number, message_id: number, rating: "good" | "bad") {
  expect((await h.call(`/chatbots/${slug}/conversations/${conversation}/messages/rate`, { json: { message_id, rating } })).status).toBe(200);
}

/** Moves a conversation and what belongs to it to `at` (rewriting stored times, as only "now" is ever written); the same instant for several on purpose. */
export async function moveTo(h: Harness, conversation: number, at: string) {
  const sql = sqlOf(h.service);
  await sql.run("UPDATE conversations SET started_at = ?, last_message_at = ?, handed_off_at = CASE WHEN handed_off_at IS NULL THEN NULL ELSE ? END WHERE id = ?", at, at, at, conversation);
  await sql.run("UPDATE messages SET created_at = ? WHERE conversation_id = ?", at, conversation);
  await sql.run("UPDATE leads SET created_at = ? WHERE conversation_id = ?", at, conversation);
}

/**
 * Two chatbots of the harness's organisation, `shop` and `sales`, with the test docs, and a way to
 * add a conversation asked `questions` and moved to `at`: its id goes in `ids[name]`, its replies'
 * ids in `replies[name + index]`.
 */
export async function shopAndSales(h: Harness) {
  for (const slug of ["shop", "sales"]) await h.service.chatbots.create({ organization_id: h.tenant.organization.id, slug, name: slug });
  await ingestDocs(h.service, "shop", DOCS);
  await ingestDocs(h.service, "sales", DOCS);
  const ids: Record<string, number> = {};
  const replies: Record<string, number> = {};
  const conversation = async (name: string, slug: string, at: string, visitor: object, questions: string[]) => {
    ids[name] = await openConversation(h, visitor, slug);
    for (const [i, q] of questions.entries()) replies[`${name}${i}`] = (await send(h, slug, ids[name]!, q)).message_id!;
    await moveTo(h, ids[name]!, at);
  };
  return { ids, replies, conversation };
}

import type { RetrievedChunk } from "../knowledge/types.js";
import type { PromptMessage } from "./types.js";

export interface PromptInput {
  botName: string;
  instructions: string;
  language: string;
  context: RetrievedChunk[];
  /** Earlier turns, oldest first (regenerated replies already left out). */
  history: PromptMessage[];
  question: string;
  /** Characters of history to keep at most, newest turns first. Default 6 000. */
  historyBudgetChars?: number;
}

/**
 * The messages sent to a chat model: a system message with the rules and the
 * retrieved knowledge, recent turns within a budget, then the visitor's message.
 */
export function buildPrompt({ botName, instructions, language, context, history, question, historyBudgetChars = 6_000 }: PromptInput): PromptMessage[] {
  const knowledge = context.map((c, i) => `[${i + 1}] ${c.name}${c.heading ? ` > ${c.heading}` : ""}\n${c.content}`).join("\n\n");
  const system = [
    `You are ${botName}, an assistant answering visitors' questions.`,
    `Answer in the language with code "${language}" unless the visitor writes in another language.`,
    "Answer only from the knowledge below. If it does not contain the answer, say that you do not know.",
    instructions ? `Instructions from the site owner:\n${instructions}` : "",
    `<knowledge>\n${knowledge}\n</knowledge>`,
  ]
    .filter(Boolean)
    .join("\n\n");
  const kept: PromptMessage[] = [];
  let used = 0;
  for (let i = history.length - 1; i >= 0; i--) {
    used += history[i]!.content.length;
    if (used > historyBudgetChars) break;
    kept.unshift(history[i]!);
  }
  return [{ role: "system", content: system }, ...kept, { role: "user", content: question }];
}

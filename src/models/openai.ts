import { createCallSignal, type CallSignal } from "./call-signal.js";
import { fingerprint, ModelError, toModelError } from "./errors.js";
import { postJson } from "../net/post-json.js";
import { parseSse } from "../net/sse.js";
import type { ChatModel, ChatRequest, ChatResult } from "./types.js";

export interface OpenAIModelOptions {
  /** Model name on the server, e.g. `gpt-4o-mini`. */
  model: string;
  /** API root including the version, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8080/v1`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer`; local servers usually need none. */
  apiKey?: string;
  /** A call slower than this fails with a timeout. Default: none beyond the request's signal. */
  timeoutMs?: number;
}

interface Completion {
  choices?: { message?: { content?: unknown }; delta?: { content?: unknown }; finish_reason?: unknown }[];
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown };
  error?: unknown;
}

/**
 * A chat model on any OpenAI-compatible server (`POST {baseUrl}/chat/completions`):
 * OpenAI, vLLM, llama.cpp, LM Studio, Ollama's `/v1`. Streaming reads the SSE
 * `data:` lines up to `[DONE]`. No retries: the API tells clients to retry.
 *
 * @example
 * const model = createOpenAIModel({ model: "gpt-4o-mini", baseUrl: "https://api.openai.com/v1", apiKey: process.env.OPENAI_API_KEY });
 * const { text } = await model.chat({ messages, question, context: [] });
 */
export function createOpenAIModel({ model, baseUrl, apiKey, timeoutMs }: OpenAIModelOptions): ChatModel {
  const spec = `openai:${model}`;
  const url = `${baseUrl.replace(/\/+$/, "")}/chat/completions`;
  const headers: Record<string, string> = apiKey ? { authorization: `Bearer ${apiKey}` } : {};

  const post = async (request: ChatRequest, call: CallSignal, stream: boolean) => {
    const response = await postJson(url, { model, messages: request.messages, stream }, { headers: { ...headers, accept: stream ? "text/event-stream" : "application/json" }, signal: call.signal });
    if (response.status < 200 || response.status > 299) {
      const body = await response.text().catch(() => "");
      throw new ModelError(spec, "failed", `HTTP ${response.status}: ${errorMessage(body) || response.statusText}`, { providerStatus: response.status });
    }
    return response;
  };

  const parse = (raw: string): Completion => {
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      throw new ModelError(spec, "malformed", `Answer is not JSON (${fingerprint(raw)})`);
    }
    if (value === null || typeof value !== "object") throw new ModelError(spec, "malformed", "Answer is not a JSON object");
    return value as Completion;
  };

  const textOf = (completion: Completion): string => {
    if (completion.error) throw new ModelError(spec, "failed", `Provider error: ${errorMessage(JSON.stringify(completion))}`);
    const content = completion.choices?.[0]?.message?.content;
    if (typeof content !== "string") throw new ModelError(spec, "malformed", "Answer has no choices[0].message.content");
    if (content.trim() === "") throw new ModelError(spec, "malformed", "Answer is empty");
    return content;
  };

  return {
    spec,
    async chat(request) {
      const call = createCallSignal(request.signal, timeoutMs);
      try {
        const completion = parse(await (await post(request, call, false)).text());
        const result: ChatResult = { text: textOf(completion), model: spec };
        const usage = completion.usage;
        if (usage && typeof usage.prompt_tokens === "number" && typeof usage.completion_tokens === "number") {
          result.usage = { prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens };
        }
        return result;
      } catch (error) {
        throw toModelError(error, spec, call.signal);
      } finally {
        call.dispose();
      }
    },
    async *stream(request) {
      const call = createCallSignal(request.signal, timeoutMs);
      let finished = false;
      try {
        const response = await post(request, call, true);
        // Some compatible servers ignore `stream: true` and answer one JSON completion.
        if (/application\/json/i.test(response.headers["content-type"] ?? "")) {
          yield textOf(parse(await response.text()));
          finished = true;
          return;
        }
        let text = "";
        let ended = false;
        let done = false;
        for await (const { data } of parseSse(response.body)) {
          // Past [DONE], the rest of a complete answer is read rather than dropped: dropping it closes the
          // connection, and the next call would pay for a new one.
          if (done) continue;
          if (data.trim() === "[DONE]") {
            ended = done = true;
            if (!response.body.complete) break;
            continue;
          }
          const chunk = parse(data);
          if (chunk.error) throw new ModelError(spec, "failed", `Provider error in stream: ${errorMessage(data)}`);
          // A usage-only chunk has no choices; role-only and final chunks have no content.
          const choice = chunk.choices?.[0];
          const piece = choice?.delta?.content;
          if (typeof piece === "string" && piece !== "") {
            text += piece;
            yield piece;
          }
          if (choice?.finish_reason) ended = true;
        }
        if (!ended) throw new ModelError(spec, "malformed", "Stream ended before [DONE]");
        if (text.trim() === "") throw new ModelError(spec, "malformed", "Answer is empty");
        finished = true;
      } catch (error) {
        throw toModelError(error, spec, call.signal);
      } finally {
        // The consumer stopped early (client gone) or the stream failed: close the upstream request.
        if (!finished) call.abort();
        call.dispose();
      }
    },
  };
}

/** The message of an OpenAI-style error body (`{error: {message}}`, `{error: "..."}`, `{message}`), else the raw text. */
function errorMessage(body: string): string {
  try {
    const value = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    const message = typeof value.error === "string" ? value.error : (value.error?.message ?? value.message);
    if (typeof message === "string") return message.slice(0, 300);
  } catch {
    // Not JSON: fall through to the raw text.
  }
  return body.trim().slice(0, 300);
}

import type { ChatResponse } from "ollama";
import { createCallSignal, type CallSignal } from "./call-signal.js";
import { fingerprint, ModelError, toModelError } from "./errors.js";
import type { ChatModel, ChatRequest, ChatResult } from "./types.js";

export interface OllamaModelOptions {
  /** Model name on the Ollama server, e.g. `llama3.2`. */
  model: string;
  /** Ollama server, e.g. `http://127.0.0.1:11434`. */
  host: string;
  /** A call slower than this fails with a timeout. Default: none beyond the request's signal. */
  timeoutMs?: number;
}

/**
 * A chat model served by Ollama (`POST /api/chat`), through the `ollama` client.
 * Streaming reads Ollama's NDJSON lines until the one with `done: true`.
 *
 * @example
 * const model = createOllamaModel({ model: "llama3.2", host: "http://127.0.0.1:11434" });
 * for await (const delta of model.stream({ messages, question, context: [] })) process.stdout.write(delta);
 */
export function createOllamaModel({ model, host, timeoutMs }: OllamaModelOptions): ChatModel {
  const spec = `ollama:${model}`;

  // One client per call, because the client takes no signal for non-streaming
  // calls (only its fetch can carry one), and it keeps every streamed request
  // that never reached `done` (errors, aborts) in a list for its lifetime.
  // The client is loaded on the first call: a service that never talks to Ollama (a CLI command) does not pay for it.
  const clientFor = async (call: CallSignal, stream: boolean) => {
    const { Ollama } = await import("ollama");
    return new Ollama({
      host,
      fetch: async (input, init) => {
        const response = await fetch(input, { ...init, signal: call.signal });
        return response.ok && response.body ? checkedAnswer(response, spec, stream) : response;
      },
    });
  };

  const contentOf = (part: ChatResponse | undefined): string => {
    const content = part?.message?.content;
    if (typeof content !== "string") throw new ModelError(spec, "malformed", "Answer has no message.content");
    return content;
  };

  return {
    spec,
    async chat(request: ChatRequest): Promise<ChatResult> {
      const call = createCallSignal(request.signal, timeoutMs);
      try {
        const answer = await (await clientFor(call, false)).chat({ model, messages: request.messages, stream: false });
        const text = contentOf(answer);
        if (text.trim() === "") throw new ModelError(spec, "malformed", "Answer is empty");
        const result: ChatResult = { text, model: spec };
        if (typeof answer.prompt_eval_count === "number" && typeof answer.eval_count === "number") {
          result.usage = { prompt_tokens: answer.prompt_eval_count, completion_tokens: answer.eval_count };
        }
        return result;
      } catch (error) {
        throw ollamaError(error, spec, call.signal);
      } finally {
        call.dispose();
      }
    },
    async *stream(request: ChatRequest): AsyncIterable<string> {
      const call = createCallSignal(request.signal, timeoutMs);
      let finished = false;
      try {
        const parts = await (await clientFor(call, true)).chat({ model, messages: request.messages, stream: true });
        let text = "";
        // The client's iterator throws when the stream ends without a `done: true` line.
        for await (const part of parts) {
          const piece = contentOf(part);
          if (piece !== "") {
            text += piece;
            yield piece;
          }
        }
        if (text.trim() === "") throw new ModelError(spec, "malformed", "Answer is empty");
        finished = true;
      } catch (error) {
        throw ollamaError(error, spec, call.signal);
      } finally {
        // The consumer stopped early (client gone) or the stream failed: close the upstream request.
        if (!finished) call.abort();
        call.dispose();
      }
    },
  };
}

/** Ollama's `ResponseError` carries the server's `{error}` text and status; the rest is generic. */
function ollamaError(error: unknown, spec: string, signal: AbortSignal): ModelError {
  if (error instanceof Error && error.name === "ResponseError" && !signal.aborted) {
    const status = (error as Error & { status_code?: number }).status_code;
    return new ModelError(spec, "failed", `HTTP ${status}: ${error.message}`, { cause: error, ...(status !== undefined && { providerStatus: status }) });
  }
  if (error instanceof Error && /did not receive done/i.test(error.message) && !signal.aborted) {
    return new ModelError(spec, "malformed", "Stream ended before the line with done: true", { cause: error });
  }
  return toModelError(error, spec, signal);
}

/**
 * The answer with its JSON checked before the client parses it: the client
 * prints every line it cannot parse to the console, and a parser's message
 * quotes the text, either of which can carry what the visitor wrote. A line
 * (or answer) that is not JSON fails the call with its length and hash instead.
 */
async function checkedAnswer(response: Response, spec: string, stream: boolean): Promise<Response> {
  const init = { status: response.status, statusText: response.statusText, headers: response.headers };
  const notJson = (text: string) => new ModelError(spec, "malformed", `Answer is not JSON (${fingerprint(text)})`);
  if (!stream) {
    const text = await response.text();
    if (!isJson(text)) throw notJson(text);
    return new Response(text, init);
  }
  const decoder = new TextDecoder();
  let partial = "";
  // A chunk is passed on only once every line it completes parsed, so the client never sees a bad line.
  const check = (text: string, controller: TransformStreamDefaultController<Uint8Array>): boolean => {
    const lines = (partial + text).split("\n");
    partial = lines.pop() ?? "";
    const bad = lines.find((line) => line.trim() !== "" && !isJson(line));
    if (bad !== undefined) controller.error(notJson(bad));
    return bad === undefined;
  };
  const lines = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      if (check(decoder.decode(chunk, { stream: true }), controller)) controller.enqueue(chunk);
    },
    flush(controller) {
      check(`${decoder.decode()}\n`, controller);
    },
  });
  return new Response(response.body!.pipeThrough(lines), init);
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

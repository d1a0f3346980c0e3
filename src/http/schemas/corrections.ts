import { z } from "zod";
import type { Correction } from "../../core/corrections.js";
import { integer, timestamp } from "./common.js";

export const correctionSchema = z
  .strictObject({
    id: integer,
    question: z.string().meta({ description: "The question this correction answers, and the ones asking the same (see the README's matching rules)" }),
    answer: z.string().meta({ description: "Markdown, as given: replies show it rendered and sanitised like any reply" }),
    source_name: z.string().nullable().meta({ description: "Names the correction in a reply's `sources` (else the question does)" }),
    source_url: z.string().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: "Correction", description: "An answer correction: a visitor question matching `question` is answered with `answer`, without a model call" }) satisfies z.ZodType<Correction>;

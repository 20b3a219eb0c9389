// Compiled by tests/clients.rs with `tsc --strict`, which must refuse it: each line marked
// `error` reads a member the narrowed tag does not have (the test names the errors it expects).

import type { AnyEntry } from "../src/generated/protocol.js";

export function misread(entry: AnyEntry): unknown {
  if (entry.type === "label") {
    return entry.summary; // error: a label has no summary
  }
  if (entry.type === "message" && entry.message.role === "user") {
    return entry.message.toolName; // error: a user message has no toolName
  }
  if (entry.type === "message" && entry.message.role === "assistant") {
    const block = entry.message.content[0];
    if (block?.type === "text") return block.arguments; // error: a text block has no arguments
  }
  return undefined;
}

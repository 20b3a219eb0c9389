// Compiled by tests/clients.rs with `tsc --strict`, which must refuse it: each line marked
// `error` reads a member the narrowed tag does not have, or misuses an entry builder (the test
// names the errors it expects).

import { toolResultMessage, userMessage } from "../src/builders.js";
import type { PiSession } from "../src/client.js";
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

export async function misuse(pi: PiSession): Promise<unknown> {
  const { sessionId } = await pi.session.create({ cwd: "/p", inMemory: true });
  await pi.session.append({ sessionId, entry: userMessage("hi").message }); // error: a message, not an entry
  const read = userMessage("hi").message.toolName; // error: a built user message has no toolName
  return [read, toolResultMessage("c1", "read", [{ type: "toolCall", id: "c1", name: "read", arguments: {} }])]; // error: no tool call in a tool result
}

// Compiled by tests/clients.rs with `tsc --strict`, which must accept it: entries narrow on
// `type`, messages on `role` and content blocks on `type`, with no cast; a front-end appends
// what the builders make and reads it back, with no type of its own.

import { assistantMessage, customEntry, labelEntry, toolResultMessage, userMessage } from "../src/builders.js";
import type { PiSession } from "../src/client.js";
import type { AgentMessage, AnyEntry, EntriesResult } from "../src/generated/protocol.js";

export function describeEntry(entry: AnyEntry): string {
  switch (entry.type) {
    case "message":
      return describeMessage(entry.message);
    case "compaction":
      return `${entry.summary} (${entry.tokensBefore} tokens, kept from ${entry.firstKeptEntryId ?? "-"})`;
    case "branch_summary":
      return `${entry.fromId}: ${entry.summary}`;
    case "label":
      return `${entry.targetId} ${entry.label ?? "(removed)"}`;
    case "leaf":
      return entry.targetId ?? "before the first entry";
    case "context_edit":
      return entry.replacement === null ? "left out" : typeof entry.replacement.content;
    case "usage":
      return `${entry.kind} ${entry.usage.input}`;
    case "custom":
      return entry.customType;
    default:
      return entry.type;
  }
}

export function describeMessage(message: AgentMessage): string {
  switch (message.role) {
    case "assistant":
      return message.content
        .map((block) => {
          if (block.type === "toolCall") return `${block.name}(${Object.keys(block.arguments).join(",")})`;
          if (block.type === "thinking") return block.thinking;
          return block.text;
        })
        .join("");
    case "user":
      return typeof message.content === "string"
        ? message.content
        : message.content.map((block) => (block.type === "text" ? block.text : block.mimeType)).join("");
    case "toolResult":
      return `${message.toolName} ${message.isError}`;
    case "bashExecution":
      return `${message.command} -> ${message.exitCode ?? "?"}`;
    case "compactionSummary":
      return message.summary;
    default:
      return message.role;
  }
}

export const lines = (answer: EntriesResult): string[] => answer.entries.map(describeEntry);

export async function frontEnd(pi: PiSession): Promise<string> {
  const { sessionId } = await pi.session.create({ cwd: "/p", inMemory: true });
  const asked = await pi.session.append({ sessionId, entry: userMessage("2+2?") });
  const call = { type: "toolCall", id: "c1", name: "add", arguments: { a: 2 } } as const;
  const answer = assistantMessage([call], { provider: "p", model: "m" });
  for (const entry of [answer, toolResultMessage("c1", "add", "4"), customEntry("state", { n: 1 })]) {
    await pi.session.append({ sessionId, entry });
  }
  await pi.session.append({ sessionId, entry: labelEntry(asked.entryId, "q") });
  // The builders' results are the generated types of their role: read without narrowing.
  const usage = answer.message.usage;
  return `${answer.message.stopReason} ${usage?.cost.total ?? 0} ${describeMessage(answer.message)}`;
}

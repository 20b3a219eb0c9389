// Compiled by tests/clients.rs with `tsc --strict`, which must accept it: entries narrow on
// `type`, messages on `role` and content blocks on `type`, with no cast.

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

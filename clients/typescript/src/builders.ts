/**
 * Builders for the entries a front-end appends most (`session/append`'s `entry`), with pi's
 * field names and the defaults pi's agent writes. Each returns the generated type
 * `session/append` takes (`NewMessageEntry` holding the message's own type, `NewCustomEntry`,
 * ...), so a built entry is passed on as it is and its message read without a cast; the server
 * adds `id`, `parentId` and the entry's `timestamp`.
 */

import type {
  AgentMessage,
  AssistantContentBlock,
  AssistantMessage,
  ExtensionData,
  NewCustomEntry,
  NewCustomMessageEntry,
  NewLabelEntry,
  NewMessageEntry,
  StopReason,
  ToolResultMessage,
  Usage,
  UserContent,
  UserContentBlock,
  UserMessage,
} from "./generated/protocol.js";

/** `session/append`'s message entry holding a message of one role (`MessageEntryOf<UserMessage>`). */
export type MessageEntryOf<M extends AgentMessage> = NewMessageEntry & { message: M };

// The names of the builders' own types before they returned the generated ones: kept so that
// code written against them still compiles.
/** @deprecated The generated `UserContentBlock`. */
export type ContentPartInput = UserContentBlock;
/** @deprecated The generated `AssistantContentBlock`. */
export type AssistantPartInput = AssistantContentBlock;
/** @deprecated The generated `Usage`. */
export type UsageInput = Usage;
/** @deprecated The generated `UserMessage`. */
export type UserMessageInput = UserMessage;
/** @deprecated The generated `AssistantMessage`. */
export type AssistantMessageInput = AssistantMessage;
/** @deprecated The generated `ToolResultMessage`. */
export type ToolResultMessageInput = ToolResultMessage;
/** @deprecated The generated messages the builders make. */
export type MessageInput = UserMessage | AssistantMessage | ToolResultMessage;
/** @deprecated `MessageEntryOf`. */
export type MessageEntryInput<M extends MessageInput = MessageInput> = MessageEntryOf<M>;

/** pi's `Usage` with every count and cost 0. */
export const zeroUsage = (): Usage => ({
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
});

const textBlocks = (content: string | UserContentBlock[]): UserContentBlock[] =>
  typeof content === "string" ? [{ type: "text", text: content }] : content;

/** A user message entry; `timestamp` (ms) defaults to now. */
export function userMessage(content: UserContent, options: { timestamp?: number } = {}): MessageEntryOf<UserMessage> {
  return { type: "message", message: { role: "user", content, timestamp: options.timestamp ?? Date.now() } };
}

/** An assistant message entry. `content` may be plain text; `stopReason` defaults to `toolUse`
 * when a part is a tool call, else `stop`; `usage` to zeros. */
export function assistantMessage(
  content: string | AssistantContentBlock[],
  options: {
    provider: string;
    model: string;
    api?: string;
    usage?: Usage;
    stopReason?: StopReason;
    errorMessage?: string;
    timestamp?: number;
  },
): MessageEntryOf<AssistantMessage> {
  const parts: AssistantContentBlock[] = typeof content === "string" ? [{ type: "text", text: content }] : content;
  const message: AssistantMessage = {
    role: "assistant",
    content: parts,
    api: options.api ?? `${options.provider}-messages`,
    provider: options.provider,
    model: options.model,
    usage: options.usage ?? zeroUsage(),
    stopReason: options.stopReason ?? (parts.some((p) => p.type === "toolCall") ? "toolUse" : "stop"),
    timestamp: options.timestamp ?? Date.now(),
  };
  if (options.errorMessage !== undefined) message.errorMessage = options.errorMessage;
  return { type: "message", message };
}

/** A tool result message entry answering the tool call `toolCallId`. */
export function toolResultMessage(
  toolCallId: string,
  toolName: string,
  content: string | UserContentBlock[],
  options: { isError?: boolean; details?: ExtensionData; timestamp?: number } = {},
): MessageEntryOf<ToolResultMessage> {
  const message: ToolResultMessage = {
    role: "toolResult",
    toolCallId,
    toolName,
    content: textBlocks(content),
    isError: options.isError ?? false,
    timestamp: options.timestamp ?? Date.now(),
  };
  if (options.details !== undefined) message.details = options.details;
  return { type: "message", message };
}

/** An extension's own entry (pi's `appendCustomEntry`): kept in the file, never in the context. */
export function customEntry(customType: string, data?: ExtensionData): NewCustomEntry {
  return data === undefined ? { type: "custom", customType } : { type: "custom", customType, data };
}

/** An extension's message (pi's `appendCustomMessageEntry`): part of the context as role `custom`. */
export function customMessageEntry(
  customType: string,
  content: UserContent,
  options: { display?: boolean; details?: ExtensionData } = {},
): NewCustomMessageEntry {
  const entry: NewCustomMessageEntry = { type: "custom_message", customType, content, display: options.display ?? true };
  if (options.details !== undefined) entry.details = options.details;
  return entry;
}

/** A label on entry `targetId` (pi's `appendLabelChange`); `undefined` clears it. */
export function labelEntry(targetId: string, label?: string): NewLabelEntry {
  return label === undefined ? { type: "label", targetId } : { type: "label", targetId, label };
}

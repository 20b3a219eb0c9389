/**
 * Builders for the entries a front-end appends most (`session/append`'s `entry`), with pi's
 * field names and the defaults pi's agent writes. Each returns a plain object; the server
 * adds `id`, `parentId` and the entry's `timestamp`.
 */

/** A text or image part of a message's content. */
export type ContentPartInput =
  | { type: "text"; text: string }
  | { type: "image"; data: string; mimeType: string };

/** A part of an assistant message: text, thinking or a tool call. */
export type AssistantPartInput =
  | { type: "text"; text: string }
  | { type: "thinking"; thinking: string }
  | { type: "toolCall"; id: string; name: string; arguments: Record<string, unknown> };

/** Token counts and costs of one model call (pi's `UsageInput`). */
export interface UsageInput {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  cost: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number };
}

export interface UserMessageInput {
  role: "user";
  content: string | ContentPartInput[];
  timestamp: number;
}

export interface AssistantMessageInput {
  role: "assistant";
  content: AssistantPartInput[];
  api: string;
  provider: string;
  model: string;
  usage: UsageInput;
  stopReason: "stop" | "length" | "toolUse" | "error" | "aborted";
  timestamp: number;
  errorMessage?: string;
}

export interface ToolResultMessageInput {
  role: "toolResult";
  toolCallId: string;
  toolName: string;
  content: ContentPartInput[];
  isError: boolean;
  timestamp: number;
  details?: unknown;
}

export type MessageInput = UserMessageInput | AssistantMessageInput | ToolResultMessageInput;

/** `session/append`'s entry for a message. */
// A type alias, not an interface: it must fit `session/append`'s open `entry` object type.
export type MessageEntryInput<M extends MessageInput = MessageInput> = {
  type: "message";
  message: M;
};

const zeroUsage = (): UsageInput => ({
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
});

/** A user message entry; `timestamp` (ms) defaults to now. */
export function userMessage(
  content: string | ContentPartInput[],
  options: { timestamp?: number } = {},
): MessageEntryInput<UserMessageInput> {
  return { type: "message", message: { role: "user", content, timestamp: options.timestamp ?? Date.now() } };
}

/** An assistant message entry. `content` may be plain text; `stopReason` defaults to `toolUse`
 * when a part is a tool call, else `stop`; `usage` to zeros. */
export function assistantMessage(
  content: string | AssistantPartInput[],
  options: {
    provider: string;
    model: string;
    api?: string;
    usage?: UsageInput;
    stopReason?: AssistantMessageInput["stopReason"];
    errorMessage?: string;
    timestamp?: number;
  },
): MessageEntryInput<AssistantMessageInput> {
  const parts: AssistantPartInput[] = typeof content === "string" ? [{ type: "text", text: content }] : content;
  const message: AssistantMessageInput = {
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
  content: string | ContentPartInput[],
  options: { isError?: boolean; details?: unknown; timestamp?: number } = {},
): MessageEntryInput<ToolResultMessageInput> {
  const message: ToolResultMessageInput = {
    role: "toolResult",
    toolCallId,
    toolName,
    content: typeof content === "string" ? [{ type: "text", text: content }] : content,
    isError: options.isError ?? false,
    timestamp: options.timestamp ?? Date.now(),
  };
  if (options.details !== undefined) message.details = options.details;
  return { type: "message", message };
}

/** An extension's own entry (pi's `appendCustomEntry`): kept in the file, never in the context. */
export function customEntry(customType: string, data?: unknown): { type: "custom"; customType: string; data?: unknown } {
  return data === undefined ? { type: "custom", customType } : { type: "custom", customType, data };
}

/** An extension's message (pi's `appendCustomMessageEntry`): part of the context as role `custom`. */
export function customMessageEntry(
  customType: string,
  content: string | ContentPartInput[],
  options: { display?: boolean; details?: unknown } = {},
): { type: "custom_message"; customType: string; content: string | ContentPartInput[]; display: boolean; details?: unknown } {
  const entry: { type: "custom_message"; customType: string; content: string | ContentPartInput[]; display: boolean; details?: unknown } =
    { type: "custom_message", customType, content, display: options.display ?? true };
  if (options.details !== undefined) entry.details = options.details;
  return entry;
}

/** A label on entry `targetId` (pi's `appendLabelChange`); `undefined` clears it. */
export function labelEntry(targetId: string, label?: string): { type: "label"; targetId: string; label?: string } {
  return label === undefined ? { type: "label", targetId } : { type: "label", targetId, label };
}

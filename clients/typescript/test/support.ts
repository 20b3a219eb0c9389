// What every test file shares: the binary under test, temporary folders, pi-shaped messages.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";

import {
  type AssistantMessage,
  PiSession,
  type SpawnOptions,
  type ToolResultMessage,
  type UserMessage,
} from "pi-session";

/** The binary under test: `$PI_SESSION_BIN` (cargo test sets it), else `pi-session` on PATH. */
export const binary = process.env.PI_SESSION_BIN ?? "pi-session";

const clients: PiSession[] = [];
const dirs: string[] = [];

// When a test file ends, every server it started is gone (a failed test included) and its
// folders are removed.
after(async () => {
  await Promise.all(clients.map((client) => client.dispose({ timeoutMs: 2000 })));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A fresh folder, removed when the test file ends. */
export function temporaryDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "pi-session-ts-"));
  dirs.push(dir);
  return dir;
}

/** A client of the binary under test; its log lines are kept out of the test output. */
export function spawnClient(options: SpawnOptions = {}): PiSession {
  const client = PiSession.spawn({ binary, stderr: "ignore", ...options });
  clients.push(client);
  return client;
}

export const user = (content: string, timestamp: number): UserMessage => ({ role: "user", content, timestamp });

export const assistant = (text: string, timestamp: number, toolCall?: string): AssistantMessage => ({
  role: "assistant",
  content: [
    { type: "text", text },
    ...(toolCall ? [{ type: "toolCall" as const, id: toolCall, name: "read", arguments: { path: "notes.txt" } }] : []),
  ],
  api: "anthropic-messages",
  provider: "anthropic",
  model: "claude-sonnet-4-5",
  usage: {
    input: 120,
    output: 30,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 150,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  },
  stopReason: toolCall ? "toolUse" : "stop",
  timestamp,
});

export const toolResult = (toolCallId: string, text: string, timestamp: number): ToolResultMessage => ({
  role: "toolResult",
  toolCallId,
  toolName: "read",
  content: [{ type: "text", text }],
  isError: false,
  timestamp,
});

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

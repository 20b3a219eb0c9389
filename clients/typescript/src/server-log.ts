import type { Readable, Writable } from "node:stream";

/** How many of the server's last log lines are kept. */
const KEPT_LINES = 20;

/**
 * The server's stderr: copied on to `forward` (when given) as it comes, its last lines kept so
 * that a client can say why the server died.
 */
export class ServerLog {
  private readonly kept: string[] = [];
  private partial = "";
  private readonly done: Promise<void>;

  constructor(stream: Readable, forward?: Writable) {
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => {
      forward?.write(chunk);
      const lines = (this.partial + chunk).split("\n");
      this.partial = lines.pop() ?? "";
      this.keep(lines);
    });
    this.done = new Promise((resolve) => {
      stream.once("close", () => {
        if (this.partial) this.keep([this.partial]);
        this.partial = "";
        resolve();
      });
    });
  }

  private keep(lines: string[]): void {
    for (const line of lines) {
      if (line.trim() === "") continue;
      this.kept.push(line.replace(/\r$/, ""));
      if (this.kept.length > KEPT_LINES) this.kept.shift();
    }
  }

  /** The last lines (at most 20), oldest first. */
  lines(): string[] {
    return [...this.kept];
  }

  /** Resolves when the stream has ended, or after `ms` milliseconds. */
  async ended(ms: number): Promise<void> {
    await Promise.race([this.done, new Promise((resolve) => setTimeout(resolve, ms).unref())]);
  }

  /** `; its last log lines:\n  ...` for an error message, or "" when it wrote none. */
  describe(): string {
    if (this.kept.length === 0) return "; it wrote nothing on stderr";
    return `; its last log lines:\n${this.kept.map((line) => `  ${line}`).join("\n")}`;
  }
}

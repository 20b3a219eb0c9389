import { spawn, type ChildProcess } from "node:child_process";
import {
  CancellationTokenSource,
  createMessageConnection,
  ResponseError,
  StreamMessageReader,
  StreamMessageWriter,
  type CancellationToken,
  type Message,
  type MessageConnection,
  type MessageWriter,
} from "vscode-jsonrpc/node.js";

import { findBinary, notFoundMessage } from "./binary.js";
import { ServerLog } from "./server-log.js";
import { ErrorCodes, PiSessionError } from "./errors.js";
import {
  HOOK_NAMES,
  METHOD_NAMES,
  NAMESPACES,
  NOTIFICATION_NAMES,
  type Hooks,
  type InitializeParams,
  type InitializeResult,
  type Methods,
} from "./generated/protocol.js";

export type MethodName = keyof Methods;
export type HookName = keyof Hooks;
export type NotificationName = (typeof NOTIFICATION_NAMES)[number];
export type Namespace = (typeof NAMESPACES)[number];
export type Params<M extends MethodName> = Methods[M]["params"];
export type Result<M extends MethodName> = Methods[M]["result"];
export type HookParams<H extends HookName> = Hooks[H]["params"];
/** What a hook handler may answer: the hook's answer, or nothing (`null`/`undefined`). */
export type HookAnswer<H extends HookName> = Hooks[H]["result"] | undefined;
export type NotificationParams<N extends NotificationName> =
  import("./generated/protocol.js").Notifications[N]["params"];

/** Per-request options. */
export interface RequestOptions {
  /** Aborting sends `$/cancelRequest`; the request then fails with code -32800 if the server
   * dropped it (nothing changed), or answers normally if its change had already started. */
  signal?: AbortSignal;
}

/** What a hook handler gets beside the params. */
export interface HookContext {
  /** Aborted when the server stops waiting (its `hookTimeoutMs` passed, or the request that
   * sent the hook was cancelled): an answer after that is ignored. */
  signal: AbortSignal;
}

export type HookHandler<H extends HookName> = (
  params: HookParams<H>,
  context: HookContext,
) => HookAnswer<H> | Promise<HookAnswer<H>>;

/** One method as a function: params may be left out when every member is optional. */
export type MethodCall<M extends MethodName> =
  Params<M> extends null
    ? (params?: null, options?: RequestOptions) => Promise<Result<M>>
    : {} extends Params<M>
      ? (params?: Params<M>, options?: RequestOptions) => Promise<Result<M>>
      : (params: Params<M>, options?: RequestOptions) => Promise<Result<M>>;

/** The methods of one namespace by their short names: `session.append` for `session/append`. */
export type NamespaceMethods<NS extends Namespace> = {
  [M in MethodName as M extends `${NS}/${infer Short}` ? Short : never]: MethodCall<M>;
};

/** `initialize` params; `hooks` is filled in from the registered hook handlers. */
export type InitializeOptions = Omit<InitializeParams, "hooks">;

export interface SpawnOptions {
  /** The pi-session binary; default `$PI_SESSION_BIN`, else the one in this platform's
   * package (`@pi-session/linux-x64-gnu`, ...), else `pi-session` on `PATH`. */
  binary?: string;
  /** More command-line arguments after `--stdio` (for example `["--durable"]`). */
  args?: string[];
  /** The server's environment (default this process's). */
  env?: NodeJS.ProcessEnv;
  /** The server's working directory. */
  cwd?: string;
  /** Where the server's log lines (stderr) go: `inherit` (default) copies them to this
   * process's stderr, `ignore` drops them, `pipe` leaves them to `process.stderr` of the
   * returned client. In every case the last lines are kept, to say why a server died. */
  stderr?: "inherit" | "ignore" | "pipe";
}

export interface DisposeOptions {
  /** How long to wait for `shutdown`'s answer and then for the process to exit before killing
   * it (default 5000 ms). */
  timeoutMs?: number;
}

type Listener = (params: never) => void;

/**
 * The server's stdin as vscode-jsonrpc's writer, except that a failed write (the server has
 * gone) is reported to `failed` instead of rejecting: vscode-jsonrpc rethrows a request's write
 * failure where nothing can catch it, which would end the client's whole process.
 */
class ServerInput implements MessageWriter {
  private readonly inner: StreamMessageWriter;
  private readonly failed: (error: Error) => void;
  constructor(stream: NodeJS.WritableStream, failed: (error: Error) => void) {
    this.inner = new StreamMessageWriter(stream);
    this.failed = failed;
  }
  get onError() {
    return this.inner.onError;
  }
  get onClose() {
    return this.inner.onClose;
  }
  write(message: Message): Promise<void> {
    return this.inner.write(message).catch((error: Error) => this.failed(error));
  }
  end(): void {
    this.inner.end();
  }
  dispose(): void {
    this.inner.dispose();
  }
}

/** vscode-jsonrpc's codes for a request that never got its answer because the connection went. */
const CONNECTION_LOST: readonly number[] = [-32099, -32097, -32096];

/** The methods grouped by namespace: `client.session.append(...)`. */
export type NamespacedMethods = { readonly [NS in Namespace]: NamespaceMethods<NS> };

// The class gets one member per namespace, typed from the generated method table.
export interface PiSession extends NamespacedMethods {}

/**
 * A typed client of `pi-session --stdio`: register hook handlers and listeners, `initialize`,
 * call methods (`client.session.create(...)`), then `dispose()`.
 */
export class PiSession {
  /** The JSON-RPC connection (vscode-jsonrpc) over the server's stdin/stdout. */
  readonly connection: MessageConnection;
  /** The server process. */
  readonly process: ChildProcess;
  /** Resolves with the server's exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>;
  /** The server's last log lines (stderr). */
  readonly log: ServerLog;
  /** The `initialize` answer, once initialized. */
  initializeResult: InitializeResult | undefined;

  private readonly hooks = new Map<HookName, HookHandler<HookName>>();
  private readonly listeners = new Map<NotificationName, Set<Listener>>();
  private startError: Error | undefined;
  /** Why the server can no longer answer, once it cannot. */
  private gone: string | undefined;
  /** Settles once the process has started (or failed to: then with the reason). */
  private readonly started: Promise<void>;
  private state: "new" | "initializing" | "running" | "disposed" = "new";

  /**
   * Starts the server (`BINARY --stdio`): the binary given, else `$PI_SESSION_BIN`, else
   * `pi-session` on `PATH`. Register hooks and listeners, then call `initialize`.
   */
  static spawn(options: SpawnOptions = {}): PiSession {
    const binary = findBinary(options.binary, options.env);
    const child = spawn(binary, ["--stdio", ...(options.args ?? [])], {
      stdio: ["pipe", "pipe", "pipe"],
      env: options.env,
      cwd: options.cwd,
    });
    return new PiSession(child, binary, options.stderr ?? "inherit");
  }

  private constructor(child: ChildProcess, binary: string, stderr: "inherit" | "ignore" | "pipe") {
    this.process = child;
    this.log = new ServerLog(child.stderr!, stderr === "inherit" ? process.stderr : undefined);
    let startFailed: (error: Error) => void = () => {};
    this.started = new Promise<void>((resolve, reject) => {
      child.once("spawn", resolve);
      startFailed = reject;
    });
    this.started.catch(() => {}); // the reason is thrown by the first request
    this.exited = new Promise((resolve) => {
      // Also after the start (a failed kill): an unheard 'error' would end this process.
      child.on("error", (error: NodeJS.ErrnoException) => {
        if (child.pid === undefined && this.startError === undefined) {
          this.startError = new Error(notFoundMessage(binary, error.code ?? error.message), {
            cause: error,
          });
          startFailed(this.startError);
          resolve(null);
        }
      });
      child.once("exit", (code, signal) => {
        this.gone ??= `it exited with ${code === null ? signal : `code ${code}`}`;
        resolve(code);
      });
    });
    // Writing to a server that has gone away must fail the request, not the process.
    child.stdin!.on("error", () => {});
    const lost = (why: string) => {
      this.gone ??= why;
      this.connection.dispose(); // fails every request still waiting for an answer
    };
    this.connection = createMessageConnection(
      new StreamMessageReader(child.stdout!),
      new ServerInput(child.stdin!, (error) => lost(`writing to it failed: ${error.message}`)),
    );
    // Its output ended: every answer it sent has been read, no other will come.
    this.connection.onClose(() => lost("its output ended"));
    for (const name of NOTIFICATION_NAMES) {
      const deliver = (params: unknown) => {
        for (const listener of this.listeners.get(name) ?? []) {
          (listener as (params: unknown) => void)(params);
        }
      };
      // vscode-jsonrpc hands `$/progress` to per-token progress handlers; this client registers
      // none, so every one arrives as unhandled progress (a notification handler would replace
      // the connection's own).
      if (name === "$/progress") this.connection.onUnhandledProgress(deliver);
      else this.connection.onNotification(name, deliver);
    }
    for (const namespace of NAMESPACES) {
      const methods: Record<string, unknown> = {};
      for (const method of METHOD_NAMES) {
        if (method.startsWith(`${namespace}/`)) {
          methods[method.slice(namespace.length + 1)] = (
            params?: unknown,
            options?: RequestOptions,
          ) => this.request(method, params as never, options);
        }
      }
      Object.defineProperty(this, namespace, { value: Object.freeze(methods), enumerable: true });
    }
    this.connection.listen();
  }

  /**
   * Answers a hook with `handler`. Only before `initialize`, which declares the hooks that have
   * handlers (the server sends no others).
   */
  onHook<H extends HookName>(name: H, handler: HookHandler<H>): this {
    if (this.state !== "new") {
      throw new Error(`onHook('${name}'): hooks are declared by initialize; register them before it`);
    }
    if (!(HOOK_NAMES as readonly string[]).includes(name)) {
      throw new Error(`onHook: unknown hook '${name}' (known: ${HOOK_NAMES.join(", ")})`);
    }
    this.hooks.set(name, handler as unknown as HookHandler<HookName>);
    return this;
  }

  /** Calls `listener` for every `name` notification; returns the function that stops it. */
  on<N extends NotificationName>(
    name: N,
    listener: (params: NotificationParams<N>) => void,
  ): () => void {
    let set = this.listeners.get(name);
    if (!set) this.listeners.set(name, (set = new Set()));
    set.add(listener as Listener);
    return () => set.delete(listener as Listener);
  }

  /**
   * `initialize` (declaring the registered hooks), then `initialized`. The answer says what the
   * server offers: `methods`, `capabilities` (hooks, notifications, profiles, limits).
   */
  async initialize(params: InitializeOptions = {}): Promise<InitializeResult> {
    if (this.state !== "new") throw new Error(`initialize: the client is ${this.state} already`);
    this.state = "initializing";
    for (const [name, handler] of this.hooks) {
      this.connection.onRequest(name, async (hookParams: unknown, token: CancellationToken) => {
        const controller = new AbortController();
        token.onCancellationRequested(() => controller.abort());
        const answer = await handler(hookParams as never, { signal: controller.signal });
        return answer ?? null;
      });
    }
    try {
      // processId: the server exits when this process dies without closing it.
      const result = await this.request("initialize", {
        processId: process.pid,
        ...params,
        hooks: [...this.hooks.keys()],
      });
      await this.connection.sendNotification("initialized", {});
      this.initializeResult = result;
      this.state = "running";
      return result;
    } catch (error) {
      this.state = "new"; // protocol.md: initialize may be retried after an error
      throw error;
    }
  }

  /**
   * Whether the server offers `method` (its `initialize` answer lists it): a client built for a
   * newer protocol can ask before calling a method an older server lacks.
   */
  supports(method: MethodName): boolean {
    if (!this.initializeResult) throw new Error(`supports('${method}'): call initialize first`);
    return this.initializeResult.methods.includes(method);
  }

  /** Any method by its full name (the namespaced members call this). */
  async request<M extends MethodName>(
    method: M,
    params?: Params<M>,
    options: RequestOptions = {},
  ): Promise<Result<M>> {
    const { signal } = options;
    if (signal?.aborted) {
      throw new PiSessionError(method, ErrorCodes.RequestCancelled, "cancelled before it was sent");
    }
    // Nothing is written to a process that never started (vscode-jsonrpc would report the
    // failed write as an unhandled rejection).
    await this.started;
    const source = new CancellationTokenSource();
    const abort = () => source.cancel();
    signal?.addEventListener("abort", abort, { once: true });
    try {
      return await this.connection.sendRequest<Result<M>>(method, params ?? null, source.token);
    } catch (error) {
      const answered = error instanceof ResponseError && !CONNECTION_LOST.includes(error.code);
      if (this.gone !== undefined && !answered) {
        // Its output may end a moment before its exit is reported: wait (briefly) for the
        // exit status, the more useful reason.
        const brief = new Promise((resolve) => setTimeout(resolve, 1000).unref());
        await Promise.race([this.exited, brief]);
        await this.log.ended(1000);
        throw new PiSessionError(
          method,
          ErrorCodes.ServerGone,
          `the pi-session server died (${this.exitStatus() ?? this.gone}) before answering` +
            this.log.describe(),
          { kind: "server_gone", exitCode: this.process.exitCode, signal: this.process.signalCode, stderr: this.log.lines() },
        );
      }
      throw PiSessionError.from(method, error);
    } finally {
      signal?.removeEventListener("abort", abort);
      source.dispose();
    }
  }

  private exitStatus(): string | undefined {
    const child = this.process;
    if (child?.exitCode != null) return `it exited with code ${child.exitCode}`;
    if (child?.signalCode != null) return `it was killed by ${child.signalCode}`;
    return undefined;
  }

  /**
   * Ends the server the clean way: `shutdown` (it answers once every running request has),
   * `exit`, then waits for the process; kills it when any step takes longer than `timeoutMs`.
   * Resolves with the exit code (0 after a clean shutdown; null when killed).
   */
  async dispose({ timeoutMs = 5000 }: DisposeOptions = {}): Promise<number | null> {
    if (this.state === "disposed") return this.exited;
    this.state = "disposed";
    const timeout = (ms: number) =>
      new Promise<"timeout">((resolve) => setTimeout(resolve, ms, "timeout").unref());
    const deadline = timeout(timeoutMs);
    if (!this.startError && this.process.exitCode === null) {
      // An error answer (a server never initialized refuses `shutdown`) or a server gone away
      // does not stop the way out: `exit` ends the server whatever else it holds.
      try {
        // No params at all: vscode-jsonrpc sends a `null` argument by position, as `[null]`.
        await Promise.race([this.connection.sendRequest("shutdown"), deadline, this.exited]);
      } catch {}
      try {
        await this.connection.sendNotification("exit");
      } catch {}
    }
    const ended = await Promise.race([this.exited, deadline]);
    if (ended === "timeout") {
      this.process.kill("SIGKILL");
    }
    this.connection.dispose();
    return this.exited;
  }

  /** `await using pi = PiSession.spawn()` disposes it at the end of the block. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }
}

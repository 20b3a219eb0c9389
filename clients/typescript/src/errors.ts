import { ResponseError } from "vscode-jsonrpc/node.js";

/** `data` of an error answer: application errors always carry `kind` (protocol.md, Errors). */
export interface ErrorData {
  /** The stable name of an application error (`session_not_found`, `locked`, ...). */
  kind: string;
  [detail: string]: unknown;
}

/** JSON-RPC codes the server answers with (application errors use 1001 and up). */
export const ErrorCodes = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  ServerNotInitialized: -32002,
  RequestCancelled: -32800,
  /** Not the server's: the client's, when the server went away (exited, closed its output)
   * before answering. Whether the request changed anything is unknown. */
  ServerGone: -32097,
} as const;

/**
 * An error answer from pi-session: `code` and `data.kind` are for programs, `message` for
 * people. `code === ErrorCodes.RequestCancelled` means the request changed nothing.
 */
export class PiSessionError extends Error {
  override name = "PiSessionError";
  /** The JSON-RPC error code. */
  readonly code: number;
  /** `data` of the answer; `data.kind` names an application error. */
  readonly data: ErrorData | undefined;
  /** The method whose request failed. */
  readonly method: string;

  constructor(method: string, code: number, message: string, data?: unknown) {
    super(`${method}: ${message}`);
    this.method = method;
    this.code = code;
    this.data = isErrorData(data) ? data : undefined;
  }

  /** `data.kind`, when the server named one. */
  get kind(): string | undefined {
    return this.data?.kind;
  }

  /** The answer of a failed request as this class (other errors unchanged). */
  static from(method: string, error: unknown): unknown {
    if (error instanceof ResponseError) {
      return new PiSessionError(method, error.code, error.message, error.data);
    }
    return error;
  }
}

function isErrorData(data: unknown): data is ErrorData {
  return typeof data === "object" && data !== null && typeof (data as ErrorData).kind === "string";
}

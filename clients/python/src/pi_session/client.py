"""The client: spawns `pi-session --stdio`, runs the lifecycle, sends typed requests, answers
hooks and delivers notifications. One reader task owns the server's output."""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import re
import shutil
import sys
import sysconfig
from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import TracebackType
from typing import IO, Any, Unpack, cast, overload

from . import framing
from ._tables import HookTable, InitializeKeywords, NotificationTable, Requests
from .errors import (
    INTERNAL_ERROR,
    METHOD_NOT_FOUND,
    REQUEST_CANCELLED,
    BinaryNotFound,
    ConnectionClosed,
    RpcError,
    cancelled_with_result,
)
from .schema import InitializeParams, InitializeResult

log = logging.getLogger("pi_session")
server_log = logging.getLogger("pi_session.server")
"""The server's own log lines (its stderr), one record each, at WARNING (its default filter
passes warnings and errors only)."""

BIN_ENV = "PI_SESSION_BIN"
DEFAULT_ARGS = ("--stdio", "--framing", "lsp")
# The server's default frame limit (64 MiB) and room for the envelope.
DEFAULT_MAX_FRAME_BYTES = 64 * 1024 * 1024 + 64 * 1024
# How many of the server's last stderr lines a ConnectionClosed quotes.
KEPT_LOG_LINES = 20
# How long a cancelled request waits for the server's answer to its `$/cancelRequest`.
CANCEL_ANSWER_WAIT = 5.0
BINARY_NAME = "pi-session.exe" if sys.platform == "win32" else "pi-session"

HookHandler = Callable[[Any], Awaitable[Any]]
NotificationCallback = Callable[[Any], None]


def _installed_binaries() -> list[str]:
    """Where `pip install pi-session` put the binary: the scripts folder of this environment
    (a venv's `bin/`), of a `--user` install, and of the prefix Python was started from."""
    places = [sysconfig.get_path("scripts")]
    user_scheme = f"{os.name}_user"
    if user_scheme in sysconfig.get_scheme_names():
        places.append(sysconfig.get_path("scripts", scheme=user_scheme))
    if sys.prefix != sys.base_prefix:
        places.append(sysconfig.get_path("scripts", vars={"base": sys.base_prefix}))
    return [os.path.join(place, BINARY_NAME) for place in places if place]


def find_binary(binary: str | os.PathLike[str] | None = None) -> str:
    """The server to spawn: `binary`, else `$PI_SESSION_BIN`, else the one the pi-session
    wheel installed beside this Python (its scripts folder), else `pi-session` on `PATH`.
    Raises `BinaryNotFound` (a `FileNotFoundError`) naming the platform and `PI_SESSION_BIN`."""
    if binary is not None:
        return os.fspath(binary)
    if os.environ.get(BIN_ENV):
        return os.environ[BIN_ENV]
    for candidate in _installed_binaries():
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which(BINARY_NAME)
    if found is None:
        raise BinaryNotFound(
            f"no pi-session binary for {sysconfig.get_platform()}: none installed beside this "
            f"Python ({sysconfig.get_path('scripts')}) nor on PATH; `pip install pi-session` "
            f"installs one (from source with cargo where no wheel fits this platform), or set "
            f"{BIN_ENV} to a pi-session binary"
        )
    return found


def _camel(name: str) -> str:
    """`session_id` -> `sessionId`: the protocol's names are camelCase."""
    return re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), name)


def wire_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """Keyword arguments as the protocol names them: snake_case names (`session_id=`) become
    camelCase (`sessionId`); camelCase ones pass as they are. Only the top level: the values
    (entries, messages) are pi's objects, sent unchanged."""
    return {_camel(key): value for key, value in params.items()}


class _Hooks(HookTable):
    def __init__(self, client: Client) -> None:
        self._client = client

    def _register(self, hook: str, handler: HookHandler) -> None:
        if self._client._initialize_sent:
            raise RuntimeError(
                f"hook {hook!r} registered after initialize: the server sends only the hooks "
                "declared in initialize, so register handlers before it"
            )
        self._client._hook_handlers[hook] = handler


class _Notifications(NotificationTable):
    def __init__(self, client: Client) -> None:
        self._client = client

    def _subscribe(self, name: str, callback: NotificationCallback) -> None:
        self._client._subscribers.setdefault(name, []).append(callback)


class Client(Requests):
    """A `pi-session --stdio` server and the connection to it.

    ```
    async with Client() as client:          # spawns the server
        client.hooks.session_before_tree(on_tree)   # hooks: before initialize
        await client.initialize()
        opened = await client.session.create(cwd="/proj", in_memory=True)
    ```                                     # leaving: shutdown, exit, kill after a timeout

    Hook handlers are coroutines run as tasks (they may call the client); the server's
    `$/cancelRequest` for a hook (timeout, cancelled request) cancels its task. Notification
    callbacks are plain functions called in order by the reader, before the answer of the
    request that caused them is delivered; they must not block (start a task for long work).
    Cancelling the task awaiting a request sends `$/cancelRequest` for it.
    """

    def __init__(
        self,
        binary: str | os.PathLike[str] | None = None,
        *,
        args: Sequence[str] = DEFAULT_ARGS,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stderr: int | IO[Any] | None = None,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
    ) -> None:
        self._command = [find_binary(binary), *args]
        self._env = dict(env) if env is not None else None
        self._cwd = cwd
        # None: read by the client, each line logged on `pi_session.server` and the last ones
        # kept for ConnectionClosed. Otherwise passed to the process as given.
        self._stderr = stderr
        self._log_lines: collections.deque[str] = collections.deque(maxlen=KEPT_LOG_LINES)
        self._stderr_task: asyncio.Task[None] | None = None
        self._max_frame_bytes = max_frame_bytes
        self._bind_request_groups()  # client.session, ...
        self.hooks = _Hooks(self)
        self.notifications = _Notifications(self)
        self.initialize_result: InitializeResult | None = None
        """The `initialize` result (methods, capabilities, settings), once initialized."""
        self._hook_handlers: dict[str, HookHandler] = {}
        self._subscribers: dict[str, list[NotificationCallback]] = {}
        self._process: asyncio.subprocess.Process | None = None
        self._reader_task: asyncio.Task[None] | None = None
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._hook_tasks: dict[Any, asyncio.Task[None]] = {}
        self._next_id = 0
        self._initialize_sent = False
        self._shutdown_sent = False
        self._closing = False  # aclose() has begun: a cancelled request waits for no answer
        self._closed: ConnectionClosed | None = None

    # -- process -------------------------------------------------------------------------

    async def start(self) -> None:
        """Spawns the server (once)."""
        if self._process is not None:
            return
        self._process = await asyncio.create_subprocess_exec(
            *self._command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE if self._stderr is None else self._stderr,
            env=self._env,
            cwd=self._cwd,
        )
        if self._stderr is None:
            self._stderr_task = asyncio.create_task(self._read_stderr(), name="pi_session log")
        self._reader_task = asyncio.create_task(self._read_loop(), name="pi_session reader")

    async def _read_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        stream = self._process.stderr
        while line := await stream.readline():
            text = line.decode("utf-8", "replace").rstrip("\r\n")
            if text.strip():
                self._log_lines.append(text)
                server_log.warning("%s", text)

    @property
    def server_log_lines(self) -> list[str]:
        """The server's last lines on stderr (when the client reads them: `stderr=None`)."""
        return list(self._log_lines)

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    @property
    def returncode(self) -> int | None:
        """The server's exit status once it has exited."""
        return self._process.returncode if self._process else None

    async def __aenter__(self) -> Client:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self, timeout: float = 5.0) -> int | None:
        """Ends the server: `shutdown` (if initialized; its answer waits for the requests
        running), then `exit` and the end of its input; kills it if it has not exited.
        `timeout` bounds each of the two waits. Returns its exit status. Idempotent."""
        process = self._process
        if process is None:
            return None
        self._closing = True
        if self.initialize_result is not None and not self._shutdown_sent and self._closed is None:
            try:
                await asyncio.wait_for(self.shutdown(), timeout)
            except (Exception, asyncio.TimeoutError) as error:
                log.warning("pi-session: shutdown failed (%s); exiting anyway", error)
        if process.returncode is None and process.stdin is not None:
            try:
                if self._initialize_sent:
                    await self.notify("exit")
                process.stdin.close()
            except (ConnectionError, RuntimeError):
                pass  # it is gone already
            try:
                await asyncio.wait_for(process.wait(), timeout)
            except asyncio.TimeoutError:
                log.warning("pi-session: no exit after %.1f s; killing it", timeout)
                process.kill()
                await process.wait()
        if self._reader_task is not None:
            # The answers the server wrote before exiting are delivered: the reader ends at the
            # end of its output. (Bounded: a server's children could hold the pipe open.)
            try:
                await asyncio.wait_for(asyncio.shield(self._reader_task), timeout)
            except asyncio.TimeoutError:
                self._reader_task.cancel()
                await asyncio.gather(self._reader_task, return_exceptions=True)
        if self._stderr_task is not None:
            await asyncio.wait({self._stderr_task}, timeout=timeout)
        self._fail_pending(ConnectionClosed("the client was closed"))
        return process.returncode

    # -- lifecycle -------------------------------------------------------------------------

    @overload
    async def initialize(self, **params: Unpack[InitializeKeywords]) -> InitializeResult: ...
    @overload
    async def initialize(self, **params: Unpack[InitializeParams]) -> InitializeResult: ...
    async def initialize(self, **params: Any) -> InitializeResult:
        """`initialize`, declaring every hook registered on `client.hooks` (and `processId`,
        this process, unless given: the server exits when it dies), then `initialized`.
        Keywords in snake_case (`hook_timeout_ms=`) or the wire's camelCase."""
        await self.start()
        declared = set(params.get("hooks") or []) | set(self._hook_handlers)
        missing = declared - set(self._hook_handlers)
        if missing:
            raise ValueError(f"hooks declared without a handler: {sorted(missing)}")
        sent: dict[str, Any] = {"processId": os.getpid(), **wire_params(params),
                                "hooks": sorted(declared)}
        self._initialize_sent = True
        try:
            result = cast(InitializeResult, await self.request("initialize", sent))
        except BaseException:
            self._initialize_sent = False  # initialize may be retried after an error
            raise
        self.initialize_result = result
        await self.notify("initialized")
        return result

    async def shutdown(self) -> None:
        """`shutdown`: the server refuses new requests and answers once every running one has
        answered. `aclose()` sends it for you."""
        self._shutdown_sent = True
        await self.request("shutdown", None)

    # -- messages --------------------------------------------------------------------------

    async def request(self, method: str, params: Any = None) -> Any:
        """Sends a request and waits for its answer; raises `RpcError` for an error answer,
        `ConnectionClosed` when the server's output ends first. Cancelling the awaiting task
        sends `$/cancelRequest` and waits (up to 5 s) for the server's answer to it: `-32800`
        (it changed nothing) or no answer re-raises the cancellation; a result means the change
        had started and finished: the task still ends cancelled, with a `CancelledError` whose
        `result` is the server's answer (`CancelledWithResult` from Python 3.12 on). Top-level snake_case param names become camelCase."""
        if self._closed is not None:
            raise self._closed
        if isinstance(params, Mapping):
            params = wire_params(params)
        self._next_id += 1
        request_id = self._next_id
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            await self._send(message)
            # Shielded: cancelling this task must leave the future to the server's answer.
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            if self._closed is not None or self._closing:
                raise
            if not future.done():
                self._write({"jsonrpc": "2.0", "method": "$/cancelRequest",
                             "params": {"id": request_id}})
                # The answer still comes (the future stays registered, so it is not a stray).
                await asyncio.wait({future}, timeout=CANCEL_ANSWER_WAIT)
            if not future.done() or future.cancelled():
                raise
            error = future.exception()
            if error is not None:
                if not (isinstance(error, RpcError) and error.code == REQUEST_CANCELLED):
                    log.debug("pi-session: cancelled %s answered %s", method, error)
                raise
            # The change happened: the task still ends cancelled, carrying the answer.
            raise cancelled_with_result(method, future.result()) from None
        finally:
            self._pending.pop(request_id, None)

    async def notify(self, method: str, params: Any = None) -> None:
        """Sends a notification."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self._send(message)

    def on_notification(self, name: str, callback: NotificationCallback) -> None:
        """Untyped subscription by name (the typed ones are on `client.notifications`)."""
        self.notifications._subscribe(name, callback)

    def _write(self, message: dict[str, Any]) -> None:
        """Queues one whole frame (one `write`, so frames never interleave)."""
        if self._process is None or self._process.stdin is None:
            raise RuntimeError("the server is not started: use `async with` or `await start()`")
        if self._closed is not None:
            raise self._closed
        self._process.stdin.write(framing.encode(message))

    async def _send(self, message: dict[str, Any]) -> None:
        self._write(message)
        assert self._process is not None and self._process.stdin is not None
        try:
            await self._process.stdin.drain()  # waits while the pipe is full
        except ConnectionError as error:
            # It has gone: the reader says why (exit status, last log lines) once its output ends.
            if self._reader_task is not None:
                await asyncio.wait({self._reader_task}, timeout=3.0)
            if self._closed is not None:
                raise self._closed from error
            raise ConnectionClosed(f"the server's input is closed: {error}") from error

    # -- the reader ------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        stdout = self._process.stdout
        reason: str | None = None
        try:
            while True:
                message = await framing.read_frame(stdout, self._max_frame_bytes)
                if message is None:
                    break
                self._dispatch(message)
        except (framing.FramingError, ValueError) as error:
            reason = f"the server's output is not understood: {error}"
            log.error("pi-session: %s", reason)
        finally:
            if reason is None:
                reason = await self._death_notice()
            self._fail_pending(ConnectionClosed(reason or "the server's output ended",
                                                returncode=self.returncode,
                                                log_lines=self.server_log_lines))

    async def _death_notice(self) -> str:
        """Why the output ended with requests unanswered: the exit status (awaited briefly,
        as the end of output comes a moment before the exit) and the last log lines."""
        assert self._process is not None
        try:
            await asyncio.wait_for(self._process.wait(), 1.0)
        except asyncio.TimeoutError:
            return "the server closed its output without exiting"
        if self._stderr_task is not None:
            await asyncio.wait({self._stderr_task}, timeout=1.0)
        code = self._process.returncode
        if code == 0:
            return "the pi-session server exited (exit status 0)"
        status = (f"killed by signal {-code}" if code is not None and code < 0
                  else f"exit status {code}")
        text = f"the pi-session server died ({status})"
        if self._stderr is None:
            lines = self.server_log_lines
            text += (": its last log lines:\n" + "\n".join(f"  {line}" for line in lines)
                     if lines else "; it wrote nothing on stderr")
        return text

    def _fail_pending(self, error: ConnectionClosed) -> None:
        if self._closed is None:
            self._closed = error
        for future in self._pending.values():
            if not future.done():
                future.set_exception(error)
        self._pending.clear()
        for task in self._hook_tasks.values():
            task.cancel()

    def _dispatch(self, message: Any) -> None:
        if not isinstance(message, dict):
            log.warning("pi-session sent a message that is not an object: %r", message)
        elif "method" in message and "id" in message:
            self._start_hook(message["id"], message["method"], message.get("params"))
        elif "method" in message:
            self._deliver(message["method"], message.get("params"))
        else:
            self._answer(message)

    def _answer(self, message: dict[str, Any]) -> None:
        answer_id = message.get("id")
        future = self._pending.pop(answer_id, None) if isinstance(answer_id, int) else None
        error = message.get("error")
        if future is None:
            if error is not None:  # e.g. -32700 with id null
                log.warning("pi-session error without a request: %s", error)
            return
        if future.done():
            return
        if isinstance(error, dict):
            future.set_exception(
                RpcError(int(error.get("code", INTERNAL_ERROR)), str(error.get("message", "")),
                         error.get("data"))
            )
        else:
            future.set_result(message.get("result"))

    def _deliver(self, method: str, params: Any) -> None:
        if method == "$/cancelRequest":
            hook_id = params.get("id") if isinstance(params, dict) else None
            task = self._hook_tasks.get(hook_id)
            if task is not None:
                task.cancel()
            return
        for callback in self._subscribers.get(method, ()):
            try:
                callback(params)
            except Exception:
                log.exception("pi-session: a %s callback raised", method)

    def _start_hook(self, hook_id: Any, method: str, params: Any) -> None:
        handler = self._hook_handlers.get(method)
        if handler is None:
            self._reply(hook_id, error={"code": METHOD_NOT_FOUND,
                                        "message": f"no handler for hook {method!r}"})
            return
        task = asyncio.create_task(self._run_hook(hook_id, method, handler, params),
                                   name=f"pi_session hook {method} {hook_id}")
        self._hook_tasks[hook_id] = task

    async def _run_hook(self, hook_id: Any, method: str, handler: HookHandler,
                        params: Any) -> None:
        try:
            result = await handler(params)
        except asyncio.CancelledError:
            return  # the server stopped waiting (timeout, cancelled request) or we close
        except Exception as error:
            log.exception("pi-session: the %s handler raised", method)
            self._reply(hook_id, error={"code": INTERNAL_ERROR, "message": str(error)})
        else:
            self._reply(hook_id, result=result)
        finally:
            self._hook_tasks.pop(hook_id, None)

    def _reply(self, hook_id: Any, *, result: Any = None, error: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": hook_id}
        if error is not None:
            message["error"] = error
        else:
            message["result"] = result
        try:
            try:
                self._write(message)
            except (TypeError, ValueError) as not_json:  # the handler's answer is not JSON
                log.error("pi-session: hook %s answered a value that is not JSON: %s",
                          hook_id, not_json)
                self._write({"jsonrpc": "2.0", "id": hook_id, "error": {
                    "code": INTERNAL_ERROR, "message": f"the answer is not JSON: {not_json}"}})
        except (ConnectionError, RuntimeError) as failure:
            log.warning("pi-session: could not answer hook %s: %s", hook_id, failure)

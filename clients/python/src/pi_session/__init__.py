"""A typed asyncio client for `pi-session --stdio` (standard library only).

```
from pi_session import Client
async with Client() as client:
    await client.initialize()
    opened = await client.session.create(cwd="/proj", in_memory=True)
```

The types of every params and result are in `pi_session.schema`, generated from the
protocol's `schema.json`; the contract is the repository's `protocol/protocol.md`."""

from ._tables import CLIENT_NOTIFICATIONS, HOOKS, METHODS, NOTIFICATIONS, PROTOCOL_TITLE
from . import entries
from .client import BIN_ENV, Client, find_binary, wire_params
from .entries import (
    assistant_message,
    custom_entry,
    custom_message_entry,
    label_entry,
    tool_result_message,
    user_message,
)
from .errors import BinaryNotFound, CancelledWithResult, ConnectionClosed, RpcError

__all__ = [
    "BIN_ENV",
    "BinaryNotFound",
    "CLIENT_NOTIFICATIONS",
    "HOOKS",
    "METHODS",
    "NOTIFICATIONS",
    "PROTOCOL_TITLE",
    "CancelledWithResult",
    "Client",
    "ConnectionClosed",
    "RpcError",
    "assistant_message",
    "custom_entry",
    "custom_message_entry",
    "entries",
    "find_binary",
    "label_entry",
    "tool_result_message",
    "user_message",
    "wire_params",
]
__version__ = "0.1.0"

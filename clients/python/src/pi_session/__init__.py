"""A typed asyncio client for `pi-session --stdio` (standard library only).

```
from pi_session import Client
async with Client() as client:
    await client.initialize()
    opened = await client.session.create(cwd="/proj", inMemory=True)
```

The types of every params and result are in `pi_session.schema`, generated from the
protocol's `schema.json`; the contract is the repository's `protocol/protocol.md`."""

from ._tables import CLIENT_NOTIFICATIONS, HOOKS, METHODS, NOTIFICATIONS, PROTOCOL_TITLE
from .client import BIN_ENV, Client, find_binary
from .errors import ConnectionClosed, RpcError

__all__ = [
    "BIN_ENV",
    "CLIENT_NOTIFICATIONS",
    "HOOKS",
    "METHODS",
    "NOTIFICATIONS",
    "PROTOCOL_TITLE",
    "Client",
    "ConnectionClosed",
    "RpcError",
    "find_binary",
]
__version__ = "0.1.0"

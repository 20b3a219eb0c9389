//! What the server sends the client unasked, each named by its params type: hooks (server ->
//! client requests) and notifications.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

/// A hook (server -> client request), named by its params type: the name it travels under and
/// the answer it expects (`null` is always an answer too). Declared with
/// [`Methods::declare`](super::Methods::declare), sent with [`RequestContext::ask`](super::RequestContext::ask).
pub trait Hook: serde::Serialize + JsonSchema {
    /// The method name the hook travels under.
    const NAME: &'static str;
    /// What the client answers.
    type Answer: DeserializeOwned + JsonSchema;
}

/// A server -> client notification, named by its params type. Declared with
/// [`Methods::announce`](super::Methods::announce), sent with [`ServerHandle::send`](super::ServerHandle::send).
pub trait ServerNotification: serde::Serialize + JsonSchema {
    /// The method name the notification travels under.
    const NAME: &'static str;
}

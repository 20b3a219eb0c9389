//! `session/append`'s `entry` param -> the store's [`NewEntry`], through the one entry reader
//! ([`parse_new_entry`]); a refusal is `-32602` naming the field.

use serde_json::Value;

use crate::format::entry_input::parse_new_entry;
use crate::format::json::JsValue;
use crate::format::write::NewEntry;
use crate::jsonrpc::RpcError;

pub(crate) fn new_entry(entry: &Value) -> Result<NewEntry, RpcError> {
    parse_new_entry(&JsValue::from_serde(entry)).map_err(RpcError::invalid_params)
}

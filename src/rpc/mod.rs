//! The JSON-RPC stdio sidecar.

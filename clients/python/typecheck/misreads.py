"""Checked by tests/python_client.rs with `mypy --strict`, which must refuse it: each line
marked `error` reads a key the narrowed tag does not have (the test names the errors)."""

from pi_session.schema import AnyEntry


def misread(entry: AnyEntry) -> object:
    if entry["type"] == "label":
        return entry["summary"]  # error: a label has no summary
    if entry["type"] == "message":
        message = entry["message"]
        if message["role"] == "user":
            return message["toolName"]  # error: a user message has no toolName
    return None

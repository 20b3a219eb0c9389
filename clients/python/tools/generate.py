"""Generate the typed modules of `pi_session` from `protocol/schema.json`.

Two files, both committed and checked for drift by the tests:

- `src/pi_session/schema.py`: a `TypedDict` per schema definition, made by
  datamodel-code-generator (pinned in requirements-dev.txt) with the options below;
- `src/pi_session/_tables.py`: made here: a typed method per request
  (`client.session.append(sessionId=..., entry=...)`), a typed registration per hook and per
  notification, and the name lists.

Usage (from the dev venv, see README.md): `python tools/generate.py` writes both files;
`--check` only compares and exits 1 naming the files that differ. From the repository root
the same is `UPDATE_PYTHON_CLIENT=1 cargo test --test python_client`.
"""

from __future__ import annotations

import argparse
import json
import keyword
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent
SCHEMA = HERE.parent.parent / "protocol" / "schema.json"
PACKAGE = HERE / "src" / "pi_session"
TYPES_FILE = PACKAGE / "schema.py"
TABLES_FILE = PACKAGE / "_tables.py"
REGENERATE = "UPDATE_PYTHON_CLIENT=1 cargo test --test python_client"

# Options of datamodel-codegen: TypedDicts that need nothing beyond the standard library of
# Python 3.11 (open TypedDicts: PEP 728's closed ones need typing_extensions), unions with `|`,
# string enums as Literals, the schema's descriptions as docstrings, no timestamp (drift test).
CODEGEN_OPTIONS = [
    "--input-file-type", "jsonschema",
    "--output-model-type", "typing.TypedDict",
    "--target-python-version", "3.11",
    "--no-use-closed-typed-dict",
    "--use-standard-collections",
    "--use-union-operator",
    "--enum-field-as-literal", "all",
    "--use-schema-description",
    "--use-field-description",
    "--disable-timestamp",
    "--formatters", "black", "isort",
]

# Handled by the client itself (lifecycle, cancellation), not by a generated method.
LIFECYCLE_REQUESTS = {"initialize", "shutdown"}
INTERNAL_NOTIFICATIONS = {"$/cancelRequest"}


def without_passthroughs(value: Any, passthrough: set[str]) -> Any:
    """`value` with the passthrough definitions (`x-passthrough`: entries and messages of
    kinds pi does not declare, answered as the file holds them) left out of every union: with
    an open `{"type": str}` member, mypy could not narrow `entry["type"] == "message"`."""
    if isinstance(value, list):
        return [without_passthroughs(v, passthrough) for v in value]
    if not isinstance(value, dict):
        return value
    copy = {k: without_passthroughs(v, passthrough) for k, v in value.items()}
    if isinstance(copy.get("anyOf"), list):
        kept = [m for m in copy["anyOf"] if not (isinstance(m, dict) and m.get("$ref") in passthrough)]
        if not kept:
            sys.exit("tools/generate.py: a union of passthroughs only")
        copy["anyOf"] = kept
    return copy


def typed_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema the types are made from: passthroughs out of the unions."""
    passthrough = {
        f"#/definitions/{name}"
        for name, definition in schema.get("definitions", {}).items()
        if isinstance(definition, dict) and definition.get("x-passthrough") is True
    }
    result: dict[str, Any] = without_passthroughs(schema, passthrough)
    # An open object (an extension payload such as a tool call's `arguments`) as a mapping of
    # any members: datamodel-codegen would make it an empty TypedDict, where no key may be read.
    for definition in result.get("definitions", {}).values():
        if (
            isinstance(definition, dict)
            and definition.get("type") == "object"
            and not definition.get("properties")
            and definition.get("additionalProperties") is True
            and "x-passthrough" not in definition
        ):
            definition["additionalProperties"] = {"tsType": "unknown"}
    return result


def generate_types(schema_path: Path) -> str:
    """The text datamodel-codegen makes from the schema."""
    codegen = Path(sys.executable).parent / "datamodel-codegen"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "schema.py"
        source = Path(tmp) / "schema.json"
        source.write_text(json.dumps(typed_schema(json.loads(schema_path.read_text()))))
        run = subprocess.run(
            [str(codegen), "--input", str(source), "--output", str(out), *CODEGEN_OPTIONS],
            capture_output=True,
            text=True,
        )
        if run.returncode != 0:
            sys.exit(f"datamodel-codegen failed on {schema_path}:\n{run.stderr}")
        text = out.read_text()
    # The header names the input by its file name only; say where it is and how to remake it.
    header = (
        "# Generated from protocol/schema.json by clients/python/tools/generate.py\n"
        "# (datamodel-codegen); do not edit. Regenerate with:\n"
        f"#   {REGENERATE}\n"
    )
    return header + re.sub(r"\A(#[^\n]*\n)+", "", text)


def python_name(wire: str) -> str:
    """`continueRecent` -> `continue_recent`; keywords get a trailing underscore."""
    name = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", wire).lower()
    name = re.sub(r"[^a-z0-9_]", "_", name)
    return name + "_" if keyword.iskeyword(name) else name


def type_of(fragment: dict[str, Any] | bool) -> str:
    """The Python type of a schema fragment that names a method's params or result."""
    if isinstance(fragment, bool):  # `true`: any value
        return "Any"
    if "$ref" in fragment:
        return str(fragment["$ref"]).removeprefix("#/definitions/")
    if "anyOf" in fragment:
        return " | ".join(type_of(f) for f in fragment["anyOf"])
    kind = fragment.get("type")
    simple = {"null": "None", "string": "str", "integer": "int", "number": "float",
              "boolean": "bool", "object": "dict[str, Any]"}
    if isinstance(kind, str) and kind in simple:
        return simple[kind]
    if kind == "array":
        return f"list[{type_of(fragment.get('items', {}))}]" if fragment.get("items") else "list[Any]"
    if not fragment:
        return "Any"
    raise SystemExit(f"tools/generate.py: no Python type for the schema fragment {fragment!r}")


def params_signature(method: str, params: dict[str, Any]) -> tuple[str, str]:
    """(the parameters after `self`, the expression sent as params)."""
    if params.get("type") == "null":
        return "", "None"
    if "$ref" in params:
        return f"**params: Unpack[{type_of(params)}]", "params"
    raise SystemExit(
        f"tools/generate.py: the params of {method!r} are not a definition or null; "
        "teach params_signature() this shape"
    )


def generate_tables(schema: dict[str, Any]) -> str:
    used: set[str] = set()
    groups: dict[str, list[str]] = {}
    for method, spec in schema["methods"].items():
        if method in LIFECYCLE_REQUESTS:
            continue
        group, _, name = method.rpartition("/")
        args, sent = params_signature(method, spec["params"])
        result = type_of(spec["result"])
        description = describe(schema, method, spec)
        signature = ", ".join(p for p in ["self", args] if p)
        body = [
            f"    async def {python_name(name)}({signature}) -> {result}:",
            f'        """{escape_doc(description)}"""',
            f"        return cast({result!r}, await {'self._client' if group else 'self'}"
            f".request({method!r}, {sent}))",
        ]
        groups.setdefault(group, []).append("\n".join(body))
        used.update(re.findall(r"[A-Z]\w*", args + " " + result))

    hooks, notifications = [], []
    for hook, spec in schema["hooks"].items():
        params, result = type_of(spec["params"]), type_of(spec["result"])
        used.update(re.findall(r"[A-Z]\w*", params + " " + result))
        hooks.append(
            f"    def {python_name(hook)}(\n"
            f"        self, handler: Callable[[{params}], Awaitable[{result}]]\n"
            f"    ) -> Callable[[{params}], Awaitable[{result}]]:\n"
            f'        """Answer `{hook}` with `handler` (before `initialize`, which declares it)."""\n'
            f"        self._register({hook!r}, handler)\n"
            "        return handler"
        )
    for name, spec in schema["notifications"].items():
        if name in INTERNAL_NOTIFICATIONS:
            continue
        params = type_of(spec["params"])
        used.update(re.findall(r"[A-Z]\w*", params))
        notifications.append(
            f"    def {python_name(name)}(\n"
            f"        self, callback: Callable[[{params}], None]\n"
            f"    ) -> Callable[[{params}], None]:\n"
            f'        """Call `callback` with every `{name}` (before the answer of the request\n'
            '        that caused it is delivered)."""\n'
            f"        self._subscribe({name!r}, callback)\n"
            "        return callback"
        )

    definitions = set(schema["definitions"])
    imports = sorted(used & definitions)
    out = [
        "# Generated from protocol/schema.json by clients/python/tools/generate.py; do not edit.",
        f"# Regenerate with:\n#   {REGENERATE}",
        '"""The typed method, hook and notification tables of the protocol."""',
        "",
        "from __future__ import annotations",
        "",
        "from collections.abc import Awaitable, Callable",
        "from typing import Any, Unpack, cast",
        "",
        "from .schema import (",
        *[f"    {name}," for name in imports],
        ")",
        "",
        f"PROTOCOL_TITLE = {schema.get('title', '')!r}",
        f"METHODS = {tuple(sorted(schema['methods']))!r}",
        f"HOOKS = {tuple(sorted(schema['hooks']))!r}",
        f"NOTIFICATIONS = {tuple(sorted(schema['notifications']))!r}",
        f"CLIENT_NOTIFICATIONS = {tuple(sorted(schema['clientNotifications']))!r}",
    ]
    named = {group: group_class(group) for group in groups if group}
    for group, class_name in sorted(named.items()):
        out += [
            "",
            "",
            f"class {class_name}:",
            f'    """The `{group}/...` requests, typed."""',
            "",
            "    def __init__(self, client: Requests) -> None:",
            "        self._client = client",
        ]
        for method in groups[group]:
            out += ["", method]
    out += [
        "",
        "",
        "class Requests:",
        '    """The requests: each group as an attribute (`self.session.append(...)`), any',
        '    request without a group as a method."""',
        "",
        *[f"    {python_name(group)}: {class_name}" for group, class_name in sorted(named.items())],
        "",
        "    def _bind_request_groups(self) -> None:",
        *[f"        self.{python_name(group)} = {class_name}(self)"
          for group, class_name in sorted(named.items())],
        "",
        "    async def request(self, method: str, params: Any = None) -> Any:",
        "        raise NotImplementedError",
    ]
    for method in groups.get("", []):
        out += ["", method]
    out += [
        "",
        "",
        "class HookTable:",
        '    """Register hook handlers: `client.hooks.session_before_tree(handler)` or as a decorator."""',
        "",
        "    def _register(self, hook: str, handler: Callable[[Any], Awaitable[Any]]) -> None:",
        "        raise NotImplementedError",
    ]
    for hook in hooks:
        out += ["", hook]
    out += [
        "",
        "",
        "class NotificationTable:",
        '    """Subscribe to notifications: `client.notifications.session_tree(callback)`."""',
        "",
        "    def _subscribe(self, name: str, callback: Callable[[Any], None]) -> None:",
        "        raise NotImplementedError",
    ]
    for notification in notifications:
        out += ["", notification]
    return black("\n".join(out) + "\n")


def black(text: str) -> str:
    """`text` formatted by black (pinned with the generator), as the types module is."""
    run = subprocess.run(
        [str(Path(sys.executable).parent / "black"), "-q", "-"],
        input=text, capture_output=True, text=True,
    )
    if run.returncode != 0:
        sys.exit(f"black failed on the generated tables:\n{run.stderr}\n{text}")
    return run.stdout


def group_class(group: str) -> str:
    """`session` -> `SessionMethods`; `a/b` -> `ABMethods`."""
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^A-Za-z0-9]+", group)) + "Methods"


def describe(schema: dict[str, Any], method: str, spec: dict[str, Any]) -> str:
    """The docstring of a method: its own description, else that of its params when it names
    the method (a shared one like `SessionRef`'s does not), else a pointer to the docs."""
    ref = spec["params"].get("$ref", "").removeprefix("#/definitions/")
    shared = schema["definitions"].get(ref, {}).get("description") or ""
    text = spec.get("description") or (shared if f"`{method}`" in shared else "")
    return text or f"`{method}`: see protocol/protocol.md."


def escape_doc(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 on drift")
    parser.add_argument("--schema", type=Path, default=SCHEMA)
    args = parser.parse_args()
    schema = json.loads(args.schema.read_text())
    wanted = {TYPES_FILE: generate_types(args.schema), TABLES_FILE: generate_tables(schema)}
    stale = [path for path, text in wanted.items()
             if not path.exists() or path.read_text() != text]
    if args.check:
        for path in stale:
            print(f"{path.relative_to(HERE)} is not what protocol/schema.json generates", file=sys.stderr)
        if stale:
            print(f"regenerate with: {REGENERATE}", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.write_text(wanted[path])
        print(f"wrote {path.relative_to(HERE)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Generate the typed modules of `pi_session` from `protocol/schema.json`.

Two files, both committed and checked for drift by the tests:

- `src/pi_session/schema.py`: a `TypedDict` per schema definition, made by
  datamodel-code-generator (pinned in requirements-dev.txt) with the options below;
- `src/pi_session/_tables.py`: made here: a typed method per request with snake_case
  keywords (`client.session.append(session_id=..., entry=...)`, the wire's camelCase ones
  still accepted), a typed registration per hook and per notification, and the name lists.

Usage (from the dev venv, see README.md): `python tools/generate.py` writes both files;
`--check` only compares and exits 1 naming the files that differ. From the repository root
the same is `UPDATE_PYTHON_CLIENT=1 cargo test --test suite -- python_client::`.
"""

from __future__ import annotations

import argparse
import ast
import json
import keyword
import re
import subprocess
import sys
import tempfile
import typing
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent
SCHEMA = HERE.parent.parent / "protocol" / "schema.json"
PACKAGE = HERE / "src" / "pi_session"
TYPES_FILE = PACKAGE / "schema.py"
TABLES_FILE = PACKAGE / "_tables.py"
REGENERATE = "UPDATE_PYTHON_CLIENT=1 cargo test --test suite -- python_client::"

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
    """`continueRecent` -> `continue_recent`, `$/progress` -> `progress`; keywords get a
    trailing underscore."""
    name = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", wire.removeprefix("$/")).lower()
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


def wire_name(python: str) -> str:
    """`session_id` -> `sessionId`, as `pi_session.wire_params` turns a keyword into the wire's
    name (tests/test_front_end.py checks that the two agree on every generated keyword)."""
    return re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), python)


class Keywords:
    """The snake_case twin of a params `TypedDict`: the same fields and types under the names
    Python callers write. Made from the generated `schema.py` itself (its field annotations and
    docstrings, read with `ast`), so both spell every type alike."""

    def __init__(self, types_text: str) -> None:
        self.module = ast.parse(types_text)
        self.top_level = {
            target.id
            for node in self.module.body
            for target in (
                [node.target] if isinstance(node, ast.AnnAssign)
                else node.targets if isinstance(node, ast.Assign) else []
            )
            if isinstance(target, ast.Name)
        } | {node.name for node in self.module.body if isinstance(node, ast.ClassDef)}
        self.classes = {
            node.name: node for node in self.module.body if isinstance(node, ast.ClassDef)
        }
        self.made: dict[str, str] = {}  # params TypedDict -> the text of its twin
        self.used: set[str] = set()  # schema names the twins' annotations name
        self.typing: set[str] = set()  # other names they name (`NotRequired`, `str`, ...)

    @staticmethod
    def name(params: str) -> str:
        return params.removesuffix("Params") + "Keywords"

    def twin(self, params: str) -> str | None:
        """The name of `params`' twin (made once), or None when its keys are snake_case
        already (then the method takes `params` itself)."""
        if params in self.made:
            return self.name(params)
        node = self.classes.get(params)
        if node is None:
            raise SystemExit(
                f"tools/generate.py: the params {params!r} are not a TypedDict class in "
                "schema.py; teach Keywords.twin() this shape"
            )
        body = [
            f"class {self.name(params)}(TypedDict):",
            f'    """`{params}` as keyword arguments: snake_case names, sent as the wire\'s camelCase."""',
            "",
        ]
        renamed = False
        for index, field in enumerate(node.body):
            if not (isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name)):
                continue
            wire = field.target.id
            python = python_name(wire)
            if wire_name(python) != wire:
                raise SystemExit(
                    f"tools/generate.py: the key {wire!r} of {params} does not survive "
                    f"snake_case and back ({python!r} -> {wire_name(python)!r}); "
                    "wire_params in client.py must learn it"
                )
            renamed |= python != wire
            named = {n.id for n in ast.walk(field.annotation) if isinstance(n, ast.Name)}
            self.used.update(named & self.top_level)
            self.typing.update(named - self.top_level)
            body.append(f"    {python}: {ast.unparse(field.annotation)}")
            following = node.body[index + 1] if index + 1 < len(node.body) else None
            if (
                isinstance(following, ast.Expr)
                and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)
            ):
                body.append(f'    """{escape_doc(following.value.value.strip())}"""')
        if not renamed:
            return None
        self.made[params] = "\n".join(body)
        return self.name(params)


def params_signature(
    method: str, params: dict[str, Any], keywords: Keywords
) -> tuple[list[str], str]:
    """(the parameter lists after `self`, overloads first, the expression sent as params).
    A method whose params have camelCase keys has two overloads: snake_case keywords, and the
    wire's camelCase ones (what callers wrote before the snake_case ones were declared)."""
    if params.get("type") == "null":
        return [""], "None"
    if "$ref" in params:
        wire = type_of(params)
        twin = keywords.twin(wire)
        if twin is None:
            return [f"**params: Unpack[{wire}]"], "params"
        return [f"**params: Unpack[{twin}]", f"**params: Unpack[{wire}]", "**params: Any"], "params"
    raise SystemExit(
        f"tools/generate.py: the params of {method!r} are not a definition or null; "
        "teach params_signature() this shape"
    )


def generate_tables(schema: dict[str, Any], types_text: str) -> str:
    used: set[str] = set()
    groups: dict[str, list[str]] = {}
    keywords = Keywords(types_text)
    for method, spec in schema["methods"].items():
        if method in LIFECYCLE_REQUESTS:
            # Their typed signatures are written in client.py; only their keywords are made here
            # (shutdown's `NoParams` is no class: it has none).
            if spec["params"].get("$ref") and type_of(spec["params"]) in keywords.classes:
                keywords.twin(type_of(spec["params"]))
            continue
        group, _, name = method.rpartition("/")
        signatures, sent = params_signature(method, spec["params"], keywords)
        result = type_of(spec["result"])
        description = describe(schema, method, spec)
        *overloads, implementation = signatures
        body = []
        for args in overloads:
            signature = ", ".join(p for p in ["self", args] if p)
            body += [
                "    @overload",
                f"    async def {python_name(name)}({signature}) -> {result}: ...",
            ]
        signature = ", ".join(p for p in ["self", implementation] if p)
        body += [
            f"    async def {python_name(name)}({signature}) -> {result}:",
            f'        """{escape_doc(description)}"""',
            f"        return cast({result!r}, await {'self._client' if group else 'self'}"
            f".request({method!r}, {sent}))",
        ]
        groups.setdefault(group, []).append("\n".join(body))
        used.update(re.findall(r"[A-Z]\w*", " ".join(signatures) + " " + result))

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
    imports = sorted((used & definitions) | keywords.used)
    typing_names = {"Any", "Unpack", "cast"} | (keywords.typing & set(typing.__all__))
    if keywords.made:
        typing_names |= {"TypedDict", "overload"}
    out = [
        "# Generated from protocol/schema.json by clients/python/tools/generate.py; do not edit.",
        f"# Regenerate with:\n#   {REGENERATE}",
        '"""The typed method, hook and notification tables of the protocol."""',
        "",
        "from __future__ import annotations",
        "",
        "from collections.abc import Awaitable, Callable",
        f"from typing import {', '.join(sorted(typing_names))}",
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
    for params in sorted(keywords.made):
        out += ["", "", keywords.made[params]]
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
    types_text = generate_types(args.schema)
    wanted = {TYPES_FILE: types_text, TABLES_FILE: generate_tables(schema, types_text)}
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

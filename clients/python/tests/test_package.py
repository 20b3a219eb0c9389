"""The package as shipped: generated modules in step with the schema, strict typing, the
quick start of the README running. (The wheel, built by maturin with the binary inside, is
tested installed: tests/packaging.rs.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

from conftest import ROOT

REGENERATE = "UPDATE_PYTHON_CLIENT=1 cargo test --test suite -- python_client::"


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, cwd=ROOT, timeout=300, env=env)


def test_the_generated_modules_are_what_the_schema_generates() -> None:
    check = run(sys.executable, "tools/generate.py", "--check")
    assert check.returncode == 0, check.stderr


def test_a_method_added_to_the_schema_without_regenerating_fails_naming_the_command(
    tmp_path: Path,
) -> None:
    schema = json.loads((ROOT.parent.parent / "protocol/schema.json").read_text())
    schema["methods"]["session/teleport"] = {
        "params": {"$ref": "#/definitions/SessionRef"},
        "result": {"$ref": "#/definitions/Empty"},
    }
    changed = tmp_path / "schema.json"
    changed.write_text(json.dumps(schema))
    check = run(sys.executable, "tools/generate.py", "--check", "--schema", str(changed))
    assert check.returncode == 1
    assert "src/pi_session/_tables.py is not what protocol/schema.json generates" in check.stderr
    assert REGENERATE in check.stderr


def test_the_package_its_example_and_its_tests_pass_mypy_strict() -> None:
    cache = ROOT.parent.parent / "target/python-client/mypy-cache"
    check = run(sys.executable, "-m", "mypy", "--cache-dir", str(cache))
    assert check.returncode == 0, check.stdout + check.stderr


def test_the_quick_start_runs(binary: str) -> None:
    env = {**os.environ, "PI_SESSION_BIN": binary, "PYTHONPATH": str(ROOT / "src")}
    quick = run(sys.executable, "examples/quickstart.py", env=env)
    assert quick.returncode == 0, quick.stderr
    assert quick.stdout == "2+2? / 1 left\n"


def test_the_generator_places_a_new_group_and_a_method_without_one() -> None:
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import generate
    finally:
        sys.path.pop(0)
    schema = json.loads((ROOT.parent.parent / "protocol/schema.json").read_text())
    schema["methods"]["ping"] = {"params": {"type": "null"}, "result": {"type": "null"}}
    schema["methods"]["server/statsNow"] = {
        "params": {"$ref": "#/definitions/SessionRef"},
        "result": True,
    }
    text = generate.generate_tables(schema, (ROOT / "src/pi_session/schema.py").read_text())
    compile(text, "_tables.py", "exec")
    assert "        self.server = ServerMethods(self)\n" in text
    # snake_case keywords first, the wire's camelCase ones still accepted.
    assert "    async def stats_now(self, **params: Unpack[SessionRefKeywords]) -> Any: ...\n" in text
    assert "    async def stats_now(self, **params: Unpack[SessionRef]) -> Any: ...\n" in text
    assert "    async def stats_now(self, **params: Any) -> Any:\n" in text
    assert '        return cast("None", await self.request("ping", None))\n' in text

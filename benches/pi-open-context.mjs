// Opens a session with pi's own SessionManager and builds its context: what the Rust
// benchmark compares against. Usage: node pi-open-context.mjs ORACLE_DIR FILE
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [oracleDir, file] = process.argv.slice(2);
const url = pathToFileURL(join(oracleDir, "node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js"));
const { SessionManager } = await import(url.href);
const started = performance.now();
const session = SessionManager.open(file);
const context = session.buildSessionContext();
const ms = performance.now() - started;
process.stdout.write(`${JSON.stringify({ ms, messages: context.messages.length })}\n`);

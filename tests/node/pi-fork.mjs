// Drives pi's own SessionManager forks, for the fork conformance tests.
//   node pi-fork.mjs ORACLE_DIR branched FILE ENTRY_ID OUT_DIR   -> createBranchedSession (pi's /fork, /clone)
//   node pi-fork.mjs ORACLE_DIR forkFrom SOURCE CWD OUT_DIR      -> SessionManager.forkFrom (pi --fork)
// Prints {"file": <new file or null>, "leafId": ...} on stdout; a library error: {"error": msg}, exit 1.
import { copyFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";

const [oracleDir, mode, ...args] = process.argv.slice(2);
const url = pathToFileURL(join(oracleDir, "node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js"));
const { SessionManager } = await import(url.href);

try {
	if (mode === "branched") {
		const [file, entryId, outDir] = args;
		// open() may migrate and rewrite its file: give it a copy.
		const copy = join(mkdtempSync(join(tmpdir(), "pi-fork-")), basename(file));
		copyFileSync(file, copy);
		const sm = SessionManager.open(copy, outDir);
		const newFile = sm.createBranchedSession(entryId);
		process.stdout.write(`${JSON.stringify({ file: newFile ?? null, leafId: sm.getLeafId() ?? null, source: copy })}\n`);
	} else if (mode === "forkFrom") {
		const [source, cwd, outDir] = args;
		const sm = SessionManager.forkFrom(source, cwd, outDir);
		process.stdout.write(`${JSON.stringify({ file: sm.getSessionFile(), leafId: sm.getLeafId() ?? null })}\n`);
	} else {
		throw new Error(`unknown mode ${mode}`);
	}
} catch (error) {
	process.stdout.write(`${JSON.stringify({ error: error.message })}\n`);
	process.exitCode = 1;
}

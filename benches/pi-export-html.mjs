// pi's own HTML export of a session file (pi's `--export`: exportFromFile of the oracle's
// pi-coding-agent 0.82.1), for benches/export_html.rs.
//   node pi-export-html.mjs ORACLE_DIR FILE OUT
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [oracle, file, out] = process.argv.slice(2);
const module = join(oracle, "node_modules/@earendil-works/pi-coding-agent/dist/core/export-html/index.js");
const { exportFromFile } = await import(pathToFileURL(module).href);
await exportFromFile(file, { outputPath: out });

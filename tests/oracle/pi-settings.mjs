// pi's SettingsManager (0.82.1) on settings files, for tests/settings_conformance.rs.
//
//   node pi-settings.mjs ORACLE_DIR JOBS_JSON -> one JSON array: for each job {cwd, agentDir},
//   {compaction: getCompactionSettings(), branchSummary: getBranchSummarySettings()} as pi
//   reads <agentDir>/settings.json and <cwd>/.pi/settings.json (SettingsManager.create).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [oracleDir, jobsFile] = process.argv.slice(2);
const dist = join(oracleDir, "node_modules/@earendil-works/pi-coding-agent/dist");
const { SettingsManager } = await import(pathToFileURL(join(dist, "core/settings-manager.js")).href);

// Anything the library logs must not end up in the JSON document on stdout.
console.log = (...args) => console.error(...args);

const results = [];
for (const { cwd, agentDir } of JSON.parse(readFileSync(jobsFile, "utf8"))) {
	const settings = SettingsManager.create(cwd, agentDir);
	results.push({
		compaction: settings.getCompactionSettings(),
		branchSummary: settings.getBranchSummarySettings(),
	});
}
process.stdout.write(`${JSON.stringify(results)}\n`);

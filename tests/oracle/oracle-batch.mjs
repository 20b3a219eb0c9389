// Runs many pi-oracle commands in one Node process, so that pi's packages load once.
//
//   node oracle-batch.mjs ORACLE_MJS JOBS_JSON
//
// JOBS_JSON is an array of {"args": [...], "stdout": "path"}. Each job runs the unmodified
// oracle script exactly as `node ORACLE_MJS ...args` would: the script is imported afresh (a new
// query string makes a new module instance) with process.argv set to the job's arguments. The
// job's stdout goes to its "stdout" file; stdout of this process is one JSON array with
// {"status", "stderr"} per job.

import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [oracle, jobsFile] = process.argv.slice(2);
const jobs = JSON.parse(readFileSync(jobsFile, "utf8"));
const oracleUrl = pathToFileURL(oracle).href;
const realArgv = process.argv.slice(0, 2);
const realStdout = process.stdout.write;
const realStderr = process.stderr.write;
const results = [];

for (const [index, job] of jobs.entries()) {
	const stdout = [];
	const stderr = [];
	process.stdout.write = (chunk) => stdout.push(String(chunk)) > 0;
	process.stderr.write = (chunk) => stderr.push(String(chunk)) > 0;
	process.argv = [...realArgv, ...job.args];
	process.exitCode = undefined;
	try {
		await import(`${oracleUrl}?job=${index}`);
	} finally {
		process.stdout.write = realStdout;
		process.stderr.write = realStderr;
	}
	writeFileSync(job.stdout, stdout.join(""));
	results.push({ status: process.exitCode ?? 0, stderr: stderr.join("") });
}

process.exitCode = 0;
process.stdout.write(`${JSON.stringify(results)}\n`);

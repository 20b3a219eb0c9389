//! The oracle's commands (`pi-oracle.mjs ARGS`) in batches: one Node process per batch through
//! `oracle-batch.mjs`, because loading pi's packages costs more than most commands.

use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use pi_session::json::{self, JsValue};

use super::{Oracle, path_str, root};

/// What one oracle command printed and how it ended.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// What the command was, for messages.
    pub what: String,
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Outcome {
    /// The JSON document on stdout; panics with the command's stderr when there is none.
    pub fn doc(&self) -> JsValue {
        assert_eq!(
            self.status, 0,
            "{} failed (exit {}): {}",
            self.what, self.status, self.stderr
        );
        json::parse(&self.stdout)
            .unwrap_or_else(|e| panic!("{} printed no JSON document ({e})", self.what))
    }

    /// Its stdout when it succeeded, else its stderr.
    pub fn result(self) -> Result<String, String> {
        if self.status == 0 {
            Ok(self.stdout)
        } else {
            Err(self.stderr)
        }
    }
}

/// A batch that is running; [`Pending::wait`] collects its outcomes in job order.
pub struct Pending {
    child: Child,
    jobs: Vec<Vec<String>>,
    dir: PathBuf,
}

impl Oracle {
    /// Starts `pi-oracle.mjs ARGS` for every job, one after the other in one Node process.
    pub fn start(&self, jobs: Vec<Vec<String>>) -> Pending {
        static BATCHES: AtomicUsize = AtomicUsize::new(0);
        let n = BATCHES.fetch_add(1, Ordering::Relaxed);
        let dir = root().join(format!("target/oracle-batches/{}-{n}", std::process::id()));
        if dir.exists() {
            std::fs::remove_dir_all(&dir).unwrap();
        }
        std::fs::create_dir_all(&dir).unwrap();
        let list: Vec<JsValue> = jobs
            .iter()
            .enumerate()
            .map(|(i, args)| {
                let mut job = json::JsObject::new();
                job.insert(
                    "args".into(),
                    JsValue::Array(args.iter().map(|a| JsValue::from(a.as_str())).collect()),
                );
                job.insert(
                    "stdout".into(),
                    JsValue::from(path_str(&dir.join(format!("{i}.out")))),
                );
                JsValue::Object(job)
            })
            .collect();
        let jobs_file = dir.join("jobs.json");
        std::fs::write(&jobs_file, JsValue::Array(list).stringify()).unwrap();
        let child = self
            .command("oracle-batch.mjs")
            .arg(self.dir().join("pi-oracle.mjs"))
            .arg(&jobs_file)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("node runs");
        Pending { child, jobs, dir }
    }

    /// The commands run to the end: each job's outcome, in order.
    pub fn run(&self, jobs: Vec<Vec<String>>) -> Vec<Outcome> {
        if jobs.is_empty() {
            return Vec::new();
        }
        self.start(jobs).wait()
    }
}

impl Pending {
    pub fn wait(self) -> Vec<Outcome> {
        let output = self.child.wait_with_output().expect("oracle batch runs");
        assert!(
            output.status.success(),
            "oracle batch failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        let summary = json::parse_bytes(&output.stdout).expect("oracle batch prints JSON");
        let results = summary.as_array().expect("oracle batch prints an array");
        assert_eq!(results.len(), self.jobs.len(), "one result per oracle job");
        let outcomes = results
            .iter()
            .zip(&self.jobs)
            .enumerate()
            .map(|(i, (result, args))| Outcome {
                what: format!("pi-oracle.mjs {}", args.join(" ")),
                status: result.get("status").and_then(JsValue::as_f64).unwrap() as i32,
                stdout: std::fs::read_to_string(self.dir.join(format!("{i}.out"))).unwrap(),
                stderr: result
                    .get("stderr")
                    .and_then(JsValue::as_str)
                    .unwrap()
                    .into(),
            })
            .collect();
        std::fs::remove_dir_all(&self.dir).unwrap();
        outcomes
    }
}

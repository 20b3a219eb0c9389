//! The oracle (`pi-oracle.mjs`, pi's published JavaScript), run in batches: one Node process
//! per batch through `oracle_batch.mjs`, because loading pi's packages costs more than most
//! commands.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use pi_session::format::json::{self, JsValue};

use crate::env::{self, Outcome};

pub struct Oracle {
    script: PathBuf,
}

/// A batch that is running; [`Pending::wait`] collects its outcomes in job order.
pub struct Pending {
    child: Child,
    jobs: Vec<Vec<String>>,
    dir: PathBuf,
}

impl Oracle {
    pub fn new(dir: PathBuf) -> Self {
        Oracle {
            script: dir.join("pi-oracle.mjs"),
        }
    }

    /// Starts `node pi-oracle.mjs ARGS` for every job, one after the other in one process.
    pub fn start(&self, jobs: Vec<Vec<String>>) -> Pending {
        static BATCHES: AtomicUsize = AtomicUsize::new(0);
        let n = BATCHES.fetch_add(1, Ordering::Relaxed);
        let dir = env::fresh_dir(&format!("oracle-batch-{}-{n}", std::process::id()));
        let list: Vec<JsValue> = jobs
            .iter()
            .enumerate()
            .map(|(i, args)| {
                let mut job = json::JsObject::new();
                job.insert(
                    "args".into(),
                    JsValue::Array(args.iter().map(|a| JsValue::from(a.as_str())).collect()),
                );
                job.insert("stdout".into(), path_value(&dir.join(format!("{i}.out"))));
                JsValue::Object(job)
            })
            .collect();
        let jobs_file = dir.join("jobs.json");
        std::fs::write(&jobs_file, JsValue::Array(list).stringify()).unwrap();
        let child = Command::new(env::node())
            .arg(env::root().join("tests/conformance/oracle_batch.mjs"))
            .arg(&self.script)
            .arg(&jobs_file)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("node runs");
        Pending { child, jobs, dir }
    }
}

impl Pending {
    pub fn wait(self) -> Vec<Outcome> {
        let output = self.child.wait_with_output().expect("oracle batch runs");
        assert!(
            output.status.success(),
            "oracle batch failed: {}",
            output.status
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

fn path_value(path: &Path) -> JsValue {
    JsValue::from(path.to_str().expect("UTF-8 path"))
}

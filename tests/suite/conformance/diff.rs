//! Comparing documents and collecting every mismatch of a test before failing it.

use pi_session::json::JsValue;

/// How many differing places one comparison reports.
const MAX_PLACES: usize = 8;

/// The mismatches found so far; [`Mismatches::finish`] fails the test when there are any.
#[derive(Default)]
pub struct Mismatches {
    found: Vec<String>,
    compared: usize,
}

impl Mismatches {
    /// Records where `ours` and `oracle` differ (parsed JSON, numbers as f64, key order
    /// ignored).
    pub fn compare(&mut self, what: &str, ours: &JsValue, oracle: &JsValue) {
        self.compared += 1;
        let mut places = Vec::new();
        differences("$", ours, oracle, &mut places);
        if !places.is_empty() {
            self.found
                .push(format!("{what}:\n    {}", places.join("\n    ")));
        }
    }

    /// Records a failed expectation.
    pub fn check(&mut self, ok: bool, what: impl FnOnce() -> String) {
        self.compared += 1;
        if !ok {
            self.found.push(what());
        }
    }

    /// Two lists of lines must be equal.
    pub fn compare_lines(&mut self, what: &str, ours: &[String], oracle: &[String]) {
        self.compared += 1;
        let mut places: Vec<String> = ours
            .iter()
            .zip(oracle)
            .enumerate()
            .filter(|(_, (a, b))| a != b)
            .take(MAX_PLACES)
            .map(|(i, (a, b))| format!("line {}:\n      ours:   {a}\n      oracle: {b}", i + 1))
            .collect();
        if ours.len() != oracle.len() {
            places.push(format!(
                "ours has {} lines, the oracle {}",
                ours.len(),
                oracle.len()
            ));
        }
        if !places.is_empty() {
            self.found
                .push(format!("{what}:\n    {}", places.join("\n    ")));
        }
    }

    /// Fails with every mismatch, or reports how much was compared.
    pub fn finish(self, test: &str) {
        assert!(
            self.found.is_empty(),
            "{test}: {} of {} comparisons differ from the oracle:\n\n{}",
            self.found.len(),
            self.compared,
            self.found.join("\n\n")
        );
        eprintln!("{test}: {} comparisons agree", self.compared);
        crate::support::count(test, self.compared);
    }
}

fn differences(path: &str, ours: &JsValue, oracle: &JsValue, out: &mut Vec<String>) {
    if out.len() >= MAX_PLACES || ours == oracle {
        return;
    }
    match (ours, oracle) {
        (JsValue::Object(a), JsValue::Object(b)) => {
            for (key, value) in a {
                let place = format!("{path}.{}", key.escaped());
                match b.get(key) {
                    Some(other) => differences(&place, value, other, out),
                    None => out.push(format!("{place}: only ours has it: {}", show(value))),
                }
            }
            for (key, value) in b.iter().filter(|(key, _)| !a.contains_key(*key)) {
                out.push(format!(
                    "{path}.{}: only the oracle has it: {}",
                    key.escaped(),
                    show(value)
                ));
            }
        }
        (JsValue::Array(a), JsValue::Array(b)) => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                differences(&format!("{path}[{i}]"), x, y, out);
            }
            if a.len() != b.len() {
                out.push(format!(
                    "{path}: ours has {} items, the oracle {}",
                    a.len(),
                    b.len()
                ));
            }
        }
        _ => out.push(format!(
            "{path}: ours {} / oracle {}",
            show(ours),
            show(oracle)
        )),
    }
    if out.len() > MAX_PLACES {
        out.truncate(MAX_PLACES);
    }
}

fn show(value: &JsValue) -> String {
    let text = value.stringify();
    match text.char_indices().nth(160) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

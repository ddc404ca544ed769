//! What `dbio job from-… -o FILE` prints once the job is written: a summary of the job —
//! where it was written, its data set and one row a class (request size, sessions, rate,
//! limits, the report it came from) — as a report, or with `--json` as `dbio.job-from.v1`
//! (docs/outputs.md). It is read back from the job file's own text, so its figures are the
//! file's, as `dbio run --job` will read them.

use std::path::Path;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::report::sections::{Block, Column, Level, Report, Section, Table};

/// What `dbio job from-… -o FILE --json` prints.
#[derive(Debug, Serialize)]
pub struct Summary {
    pub schema: &'static str,
    /// The job file written.
    pub job_file: String,
    /// The job's `[dataset]`, as in the file.
    pub dataset: serde_json::Value,
    /// The job's classes, each as its `[[class]]` in the file (with `limits` and `observed`).
    pub classes: Vec<serde_json::Value>,
}

/// The summary of the job file `text`, written to `path`.
pub fn summary(text: &str, path: &Path) -> Result<Summary> {
    let job: toml::Table = text
        .parse()
        .map_err(|e| Error::other(format!("the job written cannot be read back: {e}")))?;
    let json = |v: &toml::Value| serde_json::to_value(v).unwrap_or(serde_json::Value::Null);
    Ok(Summary {
        schema: "dbio.job-from.v1",
        job_file: path.display().to_string(),
        dataset: job.get("dataset").map_or(serde_json::Value::Null, json),
        classes: (job.get("class").and_then(|c| c.as_array()))
            .map(|a| a.iter().map(json).collect())
            .unwrap_or_default(),
    })
}

/// The summary as a report: the file and data set, then a table of the classes.
pub fn report(s: &Summary) -> Report {
    let text = |v: &serde_json::Value| match v {
        serde_json::Value::Null => "-".to_string(),
        serde_json::Value::String(s) => s.clone(),
        v => v.to_string(),
    };
    let field = |k: &str| text(s.dataset.get(k).unwrap_or(&serde_json::Value::Null));
    let lead = Section::new("job", "")
        .level(Level::Lead)
        .with(Block::Fields(vec![
            ("Job file".into(), s.job_file.clone()),
            ("Data set".into(), field("target")),
            ("Size".into(), field("size")),
            ("Block size".into(), field("block_size")),
        ]));
    let mut t = Table::new(vec![
        Column::left("Class", 24),
        Column::right("Size", 6),
        Column::right("Sessions", 8),
        Column::right("Rate (/s)", 10),
        Column::right("Mean", 8),
        Column::right("p99", 8),
        Column::left("From", 30),
    ]);
    let null = serde_json::Value::Null;
    for c in &s.classes {
        let get = |path: &[&str]| {
            let v = path.iter().try_fold(c, |v, k| v.get(*k)).unwrap_or(&null);
            text(v)
        };
        t.row(vec![
            get(&["name"]).into(),
            get(&["size"]).into(),
            get(&["sessions"]).into(),
            get(&["rate"]).into(),
            get(&["limits", "mean"]).into(),
            get(&["limits", "p99"]).into(),
            get(&["observed", "from"]).into(),
        ]);
    }
    let classes = Section::new("classes", format!("Classes ({})", s.classes.len()))
        .with(Block::Table(t))
        .with(Block::Note(format!(
            "Run it with `dbio run --job {}`; every figure in the file names the report line it came from.",
            s.job_file
        )));
    Report {
        title: "Job file written by dbio job".into(),
        sections: vec![lead, classes],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_has_the_figures_of_the_file() {
        let text = "[dataset]\ntarget = \"d\\u001Bx\"\nsize = \"4G\"\nblock_size = \"8K\"\n\n\
                    [[class]]\nname = \"db file sequential read\"\nsize = \"8K\"\nsessions = 3\nrate = 1250.0\n\
                    [class.limits]\np99 = \"2.50ms\"\n[class.observed]\nfrom = \"awr.txt line 12\"\n";
        let s = summary(text, Path::new("job.toml")).unwrap();
        assert_eq!(s.dataset["target"], "d\u{1b}x");
        assert_eq!(s.classes.len(), 1);
        assert_eq!(s.classes[0]["sessions"], 3);
        let out = crate::report::summary::text(&report(&s));
        assert!(out.contains("db file sequential read"), "{out}");
        assert!(out.contains("1250.0") && out.contains("2.50ms"), "{out}");
        assert!(out.contains("awr.txt line 12"), "{out}");
        assert!(out.contains("d\\x1bx") || !out.contains('\u{1b}'), "{out}");
    }
}

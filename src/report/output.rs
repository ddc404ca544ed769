//! The one way a command's result reaches stdout. Every command builds its result twice
//! over the same figures — a [`Report`] (sections, rendered as text or Markdown) and a JSON
//! value (its shape documented per command in docs/outputs.md) — and prints it with
//! [`Output::emit`], chosen once from `--json` and `--format`. A document that is itself
//! the result (a job file, the man page, a completion script) goes out as it is through
//! [`document`]. Nothing else in dbio writes to stdout but the live progress line
//! (`crate::progress`), and prompts go to the terminal.
//!
//! ```ignore
//! let out = Output::new(args.json, args.format);
//! out.emit(&my_report(&found), &found)?; // found: impl Serialize
//! ```

use std::io::Write;

use serde::Serialize;

use super::{Format, Report};
use crate::error::{Error, Result};

/// How a command prints its result, chosen once from `--json` and `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// The command's report, in text (as `summary.txt`) or Markdown.
    Report(Format),
    /// The command's JSON value, pretty-printed on its own.
    Json,
}

impl Output {
    /// `--json` wins over `--format` (which only chooses how a report is written).
    pub fn new(json: bool, format: Format) -> Output {
        if json {
            Output::Json
        } else {
            Output::Report(format)
        }
    }

    /// Whether the JSON value is what is printed.
    pub fn is_json(self) -> bool {
        self == Output::Json
    }

    /// Prints a command's result on stdout: `report` rendered in the chosen format, or
    /// `json` pretty-printed and ended by a newline. Both hold the same figures; only the
    /// one chosen is written. A document already written as JSON (a stored result.json)
    /// is passed as a [`serde_json::value::RawValue`] and printed as it is. A stdout that
    /// closed (a pipe read no further) ends the output quietly, as a reader stopping
    /// early is not a failure of the command.
    pub fn emit<J: Serialize + ?Sized>(self, report: &Report, json: &J) -> Result<()> {
        document(self.text(report, json)?.as_bytes());
        Ok(())
    }

    /// What [`Output::emit`] prints.
    fn text<J: Serialize + ?Sized>(self, report: &Report, json: &J) -> Result<String> {
        Ok(match self {
            Output::Report(format) => super::render(report, format),
            Output::Json => {
                serde_json::to_string_pretty(json)
                    .map_err(|e| Error::other(format!("cannot serialize the output: {e}")))?
                    + "\n"
            }
        })
    }
}

/// Writes `bytes` to stdout as they are: a result that is a document of its own (a job
/// file, the man page, a completion script), or a report [`Output::emit`] rendered. A
/// closed stdout ends it quietly.
pub fn document(bytes: &[u8]) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(bytes);
    let _ = out.flush();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::sections::{Block, Level, Section};

    #[test]
    fn json_wins_over_the_format() {
        assert_eq!(Output::new(true, Format::Md), Output::Json);
        assert_eq!(Output::new(false, Format::Md), Output::Report(Format::Md));
        assert!(!Output::new(false, Format::Text).is_json());
    }

    #[test]
    fn each_output_prints_its_own_form() {
        let r = Report {
            title: String::new(),
            sections: vec![
                Section::new("x", "")
                    .level(Level::Lead)
                    .with(Block::Note("one line".into())),
            ],
        };
        let json = serde_json::json!({"b": 1});
        let text = |o: Output| o.text(&r, &json).unwrap();
        assert_eq!(text(Output::Report(Format::Text)), "one line\n");
        assert_eq!(text(Output::Report(Format::Md)), "one line\n");
        assert_eq!(text(Output::Json), "{\n  \"b\": 1\n}\n");
        // A stored result.json is printed as it was written, keys in its order.
        let stored = "{\n  \"b\": 1,\n  \"a\": [\n    2\n  ]\n}\n";
        let raw: Box<serde_json::value::RawValue> = serde_json::from_str(stored).unwrap();
        assert_eq!(Output::Json.text(&r, &raw).unwrap(), stored);
    }
}

//! The one way dbio writes a job file — `--save-job`, the job a run across hosts sends each
//! host, the wizard's, and `dbio job from-*`'s: tables and `key = value` lines in the order
//! given, each value encoded by the `toml` crate (a string quoted and escaped as TOML says,
//! so any text — control characters, quotes, backslashes, line breaks — reads back as it
//! was), each line with an optional comment (a job made from a report cites the line each
//! figure came from). Comments are made one line each: a control character in one is a space.

/// A value of a job file.
#[derive(Debug, Clone)]
pub enum Value<'a> {
    /// Text: a path, a name, a size or a duration as the option writes it.
    Str(&'a str),
    /// A whole number (a seed may be above `i64::MAX`: written as its digits, as the job
    /// reader takes it).
    Int(u64),
    /// A number: written as Rust writes an `f64` (`80`, `12.5`), a TOML number either way.
    Num(f64),
    Bool(bool),
    /// Any TOML value (weighted sizes, an inline table).
    Toml(toml::Value),
}

impl Value<'_> {
    fn write(&self, o: &mut String) {
        match self {
            Value::Str(s) => o.push_str(&toml::Value::String(s.to_string()).to_string()),
            Value::Int(n) => o.push_str(&n.to_string()),
            Value::Num(v) if v.is_finite() => o.push_str(&v.to_string()),
            Value::Num(v) => o.push_str(&toml::Value::Float(*v).to_string()),
            Value::Bool(b) => o.push_str(if *b { "true" } else { "false" }),
            Value::Toml(v) => o.push_str(&v.to_string()),
        }
    }
}

/// A job file being written.
#[derive(Debug, Clone, Default)]
pub struct JobToml {
    text: String,
}

impl JobToml {
    pub fn new() -> JobToml {
        JobToml::default()
    }

    /// A comment: `# ` and each line of `text`.
    pub fn comment(&mut self, text: &str) {
        for line in text.split('\n') {
            self.text.push_str("# ");
            self.text.push_str(&one_line(line));
            self.text.push('\n');
        }
    }

    /// An empty line, between tables.
    pub fn blank(&mut self) {
        self.text.push('\n');
    }

    /// `[name]`: the lines that follow are its keys.
    pub fn table(&mut self, name: &str) {
        debug_assert!(bare(name), "{name}");
        self.text.push('[');
        self.text.push_str(name);
        self.text.push_str("]\n");
    }

    /// `[[name]]`: one more element of an array of tables (a class).
    pub fn array_table(&mut self, name: &str) {
        debug_assert!(bare(name), "{name}");
        self.text.push_str("[[");
        self.text.push_str(name);
        self.text.push_str("]]\n");
    }

    /// `key = value`, then `  # comment` unless the comment is empty.
    pub fn set(&mut self, key: &str, value: Value<'_>, comment: &str) {
        debug_assert!(bare(key), "{key}");
        self.text.push_str(key);
        self.text.push_str(" = ");
        value.write(&mut self.text);
        if !comment.is_empty() {
            self.text.push_str("  # ");
            self.text.push_str(&one_line(comment));
        }
        self.text.push('\n');
    }

    /// Adds what `other` wrote after what this one did (a block written beside the tables,
    /// placed at the end).
    pub fn append(&mut self, other: JobToml) {
        self.text.push_str(&other.text);
    }

    /// The file's text.
    pub fn finish(self) -> String {
        self.text
    }
}

/// Whether `name` is a TOML bare key (dotted for a sub-table): the keys and tables are
/// dbio's own.
fn bare(name: &str) -> bool {
    !name.is_empty()
        && name.split('.').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        })
}

/// `s` as one comment line: every control character a space.
fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Strings no hand-written quoting gets right, read back by the toml crate as written.
    const HOSTILE: &[&str] = &[
        "data\u{1b}x",
        "tab\there",
        "a\"quote",
        "back\\slash\\",
        "two\nlines",
        "cr\rlf",
        "'''triple single'''",
        "\"\"\"triple double\"\"\"",
        "# not a comment",
        "key = value",
        "[table]",
        "[[class]]",
        "ünïcödé ✓ 日本",
        "\u{7f}\u{85}\u{202e}bidi",
        "",
        " spaces ",
        "mixed 'single' and \"double\"",
    ];

    #[test]
    fn every_string_reads_back_as_it_was() {
        for s in HOSTILE {
            let mut w = JobToml::new();
            w.comment(&format!("made from {s}"));
            w.table("dataset");
            w.set("target", Value::Str(s), s);
            w.array_table("class");
            w.set("name", Value::Str(s), "");
            w.table("class.observed");
            w.set("from", Value::Str(s), "why\nnot");
            let text = w.finish();
            let v: toml::Value =
                toml::from_str(&text).unwrap_or_else(|e| panic!("{s:?}: {e}\n{text}"));
            assert_eq!(v["dataset"]["target"].as_str(), Some(*s), "{text}");
            assert_eq!(v["class"][0]["name"].as_str(), Some(*s), "{text}");
            assert_eq!(
                v["class"][0]["observed"]["from"].as_str(),
                Some(*s),
                "{text}"
            );
        }
    }

    #[test]
    fn numbers_and_switches_are_bare() {
        let mut w = JobToml::new();
        w.table("run");
        w.set("seed", Value::Int(u64::MAX), "");
        w.set("rate", Value::Num(12.5), "requests/s");
        w.set("whole", Value::Num(80.0), "");
        w.set("verify", Value::Bool(true), "");
        let text = w.finish();
        assert_eq!(
            text,
            "[run]\nseed = 18446744073709551615\nrate = 12.5  # requests/s\nwhole = 80\nverify = true\n"
        );
    }
}

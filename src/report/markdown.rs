//! Any report ([`crate::report::sections::Report`]) as Markdown (`--format md`): the title
//! and sections as headings, fields as a two-column table, tables as pipe tables aligned as
//! their columns are, notes as paragraphs, cautions as quoted warnings, lists as bullets
//! (an outline's details as bullets under their item),
//! the storage tree in a code block and the options as fenced JSON. Charts are left out:
//! the tables beside them hold their figures. Only syntax lives here, as in the text
//! renderer ([`crate::report::summary`]): the same sections, the same figures.

use std::fmt::Write;

use super::sections::{Align, Block, Level, Report, Table};
use crate::units::shown;

/// A report as Markdown; every text in it is [`shown`] (control characters escaped).
pub fn markdown(report: &Report) -> String {
    let mut o = String::with_capacity(8192);
    if !report.title.is_empty() {
        let _ = writeln!(o, "# {}", inline(&report.title));
    }
    for s in &report.sections {
        let blocks: Vec<&Block> = (s.blocks.iter())
            .filter(|b| !matches!(b, Block::Chart(_)))
            .collect();
        if blocks.is_empty() {
            continue;
        }
        match s.level {
            Level::Lead => {}
            // A section without a title is a paragraph of its own.
            _ if s.title.is_empty() => {}
            Level::Main => {
                let _ = write!(o, "\n## {}\n", inline(&s.title));
            }
            Level::Sub => {
                let _ = write!(o, "\n### {}\n", inline(&s.title));
            }
        }
        for b in blocks {
            if !o.is_empty() {
                o.push('\n');
            }
            block(&mut o, b);
        }
    }
    o
}

fn block(o: &mut String, b: &Block) {
    match b {
        Block::Fields(fields) => {
            o.push_str("| | |\n|:--|:--|\n");
            for (k, v) in fields {
                let _ = writeln!(o, "| {} | {} |", cell(k), cell(v));
            }
        }
        Block::Table(t) => table(o, t),
        Block::Note(n) => {
            let _ = writeln!(o, "{}", inline(n));
        }
        Block::Caution(c) => {
            let _ = writeln!(o, "> **Warning:** {}", inline(c));
        }
        Block::List { items, .. } => {
            for i in items {
                let _ = writeln!(o, "- {}", inline(i));
            }
        }
        Block::Outline(items) => {
            for i in items {
                let _ = writeln!(o, "- {}", inline(&i.text));
                for d in &i.details {
                    let _ = writeln!(o, "  - {}", inline(d));
                }
            }
        }
        Block::Tree(t) => fenced(o, "", t),
        Block::Options(v) => {
            let json = serde_json::to_string_pretty(v).unwrap_or_default();
            fenced(o, "json", &json);
        }
        Block::Chart(_) => {}
    }
}

/// A pipe table: the header, the alignment row, the rows. Columns marked as detail are left
/// out, as in text; a short row's last cell goes in its place and the cells it spans stay
/// empty (Markdown cannot span).
fn table(o: &mut String, t: &Table) {
    let visible: Vec<usize> = (0..t.columns.len())
        .filter(|&i| !t.columns[i].detail)
        .collect();
    if visible.is_empty() {
        return;
    }
    o.push('|');
    for &i in &visible {
        let _ = write!(o, " {} |", cell(&t.columns[i].label));
    }
    o.push_str("\n|");
    for &i in &visible {
        o.push_str(match t.columns[i].align {
            Align::Right => "--:|",
            Align::Left | Align::Label => ":--|",
        });
    }
    o.push('\n');
    for row in &t.rows {
        // A row shorter than the columns spans its last cell over the rest.
        let spans = row.len() < t.columns.len();
        let last = row.len().saturating_sub(1);
        o.push('|');
        let mut spanned = false;
        for &i in &visible {
            let text = match row.get(i) {
                Some(c) if !(spans && i == last) => cell(&c.text),
                _ if spans && i >= last && !spanned => {
                    spanned = true;
                    row.get(last).map(|c| cell(&c.text)).unwrap_or_default()
                }
                _ => String::new(),
            };
            let _ = write!(o, " {text} |");
        }
        o.push('\n');
    }
}

/// A code block fenced by more backticks than any run of them in `text`.
fn fenced(o: &mut String, info: &str, text: &str) {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let _ = writeln!(o, "{fence}{info}");
    for l in text.lines() {
        let _ = writeln!(o, "{}", shown(l));
    }
    let _ = writeln!(o, "{fence}");
}

/// Text on one line of Markdown: control characters escaped, a line break a space, and
/// what would start markup (`<`, `*`, `_`, `` ` ``, `[`, `\`) escaped.
fn inline(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in shown(&s.replace('\n', " ")).chars() {
        if matches!(c, '\\' | '<' | '*' | '_' | '`' | '[' | ']') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Text in a table cell: as [`inline`], with `|` escaped.
fn cell(s: &str) -> String {
    inline(s).replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::sections::{Cell, Column, Item, Section, cells};

    #[test]
    fn every_block_has_its_syntax() {
        let mut t = Table::new(vec![
            Column::label("", 10),
            Column::right("IOPS", 8),
            Column::right("hidden", 4).detail(),
            Column::left("Note", 4),
        ]);
        t.row(cells!["Reads", "1,234.50", "x", "ok"]);
        t.row(vec![Cell::from("Spans"), Cell::from("a | b")]);
        let r = Report {
            title: "dbio — test".into(),
            sections: vec![
                Section::new("lead", "Lead")
                    .level(Level::Lead)
                    .with(Block::Fields(vec![("Target".into(), "/data".into())])),
                Section::new("t", "Figures")
                    .with(Block::Table(t))
                    .with(Block::Note("a_b *c*".into()))
                    .with(Block::Caution("slow".into()))
                    .with(Block::List {
                        items: vec!["one".into()],
                        alert: false,
                    })
                    .with(Block::Tree("a\n└─ ```b".into())),
                Section::new("sub", "Part")
                    .level(Level::Sub)
                    .with(Block::Options(serde_json::json!({"sessions": 4}))),
            ],
        };
        let md = markdown(&r);
        let want = "# dbio — test\n\n| | |\n|:--|:--|\n| Target | /data |\n\n## Figures\n\n\
                    |  | IOPS | Note |\n|:--|--:|:--|\n| Reads | 1,234.50 | ok |\n| Spans | a \\| b |  |\n\n\
                    a\\_b \\*c\\*\n\n> **Warning:** slow\n\n- one\n\n````\na\n└─ ```b\n````\n\n\
                    ### Part\n\n```json\n{\n  \"sessions\": 4\n}\n```\n";
        assert_eq!(md, want, "\n{md}");
    }

    #[test]
    fn an_outline_and_a_section_without_a_title() {
        let r = Report {
            title: String::new(),
            sections: vec![
                Section::new("a", "Data sets").with(Block::Outline(vec![Item {
                    text: "/d: ready".into(),
                    details: vec!["STALE: x_y".into()],
                }])),
                Section::new("v", "").with(Block::Note("Nothing needs attention.".into())),
            ],
        };
        assert_eq!(
            crate::report::summary::text(&r),
            "\nData sets\n  /d: ready\n    STALE: x_y\n\nNothing needs attention.\n"
        );
        assert_eq!(
            markdown(&r),
            "\n## Data sets\n\n- /d: ready\n  - STALE: x\\_y\n\nNothing needs attention.\n"
        );
    }

    /// The figures of a text: every run of digits (with `,` and `.` inside), in order.
    fn figures(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut cur = String::new();
        let chars: Vec<char> = text.chars().collect();
        for (i, &c) in chars.iter().enumerate() {
            let inner = matches!(c, ',' | '.')
                && !cur.is_empty()
                && chars.get(i + 1).is_some_and(|n| n.is_ascii_digit());
            if c.is_ascii_digit() || inner {
                cur.push(c);
            } else if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        }
        if !cur.is_empty() {
            out.push(cur);
        }
        out
    }

    #[test]
    fn markdown_has_the_figures_of_text() {
        let r = crate::report::fixture::run_result(
            12,
            &["db file sequential read", "log file parallel write"],
            true,
        );
        let report = crate::report::sections::run(&r);
        let text = crate::report::render(&report, crate::report::Format::Text);
        let md = crate::report::render(&report, crate::report::Format::Md);
        // The options block is Markdown's alone (text leaves it out, as it folds away in HTML).
        let mut md_only = String::new();
        let mut in_json = false;
        for l in md.lines() {
            if l.starts_with("```json") {
                in_json = true;
            } else if in_json && l.starts_with("```") {
                in_json = false;
            } else if !in_json {
                md_only.push_str(l);
                md_only.push('\n');
            }
        }
        let (mut a, mut b) = (figures(&text), figures(&md_only));
        assert!(a.len() > 50, "a real report: {text}");
        a.sort();
        b.sort();
        assert_eq!(a, b, "\n{text}\n----\n{md}");
    }
}

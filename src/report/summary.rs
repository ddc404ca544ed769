//! `summary.txt` and what `dbio show` and `dbio compare` print: the sections of a report
//! ([`crate::report::sections`]) as fixed-width text that reads like a database performance
//! report (docs/outputs.md). Only syntax lives here: which rows and figures a section has is decided
//! there, once for every format.

use std::fmt::Write;

use super::result::RunResult;
use super::sections::{self, Align, Block, Level, Report, Table};
use crate::units::shown;
pub use crate::units::thousands;

/// The summary of one run.
pub fn render(r: &RunResult) -> String {
    text(&sections::run(r))
}

/// A report as text; every text in it is [`shown`] (names, paths and messages from files
/// print their control characters escaped). The first section ([`Level::Lead`]) follows the title directly; every
/// other one starts after a blank line with its title (if it has one) — or, when its first
/// table has an empty top-left cell, with the title in that cell. An outline's items are
/// indented by two spaces, their details by four. Charts and the folded list of options
/// are left out: text cannot draw them.
pub fn text(report: &Report) -> String {
    let mut o = String::with_capacity(8192);
    // A listing (`dbio runs`) has no title: its heading line comes first.
    if !report.title.is_empty() {
        let _ = writeln!(o, "{}", shown(&report.title));
    }
    for s in &report.sections {
        let blocks: Vec<&Block> = (s.blocks.iter())
            .filter(|b| !matches!(b, Block::Chart(_) | Block::Options(_)))
            .collect();
        if blocks.is_empty() {
            continue;
        }
        if s.level != Level::Lead {
            o.push('\n');
        }
        let mut title = (s.level != Level::Lead && !s.title.is_empty()).then_some(s.title.as_str());
        let mut after_table = false;
        for b in blocks {
            if after_table {
                o.push('\n');
            }
            after_table = matches!(b, Block::Table(_));
            let corner = match b {
                Block::Table(t) if t.columns.first().is_some_and(|c| c.label.is_empty()) => {
                    title.take()
                }
                _ => None,
            };
            if let Some(t) = title.take() {
                let _ = writeln!(o, "{}", shown(t));
            }
            match b {
                Block::Fields(fields) => {
                    for (k, v) in fields {
                        let _ = writeln!(o, "{}: {}", shown(k), shown(v));
                    }
                }
                Block::Table(t) => table(&mut o, t, corner),
                Block::Note(n) => {
                    let _ = writeln!(o, "{}", shown(n));
                }
                Block::Caution(c) => {
                    let _ = writeln!(o, "Warning: {}", shown(c));
                }
                Block::List { items, .. } => {
                    for i in items {
                        let _ = writeln!(o, "- {}", shown(i));
                    }
                }
                Block::Outline(items) => {
                    for i in items {
                        let _ = writeln!(o, "  {}", shown(&i.text));
                        for d in &i.details {
                            let _ = writeln!(o, "    {}", shown(d));
                        }
                    }
                }
                Block::Tree(t) => {
                    for l in t.lines() {
                        let _ = writeln!(o, "{}", shown(l));
                    }
                }
                Block::Options(_) | Block::Chart(_) => {}
            }
        }
    }
    o
}

/// A table in fixed-width columns: the header, a rule, the rows. Columns marked as detail
/// are left out; `corner` (the section's title) fills an empty top-left cell.
fn table(o: &mut String, t: &Table, corner: Option<&str>) {
    let visible: Vec<usize> = (0..t.columns.len())
        .filter(|&i| !t.columns[i].detail)
        .collect();
    // A row shorter than the columns spans its last cell over the rest.
    let fixed = |row: &[sections::Cell]| {
        if row.len() < t.columns.len() {
            row.len().saturating_sub(1)
        } else {
            row.len()
        }
    };
    let text = |i: usize, s: &str| -> String {
        if t.columns[i].align == Align::Label && !s.is_empty() {
            format!("{}:", shown(s))
        } else {
            shown(s).into_owned()
        }
    };
    let label = |i: usize| match (i, corner) {
        (0, Some(c)) => shown(c).into_owned(),
        _ => shown(&t.columns[i].label).into_owned(),
    };
    let mut widths: Vec<usize> = t.columns.iter().map(|c| c.width).collect();
    for &i in &visible {
        widths[i] = widths[i].max(label(i).chars().count());
        for row in t.rows.iter().filter(|row| i < fixed(row)) {
            widths[i] = widths[i].max(text(i, &row[i].text).chars().count());
        }
    }
    let line = |cells: Vec<(usize, String)>| -> String {
        let mut l = String::new();
        for (n, (i, s)) in cells.into_iter().enumerate() {
            if n > 0 {
                l.push(' ');
            }
            let w = widths[i];
            let _ = match t.columns[i].align {
                Align::Right => write!(l, "{s:>w$}"),
                _ => write!(l, "{s:<w$}"),
            };
        }
        l
    };
    let header = line(visible.iter().map(|&i| (i, label(i))).collect());
    // A last column of free text (findings) is ruled as wide as its heading.
    let ruled = |i: usize| match t.columns[i].align {
        Align::Left if Some(&i) == visible.last() => label(i).chars().count(),
        _ => widths[i],
    };
    let rule = visible.iter().map(|&i| ruled(i)).sum::<usize>() + visible.len().saturating_sub(1);
    let _ = writeln!(o, "{}", header.trim_end());
    if !t.bare {
        let _ = writeln!(o, "{}", "-".repeat(rule));
    }
    for row in &t.rows {
        let n = fixed(row);
        let mut l = line(
            (visible.iter().filter(|&&i| i < n))
                .map(|&i| (i, text(i, &row[i].text)))
                .collect(),
        );
        if n < row.len() {
            if !l.is_empty() {
                l.push(' ');
            }
            l.push_str(&shown(&row[n].text));
        }
        let _ = writeln!(o, "{}", l.trim_end());
    }
}

//! The I/O an Oracle AWR or Statspack report shows, text (10g to 19c) or AWR HTML: the wait
//! events of the I/O classes dbio issues (foreground and background tables, else the Top
//! 5/Top 10), the Load Profile (redo, transactions, read and write requests and MB), the
//! IOStat by Function summary (DBWR's and LGWR's request sizes), the wait event histogram
//! (a 99th percentile) and the snapshot interval.

use std::sync::atomic::AtomicBool;

use super::tables::{self, Row, Scan, Table};
use super::{Capture, Class, Figure, Measure, Origin, checked};
use crate::error::{Error, Result};
use crate::units::echoed;
use crate::workload::Event;

/// A table's row as a citation says it: `Title: name`, each cut to a length a line can
/// hold (a report's text is not trusted to be short).
fn said(t: &Table, row: &Row) -> String {
    format!("{}: {}", echoed(&t.title), echoed(&row.cells[0]))
}

/// A report's figure: `1,207,863`, `572.1K` (×1000), `.66`, `N/A` (none).
pub fn number(cell: &str) -> Option<f64> {
    let c = cell.trim().replace(',', "");
    if c.is_empty() || c == "N/A" || c == "-" {
        return None;
    }
    let (digits, scale) = match c.chars().last()? {
        'K' => (&c[..c.len() - 1], 1e3),
        'M' => (&c[..c.len() - 1], 1e6),
        'G' => (&c[..c.len() - 1], 1e9),
        'T' => (&c[..c.len() - 1], 1e12),
        '%' => (&c[..c.len() - 1], 1.0),
        _ => (c.as_str(), 1.0),
    };
    digits.parse::<f64>().ok().map(|v| v * scale)
}

/// A wait in milliseconds: `1.90ms`, `512.00us`, `1.2s`, or a plain figure in `unit_ms`
/// milliseconds (1 for a `(ms)` column, 10 for centiseconds).
fn wait_ms(cell: &str, unit_ms: f64) -> Option<f64> {
    let c = cell.trim().replace(',', "");
    if let Some(v) = c.strip_suffix("ms") {
        return v.parse().ok();
    }
    if let Some(v) = c.strip_suffix("us") {
        return v.parse::<f64>().ok().map(|v| v / 1e3);
    }
    if let Some(v) = c.strip_suffix("ns") {
        return v.parse::<f64>().ok().map(|v| v / 1e6);
    }
    if let Some(v) = c.strip_suffix('s') {
        return v.parse::<f64>().ok().map(|v| v * 1e3);
    }
    number(&c).map(|v| v * unit_ms)
}

/// MB in an IOStat by Function "Data" column: a plain figure is MB, `M`/`G`/`T` are
/// multiples of 1024 of the unit before, `K` KB.
fn data_mb(cell: &str) -> Option<f64> {
    let c = cell.trim().replace(',', "");
    let (digits, scale) = match c.chars().last()? {
        'K' => (&c[..c.len() - 1], 1.0 / 1024.0),
        'M' => (&c[..c.len() - 1], 1.0),
        'G' => (&c[..c.len() - 1], 1024.0),
        'T' => (&c[..c.len() - 1], 1024.0 * 1024.0),
        _ => (c.as_str(), 1.0),
    };
    digits.parse::<f64>().ok().map(|v| v * scale)
}

/// The event a report's row names: exactly, or cut short to its column's width (AWR cuts
/// long names: `log file parallel writ`).
fn event_named(name: &str) -> Option<Event> {
    let n = name.trim().to_ascii_lowercase();
    if let Some(e) = Event::from_name(&n) {
        return Some(e);
    }
    if n.len() < 12 {
        return None;
    }
    let mut found = Event::ALL.iter().filter(|e| e.name().starts_with(&n));
    match (found.next(), found.next()) {
        (Some(e), None) => Some(*e),
        _ => None,
    }
}

/// Which kind of table holds the wait events, best first: the foreground or background
/// table, the table of all events, a Top N.
fn rank(title: &str) -> Option<u8> {
    let t = title.to_ascii_lowercase();
    if t.contains("histogram") || t.contains("service") || t.contains("class") {
        return None;
    }
    if t.starts_with("foreground wait events") || t.starts_with("background wait events") {
        Some(0)
    } else if t.starts_with("wait events") {
        Some(1)
    } else if t.starts_with("top ") && t.contains("event") {
        Some(2)
    } else {
        None
    }
}

struct Wait {
    event: Event,
    rank: u8,
    waits: Figure,
    mean_ms: Option<Figure>,
}

/// The columns of a wait event table: waits, the mean wait, the total time — found once
/// per table by their headings.
struct WaitColumns {
    waits: usize,
    avg: Option<usize>,
    /// Whether the mean is in centiseconds.
    avg_cs: bool,
    time: Option<usize>,
    /// Milliseconds per unit of the total time.
    time_unit_ms: f64,
}

impl WaitColumns {
    fn of(t: &Table) -> Option<WaitColumns> {
        let lower: Vec<String> = t.columns.iter().map(|c| c.to_ascii_lowercase()).collect();
        let is_total = |h: &str| {
            h.contains("total")
                || h.contains("time (s)")
                || h.contains("time(s)")
                || h.contains("(sec)")
                || h.contains("time (cs)")
        };
        let waits = lower.iter().position(|h| {
            h.contains("waits")
                && !h.contains('%')
                && !h.contains("/txn")
                && !h.contains("avg")
                && !is_total(h)
        })?;
        let avg = lower.iter().position(|h| {
            !is_total(h)
                && !h.contains("/txn")
                && !h.contains('%')
                && !h.contains("waits")
                && (h.contains("avg") || h.contains("(ms)") || h.contains("wait ("))
        });
        let time = lower
            .iter()
            .position(|h| is_total(h) && !h.contains('%') && !h.contains("waits"));
        let time_unit_ms = match time.map(|c| lower[c].as_str()) {
            Some(h) if h.contains("(cs)") => 10.0,
            Some(h) if h.contains("(ms)") => 1.0,
            _ => 1e3,
        };
        Some(WaitColumns {
            waits,
            avg_cs: avg.is_some_and(|c| lower[c].contains("(cs)")),
            avg,
            time,
            time_unit_ms,
        })
    }
}

/// The waits of one table row: count, total time and mean, in the table's columns.
fn wait_of(
    t: &Table,
    cols: &WaitColumns,
    row: &Row,
    event: Event,
    file: &str,
    rank: u8,
) -> Result<Option<Wait>> {
    let origin = |what: &str| Origin {
        file: file.to_string(),
        line: row.line,
        what: format!("{} {what}", said(t, row)),
    };
    let Some(waits) = row.cells.get(cols.waits).and_then(|c| number(c)) else {
        return Ok(None);
    };
    let waits = checked(waits, Measure::Count, &origin("waits"))?;
    // The mean wait: its own column (ms, or units in the cells), else time / waits.
    let mut mean = cols
        .avg
        .and_then(|c| row.cells.get(c))
        .and_then(|c| wait_ms(c, if cols.avg_cs { 10.0 } else { 1.0 }));
    if let Some(m) = mean {
        checked(m, Measure::Millis, &origin("mean wait"))?;
    }
    // A whole-millisecond mean ("2") is coarse: the total time gives it finer when known.
    if let Some(total) = cols
        .time
        .and_then(|c| row.cells.get(c))
        .and_then(|c| number(c))
    {
        let total = checked(total, Measure::Count, &origin("total wait time"))?;
        if waits > 0.0 {
            let fine = total * cols.time_unit_ms / waits;
            let coarse = mean.is_none_or(|m| m.fract() == 0.0 && m < 100.0);
            if coarse {
                mean = Some(fine);
            }
        }
    }
    Ok(Some(Wait {
        event,
        rank,
        waits: Figure {
            value: waits,
            origin: origin("waits"),
        },
        mean_ms: mean.map(|m| Figure {
            value: m,
            origin: origin("mean wait"),
        }),
    }))
}

/// The 99th percentile of an event's wait histogram row (percent of waits per bucket): the
/// upper bound of the bucket the 99th percent falls in.
fn p99_of(t: &Table, row: &Row, origin: &Origin) -> Result<Option<f64>> {
    let mut total = 0.0;
    let mut last_bound = None;
    for (k, col) in t.columns.iter().enumerate() {
        let h = col.trim().replace(' ', "");
        let Some(bound) = bucket_bound_ms(&h) else {
            continue;
        };
        last_bound = Some(bound);
        let share = row.cells.get(k).and_then(|c| number(c)).unwrap_or(0.0);
        let what = Origin {
            what: format!("{} {} (% of waits)", origin.what, echoed(col)),
            ..origin.clone()
        };
        total += checked(share, Measure::Percent, &what)?;
        if total >= 98.95 {
            return Ok(Some(bound));
        }
    }
    // Percentages rounded to a tenth may sum short of 99: the last bucket any wait fell in.
    Ok((total > 90.0).then_some(last_bound).flatten())
}

/// The upper bound of a histogram heading: `<1ms` 1, `<=1s` 1024, `<32us`, `>1s` 2048.
fn bucket_bound_ms(h: &str) -> Option<f64> {
    let (rest, over) = if let Some(r) = h.strip_prefix("<=") {
        (r, false)
    } else if let Some(r) = h.strip_prefix('<') {
        (r, false)
    } else if let Some(r) = h.strip_prefix('>') {
        (r, true)
    } else {
        return None;
    };
    let v = wait_ms(rest, 1.0)?;
    // Oracle's "1s" bucket is 1,024 ms; past the last, twice that is the bound dbio can say.
    let v = if rest.ends_with('s') && !rest.ends_with("ms") && !rest.ends_with("us") {
        v * 1.024
    } else {
        v
    };
    Some(if over { v * 2.0 } else { v })
}

/// Reads an AWR or Statspack report (text or HTML). One line naming what is missing when
/// the file is not such a report or shows no I/O, or naming the line of a figure no
/// database reports; a signal stops it.
pub fn read(file: &str, text: &str, stop: &AtomicBool) -> Result<Capture> {
    let mut scan = Scan::new(file, stop);
    // What kind of report: told by its start (a report says so in its first lines), so
    // that no pass over the whole text goes without looking at the stop flag.
    let mut head_end = text.len().min(HEAD_BYTES);
    while !text.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let head = &text[..head_end];
    let html = head.contains("<table") || head.contains("<TABLE");
    let kind = if html {
        "AWR (HTML)"
    } else if head.contains("STATSPACK") || head.contains("Statspack") {
        "Statspack"
    } else {
        "AWR"
    };
    let mut all = if html {
        tables::html_tables(text, &mut scan)?
    } else {
        tables::text_tables(text, &mut scan)?
    };
    if !html {
        all.extend(tables::text_profile(text, "load profile", &mut scan)?);
    }
    // What the header's figures are read from: the text, or the HTML tables' rows one to a
    // line (each with the line of the report it came from).
    let mut plain = String::new();
    let mut plain_lines = Vec::new();
    if html {
        for r in all.iter().flat_map(|t| t.rows.iter()) {
            scan.tick()?;
            for (k, c) in r.cells.iter().enumerate() {
                if k > 0 {
                    plain.push(' ');
                }
                plain.push_str(c);
            }
            plain.push('\n');
            plain_lines.push(r.line);
        }
    }
    let flat = if html { &plain } else { text };
    let line_in_report = |k: usize| -> usize {
        if html {
            plain_lines.get(k - 1).copied().unwrap_or(0)
        } else {
            k
        }
    };
    scan.tick()?;
    let missing = |what: &str| {
        Error::usage(format!(
            "{file}: not an AWR or Statspack report dbio can read: {what}"
        ))
    };
    let seconds = elapsed_s(flat, &mut scan)?.map(|(v, line)| Figure {
        value: v,
        origin: Origin {
            file: file.into(),
            line: line_in_report(line),
            what: "Elapsed".into(),
        },
    });
    let Some(seconds) = seconds else {
        return Err(missing("no \"Elapsed: N (mins)\" (the snapshot interval)"));
    };
    if seconds.value == 0.0 {
        return Err(missing("the snapshot interval is not above 0 minutes"));
    }
    seconds.check(Measure::Seconds)?;
    let block_size = std_block_size(flat, &mut scan)?.map(|(v, line)| Figure {
        value: v,
        origin: Origin {
            file: file.into(),
            line: line_in_report(line),
            what: "Std Block Size".into(),
        },
    });

    // Waits per event, from the best table that has the event.
    let mut waits: Vec<Wait> = Vec::new();
    for t in &all {
        let Some(rank) = rank(&t.title) else { continue };
        let Some(cols) = WaitColumns::of(t) else {
            continue;
        };
        for row in &t.rows {
            scan.tick()?;
            let Some(event) = row.cells.first().and_then(|n| event_named(n)) else {
                continue;
            };
            if let Some(w) = wait_of(t, &cols, row, event, file, rank)? {
                match waits.iter_mut().find(|x| x.event == event) {
                    Some(x) if x.rank > w.rank => *x = w,
                    Some(_) => {}
                    None => waits.push(w),
                }
            }
        }
    }
    let p99 = |event: Event| -> Result<Option<Figure>> {
        let found = all
            .iter()
            .filter(|t| {
                let l = t.title.to_ascii_lowercase();
                l.starts_with("wait event histogram") && !l.contains("detail")
            })
            .flat_map(|t| t.rows.iter().map(move |r| (t, r)))
            .find(|(_, r)| r.cells.first().and_then(|n| event_named(n)) == Some(event));
        let Some((t, r)) = found else {
            return Ok(None);
        };
        let origin = Origin {
            file: file.into(),
            line: r.line,
            what: said(t, r),
        };
        Ok(p99_of(t, r, &origin)?.map(|value| Figure { value, origin }))
    };

    // The Load Profile, per second.
    let profile = all
        .iter()
        .find(|t| t.title.to_ascii_lowercase().starts_with("load profile"));
    let per_s = |labels: &[&str], measure: Measure| -> Result<Option<Figure>> {
        let Some(t) = profile else { return Ok(None) };
        let Some(row) = t.rows.iter().find(|r| {
            let l = r.cells[0].trim_end_matches(':').trim().to_ascii_lowercase();
            labels.iter().any(|x| l == *x)
        }) else {
            return Ok(None);
        };
        let Some(value) = row.cells.get(1).and_then(|c| number(c)) else {
            return Ok(None);
        };
        let origin = Origin {
            file: file.into(),
            line: row.line,
            what: format!(
                "Load Profile: {} per second",
                echoed(row.cells[0].trim_end_matches(':'))
            ),
        };
        let value = checked(value, measure, &origin)?;
        Ok(Some(Figure { value, origin }))
    };
    let redo = per_s(&["redo size (bytes)", "redo size"], Measure::BytesRate)?;

    // IOStat by Function: requests and MB per second of DBWR and LGWR.
    let function = |name: &str| -> Result<Option<Function>> {
        let Some(t) = all.iter().find(|t| {
            t.title
                .to_ascii_lowercase()
                .starts_with("iostat by function")
        }) else {
            return Ok(None);
        };
        let Some(row) = t
            .rows
            .iter()
            .find(|r| r.cells[0].trim().eq_ignore_ascii_case(name))
        else {
            return Ok(None);
        };
        let origin = Origin {
            file: file.into(),
            line: row.line,
            what: said(t, row),
        };
        let c = |k: usize| row.cells.get(k).map(String::as_str).unwrap_or("");
        let figure = |k: usize, mb: bool, what: &str| -> Result<f64> {
            let at = |what: &str| Origin {
                what: format!("{} {what}", origin.what),
                ..origin.clone()
            };
            if mb {
                // MB a second, checked in bytes: no more than any storage moves.
                let v = data_mb(c(k)).unwrap_or(0.0);
                checked(v * 1048576.0, Measure::BytesRate, &at(what)).map(|_| v)
            } else {
                checked(number(c(k)).unwrap_or(0.0), Measure::Rate, &at(what))
            }
        };
        Ok(Some((
            figure(2, false, "read requests per second")?,
            figure(3, true, "read MB per second (in bytes)")?,
            figure(5, false, "write requests per second")?,
            figure(6, true, "write MB per second (in bytes)")?,
            origin,
        )))
    };

    let mut classes = Vec::new();
    for w in waits {
        let event = w.event;
        let s = seconds.value;
        let per_s = Figure {
            value: w.waits.value / s,
            origin: Origin {
                what: format!("{} / Elapsed {:.0} s", w.waits.origin.what, s),
                ..w.waits.origin.clone()
            },
        };
        if per_s.value <= 0.0 {
            continue;
        }
        let mut class = Class {
            event,
            per_s,
            bytes: None,
            batch: None,
            mean_ms: w.mean_ms,
            p99_ms: p99(event)?,
            guessed: false,
            sessions: None,
        };
        match event {
            Event::DbFileSequentialRead => class.bytes = block_size.clone(),
            Event::DbFileParallelWrite => {
                // Each wait is one batch: its blocks from DBWR's requests per second.
                if let Some((_, _, wreq, wmb, origin)) = function("DBWR")?
                    && wreq > 0.0
                {
                    let batch = (wreq / class.per_s.value).max(1.0);
                    class.batch = Some(derived(batch, &origin, "write requests/s ÷ waits/s"));
                    class.bytes = Some(derived(
                        wmb * 1048576.0 / wreq,
                        &origin,
                        "write MB/s ÷ requests/s",
                    ));
                } else {
                    class.bytes = block_size.clone();
                }
            }
            Event::LogFileParallelWrite => {
                if let Some((_, _, wreq, wmb, origin)) = function("LGWR")?
                    && wreq > 0.0
                {
                    class.bytes = Some(derived(
                        wmb * 1048576.0 / wreq,
                        &origin,
                        "write MB/s ÷ requests/s",
                    ));
                } else if let Some(r) = &redo {
                    class.bytes = Some(derived(
                        r.value / class.per_s.value,
                        &r.origin,
                        "÷ log file parallel write waits/s",
                    ));
                }
            }
            Event::LogFileSync => {
                // Redo per commit.
                if let Some(r) = &redo {
                    class.bytes = Some(derived(
                        r.value / class.per_s.value,
                        &r.origin,
                        "÷ log file sync waits/s",
                    ));
                }
            }
            Event::DbFileScatteredRead | Event::DirectPathRead | Event::DbFileParallelRead => {
                // Direct reads have their own line in IOStat by Function; buffer cache reads
                // mix single-block and multiblock ones (the Load Profile splits them below).
                if event == Event::DirectPathRead
                    && let Some((rreq, rmb, _, _, origin)) = function("Direct Reads")?
                    && rreq > 0.0
                {
                    class.bytes = Some(derived(
                        rmb * 1048576.0 / rreq,
                        &origin,
                        "read MB/s ÷ requests/s",
                    ));
                }
            }
            Event::DirectPathWrite => {
                if let Some((_, _, wreq, wmb, origin)) = function("Direct Writes")?
                    && wreq > 0.0
                {
                    class.bytes = Some(derived(
                        wmb * 1048576.0 / wreq,
                        &origin,
                        "write MB/s ÷ requests/s",
                    ));
                }
            }
            _ => {}
        }
        classes.push(class);
    }
    // Multiblock reads without IOStat by Function: the Load Profile's blocks and requests
    // less the single-block reads give the blocks per multiblock request.
    let seq = classes
        .iter()
        .find(|c| c.event == Event::DbFileSequentialRead)
        .map_or(0.0, |c| c.per_s.value);
    if let (Some(blocks), Some(reqs), Some(bs)) = (
        per_s(
            &["physical read (blocks)", "physical read total blocks"],
            Measure::Rate,
        )?,
        per_s(&["read io requests"], Measure::Rate)?,
        &block_size,
    ) {
        let multi_reqs = reqs.value - seq;
        let multi_blocks = blocks.value - seq;
        if multi_reqs > 0.0 && multi_blocks >= multi_reqs {
            for c in classes.iter_mut().filter(|c| {
                c.bytes.is_none()
                    && matches!(c.event, Event::DbFileScatteredRead | Event::DirectPathRead)
            }) {
                c.bytes = Some(Figure {
                    value: multi_blocks / multi_reqs * bs.value,
                    origin: Origin {
                        what: format!(
                            "({} − single-block reads) ÷ ({} − single-block reads) × block size",
                            blocks.origin.what, reqs.origin.what
                        ),
                        ..blocks.origin.clone()
                    },
                });
            }
        }
    }
    if classes.is_empty() {
        return Err(missing(
            "no wait event of an I/O class (db file sequential read, log file sync, ...) in its Top events or wait event tables",
        ));
    }
    Ok(Capture {
        file: file.into(),
        kind: kind.into(),
        seconds: Some(seconds),
        block_size,
        classes,
        redo_sync: None,
        group_commit: None,
    })
}

/// How much of a report's start tells its kind (HTML, Statspack).
const HEAD_BYTES: usize = 64 << 10;

/// A line of IOStat by Function: read requests and MB a second, write requests and MB a
/// second, and where.
type Function = (f64, f64, f64, f64, Origin);

/// A figure worked out from another: `value`, read where `from` was, said how.
fn derived(value: f64, from: &Origin, how: &str) -> Figure {
    Figure {
        value,
        origin: Origin {
            what: format!("{} {how}", from.what),
            ..from.clone()
        },
    }
}

/// `Elapsed:   60.02 (mins)` and its line.
fn elapsed_s(text: &str, scan: &mut Scan) -> Result<Option<(f64, usize)>> {
    for (k, l) in text.lines().enumerate() {
        scan.tick()?;
        let Some(p) = l.find("Elapsed:") else {
            continue;
        };
        let rest = &l[p + 8..];
        let mut words = rest.split_whitespace();
        let Some(v) = words.next().and_then(number) else {
            return Ok(None);
        };
        let unit = words.next().unwrap_or("(mins)");
        let s = if unit.starts_with("(min") {
            v * 60.0
        } else if unit.starts_with("(sec") {
            v
        } else if unit.starts_with("(hour") {
            v * 3600.0
        } else {
            continue;
        };
        return Ok(Some((s, k + 1)));
    }
    Ok(None)
}

/// `Std Block Size:   8K` (or `8192`) and its line.
fn std_block_size(text: &str, scan: &mut Scan) -> Result<Option<(f64, usize)>> {
    for (k, l) in text.lines().enumerate() {
        scan.tick()?;
        if let Some(p) = l.find("Std Block Size:") {
            let size = l[p + 15..]
                .split_whitespace()
                .next()
                .and_then(|w| crate::units::parse_size(w).ok());
            return Ok(size.map(|v| (v as f64, k + 1)));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_and_waits_read_in_every_spelling() {
        assert_eq!(number("1,207,863"), Some(1207863.0));
        assert_eq!(number("572.1K"), Some(572100.0));
        assert_eq!(number(".66"), Some(0.66));
        assert_eq!(number("N/A"), None);
        assert_eq!(wait_ms("1.90ms", 1.0), Some(1.9));
        assert_eq!(wait_ms("512.00us", 1.0), Some(0.512));
        assert_eq!(wait_ms("3", 10.0), Some(30.0));
        assert_eq!(data_mb("7.6G"), Some(7.6 * 1024.0));
        assert_eq!(data_mb(".661517"), Some(0.661517));
        assert_eq!(bucket_bound_ms("<=1s"), Some(1024.0));
        assert_eq!(bucket_bound_ms("<32ms"), Some(32.0));
        assert_eq!(
            event_named("log file parallel writ"),
            Some(Event::LogFileParallelWrite)
        );
        assert_eq!(event_named("db file"), None);
    }
}

//! A database report read as tables: the text reports (AWR, Statspack, `iostat -x`) and the
//! AWR HTML report become the same thing — titled tables of cells, each row remembering the
//! line it came from — so that one reader finds the figures in either. Everything here reads
//! in one pass (time in proportion to the report, whatever its markup), stops on a signal,
//! and keeps at most [`MAX_CELLS`] cells.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{Error, Result};

/// One table of a report: its title (the section heading above it), its column headings and
/// its rows.
#[derive(Debug, Clone, Default)]
pub struct Table {
    pub title: String,
    pub columns: Vec<String>,
    pub rows: Vec<Row>,
}

/// A row: its cells (the first is the row's name) and the line of the report it starts on.
#[derive(Debug, Clone)]
pub struct Row {
    pub cells: Vec<String>,
    pub line: usize,
}

impl Table {
    /// The column whose heading holds every one of `words` (case-insensitive) and none of
    /// `not`.
    pub fn column(&self, words: &[&str], not: &[&str]) -> Option<usize> {
        self.columns.iter().position(|c| {
            let c = c.to_ascii_lowercase();
            words.iter().all(|w| c.contains(w)) && !not.iter().any(|w| c.contains(w))
        })
    }
}

/// A line of dashes in groups (`------ ----- ---`): the underline of a text table's
/// headings, which gives its columns. Returns each group's span (start, end exclusive).
fn dash_spans(line: &str) -> Option<Vec<(usize, usize)>> {
    let t = line.trim_end();
    if t.trim().is_empty() || !t.chars().all(|c| c == '-' || c == ' ') {
        return None;
    }
    let mut spans = Vec::new();
    let mut start = None;
    for (i, c) in t.char_indices() {
        match (c, start) {
            ('-', None) => start = Some(i),
            (' ', Some(s)) => {
                spans.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        spans.push((s, t.len()));
    }
    (spans.len() >= 2).then_some(spans)
}

/// Whether a token is a figure of a report: `1,207,863`, `2.16578`, `.66`, `572.1K`, `7.6G`,
/// `1.90ms`, `512.00us`, `N/A`, `-`.
pub fn is_figure(token: &str) -> bool {
    // `NaN`, `inf`, `1e400` too: figures, if ones no database reports (refused later,
    // naming their line, rather than read as part of a name).
    if token == "N/A" || token == "-" || token.parse::<f64>().is_ok() {
        return true;
    }
    let t = token
        .trim_end_matches("ms")
        .trim_end_matches("us")
        .trim_end_matches('s')
        .trim_end_matches(['K', 'M', 'G', 'T', 'P', '%']);
    !t.is_empty()
        && t.chars().any(|c| c.is_ascii_digit())
        && t.chars()
            .all(|c| c.is_ascii_digit() || c == ',' || c == '.' || c == '-')
}

/// The whitespace-separated tokens of a line with the column each starts at.
fn tokens(line: &str) -> impl Iterator<Item = (usize, &str)> + '_ {
    let mut rest = line.char_indices().peekable();
    std::iter::from_fn(move || {
        let (start, _) = rest.find(|(_, c)| !c.is_whitespace())?;
        let end = loop {
            match rest.peek() {
                Some(&(i, c)) if c.is_whitespace() => break i,
                Some(_) => {
                    rest.next();
                }
                None => break line.len(),
            }
        };
        Some((start, &line[start..end]))
    })
}

/// Whether a line is a section heading of the reports dbio reads (what a table's title is
/// taken from).
fn is_heading(line: &str) -> bool {
    const HEADINGS: &[&str] = &[
        "top 5",
        "top 10",
        "wait events",
        "wait event histogram",
        "iostat by function",
        "load profile",
        "background wait",
        "foreground wait",
        "event histogram",
    ];
    let l = line.trim();
    !l.is_empty()
        && l.len() < 120
        && HEADINGS.iter().any(|h| {
            l.get(..h.len())
                .is_some_and(|start| start.eq_ignore_ascii_case(h))
        })
}

/// The most table cells one report may hold: far more than an AWR or Statspack report or
/// `iostat -x` output has (tens of thousands), few enough that what dbio keeps of a report
/// stays within a small multiple of its size.
pub const MAX_CELLS: usize = 2_000_000;

/// What bounds the reading of one report: a signal stops it (looked at on every line or
/// tag), and its tables hold at most [`MAX_CELLS`] cells.
pub struct Scan<'a> {
    file: &'a str,
    stop: &'a AtomicBool,
    cells: usize,
    /// Steps taken (lines, tags, texts): what the tests count to see the reading linear.
    steps: u64,
}

impl<'a> Scan<'a> {
    /// The reading of the report cited as `file`, stopped by `stop`.
    pub fn new(file: &'a str, stop: &'a AtomicBool) -> Scan<'a> {
        Scan {
            file,
            stop,
            cells: 0,
            steps: 0,
        }
    }

    /// One step of the reading (a line, a tag): an error when a signal came, and the
    /// reading stops there.
    pub fn tick(&mut self) -> Result<()> {
        self.steps += 1;
        if self.stop.load(Ordering::Relaxed) {
            return Err(Error::Interrupted(format!(
                "interrupted while reading {}; no job written",
                self.file
            )));
        }
        Ok(())
    }

    /// Counts `n` more cells, of a row at `line`: an error past [`MAX_CELLS`].
    pub fn take(&mut self, n: usize, line: usize) -> Result<()> {
        self.cells = self.cells.saturating_add(n);
        if self.cells > MAX_CELLS {
            return Err(Error::usage(format!(
                "{} line {line}: more than {MAX_CELLS} table cells; AWR and Statspack reports and iostat output hold far fewer, and dbio reads no more",
                self.file
            )));
        }
        Ok(())
    }
}

/// How many lines above a dash line its headings take (4), and the line that ends them.
const HEAD_LINES: usize = 5;

/// A text table being read: its columns and the rows so far.
struct TextTable {
    title: String,
    spans: Vec<(usize, usize)>,
    columns: Vec<String>,
    rows: Vec<Row>,
    /// A row name without figures so far (a wrapped event name) and its line.
    pending: Option<(String, usize)>,
}

/// The span of `spans` a token at `at..end` belongs to: the one it ends in (right-aligned
/// figures), else the one it starts in (left-aligned names), else the last. A binary search:
/// spans are sorted and apart.
fn span_of(spans: &[(usize, usize)], at: usize, end: usize) -> usize {
    let ends = spans.partition_point(|s| s.0 < end);
    if ends > 0 && end <= spans[ends - 1].1 + 1 {
        return ends - 1;
    }
    let starts = spans.partition_point(|s| s.0 <= at);
    if starts > 0 && at < spans[starts - 1].1 {
        return starts - 1;
    }
    spans.len() - 1
}

/// The columns' headings: the words of the lines above the dash line (nearest last) that
/// belong to each span. Each heading word is placed by a binary search, so a table costs
/// the length of its headings, whatever its number of columns.
fn columns_of(
    spans: &[(usize, usize)],
    above: &VecDeque<&str>,
    line: usize,
    scan: &mut Scan,
) -> Result<Vec<String>> {
    // Headings: the lines above, back to a blank, `~~~`, `->` or heading line.
    // A `~~~` underline or the heading line itself may carry headings to the right
    // (`Top 5 Timed Events      Avg %Total`): kept with the rest blanked.
    let mut head: Vec<std::borrow::Cow<str>> = Vec::new();
    for &h in above.iter().rev() {
        if head.len() >= 4 {
            break;
        }
        let t = h.trim();
        if t.is_empty() || t.starts_with("->") || t.chars().all(|c| c == '-') {
            break;
        }
        if t.starts_with('~') || is_heading(h) {
            let keep = if t.starts_with('~') {
                h.find(|c: char| c != '~' && c != ' ')
                    .filter(|&p| p > h.find('~').unwrap_or(0))
            } else {
                h.trim_start()
                    .find("  ")
                    .map(|p| p + (h.len() - h.trim_start().len()))
            };
            if let Some(p) = keep {
                head.push(format!("{}{}", " ".repeat(p), &h[p..]).into());
            }
            break;
        }
        head.push(h.into());
    }
    head.reverse();
    let last = spans.len() - 1;
    let mut words: Vec<Vec<&str>> = vec![Vec::new(); spans.len()];
    for h in &head {
        // Each heading word is kept: counted as a cell.
        scan.take(tokens(h).count(), line)?;
        for (at, tok) in tokens(h) {
            let end = at + tok.len();
            // A heading word belongs to the column it ends in (right-aligned figures) or
            // starts in (left-aligned names), to the last if past it, and to the column
            // right after it when it ends just before.
            let mut ks: [Option<usize>; 4] = [None; 4];
            let ends = spans.partition_point(|s| s.0 < end);
            if ends > 0 && end <= spans[ends - 1].1 + 1 {
                ks[0] = Some(ends - 1);
            }
            let starts = spans.partition_point(|s| s.0 <= at);
            if starts > 0 && at < spans[starts - 1].1 {
                ks[1] = Some(starts - 1);
            }
            if at >= spans[last].1 {
                ks[2] = Some(last);
            }
            let next = spans.partition_point(|s| s.0 < end + 1);
            if next > 0 && next < spans.len() && spans[next].0 == end + 1 && at > spans[next - 1].1
            {
                ks[3] = Some(next);
            }
            let mut ks: Vec<usize> = ks.into_iter().flatten().collect();
            ks.sort_unstable();
            ks.dedup();
            for k in ks {
                words[k].push(tok);
            }
        }
    }
    Ok(words.into_iter().map(|w| w.join(" ")).collect())
}

impl TextTable {
    /// One line under the dash line: a row, or the first part of a wrapped row name.
    fn row(&mut self, l: &str, line: usize, scan: &mut Scan) -> Result<()> {
        let figures_from = self.spans.get(1).map_or(usize::MAX, |s| s.0);
        // The row's name: the tokens before the first figure at or past the second column.
        let first_figure = tokens(l)
            .position(|(at, t)| is_figure(t) && at + t.len() > figures_from.saturating_sub(1));
        let Some(f) = first_figure else {
            let name = l.trim();
            match &mut self.pending {
                Some((p, _)) => {
                    p.push(' ');
                    p.push_str(name);
                }
                None => self.pending = Some((name.to_string(), line)),
            }
            return Ok(());
        };
        // Every word is kept (a row costs a cell more: what keeps it), counted before
        // anything is made of them.
        let mut width = 1;
        let mut words = 0;
        for (at, t) in tokens(l).skip(f) {
            width = width.max(span_of(&self.spans, at, at + t.len()).max(1) + 1);
            words += 1;
        }
        scan.take(width.max(words) + 1, line)?;
        let mut own = String::new();
        for (_, t) in tokens(l).take(f) {
            if !own.is_empty() {
                own.push(' ');
            }
            own.push_str(t);
        }
        let (name, line) = match self.pending.take() {
            Some((p, line)) if own.is_empty() => (p, line),
            Some((mut p, line)) => {
                p.push(' ');
                p.push_str(&own);
                (p, line)
            }
            None => (own, line),
        };
        // The cells up to the last one a figure falls in.
        let mut cells = vec![String::new(); width];
        cells[0] = name;
        for (at, t) in tokens(l).skip(f) {
            let k = span_of(&self.spans, at, at + t.len()).max(1);
            if !cells[k].is_empty() {
                cells[k].push(' ');
            }
            cells[k].push_str(t);
        }
        self.rows.push(Row { cells, line });
        Ok(())
    }

    fn finish(self) -> Table {
        Table {
            title: self.title,
            columns: self.columns,
            rows: self.rows,
        }
    }
}

/// Keeps the last [`HEAD_LINES`] lines.
fn remember<'t>(above: &mut VecDeque<&'t str>, line: &'t str) {
    if above.len() == HEAD_LINES {
        above.pop_front();
    }
    above.push_back(line);
}

/// The tables of a text report: every block of rows under a line of dash groups, with the
/// headings above that line stacked per column, titled by the nearest section heading
/// above. A row without figures continues on the next line (a wrapped event name). One
/// pass over the lines, keeping the last few.
pub fn text_tables(text: &str, scan: &mut Scan) -> Result<Vec<Table>> {
    let mut tables = Vec::new();
    let mut title = String::new();
    let mut above: VecDeque<&str> = VecDeque::with_capacity(HEAD_LINES);
    let mut open: Option<TextTable> = None;
    for (k, line) in text.lines().enumerate() {
        scan.tick()?;
        if let Some(t) = open.as_mut() {
            let trimmed = line.trim();
            let ends = trimmed.is_empty()
                || trimmed.chars().all(|c| c == '-')
                || dash_spans(line).is_some();
            if !ends {
                t.row(line, k + 1, scan)?;
                remember(&mut above, line);
                continue;
            }
            tables.push(open.take().expect("open").finish());
        }
        if is_heading(line) {
            title = line.split("  ").next().unwrap_or("").trim().to_string();
        }
        if let Some(spans) = dash_spans(line) {
            // A table costs a cell more than its columns (what keeps it).
            scan.take(spans.len() + 1, k + 1)?;
            let columns = columns_of(&spans, &above, k + 1, scan)?;
            open = Some(TextTable {
                title: title.clone(),
                spans,
                columns,
                rows: Vec::new(),
                pending: None,
            });
        }
        remember(&mut above, line);
    }
    tables.extend(open.map(TextTable::finish));
    Ok(tables)
}

/// `label:  value  value ...` lines under a heading (the Load Profile of a text report): each
/// becomes a row whose first cell is the label without its colon.
pub fn text_profile(text: &str, heading: &str, scan: &mut Scan) -> Result<Option<Table>> {
    let mut lines = text.lines().enumerate();
    let starts = |l: &str| {
        let l = l.trim_start();
        l.get(..heading.len())
            .is_some_and(|s| s.eq_ignore_ascii_case(heading))
    };
    for (_, l) in lines.by_ref() {
        scan.tick()?;
        if starts(l) {
            break;
        }
    }
    let mut rows = Vec::new();
    let mut seen_row = false;
    for (k, l) in lines {
        scan.tick()?;
        let t = l.trim();
        if t.starts_with('~') || (t.starts_with("Per ") && !seen_row) {
            continue;
        }
        if t.is_empty() {
            if seen_row {
                break;
            }
            continue;
        }
        let Some(colon) = l.rfind(':') else {
            if seen_row {
                break;
            }
            continue;
        };
        let label = l[..colon].trim();
        let figures = || l[colon + 1..].split_whitespace();
        if label.is_empty() || figures().next().is_none() || !figures().all(is_figure) {
            if seen_row {
                break;
            }
            continue;
        }
        seen_row = true;
        scan.take(figures().count() + 2, k + 1)?;
        let mut cells = vec![label.to_string()];
        cells.extend(figures().map(str::to_string));
        rows.push(Row { cells, line: k + 1 });
    }
    Ok((!rows.is_empty()).then(|| Table {
        title: "Load Profile".into(),
        columns: vec![String::new(), "Per Second".into(), "Per Transaction".into()],
        rows,
    }))
}

/// One part of an HTML text: a tag (its name, whether it closes, what is between `<` and
/// `>`) or text, with the line it starts on.
enum Part<'a> {
    Tag {
        name: &'a str,
        close: bool,
        raw: &'a str,
        line: usize,
    },
    Text(&'a str),
}

/// The parts of an HTML text in order, in one pass: every byte is looked at a bounded
/// number of times, whatever the markup (unterminated tags and comments included).
/// Comments (`<!-- -->`), `<!DOCTYPE>`, `<?...>` and the content of `<script>` and
/// `<style>` are left out — a table inside them is not the report's.
struct Parts<'a> {
    html: &'a str,
    /// `html` in lower case (same offsets): where `</script` ends is looked for in it.
    lower: &'a str,
    at: usize,
    line: usize,
}

impl<'a> Parts<'a> {
    /// Moves to `to`, counting the lines passed.
    fn advance(&mut self, to: usize) {
        let to = to.min(self.html.len());
        self.line += self.html.as_bytes()[self.at..to]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        self.at = to;
    }

    /// Moves past the first `needle` (lower case) from here, or to the end.
    fn past(&mut self, needle: &str) {
        let to = self.lower[self.at..]
            .find(needle)
            .map_or(self.html.len(), |p| self.at + p + needle.len());
        self.advance(to);
    }

    /// Moves past the next `>`, or to the end. Returns what was before it.
    fn tag_end(&mut self) -> &'a str {
        let html = self.html;
        let start = self.at;
        let end = html[start..].find('>').map_or(html.len(), |p| start + p);
        self.advance((end + 1).min(html.len()));
        &html[start..end]
    }
}

impl<'a> Iterator for Parts<'a> {
    type Item = Part<'a>;

    fn next(&mut self) -> Option<Part<'a>> {
        let html = self.html;
        loop {
            if self.at >= html.len() {
                return None;
            }
            let rest = &html[self.at..];
            if !rest.starts_with('<') {
                let end = rest.find('<').map_or(html.len(), |p| self.at + p);
                let text = &html[self.at..end];
                self.advance(end);
                return Some(Part::Text(text));
            }
            let b = rest.as_bytes();
            let next = b.get(1).copied().unwrap_or(0);
            if rest.starts_with("<!--") {
                self.at += 4;
                self.past("-->");
                continue;
            }
            if next == b'!' || next == b'?' {
                self.tag_end();
                continue;
            }
            let close = next == b'/';
            let name_at = if close { 2 } else { 1 };
            if !b.get(name_at).is_some_and(u8::is_ascii_alphabetic) {
                // A `<` that starts no tag is text.
                self.advance(self.at + 1);
                return Some(Part::Text("<"));
            }
            let name_len = b[name_at..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric())
                .count();
            let name = &rest[name_at..name_at + name_len];
            let line = self.line;
            self.advance(self.at + name_at + name_len);
            let raw = self.tag_end();
            if !close && (name.eq_ignore_ascii_case("script") || name.eq_ignore_ascii_case("style"))
            {
                // Its content is not the report's: past its end tag.
                let end = format!("</{}", name.to_ascii_lowercase());
                self.past(&end);
                self.tag_end();
                continue;
            }
            return Some(Part::Tag {
                name,
                close,
                raw,
                line,
            });
        }
    }
}

/// An HTML table being read.
struct HtmlTable {
    summary: Option<String>,
    columns: Vec<String>,
    rows: Vec<Row>,
    /// The row being read: its `<th>` and `<td>` cells and its line.
    row: Option<(Vec<String>, Vec<String>, usize)>,
    /// The cell being read: whether a `<th>`, and its text so far.
    cell: Option<(bool, String)>,
}

impl HtmlTable {
    fn end_cell(&mut self) {
        if let (Some((th, text)), Some((ths, tds, _))) = (self.cell.take(), self.row.as_mut()) {
            let t = folded(&text);
            if th { ths.push(t) } else { tds.push(t) }
        }
    }

    fn end_row(&mut self, scan: &mut Scan) -> Result<()> {
        self.end_cell();
        if let Some((ths, tds, line)) = self.row.take() {
            // A row costs a cell more than its cells (what keeps it).
            scan.take(ths.len() + tds.len() + 1, line)?;
            if !ths.is_empty() && tds.is_empty() {
                self.columns = ths;
            } else if !tds.is_empty() {
                let mut cells = ths;
                cells.extend(tds);
                self.rows.push(Row { cells, line });
            }
        }
        Ok(())
    }
}

/// The tables of an HTML report: each `<table>` with its `<th>` headings and `<td>` rows,
/// titled by the nearest `<h1>`–`<h4>` above it or its `summary` attribute. Cells lose
/// their markup and entities. One pass over the parts of the page ([`Parts`]): what is in
/// comments, scripts and styles is not read.
pub fn html_tables(html: &str, scan: &mut Scan) -> Result<Vec<Table>> {
    let lower = html.to_ascii_lowercase();
    let parts = Parts {
        html,
        lower: &lower,
        at: 0,
        line: 1,
    };
    let mut tables = Vec::new();
    let mut title = String::new();
    let mut heading: Option<String> = None;
    let mut open: Option<HtmlTable> = None;
    for part in parts {
        scan.tick()?;
        let (name, close, raw, line) = match part {
            Part::Text(t) => {
                if let Some(c) = open.as_mut().and_then(|o| o.cell.as_mut()) {
                    c.1.push_str(t);
                } else if let (None, Some(h)) = (&open, heading.as_mut()) {
                    h.push_str(t);
                }
                continue;
            }
            Part::Tag {
                name,
                close,
                raw,
                line,
            } => (name.to_ascii_lowercase(), close, raw, line),
        };
        let Some(t) = open.as_mut() else {
            // Outside tables: headings, and the start of a table.
            let is_h = name.len() == 2
                && name.starts_with('h')
                && (b'1'..=b'4').contains(&name.as_bytes()[1]);
            match (name.as_str(), close) {
                ("table", false) => {
                    // A table costs a cell (what keeps it), empty or not.
                    scan.take(1, line)?;
                    heading = None;
                    open = Some(HtmlTable {
                        summary: attribute(raw, "summary").map(titled),
                        columns: Vec::new(),
                        rows: Vec::new(),
                        row: None,
                        cell: None,
                    });
                }
                _ if is_h && !close => heading = Some(String::new()),
                _ if close && name.starts_with('h') => {
                    if let Some(h) = heading.take() {
                        let t = folded(&h);
                        if !t.is_empty() {
                            title = titled(t);
                        }
                    }
                }
                _ => {
                    if let Some(h) = heading.as_mut() {
                        h.push(' ');
                    }
                }
            }
            continue;
        };
        match (name.as_str(), close) {
            ("table", true) => {
                t.end_row(scan)?;
                let t = open.take().expect("open");
                tables.push(finished(t, &title));
            }
            ("tr", false) => {
                t.end_row(scan)?;
                t.row = Some((Vec::new(), Vec::new(), line));
            }
            ("tr", true) => t.end_row(scan)?,
            ("th" | "td", false) if t.row.is_some() => {
                t.end_cell();
                t.cell = Some((name == "th", String::new()));
            }
            ("th" | "td", true) => t.end_cell(),
            _ => {
                // Any other tag inside a cell separates words.
                if let Some(c) = t.cell.as_mut() {
                    c.1.push(' ');
                }
            }
        }
    }
    if let Some(mut t) = open {
        // A table never closed ends with the page.
        t.end_row(scan)?;
        tables.push(finished(t, &title));
    }
    Ok(tables)
}

/// The most of a heading kept as a table's title: far more than any report's headings, and
/// a title is copied to every table under it.
const MAX_TITLE: usize = 256;

/// `t` as a title: cut to [`MAX_TITLE`] bytes.
fn titled(mut t: String) -> String {
    if t.len() > MAX_TITLE {
        let mut end = MAX_TITLE;
        while !t.is_char_boundary(end) {
            end -= 1;
        }
        t.truncate(end);
        t.push('…');
    }
    t
}

/// A table read, titled: by the heading above it, else its summary; AWR's summaries say
/// what the table is ("This table displays load profile"), kept where the heading is
/// missing or generic.
fn finished(t: HtmlTable, heading: &str) -> Table {
    let mut title = match &t.summary {
        Some(s) if heading.is_empty() => s.clone(),
        _ => heading.to_string(),
    };
    if let Some(s) = &t.summary
        && !title.to_ascii_lowercase().contains("load profile")
        && s.to_ascii_lowercase().contains("load profile")
    {
        title = "Load Profile".into();
    }
    Table {
        title,
        columns: t.columns,
        rows: t.rows,
    }
}

fn attribute(tag: &str, name: &str) -> Option<String> {
    let l = tag.to_ascii_lowercase();
    let p = l.find(&format!("{name}="))? + name.len() + 1;
    let q = tag[p..].chars().next()?;
    if q == '"' || q == '\'' {
        let e = tag[p + 1..].find(q)? + p + 1;
        Some(entities(&tag[p + 1..e]))
    } else {
        None
    }
}

/// The text of a cell or heading: entities decoded, spaces folded.
fn folded(text: &str) -> String {
    let decoded = entities(text);
    let mut out = String::with_capacity(decoded.len());
    for w in decoded.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    out
}

fn entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    s.replace("&nbsp;", " ")
        .replace("&#160;", " ")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOP5: &str = "\
Top 5 Timed Events                                                    Avg %Total
~~~~~~~~~~~~~~~~~~                                                   wait   Call
Event                                            Waits    Time (s)   (ms)   Time
----------------------------------------- ------------ ----------- ------ ------
CPU time                                                     3,148          35.8
log file sync                                1,207,863       2,905      2   33.1
log file switch (checkpoint
  incomplete)                                    4,627         828    179    9.4
db file scattered read                         172,724         670      4    7.6
          -------------------------------------------------------------
";

    #[test]
    fn a_text_table_has_stacked_headings_and_joined_wrapped_names() {
        let stop = AtomicBool::new(false);
        let t = &text_tables(TOP5, &mut Scan::new("top5", &stop)).unwrap()[0];
        assert_eq!(t.title, "Top 5 Timed Events");
        assert_eq!(t.columns[1], "Waits");
        assert_eq!(t.columns[2], "Time (s)");
        assert!(t.columns[3].contains("(ms)"), "{:?}", t.columns);
        assert_eq!(t.rows.len(), 4, "{:?}", t.rows);
        assert_eq!(
            t.rows[1].cells[..4],
            ["log file sync", "1,207,863", "2,905", "2"]
        );
        assert_eq!(
            t.rows[2].cells[0],
            "log file switch (checkpoint incomplete)"
        );
        assert_eq!(t.rows[2].cells[1], "4,627");
        assert_eq!(t.rows[2].line, 7);
        assert_eq!(t.rows[0].cells[1], "");
        assert_eq!(t.rows[0].cells[2], "3,148");
    }

    #[test]
    fn an_html_table_has_its_heading_and_cells() {
        let html = "<h3 class=\"awr\">Top 10 Foreground Events by Total Wait Time</h3>\n<table border=\"0\" class=\"tdiff\" summary=\"This table displays top 10 wait events by total wait time\">\n<tr><th class=\"awrbg\" scope=\"col\">Event</th><th class=\"awrbg\" scope=\"col\">Waits</th></tr>\n<tr><td scope=\"row\" class='awrc'>db file sequential read</td><td align=\"right\" class='awrc'>1,234&nbsp;</td></tr>\n</table>";
        let stop = AtomicBool::new(false);
        let t = &html_tables(html, &mut Scan::new("awr.html", &stop)).unwrap()[0];
        assert_eq!(t.title, "Top 10 Foreground Events by Total Wait Time");
        assert_eq!(t.columns, ["Event", "Waits"]);
        assert_eq!(t.rows[0].cells, ["db file sequential read", "1,234"]);
        assert_eq!(t.rows[0].line, 4);
    }

    /// Reads `text` (HTML when it starts with `<`) with a fresh [`Scan`]: the tables (or the
    /// error) and the steps taken.
    fn read(text: &str) -> (Result<Vec<Table>>, u64) {
        let stop = AtomicBool::new(false);
        let mut scan = Scan::new("adversarial", &stop);
        let r = if text.starts_with('<') {
            html_tables(text, &mut scan)
        } else {
            text_tables(text, &mut scan)
        };
        (r, scan.steps)
    }

    /// Adversarial markup of about `bytes`: `unit` repeated, after `head`.
    fn made(head: &str, unit: &str, bytes: usize) -> String {
        format!("{head}{}", unit.repeat(bytes / unit.len()))
    }

    /// Whatever the markup, a report is read in one pass: the steps grow with its size and no
    /// faster (twice the input, twice the steps), each step consuming at least a byte, and a
    /// few megabytes of what made the old reader rescan (thousands of tables without a
    /// heading, tags that start headings and never end, unterminated comments, scripts and
    /// cells, a row per line) are read at once. The counts, not the clock, are checked.
    #[test]
    fn html_of_any_shape_is_read_in_one_pass() {
        const MB: usize = 256 << 10;
        let shapes: [(&str, &str); 8] = [
            ("", "<table></table>\n"),
            ("<table>", "<tr><td>x</td></tr>\n"),
            ("<table>", "<td>"),
            ("", "<h1>"),
            ("", "<hr><h"),
            ("<table><tr><td>", "<!--"),
            ("", "<script>"),
            ("<table>", "<tr><td>db file sequential read</td><td>1</td>"),
        ];
        for (head, unit) in shapes {
            let one = made(head, unit, MB);
            let two = made(head, unit, 2 * MB);
            let (r1, s1) = read(&one);
            let (r2, s2) = read(&two);
            assert!(s1 <= one.len() as u64 && s2 <= two.len() as u64, "{unit:?}");
            assert!(s2 <= 2 * s1 + 64, "{unit:?}: {s1} then {s2} steps");
            // Either read, or refused for holding too many cells: never a hang.
            if let (Ok(t1), Ok(t2)) = (&r1, &r2) {
                let rows = |t: &Vec<Table>| t.iter().map(|t| t.rows.len()).sum::<usize>();
                assert!(rows(t2) <= 2 * rows(t1) + 1, "{unit:?}");
            }
        }
        // A row per line, every row with its own line, without a rescan.
        let (t, _) = read(&made("<table>", "<tr><td>a</td><td>1</td></tr>\n", MB));
        let t = t.unwrap();
        assert_eq!(t[0].rows.last().unwrap().line, t[0].rows.len());
    }

    #[test]
    fn text_of_any_shape_is_read_in_one_pass() {
        const MB: usize = 256 << 10;
        let wide = |n: usize| {
            format!(
                "{}\n{}\n{}",
                "h ".repeat(n),
                "- ".repeat(n),
                format!("x {}\n", "1 ".repeat(n)).repeat(16)
            )
        };
        let shapes: [(String, &str); 4] = [
            // Wrapped row names, lines without figures, one after another.
            ("Event  Waits\n------ -----\n".into(), "a wrapped name\n"),
            // One long row: every figure in the last column.
            ("Event  Waits\n------ -----\nx ".into(), "1 "),
            // Tables one after another, each under the lines of the last.
            (String::new(), "-- --\n"),
            // Headings, one per line.
            (String::new(), "Top 5 Timed Events\n"),
        ];
        for (head, unit) in &shapes {
            let (r1, s1) = read(&made(head, unit, MB));
            let (r2, s2) = read(&made(head, unit, 2 * MB));
            assert!(s2 <= 2 * s1 + 64, "{unit:?}: {s1} then {s2} steps");
            assert!(r1.is_ok() == r2.is_ok() || r2.is_err(), "{unit:?}");
        }
        // 131,072 columns, rows of them: refused for their cells.
        let (r, _) = read(&wide(1 << 17));
        let e = r.unwrap_err().to_string();
        assert!(e.contains("table cells"), "{e}");
        // One line of megabytes.
        let (r, steps) = read(&"a".repeat(4 * MB));
        assert!(r.unwrap().is_empty());
        assert_eq!(steps, 1);
    }

    #[test]
    fn a_long_heading_is_not_copied_whole_to_every_table_under_it() {
        let page = format!(
            "<h3>Top 10 {}</h3>{}",
            "x".repeat(1 << 20),
            "<table></table>".repeat(10_000)
        );
        let (t, _) = read(&page);
        let t = t.unwrap();
        assert_eq!(t.len(), 10_000);
        assert!(
            t.iter()
                .all(|t| t.title.len() <= MAX_TITLE + '…'.len_utf8())
        );
        assert!(t[0].title.starts_with("Top 10 x"));
    }

    #[test]
    fn comments_scripts_and_styles_hold_no_tables() {
        let table = "<table><tr><th>Event</th></tr><tr><td>hidden</td></tr></table>";
        for hide in [
            format!("<!--{table}-->"),
            format!("<script>{table}</script>"),
            format!("<SCRIPT type=x>if (a<b) {table}</SCRIPT >"),
            format!("<style>{table}</style>"),
            format!("<!-- <script> -->{table}"),
        ] {
            let (t, _) = read(&format!("<p>{hide}</p>"));
            let shown = hide.starts_with("<!-- <script>");
            assert_eq!(t.unwrap().len(), usize::from(shown), "{hide}");
        }
        // Unterminated: the rest of the page is the comment's or the script's.
        for open in ["<!--", "<script>", "<style>"] {
            let (t, _) = read(&format!("<p>{open}{table}"));
            assert!(t.unwrap().is_empty(), "{open}");
        }
    }

    #[test]
    fn a_signal_stops_the_reading() {
        let stop = AtomicBool::new(true);
        let mut scan = Scan::new("r.html", &stop);
        let e = html_tables("<table></table>", &mut scan).unwrap_err();
        assert!(matches!(e, Error::Interrupted(_)), "{e}");
        let e = text_tables("a\n", &mut scan).unwrap_err();
        assert!(matches!(e, Error::Interrupted(_)), "{e}");
    }
}

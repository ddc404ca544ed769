//! A database report read as tables: the text reports (AWR, Statspack, `iostat -x`) and the
//! AWR HTML report become the same thing — titled tables of cells, each row remembering the
//! line it came from — so that one reader finds the figures in either.

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
    if token == "N/A" || token == "-" {
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
fn tokens(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices() {
        match (c.is_whitespace(), start) {
            (false, None) => start = Some(i),
            (true, Some(s)) => {
                out.push((s, &line[s..i]));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, &line[s..]));
    }
    out
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
    let l = line.trim().to_ascii_lowercase();
    !l.is_empty() && l.len() < 120 && HEADINGS.iter().any(|h| l.starts_with(h))
}

/// The tables of a text report: every block of rows under a line of dash groups, with the
/// headings above that line stacked per column, titled by the nearest section heading
/// above. A row without figures continues on the next line (a wrapped event name).
pub fn text_tables(text: &str) -> Vec<Table> {
    let lines: Vec<&str> = text.lines().collect();
    let mut tables = Vec::new();
    let mut title = String::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if is_heading(line) {
            title = line.split("  ").next().unwrap_or("").trim().to_string();
        }
        let Some(spans) = dash_spans(line) else {
            i += 1;
            continue;
        };
        // Headings: the lines above, back to a blank, `~~~`, `->` or heading line.
        // A `~~~` underline or the heading line itself may carry headings to the right
        // (`Top 5 Timed Events      Avg %Total`): kept with the rest blanked.
        let mut head: Vec<String> = Vec::new();
        let mut j = i;
        while j > 0 && head.len() < 4 {
            let h = lines[j - 1];
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
                    head.push(format!("{}{}", " ".repeat(p), &h[p..]));
                }
                break;
            }
            head.push(h.to_string());
            j -= 1;
        }
        head.reverse();
        let columns = spans
            .iter()
            .enumerate()
            .map(|(k, &(s, e))| {
                let next = spans.get(k + 1).map_or(usize::MAX, |n| n.0);
                let prev_end = if k == 0 { 0 } else { spans[k - 1].1 };
                let mut words = Vec::new();
                for h in &head {
                    for (at, tok) in tokens(h.as_str()) {
                        let end = at + tok.len();
                        // A heading word belongs to the column it ends in (right-aligned
                        // figures) or starts in (left-aligned names).
                        let ends_in = end > s && end <= e + 1;
                        let starts_in = at >= s && at < e;
                        let past_the_last = k + 1 == spans.len() && at >= e && at < next;
                        let just_before = at > prev_end && end < s && k > 0 && end + 1 >= s;
                        if ends_in || starts_in || past_the_last || just_before {
                            words.push(tok);
                        }
                    }
                }
                words.join(" ")
            })
            .collect::<Vec<_>>();
        let mut rows: Vec<Row> = Vec::new();
        let mut pending: Option<(String, usize)> = None;
        i += 1;
        while i < lines.len() {
            let l = lines[i];
            if l.trim().is_empty() || dash_spans(l).is_some() || l.trim().chars().all(|c| c == '-')
            {
                break;
            }
            let toks = tokens(l);
            let figures_from = spans.get(1).map_or(usize::MAX, |s| s.0);
            // The row's name: the tokens before the first figure at or past the second column.
            let first_figure = toks
                .iter()
                .position(|&(at, t)| is_figure(t) && at + t.len() > figures_from.saturating_sub(1));
            match first_figure {
                None => {
                    let name = l.trim().to_string();
                    pending = Some(match pending.take() {
                        Some((p, line)) => (format!("{p} {name}"), line),
                        None => (name, i + 1),
                    });
                }
                Some(f) => {
                    let own = toks[..f].iter().map(|t| t.1).collect::<Vec<_>>().join(" ");
                    let (name, line) = match pending.take() {
                        Some((p, line)) if own.is_empty() => (p, line),
                        Some((p, line)) => (format!("{p} {own}"), line),
                        None => (own, i + 1),
                    };
                    let mut cells = vec![String::new(); spans.len()];
                    cells[0] = name;
                    for &(at, t) in &toks[f..] {
                        let end = at + t.len();
                        // The column the token ends in, else the one it starts in.
                        let k = spans
                            .iter()
                            .position(|&(s, e)| end > s && end <= e + 1)
                            .or_else(|| spans.iter().position(|&(s, e)| at >= s && at < e))
                            .unwrap_or(spans.len() - 1)
                            .max(1);
                        if cells[k].is_empty() {
                            cells[k] = t.to_string();
                        } else {
                            cells[k] = format!("{} {t}", cells[k]);
                        }
                    }
                    rows.push(Row { cells, line });
                }
            }
            i += 1;
        }
        tables.push(Table {
            title: title.clone(),
            columns,
            rows,
        });
    }
    tables
}

/// `label:  value  value ...` lines under a heading (the Load Profile of a text report): each
/// becomes a row whose first cell is the label without its colon.
pub fn text_profile(text: &str, heading: &str) -> Option<Table> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.trim_start().to_ascii_lowercase().starts_with(heading))?;
    let mut rows = Vec::new();
    let mut seen_row = false;
    for (k, l) in lines.iter().enumerate().skip(start + 1) {
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
        let figures: Vec<&str> = l[colon + 1..].split_whitespace().collect();
        if label.is_empty() || figures.is_empty() || !figures.iter().all(|f| is_figure(f)) {
            if seen_row {
                break;
            }
            continue;
        }
        seen_row = true;
        let mut cells = vec![label.to_string()];
        cells.extend(figures.iter().map(|f| f.to_string()));
        rows.push(Row { cells, line: k + 1 });
    }
    (!rows.is_empty()).then(|| Table {
        title: "Load Profile".into(),
        columns: vec![String::new(), "Per Second".into(), "Per Transaction".into()],
        rows,
    })
}

/// The tables of an HTML report: each `<table>` with its `<th>` headings and `<td>` rows,
/// titled by the nearest `<h2>`/`<h3>` above it or its `summary` attribute. Cells lose
/// their markup and entities.
pub fn html_tables(html: &str) -> Vec<Table> {
    let lower = html.to_ascii_lowercase();
    let line_of = |at: usize| html[..at].matches('\n').count() + 1;
    let mut tables = Vec::new();
    let mut title = String::new();
    let mut at = 0;
    loop {
        let next_table = lower[at..].find("<table").map(|p| p + at);
        // Headings before the next table.
        let mut h = at;
        while let Some(p) = lower[h..].find("<h").map(|p| p + h) {
            if next_table.is_some_and(|t| p > t) {
                break;
            }
            let is_h = lower[p + 2..].starts_with(|c: char| ('1'..='4').contains(&c));
            let end = lower[p..].find("</h").map(|e| e + p);
            if let (true, Some(end)) = (is_h, end) {
                let t = text_of(&html[p..end]);
                if !t.is_empty() {
                    title = t;
                }
                h = end + 3;
            } else {
                h = p + 2;
            }
        }
        let Some(t) = next_table else { break };
        let Some(end) = lower[t..].find("</table").map(|e| e + t) else {
            break;
        };
        let open_end = lower[t..].find('>').map_or(t, |e| e + t);
        let summary = attribute(&html[t..open_end], "summary");
        let body = &html[t..end];
        let lbody = &lower[t..end];
        let mut columns = Vec::new();
        let mut rows = Vec::new();
        let mut r = 0;
        while let Some(p) = lbody[r..].find("<tr").map(|p| p + r) {
            let e = lbody[p..].find("</tr").map_or(lbody.len(), |e| e + p);
            let cells_th = cells(&body[p..e], &lbody[p..e], "th");
            let cells_td = cells(&body[p..e], &lbody[p..e], "td");
            if !cells_th.is_empty() && cells_td.is_empty() {
                columns = cells_th;
            } else if !cells_td.is_empty() {
                let mut c = cells_th;
                c.extend(cells_td);
                rows.push(Row {
                    cells: c,
                    line: line_of(t + p),
                });
            }
            r = e + 3;
        }
        let title = match &summary {
            Some(s) if title.is_empty() => s.clone(),
            _ => title.clone(),
        };
        let mut table = Table {
            title,
            columns,
            rows,
        };
        if let Some(s) = summary {
            // AWR's summaries say what the table is ("This table displays load profile"):
            // keep it where the heading is missing or generic.
            if !table.title.to_ascii_lowercase().contains("load profile")
                && s.to_ascii_lowercase().contains("load profile")
            {
                table.title = "Load Profile".into();
            }
        }
        tables.push(table);
        at = end + 7;
    }
    tables
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

fn cells(row: &str, lrow: &str, tag: &str) -> Vec<String> {
    let mut out = Vec::new();
    let open = format!("<{tag}");
    let close = format!("</{tag}");
    let mut at = 0;
    while let Some(p) = lrow[at..].find(&open).map(|p| p + at) {
        // `<th` must not match `<thead`.
        let after = lrow[p + open.len()..].chars().next();
        if !matches!(after, Some('>') | Some(' ') | Some('\t') | Some('\n')) {
            at = p + open.len();
            continue;
        }
        let Some(s) = lrow[p..].find('>').map(|s| s + p + 1) else {
            break;
        };
        let e = lrow[s..].find(&close).map_or(lrow.len(), |e| e + s);
        out.push(text_of(&row[s..e]));
        at = e;
    }
    out
}

/// The text of an HTML fragment: tags dropped, entities decoded, spaces folded.
fn text_of(fragment: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in fragment.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                out.push(' ');
            }
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    entities(&out)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn entities(s: &str) -> String {
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
        let t = &text_tables(TOP5)[0];
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
        let t = &html_tables(html)[0];
        assert_eq!(t.title, "Top 10 Foreground Events by Total Wait Time");
        assert_eq!(t.columns, ["Event", "Waits"]);
        assert_eq!(t.rows[0].cells, ["db file sequential read", "1,234"]);
        assert_eq!(t.rows[0].line, 4);
    }
}

//! Reports are written in one place: `src/report/` renders every report (text, Markdown,
//! HTML, CSV) from the report model, and `src/report/output.rs` is the one way a command's
//! result reaches stdout. Outside it, no source prints to stdout, writes HTML, Markdown or
//! CSV syntax, or lines up a table by hand: this reads `src/**/*.rs` (comments and test
//! modules left out), as a reviewer would, and fails on a `println!`, `print!` or
//! `stdout()`, and on a string literal holding an HTML tag, a Markdown table rule or fence,
//! CSV quoting or a width in a format string.

use std::path::Path;

use crate::util::rust_files;

/// Folders left out, each with its reason.
const EXEMPT_DIRS: &[(&str, &str)] = &[
    (
        "report/",
        "the renderers: the one place HTML and aligned text are written",
    ),
    (
        "capture/tables.rs",
        "reads the HTML of Oracle's AWR report (finds its tables); it writes none",
    ),
];

/// Literals allowed to hold a width, each with its file and reason: none is a table.
const EXEMPT_WIDTHS: &[(&str, &str, &str)] = &[
    (
        "progress.rs",
        "[{bar:30}]",
        "indicatif's template for the live progress line: the bar's length, not a column",
    ),
    (
        "error.rs",
        "  {:>3}  {meaning}",
        "the exit statuses in clap's --help footer (help text clap prints, not a command's result)",
    ),
];

/// The source without what only tests compile: a `#[cfg(test)]` block (`mod tests { ... }`)
/// ends the code; a one-line `#[cfg(test)]` item is left out.
fn code_of(text: &str) -> String {
    let mut out = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(l) = lines.next() {
        if l.trim() == "#[cfg(test)]" {
            match lines.peek() {
                Some(next) if next.trim_end().ends_with(';') => {
                    lines.next();
                    continue;
                }
                _ => break,
            }
        }
        out.push(l);
    }
    out.join("\n")
}

/// The contents of the string literals in `code` ("...", r"...", r#"..."#), with the line
/// each starts on; comments, char literals and lifetimes are skipped.
fn literals(code: &str) -> Vec<(usize, String)> {
    scan(code).0
}

/// `code` with its comments and the contents of its string and char literals blanked (each
/// character a space, line breaks kept): what is left is what the code calls.
fn bare(code: &str) -> String {
    scan(code).1
}

/// The string literals of `code` (as [`literals`]) and `code` without comments and literals
/// (as [`bare`]), in one pass.
fn scan(code: &str) -> (Vec<(usize, String)>, String) {
    let c: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut kept = String::with_capacity(code.len());
    let (mut i, mut line) = (0, 1);
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    // Blanks c[from..to] in `kept`, keeping its line breaks.
    let blank = |kept: &mut String, from: usize, to: usize| {
        for &ch in &c[from..to.min(c.len())] {
            kept.push(if ch == '\n' { '\n' } else { ' ' });
        }
    };
    while i < c.len() {
        let from = i;
        match c[i] {
            '\n' => {
                line += 1;
                i += 1;
                kept.push('\n');
            }
            '/' if at(i + 1) == '/' => {
                while i < c.len() && c[i] != '\n' {
                    i += 1;
                }
                blank(&mut kept, from, i);
            }
            '/' if at(i + 1) == '*' => {
                i += 2;
                while i < c.len() && !(c[i] == '*' && at(i + 1) == '/') {
                    line += usize::from(c[i] == '\n');
                    i += 1;
                }
                i += 2;
                blank(&mut kept, from, i);
            }
            '\'' => {
                // A char literal ('x', '\n', '"') or a lifetime ('a).
                if at(i + 1) == '\\' {
                    i += 2;
                    while i < c.len() && c[i] != '\'' {
                        i += 1;
                    }
                    i += 1;
                    blank(&mut kept, from, i);
                } else if at(i + 2) == '\'' {
                    i += 3;
                    blank(&mut kept, from, i);
                } else {
                    i += 1;
                    kept.push('\'');
                }
            }
            'r' if (at(i + 1) == '"' || at(i + 1) == '#')
                && (i == 0 || !(c[i - 1].is_alphanumeric() || c[i - 1] == '_')) =>
            {
                let mut j = i + 1;
                let mut hashes = 0;
                while at(j) == '#' {
                    hashes += 1;
                    j += 1;
                }
                if at(j) != '"' {
                    i += 1;
                    kept.push('r');
                    continue;
                }
                let start = line;
                let mut s = String::new();
                j += 1;
                while j < c.len() {
                    if c[j] == '"' && (1..=hashes).all(|k| at(j + k) == '#') {
                        break;
                    }
                    line += usize::from(c[j] == '\n');
                    s.push(c[j]);
                    j += 1;
                }
                out.push((start, s));
                i = j + 1 + hashes;
                blank(&mut kept, from, i);
            }
            '"' => {
                let start = line;
                let mut s = String::new();
                i += 1;
                while i < c.len() && c[i] != '"' {
                    if c[i] == '\\' {
                        s.push(c[i]);
                        i += 1;
                    }
                    line += usize::from(at(i) == '\n');
                    s.push(at(i));
                    i += 1;
                }
                out.push((start, s));
                i += 1;
                blank(&mut kept, from, i);
            }
            ch => {
                i += 1;
                kept.push(ch);
            }
        }
    }
    (out, kept)
}

/// The HTML a literal writes: a tag's opening (`<table`, `<td>`...) or any closing tag.
fn html_in(s: &str) -> Option<String> {
    const TAGS: &[&str] = &[
        "html", "head", "body", "table", "thead", "tbody", "tr", "td", "th", "div", "span", "svg",
        "path", "rect", "text", "line", "g", "p", "a", "ul", "ol", "li", "pre", "h1", "h2", "h3",
        "h4", "details", "summary", "style", "script", "br", "b", "i", "em", "strong",
    ];
    let lower = s.to_ascii_lowercase();
    if let Some(i) = lower.find("</") {
        let rest = &lower[i + 2..];
        if rest.starts_with(|c: char| c.is_ascii_alphabetic()) {
            return Some(lower[i..].chars().take(12).collect());
        }
    }
    for (i, _) in lower.match_indices('<') {
        let rest = &lower[i + 1..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        let after = rest[name.len()..].chars().next();
        if TAGS.contains(&name.as_str()) && matches!(after, Some(' ' | '>' | '/')) {
            return Some(lower[i..].chars().take(12).collect());
        }
        if rest.starts_with("!doctype") {
            return Some("<!DOCTYPE".into());
        }
    }
    None
}

/// The format arguments of a literal that set a width (`{:>10}`, `{x:<5}`, `{:w$}`,
/// `{:>10.1}`). A zero-padded number (`{:03}`) and a precision alone (`{:.2}`) are not.
fn widths_in(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'{' && b.get(i + 1) == Some(&b'{') {
            i += 2;
            continue;
        }
        if b[i] != b'{' {
            i += 1;
            continue;
        }
        let Some(len) = s[i + 1..].find('}') else {
            break;
        };
        let inner = &s[i + 1..i + 1 + len];
        i += len + 2;
        let Some((arg, spec)) = inner.split_once(':') else {
            continue;
        };
        if !arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        {
            continue;
        }
        if let Some(w) = width_of(spec) {
            out.push(format!("{{{inner}}} (width {w})"));
        }
    }
    out
}

/// The width a format spec sets, if it is a whole spec (`[[fill]align][sign]['#']['0']
/// [width]['.' precision][type]`) with a width that is not zero padding.
fn width_of(spec: &str) -> Option<String> {
    let c: Vec<char> = spec.chars().collect();
    let mut i = 0;
    let align = |ch: char| matches!(ch, '<' | '>' | '^');
    let mut aligned = false;
    if c.len() >= 2 && align(c[1]) {
        i = 2;
        aligned = true;
    } else if !c.is_empty() && align(c[0]) {
        i = 1;
        aligned = true;
    }
    while i < c.len() && matches!(c[i], '+' | '-' | '#') {
        i += 1;
    }
    let zero = i < c.len() && c[i] == '0';
    let start = i;
    while i < c.len() && (c[i].is_ascii_alphanumeric() || c[i] == '_') {
        i += 1;
    }
    let mut width: String = c[start..i].iter().collect();
    if i < c.len() && c[i] == '$' {
        i += 1;
        width.push('$');
    } else {
        // Without `$`, only digits are a width (letters would be the type: `x`, `e`, `?`).
        let digits = width.chars().take_while(|c| c.is_ascii_digit()).count();
        i = start + digits;
        width.truncate(digits);
    }
    if i < c.len() && c[i] == '.' {
        i += 1;
        while i < c.len() && (c[i].is_ascii_alphanumeric() || matches!(c[i], '_' | '$' | '*')) {
            i += 1;
        }
    }
    while i < c.len() && matches!(c[i], '?' | 'x' | 'X' | 'e' | 'E' | 'o' | 'b' | 'p') {
        i += 1;
    }
    if i != c.len() || width.is_empty() {
        return None;
    }
    // `{:03}` pads a number with zeros (a file's number): no column.
    if zero && !aligned && !width.ends_with('$') {
        return None;
    }
    Some(width)
}

#[test]
fn the_scanner_finds_what_it_must() {
    let code = "let a = format!(\"{:>6} {x:<10} {:w$} {:>10.1}\");\n// \"<table>\"\n\
                let b = '\"'; let c = \"<td class=\\\"l\\\">{}</td>\";\n\
                fn f<'a>(s: &'a str) {}\nlet d = r#\"<div>\"#; let e = \"{:03} {:.2} {{:>9}} {\\\"k\\\":1}\";";
    let lits = literals(code);
    let texts: Vec<&str> = lits.iter().map(|(_, s)| s.as_str()).collect();
    assert_eq!(texts.len(), 4, "{texts:?}");
    assert_eq!(widths_in(texts[0]).len(), 4, "{:?}", widths_in(texts[0]));
    assert!(html_in(texts[1]).is_some() && html_in(texts[2]).is_some());
    assert_eq!(lits[1].0, 3, "line numbers count");
    assert!(widths_in(texts[3]).is_empty(), "{:?}", widths_in(texts[3]));
    assert!(html_in(texts[3]).is_none());
    for ok in ["a < b", "x <= y", "Vec<String>", "p99 < 10ms", "<N>"] {
        assert!(html_in(ok).is_none(), "{ok}");
    }
    for (spec, w) in [
        ("5", "5"),
        (">w$", "w$"),
        ("^8", "8"),
        ("-<4", "4"),
        ("08.3", ""),
    ] {
        assert_eq!(width_of(spec).unwrap_or_default(), w, "{spec}");
    }
}

#[test]
fn no_html_and_no_hand_aligned_table_outside_report() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut found = Vec::new();
    let mut exemptions_used = vec![false; EXEMPT_WIDTHS.len()];
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap().display().to_string();
        // A `tests.rs` is a test module (`#[cfg(test)] mod tests;`): tests may look for HTML.
        if EXEMPT_DIRS.iter().any(|(d, _)| rel.starts_with(d)) || rel.ends_with("/tests.rs") {
            continue;
        }
        let code = code_of(&std::fs::read_to_string(f).unwrap());
        for (line, s) in literals(&code) {
            if let Some(tag) = html_in(&s) {
                found.push(format!(
                    "{rel}:{line}: HTML {tag:?}: write it in src/report/html"
                ));
            }
            for w in widths_in(&s) {
                match EXEMPT_WIDTHS
                    .iter()
                    .position(|(file, lit, _)| rel == *file && s.contains(lit))
                {
                    Some(k) => exemptions_used[k] = true,
                    None => found.push(format!(
                        "{rel}:{line}: {w}: a hand-aligned column; build a report::sections::Table"
                    )),
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "HTML or hand-aligned tables outside src/report:\n{}",
        found.join("\n")
    );
    for ((file, lit, _), used) in EXEMPT_WIDTHS.iter().zip(exemptions_used) {
        assert!(used, "the exemption of {lit} in {file} is stale: remove it");
    }
}

/// The places outside `src/report/` that may touch stdout, each with its file, the call and
/// the reason: none prints a command's result. (Warnings and errors go to stderr with
/// `eprintln!`, which is not looked for; prompts go to the terminal through the prompt
/// crate.)
const STDOUT_ALLOWED: &[(&str, &str, &str)] = &[(
    "cluster/agent.rs",
    "stdout()",
    "`dbio agent` answers its coordinator in JSON lines on stdout: a protocol between two dbio processes, not a report",
)];

/// The calls that write to stdout (or take it to write): each must stand alone, not be the
/// end of a longer name (`eprintln!` is stderr).
const STDOUT_CALLS: &[&str] = &["println!", "print!", "stdout()", "STDOUT_FILENO"];

/// Where `call` stands alone in `code`.
fn calls_in<'a>(code: &'a str, call: &'a str) -> impl Iterator<Item = usize> + 'a {
    code.match_indices(call).filter_map(move |(i, _)| {
        let before = code[..i].chars().next_back();
        (!before.is_some_and(|c| c.is_alphanumeric() || c == '_')).then_some(i)
    })
}

/// The output syntax a literal writes, if any: a Markdown table rule or code fence, or CSV
/// quoting (a doubled quote).
fn syntax_in(s: &str) -> Option<&'static str> {
    const MARKS: &[(&str, &str)] = &[
        ("|---", "a Markdown table rule"),
        ("---|", "a Markdown table rule"),
        ("|:--", "a Markdown table rule"),
        ("--:|", "a Markdown table rule"),
        ("```", "a Markdown code fence"),
        ("\\\"\\\"", "CSV quoting (a doubled quote)"),
        ("\"\"", "CSV quoting (a doubled quote)"),
    ];
    MARKS
        .iter()
        .find(|(m, _)| s.contains(m))
        .map(|(_, what)| *what)
}

#[test]
fn the_scanner_keeps_the_code_and_blanks_the_rest() {
    let code = "println!(\"x\"); // print!(\"y\")\neprintln!(\"println!\"); let c = '\"';\n/* stdout() */ s.stdout(Stdio::null());";
    let kept = bare(code);
    assert_eq!(kept.lines().count(), 3, "{kept}");
    let found = |call| calls_in(&kept, call).count();
    assert_eq!(found("println!"), 1, "{kept}");
    assert_eq!(found("print!"), 0, "{kept}");
    assert_eq!(found("stdout()"), 0, "a child's stdout is not ours: {kept}");
    assert_eq!(syntax_in("|:--|--:|"), Some("a Markdown table rule"));
    assert_eq!(
        syntax_in("say \\\"\\\"x"),
        Some("CSV quoting (a doubled quote)")
    );
    assert_eq!(syntax_in("--sync|--async, a | b, x--y"), None);
}

#[test]
fn nothing_outside_report_prints_to_stdout_or_writes_output_syntax() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut found = Vec::new();
    let mut allowed_used = vec![false; STDOUT_ALLOWED.len()];
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap().display().to_string();
        // A `tests.rs` is a test module (`#[cfg(test)] mod tests;`).
        if rel.starts_with("report/") || rel.ends_with("/tests.rs") {
            continue;
        }
        let code = code_of(&std::fs::read_to_string(f).unwrap());
        let (lits, kept) = scan(&code);
        for call in STDOUT_CALLS {
            for at in calls_in(&kept, call) {
                let line = kept[..at].matches('\n').count() + 1;
                match (STDOUT_ALLOWED.iter())
                    .position(|(file, c, _)| rel == *file && c == call)
                {
                    Some(k) => allowed_used[k] = true,
                    None => found.push(format!(
                        "{rel}:{line}: {call}: print a command's result through report::Output (src/report/output.rs)"
                    )),
                }
            }
        }
        if EXEMPT_DIRS.iter().any(|(d, _)| rel.starts_with(d)) {
            continue;
        }
        for (line, s) in lits {
            if let Some(what) = syntax_in(&s) {
                found.push(format!(
                    "{rel}:{line}: {what} in {s:?}: write it in src/report"
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "stdout or output syntax outside src/report:\n{}",
        found.join("\n")
    );
    for ((file, call, _), used) in STDOUT_ALLOWED.iter().zip(allowed_used) {
        assert!(
            used,
            "the allowance of {call} in {file} is stale: remove it"
        );
    }
}

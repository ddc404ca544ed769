//! The repository explains itself: the README stays a user's document, ARCHITECTURE.md and
//! docs/ exist and their links resolve, docs/result-json.md names every field a real result
//! has, and code comments state their rules in words or cite `docs/<page>.md` — never a
//! document outside the repository (a spec section, an issue number, a seed).

use crate::util::Env;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::util::rust_files;

/// Files whose comments may still cite documents outside the repository (none: a file
/// listed here that no longer cites anything fails the test, so the list cannot go stale).
const PENDING: &[&str] = &[];

/// The pages the README links for what it no longer holds itself.
const PAGES: &[&str] = &[
    "commands.md",
    "events.md",
    "jobs.md",
    "measurement.md",
    "outputs.md",
    "result-json.md",
    "safety.md",
];

const README_MAX_LINES: usize = 620;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The comment of a line of Rust, if it has one: what follows the first `//` outside a
/// string or character literal. A line inside a multi-line string may be misread; dbio's
/// sources keep comments on lines of their own or after code.
fn comment_of(line: &str) -> Option<&str> {
    let b = line.as_bytes();
    let mut in_str = false;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' if in_str => i += 1,
            b'"' => in_str = !in_str,
            // A char literal such as '"' must not open a string.
            b'\'' if !in_str && i + 2 < b.len() && b[i + 2] == b'\'' => i += 2,
            b'/' if !in_str && b.get(i + 1) == Some(&b'/') => return Some(&line[i + 2..]),
            _ => {}
        }
        i += 1;
    }
    None
}

/// What in `text` cites a document that is not in the repository: "SPEC", "§", "seed 0…"
/// (the seed documents) or "issue N" / "issue #N".
fn citation(text: &str) -> Option<String> {
    let lower = text.to_lowercase();
    if text.contains("SPEC") {
        return Some("SPEC".into());
    }
    if text.contains('§') {
        return Some("§".into());
    }
    if lower.contains("seed 0") {
        return Some("seed 0…".into());
    }
    let mut rest = lower.as_str();
    while let Some(at) = rest.find("issue") {
        let after = rest[at + "issue".len()..].trim_start_matches([' ', '#']);
        let spaced = rest[at + "issue".len()..].starts_with([' ', '#']);
        if spaced && after.starts_with(|c: char| c.is_ascii_digit()) {
            return Some("issue <number>".into());
        }
        rest = &rest[at + "issue".len()..];
    }
    None
}

#[test]
fn the_citation_finder_finds_citations_and_only_citations() {
    assert_eq!(comment_of("let x = 1; // SPEC §6"), Some(" SPEC §6"));
    assert_eq!(comment_of(r#"let u = "http://x"; // ok"#), Some(" ok"));
    assert_eq!(comment_of(r#"f("a \" // b");"#), None);
    assert_eq!(
        comment_of(r#"let q = '"'; // after a quote char"#),
        Some(" after a quote char")
    );
    assert_eq!(comment_of("/// doc"), Some("/ doc"));
    assert_eq!(comment_of("//! module doc"), Some("! module doc"));
    for cited in [
        "(SPEC §7.1)",
        "seed 003's method",
        "Every option (issue 13).",
        "see issue #4",
        "§5",
    ] {
        assert!(citation(cited).is_some(), "{cited}");
    }
    for plain in [
        "the seed is in both",
        "--seed 12",
        "issues 32 requests",
        "an issue with the device",
        "docs/safety.md (Block devices)",
    ] {
        assert_eq!(citation(plain), None, "{plain}");
    }
}

#[test]
fn comments_cite_no_document_outside_the_repository() {
    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut found = Vec::new();
    let mut pending_clean = Vec::new();
    let mut seen = BTreeSet::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(f).unwrap();
        let cites: Vec<String> = text
            .lines()
            .enumerate()
            .filter_map(|(n, l)| {
                let what = citation(comment_of(l)?)?;
                Some(format!("src/{rel}:{}: {what}: {}", n + 1, l.trim()))
            })
            .collect();
        if PENDING.contains(&rel.as_str()) {
            seen.insert(rel.clone());
            if cites.is_empty() {
                pending_clean.push(rel);
            }
        } else {
            found.extend(cites);
        }
    }
    assert!(
        found.is_empty(),
        "comments citing documents outside the repository (say the rule in words, or cite docs/<page>.md):\n{}",
        found.join("\n")
    );
    let gone: Vec<_> = PENDING.iter().filter(|p| !seen.contains(**p)).collect();
    assert!(
        gone.is_empty() && pending_clean.is_empty(),
        "PENDING in tests/docs.rs is stale: remove {gone:?} (no longer in src/) and {pending_clean:?} (no citation left)"
    );
}

#[test]
fn the_readme_is_a_short_users_document() {
    let readme = read("README.md");
    let lines = readme.lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines, at most {README_MAX_LINES}: move reference material to docs/"
    );
    // Its first commands are what CI and a newcomer run.
    for first in [
        "cargo run --release -- run read-iops",
        "cargo test ",
        "cargo install --locked --path .",
    ] {
        assert!(readme.contains(first), "README.md lost `{first}`");
    }
    for page in PAGES {
        assert!(
            readme.contains(&format!("docs/{page}")),
            "README.md does not link docs/{page}"
        );
    }
    assert!(readme.contains("ARCHITECTURE.md"));
}

#[test]
fn the_architecture_and_the_docs_exist_and_cite_nothing_outside() {
    let mut docs = vec!["README.md".to_string(), "ARCHITECTURE.md".to_string()];
    docs.extend(PAGES.iter().map(|p| format!("docs/{p}")));
    for d in &docs {
        let text = read(d);
        assert!(text.starts_with("# "), "{d} has no title");
        assert!(text.lines().count() > 20, "{d} is all but empty");
        for (n, l) in text.lines().enumerate() {
            assert_eq!(citation(l), None, "{d}:{}: {l}", n + 1);
        }
    }
    // Every layer's modules appear in ARCHITECTURE.md's layer table.
    let arch = read("ARCHITECTURE.md");
    for m in [
        "error", "units", "sys", "clock", "warnings", "progress", "safety", "engine", "measure",
        "storage", "verify", "dataset", "workload", "report", "run", "store", "options", "sweep",
        "sizing", "mem", "doctor", "cluster", "cli", "app",
    ] {
        assert!(
            arch.contains(&format!("`{m}`")),
            "ARCHITECTURE.md: no `{m}` in the layers"
        );
    }
}

/// GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces
/// as hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The text outside fenced code blocks.
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for l in text.lines() {
        if l.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}

fn anchors(text: &str) -> BTreeSet<String> {
    prose(text)
        .lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| slug(l.trim_start_matches('#')))
        .collect()
}

#[test]
fn every_link_between_the_documents_resolves() {
    assert_eq!(slug(" `dbio map PATH`"), "dbio-map-path");
    assert_eq!(
        slug(" Sizing storage: `--span` and `dbio size`"),
        "sizing-storage---span-and-dbio-size"
    );
    let mut docs = vec![PathBuf::from("README.md"), PathBuf::from("ARCHITECTURE.md")];
    for e in std::fs::read_dir(root().join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            docs.push(p.strip_prefix(root()).unwrap().to_path_buf());
        }
    }
    let mut bad = Vec::new();
    for d in &docs {
        let text = prose(&read(&d.to_string_lossy()));
        for (_, rest) in text.match_indices("](").map(|(i, _)| ((), &text[i + 2..])) {
            let Some(end) = rest.find(')') else { continue };
            let link = &rest[..end];
            if link.starts_with("http") || link.contains(' ') {
                continue;
            }
            let (file, anchor) = link.split_once('#').unwrap_or((link, ""));
            let target = if file.is_empty() {
                d.clone()
            } else {
                d.parent().unwrap().join(file)
            };
            let full = root().join(&target);
            if !full.exists() {
                bad.push(format!("{}: {link}: no such file", d.display()));
                continue;
            }
            if !anchor.is_empty() && full.is_file() {
                let heads = anchors(&std::fs::read_to_string(&full).unwrap());
                if !heads.contains(anchor) {
                    bad.push(format!("{}: {link}: no such heading", d.display()));
                }
            }
        }
    }
    assert!(bad.is_empty(), "broken links:\n{}", bad.join("\n"));
}

/// The field names docs/result-json.md gives in backquotes (outside its example).
fn documented_names() -> BTreeSet<String> {
    let text = prose(&read("docs/result-json.md"));
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The top-level table of docs/result-json.md: each field and whether it is optional.
fn top_level_rows() -> Vec<(String, bool)> {
    let text = read("docs/result-json.md");
    let table = text
        .split("## Top level")
        .nth(1)
        .expect("a Top level section")
        .split("\n## ")
        .next()
        .unwrap();
    table
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            (
                cells[1].trim_matches('`').to_string(),
                cells[2].contains("optional"),
            )
        })
        .collect()
}

#[test]
fn result_json_doc_names_every_field_of_a_real_result() {
    let env = Env::new();
    let r: Value = env.json(&[
        "run",
        "read-iops",
        "--engine",
        "null",
        "--size",
        "8M",
        "--sessions",
        "2",
        "--duration",
        "1s",
        "--warmup",
        "0s",
        "--json",
    ]);
    let obj = r.as_object().unwrap();
    let rows = top_level_rows();
    assert!(
        rows.len() >= 25,
        "the Top level table has {} rows",
        rows.len()
    );
    // Every field the doc says is always there is there ...
    for (name, optional) in &rows {
        assert!(
            *optional || obj.contains_key(name),
            "docs/result-json.md says `{name}` is always in result.json; this result has no such field"
        );
    }
    // ... and every field of the result is in the doc.
    let documented: BTreeSet<&str> = rows.iter().map(|(n, _)| n.as_str()).collect();
    for k in obj.keys() {
        assert!(
            documented.contains(k.as_str()),
            "result.json field `{k}` is not in docs/result-json.md"
        );
    }
    // Below the top level: every key of config, dataset, events, totals, cpu, timeseries,
    // ash and lint is named in the doc.
    let names = documented_names();
    let mut missing = Vec::new();
    let mut check = |section: &str, v: &Value| {
        if let Some(o) = v.as_object() {
            for k in o.keys() {
                // A name may be given in a group: `requests`, `waits`, … or `{ t, cpu, … }`.
                let named = names.iter().any(|n| {
                    n == k
                        || n.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                            .any(|w| w == k)
                });
                if !named {
                    missing.push(format!("{section}.{k}"));
                }
            }
        }
    };
    for s in [
        "config", "dataset", "host", "totals", "cpu", "ash", "storage", "os",
    ] {
        check(s, &r[s]);
    }
    check("events[]", &r["events"][0]);
    check("events[].latency_us", &r["events"][0]["latency_us"]);
    check("timeseries[]", &r["timeseries"][0]);
    check("ash.seconds[]", &r["ash"]["seconds"][0]);
    if let Some(first) = r["lint"].get(0) {
        check("lint[]", first);
    }
    for s in ["cpu", "memory", "io_pressure", "dbio_cpu"] {
        if let Some(first) = r["os"][s].get(0) {
            check(&format!("os.{s}[]"), first);
        }
    }
    assert!(
        missing.is_empty(),
        "result.json fields not named in docs/result-json.md: {missing:?}"
    );
    assert_eq!(r["schema"], "dbio.result.v1");
    assert!(read("docs/result-json.md").contains("dbio.result.v1"));
}

/// What the command table of docs/commands.md covers: each row's first cell names a command
/// (`dbio pg run`) and may go on with its siblings (`` `compare`, `clean` ``); placeholders
/// (`TEST`, `[PATH]`) and options (`--job FILE`) are not commands. Gives paths like "pg run",
/// with every prefix ("pg").
fn commands_in_the_table() -> BTreeSet<String> {
    let mut covered = BTreeSet::new();
    for line in read("docs/commands.md").lines() {
        let Some(first) = line
            .strip_prefix("| `dbio ")
            .map(|_| line.split('|').nth(1).unwrap())
        else {
            continue;
        };
        let mut base: Vec<&str> = Vec::new();
        for item in first.replace('`', "").split([',', '/']) {
            let words: Vec<&str> = item.split_whitespace().collect();
            let is_command = |w: &&str| {
                w.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                    && !w.starts_with('-')
            };
            let path: Vec<&str> = match words.first() {
                Some(&"dbio") => words[1..].iter().copied().take_while(is_command).collect(),
                Some(w) if is_command(w) => {
                    let mut p = base.clone();
                    p.push(w);
                    p
                }
                _ => continue,
            };
            for n in 1..=path.len() {
                covered.insert(path[..n].join(" "));
            }
            base = path[..path.len().saturating_sub(1)].to_vec();
        }
    }
    covered
}

#[test]
fn the_command_table_lists_every_command_the_program_has() {
    use clap::CommandFactory;
    // Each command with whether it is hidden (`agent`, started over ssh; `pg observe`, for
    // tests): a hidden one may be listed, the others must be. `help` is clap's.
    fn walk(cmd: &clap::Command, at: &str, out: &mut Vec<(String, bool)>) {
        for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            let path = format!("{at}{}", sub.get_name());
            walk(sub, &format!("{path} "), out);
            out.push((path, sub.is_hide_set()));
        }
    }
    let mut all = Vec::new();
    walk(&dbio::cli::Cli::command(), "", &mut all);
    let commands: Vec<String> = all.iter().filter(|c| !c.1).map(|c| c.0.clone()).collect();
    assert!(commands.iter().any(|c| c == "pg run"), "{commands:?}");
    let covered = commands_in_the_table();
    let missing: Vec<&String> = commands.iter().filter(|c| !covered.contains(*c)).collect();
    assert!(
        missing.is_empty(),
        "docs/commands.md's table leaves out: {missing:?} (it lists {covered:?})"
    );
    let unknown: Vec<&String> = covered
        .iter()
        .filter(|c| !all.iter().any(|(name, _)| name == *c))
        .collect();
    assert!(
        unknown.is_empty(),
        "docs/commands.md's table names commands the program does not have: {unknown:?}"
    );
}

/// Names ARCHITECTURE.md gives in backquotes that are not dbio's: other programs' names.
const FOREIGN: &[&str] = &["FIO_SYNCIO"];

/// Whether the sources define `name` (a type, trait, function, constant, field or variant):
/// `struct Name`, `fn name`, `name:`, `Name(`, `Name,`, ... as whole words.
fn defined(sources: &str, name: &str) -> bool {
    let word_end = |rest: &str| !rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
    let before = [
        "struct ", "enum ", "trait ", "type ", "fn ", "const ", "static ", "mod ", "    ", "pub ",
    ];
    sources.match_indices(name).any(|(i, _)| {
        let rest = &sources[i + name.len()..];
        word_end(rest)
            && before.iter().any(|b| sources[..i].ends_with(b))
            && (!sources[..i].ends_with("    ") || rest.starts_with([':', '(', ',', ' ']))
    })
}

#[test]
fn every_file_type_and_function_architecture_names_exists() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    rust_files(&root().join("tests"), &mut files);
    let sources: String = files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    let rel: Vec<String> = files
        .iter()
        .map(|f| {
            f.strip_prefix(root())
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let arch = read("ARCHITECTURE.md");
    let mut bad = Vec::new();
    for name in arch.split('`').skip(1).step_by(2) {
        // `f()` and `f(&x)` name the function f.
        let name = name.split('(').next().unwrap();
        if name.contains(['<', ' ', '*', '|', '='])
            || name.starts_with('-')
            || FOREIGN.contains(&name)
        {
            continue; // a placeholder, a command, an option or another program's name
        }
        let ok = if [
            "src/",
            "tests/",
            ".ci/",
            "bench/",
            "dist/",
            "docs/",
            "examples/",
        ]
        .iter()
        .any(|d| name.starts_with(d))
        {
            root().join(name).exists()
        } else if name.ends_with(".rs") || (name.ends_with('/') && !name.contains('.')) {
            // A file or folder named inside its module's paragraph: somewhere in src/.
            let tail = format!("/{name}");
            rel.iter().any(|r| r.ends_with(&tail) || r.contains(&tail))
        } else if name.starts_with(|c: char| c.is_ascii_uppercase())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_:./".contains(c))
        {
            // `Type`, `Type::function`, `Type.field`, `CONSTANT`, `Enum::Variant`.
            name.split([':', '.', '/'])
                .filter(|p| !p.is_empty())
                .all(|p| defined(&sources, p))
        } else if name.contains("::") {
            // `module::path::Item`: its last part is defined.
            defined(&sources, name.rsplit("::").next().unwrap())
        } else {
            continue;
        };
        if !ok {
            bad.push(name.to_string());
        }
    }
    bad.sort();
    bad.dedup();
    assert!(
        bad.is_empty(),
        "ARCHITECTURE.md names what the code does not have: {bad:?}"
    );
}

//! What dbio reads and writes at the paths a user names (issue 30, classes 4, 9 and part of
//! 11), tried as a hostile or clumsy user would: a foreign file, a link, a FIFO or a
//! directory where an output goes is refused before anything is done and left byte for byte
//! as it was; a file put in place of the metrics file during a run is left alone; inputs are
//! read bounded (FIFOs, devices, /proc files, a 10 GiB sparse file), parsed in one pass
//! (HTML comments and scripts skipped, long titles cut), figures no database reports are
//! refused naming their line, a signal stops parsing and sampling (exit 130, no job); an
//! empty path is bad input wherever a path is taken.

use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::util::{Env, is_root, refusal_line, skip};

/// The first line of every `--metrics` exposition (src/report/openmetrics.rs MARKER).
const METRICS_MARKER: &str = "# TYPE dbio_metrics_file gauge\n";

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/capture")
        .join(name)
        .display()
        .to_string()
}

/// A file that is not dbio's: its bytes, inode and modification time, checked unchanged.
struct Foreign {
    path: PathBuf,
    bytes: Vec<u8>,
    ino: u64,
    mtime: i64,
}

impl Foreign {
    fn new(path: PathBuf, bytes: &[u8]) -> Foreign {
        std::fs::write(&path, bytes).unwrap();
        let md = std::fs::metadata(&path).unwrap();
        Foreign {
            path,
            bytes: bytes.to_vec(),
            ino: md.ino(),
            mtime: md.mtime(),
        }
    }

    #[track_caller]
    fn assert_intact(&self, what: &str) {
        let md = std::fs::metadata(&self.path)
            .unwrap_or_else(|e| panic!("{what}: {} is gone ({e})", self.path.display()));
        assert_eq!(
            std::fs::read(&self.path).unwrap(),
            self.bytes,
            "{what}: the bytes of {} changed",
            self.path.display()
        );
        assert_eq!(
            md.ino(),
            self.ino,
            "{what}: {} was replaced",
            self.path.display()
        );
        assert_eq!(
            md.mtime(),
            self.mtime,
            "{what}: {} was written",
            self.path.display()
        );
    }
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
}

/// Waits for `child` at most `limit`; kills it when it is still running then.
fn wait_at_most(mut child: Child, limit: Duration) -> (Option<Output>, Duration) {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if child.try_wait().unwrap().is_some() {
            return (Some(child.wait_with_output().unwrap()), t0.elapsed());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    (None, t0.elapsed())
}

/// `dbio ARGS` in `env`, its output captured, started.
fn spawn(env: &Env, args: &[&str]) -> Child {
    env.process()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// `dbio ARGS`, which must be refused as bad input (exit 2, one line holding `words`) —
/// and quickly: a hang detector of 10 s (nothing is measured or waited on), not a timing.
#[track_caller]
fn refused_without_waiting(env: &Env, args: &[&str], words: &[&str]) -> String {
    let (out, took) = wait_at_most(spawn(env, args), Duration::from_secs(10));
    let out = out.unwrap_or_else(|| panic!("dbio {args:?} still ran after {took:?}: it waited"));
    refusal_line(&format!("dbio {args:?}"), &out, words)
}

/// A null-engine read-iops run with these extra arguments, as a command of `env`.
fn null_run<'e>(env: &'e Env, duration: &str) -> crate::util::Dbio<'e> {
    env.run("read-iops")
        .engine("null")
        .size("64M")
        .sessions(2)
        .warmup("0s")
        .duration(duration)
        .quiet()
}

/// Every thing that can already be at an output's path and is not dbio's: a file, a
/// symlink to a file, a dangling symlink, a hard link to a file, a FIFO, a directory.
/// Makes `name` one of them in `env`; returns the file behind it to check, if any.
fn plant(env: &Env, name: &str, kind: &str) -> Option<Foreign> {
    let at = env.join(name);
    let victim = || Foreign::new(env.join(&format!("{name}.victim")), b"precious\n");
    match kind {
        "file" => Some(Foreign::new(at, b"# TYPE mine gauge\nprecious\n")),
        "symlink" => {
            let v = victim();
            std::os::unix::fs::symlink(&v.path, &at).unwrap();
            Some(v)
        }
        "dangling" => {
            std::os::unix::fs::symlink(env.join("nowhere"), &at).unwrap();
            None
        }
        "hardlink" => {
            let v = victim();
            std::fs::hard_link(&v.path, &at).unwrap();
            Some(v)
        }
        "fifo" => {
            mkfifo(&at);
            None
        }
        "dir" => {
            std::fs::create_dir(&at).unwrap();
            None
        }
        _ => unreachable!(),
    }
}

const PLANTED: [&str; 6] = ["file", "symlink", "dangling", "hardlink", "fifo", "dir"];

/// `--metrics`, `--save-job` and a job's `-o`: whatever is already at the path is refused
/// before anything is created or measured, and is left byte for byte as it was.
#[test]
fn whatever_is_at_an_output_path_is_refused_before_anything_and_left_alone() {
    for kind in PLANTED {
        let env = Env::new();
        let v = plant(&env, "m.prom", kind);
        null_run(&env, "2s")
            .path_opt("--metrics", env.join("m.prom"))
            .refused_leaving_nothing(&["--metrics", "m.prom"]);
        if let Some(v) = &v {
            v.assert_intact(&format!("--metrics over a {kind}"));
        }

        let env = Env::new();
        let v = plant(&env, "job.toml", kind);
        null_run(&env, "2s")
            .path_opt("--save-job", env.join("job.toml"))
            .refused_leaving_nothing(&["--save-job", "job.toml"]);
        if let Some(v) = &v {
            v.assert_intact(&format!("--save-job over a {kind}"));
        }
        // With --metrics too: the metrics file is not made either.
        null_run(&env, "2s")
            .path_opt("--save-job", env.join("job.toml"))
            .path_opt("--metrics", env.join("new.prom"))
            .refused_leaving_nothing(&["--save-job"]);

        for (from, report) in [
            ("from-awr", fixture("awr-11g.txt")),
            ("from-iostat", fixture("iostat-sysstat12.txt")),
        ] {
            let env = Env::new();
            let v = plant(&env, "out.toml", kind);
            env.cmd("job")
                .args([from, &report, "-o"])
                .arg(env.join("out.toml"))
                .refused_leaving_nothing(&["--output", "out.toml"]);
            if let Some(v) = &v {
                v.assert_intact(&format!("{from} -o over a {kind}"));
            }
        }
    }
}

/// A metrics file dbio kept (`--metrics-keep`) is dbio's: the next run replaces it and
/// removes it. The same content in a file dbio may not call its own — another user's, or
/// one with a second link — is refused and left as it is.
#[test]
fn an_earlier_metrics_file_of_dbios_is_reused_and_a_copy_that_is_not_its_is_not() {
    let env = Env::new();
    let file = env.join("kept.prom");
    null_run(&env, "2s")
        .path_opt("--metrics", &file)
        .arg("--metrics-keep")
        .ok();
    let kept = std::fs::read_to_string(&file).unwrap();
    assert!(kept.starts_with(METRICS_MARKER), "{kept}");
    null_run(&env, "2s").path_opt("--metrics", &file).ok();
    assert!(
        !file.exists(),
        "dbio's own earlier file is replaced, then removed"
    );

    // dbio's content, a second link: the other name would lose it.
    let marked = Foreign::new(env.join("marked.prom"), kept.as_bytes());
    std::fs::hard_link(&marked.path, env.join("other-name")).unwrap();
    null_run(&env, "2s")
        .path_opt("--metrics", &marked.path)
        .refused_leaving_nothing(&["--metrics", "hard link"]);
    marked.assert_intact("a marked file with two links");

    // dbio's content, another user's file.
    if !is_root() {
        skip("chown to another user needs root");
        return;
    }
    let theirs = Foreign::new(env.join("theirs.prom"), kept.as_bytes());
    std::os::unix::fs::chown(&theirs.path, Some(65534), Some(65534)).unwrap();
    null_run(&env, "2s")
        .path_opt("--metrics", &theirs.path)
        .refused_leaving_nothing(&["--metrics", "another user"]);
    theirs.assert_intact("a marked file of another user");
}

/// A file put at the metrics file's name while the run writes it is not dbio's: it is not
/// replaced in the next second, nor removed at the end.
#[test]
fn a_file_put_in_place_of_the_metrics_file_during_a_run_is_left_alone() {
    let env = Env::new();
    let file = env.join("live.prom");
    let child = null_run(&env, "6s")
        .path_opt("--metrics", &file)
        .process()
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while !std::fs::read_to_string(&file).is_ok_and(|t| t.contains("dbio_requests_total")) {
        assert!(t0.elapsed() < Duration::from_secs(60), "no metrics written");
        std::thread::sleep(Duration::from_millis(50));
    }
    let mine = Foreign::new(env.join("mine.prom"), b"# my own exposition\n");
    std::fs::rename(&mine.path, &file).unwrap();
    let mine = Foreign { path: file, ..mine };
    let (out, _) = wait_at_most(child, Duration::from_secs(120));
    let out = out.expect("the run ends");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    mine.assert_intact("a file put at the metrics name");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--metrics"), "the run says so: {err}");
}

/// An empty path names nothing, and a path of only blanks is a slip of the shell (it would
/// make a directory named by a space): bad input (exit 2) for every option that takes a path,
/// typed or in a job file.
#[test]
fn an_empty_path_is_bad_input_wherever_a_path_is_taken() {
    let env = Env::new();
    for option in ["--target", "--out", "--metrics", "--save-job"] {
        for blank in ["", " ", " \t "] {
            null_run(&env, "1s")
                .opt(option, blank)
                .refused_leaving_nothing(&[option]);
        }
    }
    assert!(!env.join(" ").exists(), "no directory named by a space");
    env.cmd("sweep")
        .arg("read-iops")
        .engine("null")
        .param("sessions=1,2")
        .opt("--target", "")
        .refused_leaving_nothing(&["--target"]);
    env.prepare()
        .opt("--target", "")
        .size("8M")
        .refused_leaving_nothing(&["--target"]);
    for option in ["--target", "-o"] {
        env.cmd("job")
            .args(["from-awr", &fixture("awr-11g.txt"), option, ""])
            .refused_leaving_nothing(&[option.trim_start_matches('-')]);
    }
    let job = env.join("empty-target.toml");
    std::fs::write(
        &job,
        "[dataset]\ntarget = \"\"\n[run]\ntest = \"read-iops\"\n",
    )
    .unwrap();
    env.cmd("run")
        .job(&job)
        .engine("null")
        .duration("1s")
        .refused_leaving_nothing(&["dataset.target", "line 2"]);
}

/// A FIFO (with a writer that never writes), a device, a directory where a report, job file
/// or sizing plan is expected: refused up front as not a regular file, never waited on.
#[test]
fn inputs_that_are_not_files_are_refused_without_waiting_on_them() {
    let env = Env::new();
    let fifo = env.join("report.fifo");
    mkfifo(&fifo);
    // The writer's end, held open and never written (read-write: opening it cannot wait).
    let _writer = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&fifo)
        .unwrap();
    let f = fifo.to_str().unwrap();
    let dir = env.path().to_str().unwrap();
    for path in [f, "/dev/zero", dir] {
        let what = if path == f {
            "FIFO"
        } else if path == dir {
            "directory"
        } else {
            "device"
        };
        refused_without_waiting(&env, &["job", "from-awr", path], &[path, what]);
        refused_without_waiting(&env, &["job", "from-iostat", path], &[path, what]);
        refused_without_waiting(&env, &["run", "--job", path], &["--job", what]);
        refused_without_waiting(&env, &["size", path], &[path, what]);
    }
}

/// A file larger than a reader's limit is refused by its size, never read whole: a 10 GiB
/// sparse file (which claims its size), and a /proc file (which claims 0 bytes) for the
/// 1 MiB job file limit.
#[test]
fn inputs_beyond_their_limit_are_refused_without_reading_them_whole() {
    let env = Env::new();
    let huge = env.join("huge.txt");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(10 << 30)
        .unwrap();
    let h = huge.to_str().unwrap();
    refused_without_waiting(&env, &["job", "from-awr", h], &[h, "too large"]);
    refused_without_waiting(&env, &["job", "from-iostat", h], &[h, "too large"]);
    refused_without_waiting(&env, &["run", "--job", h], &["--job", "too large"]);
    refused_without_waiting(&env, &["size", h], &[h, "too large"]);

    // A job file just over the limit: refused by its size too.
    let big = env.join("big.toml");
    std::fs::write(&big, vec![b'#'; (1 << 20) + 1]).unwrap();
    let b = big.to_str().unwrap();
    refused_without_waiting(&env, &["run", "--job", b], &["--job", "too large"]);

    // The kernel's symbol table says it is empty and holds megabytes.
    let syms = "/proc/kallsyms";
    let holds = std::fs::read(syms).map_or(0, |b| b.len());
    if holds <= 1 << 20 {
        skip("no /proc/kallsyms of more than 1 MiB to read");
        return;
    }
    assert_eq!(
        std::fs::metadata(syms).unwrap().len(),
        0,
        "/proc says 0 bytes"
    );
    refused_without_waiting(&env, &["run", "--job", syms], &["--job", syms, "too large"]);
    refused_without_waiting(&env, &["size", syms], &[syms, "too large"]);
}

/// An AWR HTML report: the snapshot interval, then `middle`, then a Top 10 table titled
/// `title` with `log file sync` waited `waits` times.
fn awr_html(middle: &str, title: &str, waits: &str) -> String {
    format!(
        "<html><head><title>AWR</title></head><body>\n\
<table summary=\"This table displays snapshot information\">\n\
<tr><th></th><th>Snap Id</th><th>Snap Time</th></tr>\n\
<tr><td>Elapsed:</td><td>&#160;</td><td>60.00 (mins)</td></tr>\n\
</table>\n\
{middle}\n\
<h3>{title}</h3>\n\
<table summary=\"This table displays top 10 wait events by total wait time\">\n\
<tr><th>Event</th><th>Waits</th><th>Total Wait Time (sec)</th><th>Avg Wait</th><th>Wait Class</th></tr>\n\
<tr><td>log file sync</td><td>{waits}</td><td>360</td><td>1.00ms</td><td>Commit</td></tr>\n\
</table>\n</body></html>\n"
    )
}

/// A table of waits as an attacker would hide one: `db file sequential read` waited a
/// million times a second, over an interval of one minute.
const HIDDEN: &str = "<table summary=\"snapshot\"><tr><th></th><th>x</th></tr>\
<tr><td>Elapsed:</td><td>1.00 (mins)</td></tr></table>\
<h3>Top 10 Foreground Events by Total Wait Time</h3>\
<table><tr><th>Event</th><th>Waits</th><th>Total Wait Time (sec)</th><th>Avg Wait</th></tr>\
<tr><td>db file sequential read</td><td>3,600,000,000</td><td>1</td><td>1.00ms</td></tr></table>";

/// The job `dbio job ARGS` prints (exit 0), as text.
fn job_text(env: &Env, args: &[&str]) -> String {
    let out = env.cmd("job").args(args).ok();
    String::from_utf8(out.stdout).unwrap()
}

/// What is inside `<!-- -->`, `<script>` and `<style>` is not the report's: a table or an
/// interval there is not read.
#[test]
fn tables_in_html_comments_scripts_and_styles_are_not_read() {
    let env = Env::new();
    for (case, middle) in [
        ("comment", format!("<!-- {HIDDEN} -->")),
        (
            "script",
            format!("<script type=\"text/javascript\">var t = '{HIDDEN}';</script>"),
        ),
        ("style", format!("<STYLE>/* {HIDDEN} */</STYLE>")),
        (
            "a comment holding a script's end",
            format!("<!-- </script> {HIDDEN} -->"),
        ),
    ] {
        // The hidden table comes before the real interval's table too.
        let html = awr_html("", "Top 10 Foreground Events by Total Wait Time", "360,000").replacen(
            "<body>",
            &format!("<body>{middle}"),
            1,
        );
        let file = env.join("awr.html");
        std::fs::write(&file, html).unwrap();
        let job = job_text(&env, &["from-awr", file.to_str().unwrap()]);
        let t: toml::Table = job.parse().unwrap_or_else(|e| panic!("{case}: {e}\n{job}"));
        let classes = t["class"].as_array().expect("classes");
        assert_eq!(classes.len(), 1, "{case}: only log file sync:\n{job}");
        assert_eq!(
            classes[0]["event"].as_str(),
            Some("log file sync"),
            "{case}"
        );
        // 360,000 waits over 60 minutes (not the hidden 1 minute): 100 a second.
        let rate = match &classes[0]["rate"] {
            toml::Value::Integer(i) => *i as f64,
            toml::Value::Float(f) => *f,
            v => panic!("rate {v}"),
        };
        assert!((rate - 100.0).abs() < 0.5, "{case}: rate {rate}:\n{job}");
    }
}

/// A figure no database reports — NaN, infinite, a negative count, a rate beyond any
/// storage, a wait over an hour, a share over 100 % — is refused, naming its line and the
/// figure; nothing is written.
#[test]
fn figures_no_database_reports_are_refused_naming_the_line() {
    let env = Env::new();
    let write = |name: &str, text: &str| -> String {
        let p = env.join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    };
    let top = "Top 10 Foreground Events by Total Wait Time";
    // HTML: the waits cell is on line 9.
    for bad in ["NaN", "inf", "-5", "1e400"] {
        let f = write("awr.html", &awr_html("", top, bad));
        let out = env
            .cmd("job")
            .args(["from-awr", &f, "-o"])
            .arg(env.join("j.toml"))
            .out();
        let line = refusal_line(
            &format!("waits {bad}"),
            &out,
            &["awr.html line 10", "log file sync"],
        );
        assert!(
            line.contains("NaN") || line.contains("inf") || line.contains("-5"),
            "{bad}: the figure is named: {line}"
        );
        assert!(!env.join("j.toml").exists());
    }
    // Text: a negative count, a mean wait over an hour.
    let text = |waits: &str, avg: &str| {
        format!(
            "   Elapsed:   60.00 (mins)\n\n\
Top 5 Timed Events                                                    Avg %Total\n\
~~~~~~~~~~~~~~~~~~                                                   wait   Call\n\
Event                                            Waits    Time (s)   (ms)   Time\n\
----------------------------------------- ------------ ----------- ------ ------\n\
{:<41} {waits:>12} {:>11} {avg:>6} {:>6}\n",
            "log file sync", "2,905", "33.1"
        )
    };
    let f = write("awr.txt", &text("-1,000", "2"));
    let out = env.output(&["job", "from-awr", &f]);
    refusal_line("negative waits", &out, &["awr.txt line 7", "-1000"]);
    let f = write("awr.txt", &text("NaN", "2"));
    let out = env.output(&["job", "from-awr", &f]);
    refusal_line("NaN waits", &out, &["awr.txt line 7", "NaN"]);
    let f = write("awr.txt", &text("1,000", "4000000"));
    let out = env.output(&["job", "from-awr", &f]);
    refusal_line(
        "an endless wait",
        &out,
        &["awr.txt line 7", "4000000", "an hour"],
    );
    // A snapshot interval that is not a time.
    let f = write("awr.txt", &text("1,000", "2").replace("60.00", "inf"));
    let out = env.output(&["job", "from-awr", &f]);
    refusal_line("an infinite interval", &out, &["awr.txt line 1", "inf"]);
    // A histogram share over 100 %.
    let hist = format!(
        "{}\nWait Event Histogram\n\n\
                                                    % of Waits\n\
                                 -----------------------------------------------\n\
                           Total\n\
Event                      Waits  <1ms  <2ms  <4ms  <8ms <16ms <32ms  <=1s   >1s\n\
-------------------------- ----- ----- ----- ----- ----- ----- ----- ----- -----\n\
{:<26} {:>5} {:>5}\n",
        text("1,000", "2"),
        "log file sync",
        "1000",
        "250.0"
    );
    let f = write("awr.txt", &hist);
    let out = env.output(&["job", "from-awr", &f]);
    refusal_line(
        "a share of 250 %",
        &out,
        &["awr.txt line 16", "250", "100 %"],
    );
    // iostat: NaN requests, and more than any storage serves.
    for (bad, said) in [("nan", "NaN"), ("1e13", "10000000000000")] {
        let f = write(
            "iostat.txt",
            &format!(
                "Device            r/s     w/s     rkB/s     wkB/s  await\n\
sda             {bad}    10.00    800.00   80.00   1.00\n"
            ),
        );
        let out = env.output(&["job", "from-iostat", &f]);
        refusal_line(&format!("r/s {bad}"), &out, &["iostat.txt line 2", said]);
    }
}

/// A table title a megabyte long does not make a line a megabyte long: the job's comments
/// and the messages cut it.
#[test]
fn a_megabyte_title_makes_no_megabyte_line() {
    let env = Env::new();
    let title = format!(
        "Top 10 Foreground Events by Total Wait Time {}",
        "x".repeat(1 << 20)
    );
    let file = env.join("long.html");
    std::fs::write(&file, awr_html("", &title, "360,000")).unwrap();
    let job = job_text(&env, &["from-awr", file.to_str().unwrap()]);
    assert!(job.contains("log file sync"), "{job}");
    let longest = job.lines().map(str::len).max().unwrap();
    assert!(longest < 2000, "a line of {longest} bytes");
    std::fs::write(&file, awr_html("", &title, "NaN")).unwrap();
    let out = env.output(&["job", "from-awr", file.to_str().unwrap()]);
    let line = refusal_line("NaN under a long title", &out, &["long.html line"]);
    assert!(line.len() < 2000, "an error line of {} bytes", line.len());
}

/// The read bytes of process `pid` so far (/proc/PID/io rchar), None once it is gone.
fn read_so_far(pid: u32) -> Option<u64> {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
    io.lines()
        .find_map(|l| l.strip_prefix("rchar: "))
        .and_then(|v| v.trim().parse().ok())
}

/// Sends `sig` to `pid`.
fn send(pid: u32, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill {sig} {pid}");
}

/// Ctrl-C while a large report is parsed stops it: exit 130, no job. The report (60 MiB of
/// a table's wrapped row names, the slowest text to parse per byte) is signalled once
/// dbio has read all of it, so the signal comes while it parses.
#[test]
fn a_signal_while_a_large_report_is_parsed_stops_it() {
    let env = Env::new();
    let file = env.join("large.txt");
    let mut f = std::fs::File::create(&file).unwrap();
    f.write_all(
        b"   Elapsed:   60.00 (mins)\nEvent                 Waits\n--------------------- -----\n",
    )
    .unwrap();
    let block = "a wrapped event name\n".repeat(1 << 16);
    while f.metadata().unwrap().len() < 60 << 20 {
        f.write_all(block.as_bytes()).unwrap();
    }
    drop(f);
    let size = std::fs::metadata(&file).unwrap().len();
    let out = env.join("job.toml");
    let child = spawn(
        &env,
        &[
            "job",
            "from-awr",
            file.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
    );
    let pid = child.id();
    let t0 = Instant::now();
    while read_so_far(pid).is_some_and(|n| n < size) {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the report is not read"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    send(pid, "-INT");
    // A hang detector, not a timing: dbio stops within a second; 5 s means it did not.
    let (output, took) = wait_at_most(child, Duration::from_secs(5));
    let output = output.unwrap_or_else(|| panic!("still parsing {took:?} after SIGINT"));
    assert_eq!(
        output.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("interrupted"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!out.exists(), "no job written");
}

/// Ctrl-C while `from-pg` samples a server: exit 130 at once, and no job is written (a
/// sample cut short is not one).
#[test]
fn a_signal_while_from_pg_samples_writes_no_job() {
    let Some(pg) = crate::pg_observe::Server::start("/usr/lib/postgresql/15/bin", &[]) else {
        return;
    };
    let env = Env::new();
    let out = env.join("job.toml");
    let child = spawn(
        &env,
        &[
            "job",
            "from-pg",
            "--pg",
            &pg.url(),
            "--interval",
            "60s",
            "-o",
            out.to_str().unwrap(),
        ],
    );
    // Sampling: the observer's connection is on the server.
    let mut client = postgres::Client::connect(&pg.url(), postgres::NoTls).unwrap();
    let t0 = Instant::now();
    loop {
        let n: i64 = client
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'dbio observer'",
                &[],
            )
            .unwrap()
            .get(0);
        if n > 0 {
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(30), "no sampling began");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    send(child.id(), "-INT");
    // A hang detector, not a timing: dbio stops within a second; 5 s means it did not.
    let (output, took) = wait_at_most(child, Duration::from_secs(5));
    let output = output.unwrap_or_else(|| panic!("still sampling {took:?} after SIGINT"));
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{err}");
    assert!(
        err.contains("sample 1 of 1"),
        "says which sample was cut short: {err}"
    );
    assert!(!out.exists(), "no job written");
}

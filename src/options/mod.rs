//! Every option of a run, and of the commands that take any of them, defined once.
//!
//! [`OPTIONS`] is the table: for each option its flag, its job-file key, the parser of its
//! value, its default, its help, the tests it applies to and whether a job of classes uses
//! it. [`COMMANDS`] says which command takes which options (whole groups, single options)
//! and where a command's default differs from a run's. The rows live in `table/`, one file
//! per part of the help; the value parsers in [`parse`]; this file holds the types. The one
//! definition serves:
//! - the command line ([`cli`]: clap arguments built from the table for every command, so
//!   help, completions and the man page never drift from what is parsed, nor one command's
//!   help from another's);
//! - job files ([`job`]: `[dataset]`, `[run]`, `[redo]`, `[oltp]`, `[temp]` keys);
//! - `--save-job` ([`save`]: the values written back as a job file) — and remote agents,
//!   which receive a run as a job file;
//! - sweeps (a swept value is set like a typed one).
//!
//! Every value remembers where it came from ([`Source`]: default, job file, typed, swept):
//! typed and swept values win over a job file's, and errors found later name the option as
//! the user wrote it. Validation happens in two stages, as ripgrep's `LowArgs`/`HiArgs`:
//! [`check`] decides what the input alone decides (ranges, combinations) and builds the
//! [`RunConfig`]; [`environment`] checks what needs the machine (the target, the engine,
//! system limits, `--out`) before anything is created.

pub mod capture;
pub mod check;
pub mod cli;
pub mod environment;
pub mod fs_spec;
pub mod job;
pub mod mem;
pub mod mysql_set;
pub mod parse;
pub mod pg_set;
pub mod points;
pub mod save;
pub mod server_set;
pub mod swept;
mod table;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::dataset::fill::Content;
use crate::engine::{EngineChoice, IoMode};
use crate::units::{DurationRange, SizeRange};
use crate::workload::span::Span;
use crate::workload::spec::RedoDurability;
use crate::workload::{Arrival, Test};
use points::{LargeAccess, LatencyLimit, Shape, Stat};

pub use crate::workload::spec::RunConfig;
pub use parse::{block_size, hosts, mysql_setting, pg_setting, positive_size, rate, temp_io};
pub use table::{COMMANDS, OPTIONS};

/// Where an option's value came from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Source {
    #[default]
    Default,
    /// A job file, at `FILE (line N)`.
    Job(String),
    /// Typed on the command line.
    Typed,
    /// Set by a sweep for one point (counts as typed).
    Swept,
}

impl Source {
    /// Typed on the command line or swept: it wins over a job file.
    pub fn is_typed(&self) -> bool {
        matches!(self, Source::Typed | Source::Swept)
    }
}

/// The values of every run option, each with where it came from. Built from the defaults,
/// then a job file, then what was typed (or swept).
#[derive(Debug, Clone)]
pub struct RunArgs {
    /// The test (positional), unless `--job` names a job file.
    pub test: Option<Test>,
    pub job: Option<PathBuf>,
    pub save_job: Option<PathBuf>,
    pub target: PathBuf,
    pub size: Option<u64>,
    pub block_size: u64,
    pub files: u32,
    pub fresh: bool,
    pub fill: Content,
    pub seed: Option<u64>,
    pub verify: bool,
    pub span: Span,
    pub sessions: u32,
    pub duration: Duration,
    pub warmup: Duration,
    /// `--point-duration`: the measured window of each point of a calibration or matrix
    /// (each point's run gets it as its `duration`).
    pub point_duration: Duration,
    /// `--steady-state METRIC:RANGE%:SLOPE%` as typed (None: the whole window is measured).
    pub steady_state: Option<String>,
    /// `--metrics FILE` and `--metrics-keep`: live Prometheus metrics of `dbio run`.
    pub metrics: Option<PathBuf>,
    pub metrics_keep: bool,
    /// `--round`: the length of one round of `--steady-state`.
    pub round: Duration,
    /// `--max-latency` of a calibration: the latency its maximum IOPS must keep.
    pub max_latency: LatencyLimit,
    /// `--max-outstanding` of a calibration.
    pub max_outstanding: u32,
    /// `--matrix`: which points of the grid a matrix runs.
    pub matrix: Shape,
    /// The options of a matrix's grid: `--small-size`, `--large-size`, `--num-small`,
    /// `--num-large`, `--large-access`, `--large-outstanding`, `--small-outstanding`,
    /// `--write-pct`.
    pub small_size: u64,
    pub large_size: u64,
    pub num_small: u32,
    pub num_large: u32,
    pub large_access: LargeAccess,
    pub large_outstanding: u32,
    pub small_outstanding: u32,
    pub write_pct: u32,
    /// `--sync` (else asynchronous, the default).
    pub sync: bool,
    pub io_mode: IoMode,
    /// `--like`: Oracle's shapes and names, or InnoDB's.
    pub like: crate::workload::event::Like,
    /// `--doublewrite` (`--like innodb` write-iops).
    pub doublewrite: bool,
    pub engine: EngineChoice,
    pub batch: u32,
    pub keep_inflight: bool,
    pub rate: Option<f64>,
    pub arrival: Arrival,
    pub depth: u32,
    pub mbrc: Option<u32>,
    pub ash_hz: u32,
    pub redo_per_commit: SizeRange,
    pub think: Option<DurationRange>,
    pub redo_block: u64,
    pub redo_files: u32,
    pub redo_file_size: u64,
    pub redo_sync: RedoDurability,
    pub lgwr_cpu: Option<usize>,
    pub group_commit: Option<f64>,
    pub group_commit_wait: Duration,
    pub noise_cpu: Option<usize>,
    /// How LGWR writes the pieces of one write beside "log file sync" classes (a job
    /// file's `[redo] submission`); on the command line the redo test's `--sync` says it.
    pub lgwr_submission: Option<crate::engine::Submission>,
    pub writers: u32,
    pub work_unit: u32,
    pub update_pct: u32,
    pub hotspot_pct: u32,
    pub hotspot_size: Option<u64>,
    pub async_reads: bool,
    pub cache_size: Option<u64>,
    pub cold_cache: bool,
    pub spill_size: u64,
    pub temp_io: u64,
    pub out: PathBuf,
    pub json: bool,
    /// `--format`: how the report printed to stdout is written.
    pub format: crate::report::Format,
    pub quiet: bool,
    /// `--progress`: when the live progress is drawn.
    pub progress: crate::progress::When,
    pub destructive: bool,
    pub yes: bool,
    pub continue_on_error: bool,
    /// `--hosts`: the ssh destinations of a cluster run, as typed (empty: this host alone).
    pub hosts: Vec<String>,
    /// `--ssh`: the command (and its options) that reaches a host.
    pub ssh: String,
    /// `--remote-dbio`: the dbio binary on the hosts.
    pub remote_dbio: String,
    /// `--push`: copy this binary to each host for the run.
    pub push: bool,
    /// `--shared`: one data set on storage every host sees.
    pub shared: bool,
    /// `--pg`: an existing PostgreSQL server (a URL or `key=value` string).
    pub pg: Option<String>,
    /// `--pg-bin`: the directory of the binaries a throwaway PostgreSQL server starts from.
    pub pg_bin: Option<PathBuf>,
    /// `--pg-set NAME=VALUE`: settings of the throwaway server, in the order typed.
    pub pg_set: Vec<(String, String)>,
    /// `--mysql`: an existing MariaDB/MySQL server (a `mysql://` URL).
    pub mysql: Option<String>,
    /// `--mysql-bin`: the directory of `mariadbd` a throwaway MariaDB server starts from.
    pub mysql_bin: Option<PathBuf>,
    /// `--mysql-set NAME=VALUE`: settings of the throwaway MariaDB server, in the order typed.
    pub mysql_set: Vec<(String, String)>,
    /// `--db`: the results store (every command).
    pub db: Option<PathBuf>,
    /// `dbio prepare --buffered`: fill with buffered writes.
    pub buffered: bool,
    /// `dbio clean --stale`: only repair what a killed run left.
    pub stale: bool,
    /// `dbio precondition --passes`.
    pub passes: u32,
    /// `dbio runs --test`: only runs of this test.
    pub only_test: Option<Test>,
    /// `dbio runs --last`: only the N most recent runs.
    pub last: Option<u32>,
    /// `dbio compare --html`.
    pub html: Option<PathBuf>,
    /// `dbio sweep --param`, `--device`, `--curve`.
    pub param: Option<swept::SweepParam>,
    pub device: Option<PathBuf>,
    pub curve: bool,
    /// `dbio size --runs`: recorded runs' ids, in the order given.
    pub runs: Vec<i64>,
    /// `dbio agent --pushed`.
    pub pushed: Option<PathBuf>,
    /// `dbio mem`'s own options.
    pub mem: mem::MemValues,
    /// `dbio job from-*`'s own options.
    pub shaping: capture::Shaping,
    /// `dbio pg observe`'s own options.
    pub observe: capture::Observe,
    /// Where each value that is not a default came from, by option name.
    pub sources: BTreeMap<&'static str, Source>,
}

impl RunArgs {
    /// Every option at its default (`test` as given).
    pub fn defaults(test: Option<Test>) -> RunArgs {
        let mut a = RunArgs {
            test,
            job: None,
            save_job: None,
            target: PathBuf::new(),
            size: None,
            block_size: 0,
            files: 0,
            fresh: false,
            fill: Content::Random,
            seed: None,
            verify: false,
            span: Span::FULL,
            sessions: 0,
            duration: Duration::ZERO,
            warmup: Duration::ZERO,
            point_duration: Duration::ZERO,
            steady_state: None,
            metrics: None,
            metrics_keep: false,
            round: Duration::ZERO,
            max_latency: LatencyLimit {
                stat: Stat::P95,
                us: 0.0,
            },
            max_outstanding: 0,
            matrix: Shape::Basic,
            small_size: 0,
            large_size: 0,
            num_small: 0,
            num_large: 0,
            large_access: LargeAccess::Stream,
            large_outstanding: 0,
            small_outstanding: 0,
            write_pct: 0,
            sync: false,
            io_mode: IoMode::Setall,
            like: crate::workload::event::Like::Oracle,
            doublewrite: true,
            engine: EngineChoice::Auto,
            batch: 0,
            keep_inflight: false,
            rate: None,
            arrival: Arrival::Fixed,
            depth: 0,
            mbrc: None,
            ash_hz: 0,
            redo_per_commit: SizeRange::fixed(0),
            think: None,
            redo_block: 0,
            redo_files: 0,
            redo_file_size: 0,
            redo_sync: RedoDurability::Dsync,
            lgwr_cpu: None,
            group_commit: None,
            group_commit_wait: Duration::from_millis(1),
            noise_cpu: None,
            lgwr_submission: None,
            writers: 0,
            work_unit: 0,
            update_pct: 0,
            hotspot_pct: 0,
            hotspot_size: None,
            async_reads: false,
            cache_size: None,
            cold_cache: false,
            spill_size: 0,
            temp_io: 0,
            out: PathBuf::new(),
            json: false,
            format: crate::report::Format::Text,
            quiet: false,
            progress: crate::progress::When::Auto,
            destructive: false,
            yes: false,
            continue_on_error: false,
            hosts: Vec::new(),
            ssh: String::new(),
            remote_dbio: String::new(),
            push: false,
            shared: false,
            pg: None,
            pg_bin: None,
            pg_set: Vec::new(),
            mysql: None,
            mysql_bin: None,
            mysql_set: Vec::new(),
            db: None,
            buffered: false,
            stale: false,
            passes: 0,
            only_test: None,
            last: None,
            html: None,
            param: None,
            device: None,
            curve: false,
            runs: Vec::new(),
            pushed: None,
            mem: mem::MemValues::default(),
            shaping: capture::Shaping::default(),
            observe: capture::Observe::default(),
            sources: BTreeMap::new(),
        };
        // The defaults are the table's, through the same parsers as any value.
        for o in OPTIONS {
            if let Some(d) = o.default {
                (o.set)(&mut a, d).expect("every default parses");
            }
        }
        a
    }

    /// Every option at its default on `command` (which may differ from `dbio run`'s).
    pub fn defaults_for(command: Command) -> RunArgs {
        let mut a = RunArgs::defaults(None);
        for (name, d, _) in command.takes().also {
            if let Some(d) = d {
                let o = find(name).expect("COMMANDS names options of the table");
                (o.set)(&mut a, d).expect("every default parses");
            }
        }
        a
    }

    /// Where option `name`'s value came from.
    pub fn source(&self, name: &str) -> Source {
        self.sources.get(name).cloned().unwrap_or_default()
    }

    /// Whether option `name` was typed (or swept): it wins over a job file.
    pub fn typed(&self, name: &str) -> bool {
        self.source(name).is_typed()
    }

    /// Sets option `name` from `text` as coming from `source`. The error is the parser's.
    pub fn set(&mut self, name: &str, text: &str, source: Source) -> Result<(), String> {
        let o = find(name).expect("a known option");
        (o.set)(self, text)?;
        self.sources.insert(o.name, source);
        Ok(())
    }

    /// The data set's options (and where they came from) from `other`: a command made of
    /// runs (calibrate, matrix) gives its points the data set it was given.
    pub fn take_data_set(&mut self, other: &RunArgs) {
        for o in OPTIONS.iter().filter(|o| o.group == Group::DataSet) {
            if let Some(text) = (o.get)(other) {
                (o.set)(self, &text).expect("a value written back parses");
            } else if o.is_switch() {
                (o.set)(self, "false").expect("a switch parses");
            }
            match other.sources.get(o.name) {
                Some(s) => self.sources.insert(o.name, s.clone()),
                None => self.sources.remove(o.name),
            };
        }
        self.size = other.size;
        self.seed = other.seed;
    }

    /// The options typed (or swept), as `--flag`s, in table order.
    pub fn typed_flags(&self) -> impl Iterator<Item = &'static Opt> + '_ {
        OPTIONS.iter().filter(|o| self.typed(o.name))
    }
}

/// Which part of the help an option is listed under.
pub mod heading {
    pub const DATA_SET: &str = "Data set";
    pub const TEST: &str = "Test";
    pub const REDO: &str = "Redo and commits (redo, oltp)";
    pub const OLTP: &str = "OLTP mix (oltp)";
    pub const TEMP: &str = "Temp spills (temp)";
    pub const OUTPUT: &str = "Output";
    pub const SAFETY: &str = "Safety";
    pub const CLUSTER: &str = "Cluster (one run across many hosts over OpenSSH)";
    pub const PG: &str = "PostgreSQL (dbio pg)";
    pub const MYSQL: &str = "MariaDB/MySQL (dbio mysql)";
    pub const POINTS: &str = "Points (each a run of its own)";
    pub const CALIBRATE: &str = "Calibration";
    pub const MATRIX: &str = "Matrix (the load grid)";
    pub const GLOBAL: &str = "Global options";
}

/// A part of the options, taken whole by the commands [`COMMANDS`] names it for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// The data set's options: `run`, `sweep`, `prepare`, `calibrate`, `matrix`.
    DataSet,
    /// The options of one run: `run`, `sweep` (a few of them on other commands too).
    Run,
    /// A run across many hosts: `run`, `sweep`, `calibrate`.
    Cluster,
    /// A command made of points, each a run of its own: `calibrate`, `matrix`.
    Points,
    /// A calibration's own: `calibrate`.
    Calibrate,
    /// A matrix's own: `matrix`.
    Matrix,
    /// How a report is printed: every command that prints one.
    Report,
    /// The database a run goes through: `pg run` (`--pg` on every command that reaches a
    /// server).
    Pg,
    /// The database a run goes through: `mysql run`.
    Mysql,
    /// Every command's: `--db`.
    Global,
    /// A sweep's own: `sweep`.
    Sweep,
    /// `dbio prepare`'s own.
    Prepare,
    /// `dbio clean`'s own.
    Clean,
    /// `dbio precondition`'s own.
    Precondition,
    /// `dbio runs`'s own.
    Runs,
    /// `dbio compare`'s own.
    Compare,
    /// `dbio size`'s own.
    Size,
    /// `dbio agent`'s own.
    Agent,
    /// `dbio mem`'s own.
    Mem,
    /// What shapes the job of every `dbio job from-*`.
    Shaping,
    /// `dbio job from-iostat`'s own.
    FromIostat,
    /// `dbio job from-pg`'s own.
    FromPg,
    /// `dbio pg observe`'s own.
    Observe,
}

/// A command (or the command line as a whole, [`Command::Global`]) and the options of the
/// table it takes: every flag of every command is one of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// `dbio` itself: the options every command takes.
    Global,
    Run,
    Sweep,
    Prepare,
    Clean,
    Precondition,
    Calibrate,
    Matrix,
    Mem,
    Map,
    Runs,
    Show,
    Compare,
    Size,
    /// `dbio pg run` and `dbio pg compare`.
    PgRun,
    Doctor,
    Verify,
    Report,
    /// `dbio mysql run` and `dbio mysql compare`.
    MysqlRun,
    MysqlClean,
    PgClean,
    PgObserve,
    JobFromAwr,
    JobFromIostat,
    JobFromPg,
    Agent,
}

/// An option a command takes beside its groups: `(name, this command's default, this
/// command's help)`. None keeps the table's default, or its help.
pub type Also = (&'static str, Option<&'static str>, Option<&'static str>);

/// The options of the table one command takes: whole groups, and single options of other
/// groups, each with the command's own default or help where it is not the table's (a
/// calibration's points warm up for less time than a run; `dbio pg run --size` is a
/// table's size). An option a command takes is declared nowhere else: its flag, help,
/// parser and job-file key are the table's, so every command shows and accepts it alike.
#[derive(Debug)]
pub struct Takes {
    pub command: Command,
    pub groups: &'static [Group],
    pub also: &'static [Also],
}

impl Command {
    /// What the command takes.
    pub fn takes(self) -> &'static Takes {
        COMMANDS
            .iter()
            .find(|t| t.command == self)
            .expect("every command is in COMMANDS")
    }

    /// The command as typed after `dbio` (`pg run`); empty for [`Command::Global`]. A
    /// command clap knows by two names is listed under each.
    pub fn paths(self) -> &'static [&'static str] {
        match self {
            Command::Global => &[""],
            Command::Run => &["run"],
            Command::Sweep => &["sweep"],
            Command::Prepare => &["prepare"],
            Command::Clean => &["clean"],
            Command::Precondition => &["precondition"],
            Command::Calibrate => &["calibrate"],
            Command::Matrix => &["matrix"],
            Command::Mem => &["mem"],
            Command::Map => &["map"],
            Command::Runs => &["runs"],
            Command::Show => &["show"],
            Command::Compare => &["compare"],
            Command::Size => &["size"],
            Command::PgRun => &["pg run", "pg compare"],
            Command::Doctor => &["doctor"],
            Command::Verify => &["verify"],
            Command::Report => &["report"],
            Command::MysqlRun => &["mysql run", "mysql compare"],
            Command::MysqlClean => &["mysql clean"],
            Command::PgClean => &["pg clean"],
            Command::PgObserve => &["pg observe"],
            Command::JobFromAwr => &["job from-awr"],
            Command::JobFromIostat => &["job from-iostat"],
            Command::JobFromPg => &["job from-pg"],
            Command::Agent => &["agent"],
        }
    }

    /// The command typed as `path` (`pg run`), if it takes options of the table.
    pub fn at(path: &str) -> Option<Command> {
        COMMANDS
            .iter()
            .map(|t| t.command)
            .find(|c| c.paths().contains(&path))
    }
}

impl Takes {
    /// Whether the command has option `o` on its command line.
    pub fn has(&self, o: &Opt) -> bool {
        !o.help.is_empty() && (self.groups.contains(&o.group) || self.own(o).is_some())
    }

    /// Whether the command has the option called `name`.
    pub fn has_name(&self, name: &str) -> bool {
        find(name).is_some_and(|o| self.has(o))
    }

    fn own(&self, o: &Opt) -> Option<&'static Also> {
        self.also.iter().find(|(n, _, _)| *n == o.name)
    }

    /// The default of option `o` on this command.
    pub fn default(&self, o: &Opt) -> Option<&'static str> {
        self.own(o).and_then(|(_, d, _)| *d).or(o.default)
    }

    /// What option `o` says of itself on this command.
    pub fn help(&self, o: &Opt) -> &'static str {
        self.own(o).and_then(|(_, _, h)| *h).unwrap_or(o.help)
    }
}

/// How many times an option may be given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Many {
    /// Once.
    Once,
    /// Again and again, each value added to the others (`--pg-set`, `--sizes`).
    Repeat,
    /// Again and again, each time with one or more values (`dbio size --runs 1 2,3`).
    List,
}

/// The tests an option applies to.
#[derive(Debug, Clone, Copy)]
pub enum Applies {
    /// Every test.
    All,
    /// Only these tests.
    Tests(&'static [Test]),
}

impl Applies {
    pub fn to(self, test: Test) -> bool {
        match self {
            Applies::All => true,
            Applies::Tests(t) => t.contains(&test),
        }
    }
}

/// One option: everything about it in one place.
#[derive(Debug, Clone, Copy)]
pub struct Opt {
    /// The long flag without `--`; also its name in [`RunArgs::sources`].
    pub name: &'static str,
    pub short: Option<char>,
    /// `table.key` in job files; None when a job file cannot set it.
    pub key: Option<&'static str>,
    /// What the value is called in help (`SIZE`); None for a switch.
    pub value: Option<&'static str>,
    /// The default, as typed.
    pub default: Option<&'static str>,
    /// What `--help` says; empty for a job-file key that has no flag (`run.submission`: on
    /// the command line `--sync`/`--async` say it).
    pub help: &'static str,
    pub heading: &'static str,
    pub group: Group,
    /// The classic tests it shapes.
    pub applies: Applies,
    /// A job of classes uses it too (otherwise each class sets it, or only a test has it).
    pub with_classes: bool,
    /// Options it cannot be given with (by name).
    pub conflicts: &'static [&'static str],
    /// An option it needs (by name).
    pub requires: Option<&'static str>,
    /// An option that, when given, makes this one unnecessary; without it this one is
    /// required (`dbio sweep --param`, unless `--curve`).
    pub required_unless: Option<&'static str>,
    /// The flag, where it is not [`Opt::name`]: two options of different commands may share
    /// a flag but not a name (`dbio sweep --device DEV`, `dbio job from-iostat --device NAME`).
    pub long: Option<&'static str>,
    /// An environment variable that gives the value when it is not typed (`--db`, `DBIO_DB`).
    pub env: Option<&'static str>,
    /// How many times it may be given.
    pub many: Many,
    /// The value it takes when given without one (`--steady-state` alone is
    /// `iops:20:10`); a flag after it is the next option, not its value.
    pub bare: Option<&'static str>,
    /// Parses `text` into the arguments (a switch gets "true" or "false").
    pub set: fn(&mut RunArgs, &str) -> Result<(), String>,
    /// The value as typed, for a job file (`--save-job`, agents); None when unset.
    pub get: fn(&RunArgs) -> Option<String>,
}

impl Opt {
    /// What a row says unless it says otherwise: a switch of every test, without a short
    /// flag, job-file key, default, conflict or requirement, that a job of classes does not
    /// use and a job file never gets back. Each part of the table makes its own from this
    /// (its heading, its group), and each row states its name, help, parser and what else
    /// differs: `Opt { name: "fresh", help: "...", set: ..., ..ROW }`.
    pub const DEFAULT: Opt = Opt {
        name: "",
        short: None,
        key: None,
        value: None,
        default: None,
        help: "",
        heading: "",
        group: Group::Run,
        applies: Applies::All,
        with_classes: false,
        conflicts: &[],
        requires: None,
        required_unless: None,
        long: None,
        env: None,
        many: Many::Once,
        bare: None,
        set: |_, _| Err("no parser: the table's row names none".into()),
        get: |_| None,
    };

    /// `--name`.
    pub fn flag(&self) -> String {
        format!("--{}", self.long())
    }

    /// The flag without `--`.
    pub fn long(&self) -> &'static str {
        self.long.unwrap_or(self.name)
    }

    pub fn is_switch(&self) -> bool {
        self.value.is_none()
    }
}

/// The option called `name`.
pub fn find(name: &str) -> Option<&'static Opt> {
    OPTIONS.iter().find(|o| o.name == name)
}

/// The option a job file sets with `key`.
pub fn by_key(key: &str) -> Option<&'static Opt> {
    OPTIONS.iter().find(|o| o.key == Some(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_set_defaults_are_the_tables() {
        // The data set layer names them in hints (`dbio prepare ...`), without the table.
        let a = RunArgs::defaults(None);
        assert_eq!(a.block_size, crate::dataset::DEFAULT_BLOCK_SIZE);
        assert_eq!(a.files as usize, crate::dataset::DEFAULT_FILES);
        assert_eq!(a.size, None);
    }

    #[test]
    fn every_option_is_defined_once_and_its_default_parses() {
        let mut names = std::collections::HashSet::new();
        let mut keys = std::collections::HashSet::new();
        for o in OPTIONS {
            assert!(names.insert(o.name), "{} twice", o.name);
            if let Some(k) = o.key {
                assert!(keys.insert(k), "{k} twice");
            }
            if let Some(d) = o.default {
                let mut a = RunArgs::defaults(None);
                (o.set)(&mut a, d).unwrap_or_else(|e| panic!("{}: {e}", o.name));
            }
            if let Some(r) = o.requires {
                assert!(find(r).is_some(), "{} requires an unknown option", o.name);
            }
            assert!(
                o.key.is_some() || !o.help.is_empty(),
                "{}: neither a flag nor a key",
                o.name
            );
        }
    }

    #[test]
    fn every_command_takes_options_of_the_table_with_defaults_that_parse() {
        for t in COMMANDS {
            assert_eq!(
                t.command.takes().command,
                t.command,
                "{:?} twice",
                t.command
            );
            for (name, d, _) in t.also {
                let o = find(name).unwrap_or_else(|| panic!("{:?}: no option {name}", t.command));
                assert!(
                    !t.groups.contains(&o.group),
                    "{:?}: {name} twice",
                    t.command
                );
                if let Some(d) = d {
                    let mut a = RunArgs::defaults(None);
                    (o.set)(&mut a, d).unwrap_or_else(|e| panic!("{:?} {name}: {e}", t.command));
                }
            }
        }
        // A command's own default is what its arguments start from.
        let c = RunArgs::defaults_for(Command::Calibrate);
        assert_eq!(c.warmup, std::time::Duration::from_secs(2));
        assert_eq!(
            RunArgs::defaults(None).warmup,
            std::time::Duration::from_secs(5)
        );
    }

    #[test]
    fn a_value_written_back_parses_to_the_same_value() {
        let a = RunArgs::defaults(Some(Test::ReadIops));
        for o in OPTIONS {
            if let Some(text) = (o.get)(&a) {
                let mut b = RunArgs::defaults(Some(Test::ReadIops));
                (o.set)(&mut b, &text).unwrap_or_else(|e| panic!("{}: {e}", o.name));
                assert_eq!((o.get)(&b), Some(text), "{}", o.name);
            }
        }
    }
}

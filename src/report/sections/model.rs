//! What a report is made of, whatever its format: sections holding fields, tables, notes,
//! lists, the storage tree and (for formats that draw) charts. Every figure in it is already
//! formatted; a renderer only chooses the syntax.

/// A whole report: a title and its sections in order.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub title: String,
    pub sections: Vec<Section>,
}

impl Report {
    /// A report of a few plain lines under no title, one note each (what a short command
    /// prints: `removed 3 file(s) ...`, `wrote ...`).
    pub fn lines(lines: impl IntoIterator<Item = String>) -> Report {
        let mut lead = Section::new("lines", "").level(Level::Lead);
        lead.blocks.extend(lines.into_iter().map(Block::Note));
        Report {
            title: String::new(),
            sections: vec![lead],
        }
    }
}

/// How prominent a section's heading is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Right under the report's title, part of its heading (text prints no title for it).
    Lead,
    /// A section of its own.
    Main,
    /// A part of the section before it.
    Sub,
}

#[derive(Debug, Clone)]
pub struct Section {
    /// A stable anchor (`events`, `load`, ...).
    pub id: String,
    /// Its heading; a section without one (not a lead) is set apart by a blank line only
    /// (the closing verdict of `dbio doctor`).
    pub title: String,
    pub level: Level,
    pub blocks: Vec<Block>,
}

impl Section {
    pub fn new(id: &str, title: impl Into<String>) -> Section {
        Section {
            id: id.into(),
            title: title.into(),
            level: Level::Main,
            blocks: Vec::new(),
        }
    }

    pub fn level(mut self, level: Level) -> Section {
        self.level = level;
        self
    }

    pub fn with(mut self, block: Block) -> Section {
        self.blocks.push(block);
        self
    }

    pub fn push(&mut self, block: Block) {
        self.blocks.push(block);
    }
}

#[derive(Debug, Clone)]
pub enum Block {
    /// `label: value` pairs.
    Fields(Vec<(String, String)>),
    Table(Table),
    /// A sentence that explains the figures.
    Note(String),
    /// A warning about the figures of this section.
    Caution(String),
    /// Items, one a line; `alert` for errors.
    List {
        items: Vec<String>,
        alert: bool,
    },
    /// Items, one a line, each with its details under it (what `dbio doctor` found: a data
    /// set, then what is stale in it).
    Outline(Vec<Item>),
    /// Preformatted text drawn as a tree (the storage map).
    Tree(String),
    /// Every option as used, for formats that can fold it away.
    Options(serde_json::Value),
    /// A picture, for formats that draw.
    Chart(Chart),
}

/// An item of an [`Block::Outline`]: its line, and the lines that belong to it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Item {
    pub text: String,
    pub details: Vec<String>,
}

impl Item {
    pub fn new(text: impl Into<String>) -> Item {
        Item {
            text: text.into(),
            details: Vec::new(),
        }
    }
}

/// The charts a drawing format adds. Every chart carries its data: a renderer draws it from
/// the model alone.
#[derive(Debug, Clone)]
pub enum Chart {
    Histogram(Histogram),
    /// Lines (or stacked areas) over seconds, named values, sizes or a quantity.
    Lines(Lines),
    /// Which colour is which series (events, runs, devices) in the charts that follow.
    Legend(Vec<(String, Color)>),
    /// A sentence about the charts that follow; text has their figures in tables and
    /// leaves it out with them.
    Caption(String),
}

/// A colour: the `n`-th of the palette events and runs are drawn in, or a fixed one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Color {
    Palette(usize),
    Fixed(&'static str),
}

/// What a y axis measures: decides its unit, its tick labels and its caption.
#[derive(Debug, Clone, Copy)]
pub enum Measure {
    /// A plain quantity; the caption names the unit, e.g. "requests/s".
    Amount(&'static str),
    /// Latency in microseconds, shown in µs, ms or s, whichever reads best.
    LatencyUs(&'static str),
    /// Percent; `fixed_100` pins the axis at 0..100.
    Percent(&'static str, bool),
}

/// What the x axis of a [`Lines`] chart is; it decides what a [`Point`]'s `x` means.
#[derive(Debug, Clone)]
pub enum Axis {
    /// Seconds of the measured window, `1..=n`: `x` is the second (second `t` covers
    /// `(t-1, t]`).
    Seconds(usize),
    /// Named values spaced evenly whatever their size (a sweep usually doubles): `x` is the
    /// index into `labels`.
    Labels {
        caption: String,
        labels: Vec<String>,
    },
    /// Bytes on a logarithmic scale (working-set sizes): `x` is bytes.
    LogBytes { caption: String },
    /// A quantity on a linear scale from 0: `x` is the quantity.
    Linear { caption: String },
}

/// A chart of lines: each series a line through its points, or (`stacked`) areas stacked
/// on each other, the first at the bottom.
#[derive(Debug, Clone)]
pub struct Lines {
    /// A heading over the chart; `minor` makes it a smaller one.
    pub title: Option<String>,
    pub minor: bool,
    /// Draw a legend of the series between the heading and the chart.
    pub legend: bool,
    pub x: Axis,
    pub y: Measure,
    /// The y axis on a logarithmic scale.
    pub log_y: bool,
    pub series: Vec<Series>,
    pub stacked: bool,
    /// A horizontal line at a value, with its label (the session count on the ASH chart);
    /// stacked charts draw it.
    pub reference: Option<(f64, String)>,
    /// The y axis reaches at least this far (stacked charts and x-y charts).
    pub min_top: f64,
    /// Vertical dashed lines at x values, with their labels (cache sizes); charts over
    /// sizes or a quantity draw them.
    pub marks: Vec<(f64, String)>,
    /// Stretches of the x axis shaded behind the lines, with what they mark (the seconds an
    /// unstable event spent off its level); charts over seconds draw them.
    pub bands: Vec<Band>,
}

/// A stretch of a chart's x axis, shaded: from `from` to `to` (for seconds, second `t`
/// covers `t - 1 .. t`), in a colour, with what it marks.
#[derive(Debug, Clone, PartialEq)]
pub struct Band {
    pub from: f64,
    pub to: f64,
    pub color: Color,
    pub label: String,
}

impl Lines {
    pub fn new(x: Axis, y: Measure, series: Vec<Series>) -> Lines {
        Lines {
            title: None,
            minor: false,
            legend: false,
            x,
            y,
            log_y: false,
            series,
            stacked: false,
            reference: None,
            min_top: 0.0,
            marks: Vec::new(),
            bands: Vec::new(),
        }
    }

    pub fn title(mut self, title: impl Into<String>) -> Lines {
        self.title = Some(title.into());
        self
    }
}

/// One line (or stacked layer) of a chart.
#[derive(Debug, Clone)]
pub struct Series {
    pub label: String,
    pub color: Color,
    pub dashed: bool,
    pub points: Vec<Point>,
}

impl Series {
    /// A line over seconds: `values[i]` is second `i + 1`; `None` leaves a gap.
    pub fn per_second(label: impl Into<String>, color: Color, values: Vec<Option<f64>>) -> Series {
        Series {
            label: label.into(),
            color,
            dashed: false,
            points: (values.into_iter().enumerate())
                .map(|(i, y)| Point::at((i + 1) as f64, y))
                .collect(),
        }
    }

    pub fn dashed(mut self, dashed: bool) -> Series {
        self.dashed = dashed;
        self
    }
}

/// A point of a series; `y: None` leaves a gap in the line.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: Option<f64>,
    /// The spread around `y`, drawn as a whisker from the first to the second.
    pub whisker: Option<(f64, f64)>,
    /// What hovering over the point tells; by default the value.
    pub tip: Option<String>,
}

impl Point {
    pub fn at(x: f64, y: Option<f64>) -> Point {
        Point {
            x,
            y,
            whisker: None,
            tip: None,
        }
    }
}

/// Power-of-two latency buckets of one event, for one or several series (runs).
#[derive(Debug, Clone)]
pub struct Histogram {
    /// A heading over the chart (the event's name), if the section does not say it.
    pub title: Option<String>,
    /// Upper bounds (µs) of the buckets shown: from the first to the last any series fills.
    pub lt_us: Vec<u64>,
    pub series: Vec<Bars>,
    /// Percentiles to mark: (label, µs).
    pub marks: Vec<(&'static str, f64)>,
}

#[derive(Debug, Clone)]
pub struct Bars {
    pub label: String,
    /// The colour's place in the palette (the event's or the run's).
    pub color: usize,
    pub counts: Vec<u64>,
}

/// A table: columns and rows of formatted cells. A row shorter than the columns spans its
/// last cell over the rest.
#[derive(Debug, Clone, Default)]
pub struct Table {
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Cell>>,
    /// A listing (`dbio runs`): text writes no rule under the heading, so it stays one
    /// line per item after the heading.
    pub bare: bool,
}

impl Table {
    pub fn new(columns: Vec<Column>) -> Table {
        Table {
            columns,
            rows: Vec::new(),
            bare: false,
        }
    }

    /// A listing: no rule under the heading in text.
    pub fn bare(mut self) -> Table {
        self.bare = true;
        self
    }

    pub fn row(&mut self, cells: Vec<Cell>) {
        self.rows.push(cells);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// The row's name ("Read requests"): text writes it `Read requests:`.
    Label,
    Left,
    Right,
}

#[derive(Debug, Clone)]
pub struct Column {
    pub label: String,
    pub align: Align,
    /// Least width in characters for fixed-width text.
    pub width: usize,
    /// A detail that formats with room to spare show; the text summary leaves it out.
    pub detail: bool,
}

impl Column {
    /// A column of names, left-aligned.
    pub fn left(label: impl Into<String>, width: usize) -> Column {
        Column {
            label: label.into(),
            align: Align::Left,
            width,
            detail: false,
        }
    }

    /// A column of figures, right-aligned.
    pub fn right(label: impl Into<String>, width: usize) -> Column {
        Column {
            label: label.into(),
            align: Align::Right,
            width,
            detail: false,
        }
    }

    /// The column of row names.
    pub fn label(label: impl Into<String>, width: usize) -> Column {
        Column {
            label: label.into(),
            align: Align::Label,
            width,
            detail: false,
        }
    }

    pub fn detail(mut self) -> Column {
        self.detail = true;
        self
    }
}

/// How a cell is marked beyond its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mark {
    #[default]
    Plain,
    Pass,
    Fail,
}

#[derive(Debug, Clone, Default)]
pub struct Cell {
    pub text: String,
    pub mark: Mark,
    /// Where the cell leads, for formats that link (a relative path: a sweep point's
    /// `report.html`).
    pub link: Option<String>,
}

impl Cell {
    pub fn marked(text: impl Into<String>, mark: Mark) -> Cell {
        Cell {
            text: text.into(),
            mark,
            link: None,
        }
    }

    /// A cell that links to `href` where the format can.
    pub fn linked(text: impl Into<String>, href: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            mark: Mark::Plain,
            link: Some(href.into()),
        }
    }
}

impl From<String> for Cell {
    fn from(text: String) -> Cell {
        Cell {
            text,
            mark: Mark::Plain,
            link: None,
        }
    }
}

impl From<&str> for Cell {
    fn from(text: &str) -> Cell {
        Cell::from(text.to_string())
    }
}

/// Cells from anything that converts: `cells![name, thousands(n), ...]`.
macro_rules! cells {
    ($($c:expr),* $(,)?) => {
        vec![$($crate::report::sections::Cell::from($c)),*]
    };
}
pub(crate) use cells;

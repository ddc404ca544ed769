//! What a report is made of, whatever its format: sections holding fields, tables, notes,
//! lists, the storage tree and (for formats that draw) charts. Every figure in it is already
//! formatted; a renderer only chooses the syntax.

/// A whole report: a title and its sections in order.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub title: String,
    pub sections: Vec<Section>,
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
    /// Preformatted text drawn as a tree (the storage map).
    Tree(String),
    /// Every option as used, for formats that can fold it away.
    Options(serde_json::Value),
    /// A picture, for formats that draw.
    Chart(Chart),
}

/// The charts a drawing format adds. Histograms carry their bars (the same buckets the
/// tables show); the per-second charts are drawn from the result's per-second series.
#[derive(Debug, Clone)]
pub enum Chart {
    Histogram(Histogram),
    /// IOPS, MiB/s and latency of every event, per second.
    PerSecond,
    /// Active sessions by state, per second.
    Ash,
    /// CPU, memory, I/O pressure and dbio's own CPU, per second.
    Os,
    /// Every block device under the data set, per second.
    Devices,
    /// Which colour is which run (a comparison).
    RunLegend(Vec<String>),
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

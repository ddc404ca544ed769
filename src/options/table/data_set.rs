//! The data set's options: where it lives, how big, what it holds.

use super::DATA_TESTS;
use crate::dataset::fill::Content;
use crate::options::parse::*;
use crate::options::{Applies, Group, Opt, heading};
use crate::workload::span::Span;

/// Every row of this part: what its rows share.
const ROW: Opt = Opt {
    heading: heading::DATA_SET,
    group: Group::DataSet,
    with_classes: true,
    ..Opt::DEFAULT
};

pub(super) const DATA_SET: &[Opt] = &[
    Opt {
        name: "target",
        key: Some("dataset.target"),
        value: Some("PATH"),
        default: Some("./dbio-data"),
        help: "Directory holding the data set (created if its parent exists). Read tests also accept an existing file or block device, which is only read.",
        set: |a, t| {
            a.target = path(t, "a directory, or an existing file or block device")?;
            Ok(())
        },
        get: |a| Some(a.target.display().to_string()),
        ..ROW
    },
    Opt {
        name: "size",
        key: Some("dataset.size"),
        value: Some("SIZE"),
        help: "Total data set size (K, M, G, T are binary) [default: 1G; for an existing file or block device as --target: all of it, or the first SIZE bytes].",
        set: |a, t| {
            a.size = Some(positive_size(t)?);
            Ok(())
        },
        get: |a| a.size.map(size_text),
        ..ROW
    },
    Opt {
        name: "block-size",
        key: Some("dataset.block_size"),
        value: Some("SIZE"),
        default: Some("8K"),
        help: "Database block size: a power of two from 512 to 1M (`dbio map` checks it against the devices' logical block size).",
        set: |a, t| {
            a.block_size = block_size(t)?;
            Ok(())
        },
        get: |a| Some(size_text(a.block_size)),
        ..ROW
    },
    Opt {
        name: "files",
        key: Some("dataset.files"),
        value: Some("N"),
        default: Some("4"),
        help: "Number of data files the data set is spread over (1 to 4096).",
        set: |a, t| {
            a.files = count(t, 1, 4096)? as u32;
            Ok(())
        },
        get: |a| Some(a.files.to_string()),
        ..ROW
    },
    Opt {
        name: "fill",
        key: Some("dataset.fill"),
        value: Some("random|zero|compress=RATIO|dedupe=RATIO"),
        default: Some("random"),
        help: "What the data files hold: random (incompressible), zero, compress=RATIO (e.g. compress=2: compresses about 2:1) or dedupe=RATIO (e.g. dedupe=4: 1 in 4 blocks unique).",
        set: |a, t| {
            a.fill = Content::parse(t)?;
            Ok(())
        },
        get: |a| Some(a.fill.name()),
        ..ROW
    },
    Opt {
        name: "span",
        key: Some("dataset.span"),
        value: Some("FRACTION"),
        default: Some("100%"),
        help: "The active surface: every request falls in the first FRACTION of each data file or device, as on a drive filled to that level (e.g. 33% or 0.33).",
        applies: Applies::Tests(DATA_TESTS),
        set: |a, t| {
            a.span = Span::parse(t)?;
            Ok(())
        },
        get: |a| Some(a.span.label()),
        ..ROW
    },
    Opt {
        name: "fresh",
        help: "Replace the data set, even if it matches (needed when it does not match the run: another size, block size, fill or --verify).",
        set: |a, t| {
            a.fresh = switch(t)?;
            Ok(())
        },
        get: |a| a.fresh.then(|| "true".into()),
        ..ROW
    },
    Opt {
        name: "seed",
        key: Some("run.seed"),
        value: Some("N"),
        help: "Seed of the random choices: a run's blocks and data fill, the cycles of `dbio mem` [default: random; recorded in the result].",
        set: |a, t| {
            a.seed = Some(
                t.trim()
                    .parse()
                    .map_err(|_| format!("'{t}' is not a whole number from 0 to 2^64-1"))?,
            );
            Ok(())
        },
        get: |a| a.seed.map(|s| s.to_string()),
        ..ROW
    },
    Opt {
        name: "verify",
        key: Some("dataset.verify"),
        help: "Every block written carries a header (data set, file, block, write sequence, checksum) and every block read is checked: torn, misdirected and lost writes are failed requests naming file and block. Check a data set later with `dbio verify`.",
        applies: Applies::Tests(DATA_TESTS),
        set: |a, t| {
            a.verify = switch(t)?;
            Ok(())
        },
        get: |a| a.verify.then(|| "true".into()),
        ..ROW
    },
];

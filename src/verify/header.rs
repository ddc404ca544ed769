//! The header every block of a `--verify` data set starts with, and its check.
//!
//! ```text
//! bytes  0..8   checksum: xxh3-64 of bytes 8..block size (the rest of the header and the data)
//!        8..12  magic "DBV1"
//!       12..16  file index in the data set (u32)
//!       16..24  data set id (the manifest's `id`)
//!       24..32  block number within the file
//!       32..40  write sequence of this block (0 when the data set was filled)
//! ```
//!
//! All little-endian. The checksum covers everything after it, so a block torn between two
//! writes, or changed behind dbio's back, fails it; a whole block of another place (a
//! misdirected write) passes it but names another file, block or data set; an older copy of
//! the block itself (a lost write) passes both and shows an older sequence.

use std::fmt;

/// Bytes of header at the start of each block.
pub const HEADER_LEN: usize = 40;
const MAGIC: [u8; 4] = *b"DBV1";

/// Where a block belongs and which write of it this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub dataset: u64,
    pub file: u32,
    pub block: u64,
    pub seq: u64,
}

/// What is wrong with a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Problem {
    /// No dbio header at all (and no valid checksum): never written with --verify, zeroed,
    /// or overwritten by something else.
    NoHeader,
    /// The checksum does not match the contents: a torn or corrupted block.
    Torn { stored: u64, computed: u64 },
    /// A valid block of another data set.
    OtherDataSet { dataset: u64 },
    /// A valid block of another place in this data set: a misdirected write.
    Misdirected { file: u32, block: u64 },
    /// An older write of this block: the last write(s) were lost.
    Stale { found: u64, expected: u64 },
    /// A newer write than dbio recorded (the record is older than the data).
    Newer { found: u64, expected: u64 },
}

impl Problem {
    /// One word for the kind of problem, as reports and tests match it.
    pub fn kind(&self) -> &'static str {
        match self {
            Problem::NoHeader => "no header",
            Problem::Torn { .. } => "torn",
            Problem::OtherDataSet { .. } => "misdirected",
            Problem::Misdirected { .. } => "misdirected",
            Problem::Stale { .. } => "stale",
            Problem::Newer { .. } => "newer than recorded",
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Problem::NoHeader => write!(
                f,
                "no header: the block was not written by dbio --verify (zeroed or overwritten?)"
            ),
            Problem::Torn { stored, computed } => write!(
                f,
                "torn: checksum {computed:016x} does not match the {stored:016x} written with it"
            ),
            Problem::OtherDataSet { dataset } => write!(
                f,
                "misdirected: holds a block of another data set ({dataset:016x})"
            ),
            Problem::Misdirected { file, block } => write!(
                f,
                "misdirected: holds block {block} of {} (written to the wrong place)",
                data_file_name(file)
            ),
            Problem::Stale { found, expected } => write!(
                f,
                "stale: holds write {found}, the last write dbio made was {expected} (a lost write)"
            ),
            Problem::Newer { found, expected } => write!(
                f,
                "holds write {found}, newer than write {expected} dbio recorded"
            ),
        }
    }
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn checksum(block: &[u8]) -> u64 {
    twox_hash::XxHash3_64::oneshot(&block[8..])
}

/// Writes `h` into the start of `block` and seals it with the checksum of the whole block.
/// The data after the header must already be in place.
#[inline]
pub fn seal(block: &mut [u8], h: Header) {
    debug_assert!(block.len() >= HEADER_LEN);
    block[8..12].copy_from_slice(&MAGIC);
    block[12..16].copy_from_slice(&h.file.to_le_bytes());
    block[16..24].copy_from_slice(&h.dataset.to_le_bytes());
    block[24..32].copy_from_slice(&h.block.to_le_bytes());
    block[32..40].copy_from_slice(&h.seq.to_le_bytes());
    let sum = checksum(block);
    block[..8].copy_from_slice(&sum.to_le_bytes());
}

/// Reads the header of `block` and checks its checksum. The header is returned only when the
/// block is intact; whether it is the block expected is for [`expect`] to say.
#[inline]
pub fn read(block: &[u8]) -> Result<Header, Problem> {
    let stored = u64_at(block, 0);
    let computed = checksum(block);
    if stored != computed {
        return Err(if block[8..12] == MAGIC {
            Problem::Torn { stored, computed }
        } else {
            Problem::NoHeader
        });
    }
    if block[8..12] != MAGIC {
        return Err(Problem::NoHeader);
    }
    Ok(Header {
        file: u32::from_le_bytes(block[12..16].try_into().expect("4 bytes")),
        dataset: u64_at(block, 16),
        block: u64_at(block, 24),
        seq: u64_at(block, 32),
    })
}

/// Checks that the intact header `h` belongs to block `block` of file `file` of data set
/// `dataset`.
#[inline]
pub fn expect(h: &Header, dataset: u64, file: u32, block: u64) -> Result<(), Problem> {
    if h.dataset != dataset {
        return Err(Problem::OtherDataSet { dataset: h.dataset });
    }
    if h.file != file || h.block != block {
        return Err(Problem::Misdirected {
            file: h.file,
            block: h.block,
        });
    }
    Ok(())
}

/// The name of data file `i` (from 0) of a data set: what headers number, as the data set
/// names it.
pub fn data_file_name(i: u32) -> String {
    format!("dbio-data-{:03}.dbf", i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(h: Header) -> Vec<u8> {
        let mut b: Vec<u8> = (0..8192u32).map(|i| (i * 7 + 3) as u8).collect();
        seal(&mut b, h);
        b
    }

    const H: Header = Header {
        dataset: 0xfeed_beef,
        file: 2,
        block: 77,
        seq: 5,
    };

    #[test]
    fn a_sealed_block_reads_back_its_header() {
        let b = block(H);
        assert_eq!(read(&b), Ok(H));
        assert_eq!(expect(&H, H.dataset, 2, 77), Ok(()));
    }

    #[test]
    fn any_changed_byte_is_a_torn_block() {
        for at in [0, 7, 8 + 4, 20, 39, 40, 4096, 8191] {
            let mut b = block(H);
            b[at] ^= 0x10;
            let p = read(&b).unwrap_err();
            assert!(
                matches!(p, Problem::Torn { .. } | Problem::NoHeader),
                "byte {at}: {p:?}"
            );
            if !(8..12).contains(&at) {
                assert_eq!(p.kind(), "torn", "byte {at}");
            }
        }
    }

    #[test]
    fn a_block_without_header_says_so() {
        assert_eq!(read(&[0u8; 8192]), Err(Problem::NoHeader));
        let random: Vec<u8> = (0..4096u32).map(|i| (i * 31 + 1) as u8).collect();
        assert_eq!(read(&random), Err(Problem::NoHeader));
    }

    #[test]
    fn a_block_of_another_place_is_misdirected() {
        let other = Header { block: 78, ..H };
        let h = read(&block(other)).unwrap();
        assert_eq!(
            expect(&h, H.dataset, 2, 77),
            Err(Problem::Misdirected { file: 2, block: 78 })
        );
        let h = read(&block(Header { file: 0, ..H })).unwrap();
        assert_eq!(
            expect(&h, H.dataset, 2, 77).unwrap_err().kind(),
            "misdirected"
        );
        let h = read(&block(Header { dataset: 1, ..H })).unwrap();
        assert_eq!(
            expect(&h, H.dataset, 2, 77),
            Err(Problem::OtherDataSet { dataset: 1 })
        );
    }

    #[test]
    fn small_blocks_work_too() {
        let mut b = vec![9u8; 512];
        seal(&mut b, H);
        assert_eq!(read(&b), Ok(H));
    }

    #[test]
    fn problems_read_as_one_line() {
        for p in [
            Problem::NoHeader,
            Problem::Torn {
                stored: 1,
                computed: 2,
            },
            Problem::Misdirected { file: 0, block: 3 },
            Problem::Stale {
                found: 1,
                expected: 2,
            },
        ] {
            let s = p.to_string();
            assert!(s.starts_with(p.kind()), "{s}");
            assert!(!s.contains('\n'));
        }
    }
}

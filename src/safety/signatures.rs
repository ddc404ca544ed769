//! Signatures on a block device read by dbio itself: the magic bytes of the file systems,
//! volumes and partition tables a database's disk may carry, at the device's start, at its
//! end (md), and — on a device whose start is blank — at any sector of its first 16 MiB
//! (checked strictly there, so random data is not taken for one). util-linux's libblkid
//! ([`super::blkid`]) is asked as well; either finding one means no write.

use std::fmt;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use crate::units::human_bytes;

/// Something on a device that says it holds data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signature {
    Ext,
    Xfs,
    Btrfs,
    Swap,
    Luks,
    Lvm2,
    /// md RAID member; the superblock version.
    Md(&'static str),
    Mbr,
    Gpt,
    Vfat,
    Ntfs,
    Iso9660,
}

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Signature::Ext => write!(f, "an ext2/3/4 file system"),
            Signature::Xfs => write!(f, "an XFS file system"),
            Signature::Btrfs => write!(f, "a btrfs file system"),
            Signature::Swap => write!(f, "a swap area"),
            Signature::Luks => write!(f, "a LUKS encrypted volume"),
            Signature::Lvm2 => write!(f, "an LVM2 physical volume"),
            Signature::Md(v) => write!(f, "an md RAID member (superblock {v})"),
            Signature::Mbr => write!(f, "an MBR partition table"),
            Signature::Gpt => write!(f, "a GPT partition table"),
            Signature::Vfat => write!(f, "a FAT file system"),
            Signature::Ntfs => write!(f, "an NTFS file system"),
            Signature::Iso9660 => write!(f, "an ISO 9660 file system"),
        }
    }
}

/// Something that can be read at an offset: a device, or an image in memory (tests).
pub trait Image {
    /// Size in bytes.
    fn size(&self) -> u64;
    /// Reads up to `buf.len()` bytes at `offset`; fewer only at the end.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize>;
}

impl Image for [u8] {
    fn size(&self) -> u64 {
        self.len() as u64
    }
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let start = (offset as usize).min(self.len());
        let n = buf.len().min(self.len() - start);
        buf[..n].copy_from_slice(&self[start..start + n]);
        Ok(n)
    }
}

/// An open device and its size.
pub struct DeviceImage<'a> {
    pub file: &'a File,
    pub size: u64,
}

impl Image for DeviceImage<'_> {
    fn size(&self) -> u64 {
        self.size
    }
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            match self.file.read_at(&mut buf[done..], offset + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(done)
    }
}

const MD_MAGIC: u32 = 0xa92b_4efc;

/// A signature and the byte it starts at (0, or further in on a device whose start is blank).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    pub sig: Signature,
    pub offset: u64,
}

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.offset == 0 {
            write!(f, "{}", self.sig)
        } else {
            write!(
                f,
                "{} at byte {} ({} into the device, where a partition or an offset would start, though there is no partition table)",
                self.sig,
                self.offset,
                human_bytes(self.offset)
            )
        }
    }
}

/// How far into a device whose start is blank file systems and volumes are looked for: a
/// file system written at an offset (a partition table erased or never written, `losetup
/// -o`, `mkfs -E offset=`) is still somebody's data, and nothing at the start says so.
/// Every 512-byte-aligned start in it is checked.
pub const SCAN: u64 = 16 << 20;

/// How much is read at the start: every superblock checked lies in it.
const HEAD: usize = 128 << 10;

/// The signatures found on `img`: at its start, at its end (md 0.90 and 1.0), and — when its
/// start holds nothing — the file-system and volume superblocks that start at any
/// 512-byte-aligned byte of its first [`SCAN`] bytes, validated strictly so that random
/// data is not taken for one (the lowest such start is reported). An error means a place
/// that must be checked could not be read: the caller must then refuse, not assume the
/// device is blank.
pub fn signatures(img: &(impl Image + ?Sized)) -> io::Result<Vec<Found>> {
    let size = img.size();
    // The scanned starts, and the superblock bytes of the last of them.
    let want = (SCAN + HEAD as u64).min(size) as usize;
    let mut buf = vec![0u8; want];
    let n = img.read_at(&mut buf, 0)?;
    buf.truncate(n);
    let head = &buf[..buf.len().min(HEAD)];
    let mut at_start = Vec::new();
    superblocks(head, &mut at_start);
    // md 0.90 and 1.0 keep their superblock near the end of the device.
    let tail_magic = |off: u64| -> io::Result<bool> {
        let mut b = [0u8; 4];
        Ok(img.read_at(&mut b, off)? == 4 && u32::from_le_bytes(b) == MD_MAGIC)
    };
    if size >= 128 << 10 && tail_magic((size & !0xFFFF) - 0x10000)? {
        at_start.push(Signature::Md("0.90"));
    }
    if size >= 16 << 10 && tail_magic((((size >> 9) - 16) & !7) << 9)? {
        at_start.push(Signature::Md("1.0"));
    }
    partition_tables(head, &mut at_start);
    if !at_start.is_empty() {
        // The start says what the device holds (a partition table, or a file system whose
        // own backup superblocks and data lie further on).
        return Ok(at_start
            .into_iter()
            .map(|sig| Found { sig, offset: 0 })
            .collect());
    }
    Ok(scan(&buf, SCAN.min(size)))
}

/// The superblocks at the lowest 512-byte-aligned start below `limit` in `buf` (past 0,
/// which the lenient checks cover) that passes the strict checks.
fn scan(buf: &[u8], limit: u64) -> Vec<Found> {
    let mut start = 512usize;
    while (start as u64) < limit && start < buf.len() {
        let here = strict(&buf[start..]);
        if !here.is_empty() {
            return here
                .into_iter()
                .map(|sig| Found {
                    sig,
                    offset: start as u64,
                })
                .collect();
        }
        start += 512;
    }
    Vec::new()
}

fn is_pow2_in(v: u64, lo: u64, hi: u64) -> bool {
    v.is_power_of_two() && (lo..=hi).contains(&v)
}

/// Superblocks starting at byte 0 of `sb`, checked beyond their magic: the fields a
/// formatting tool always writes must hold values it can write. Random bytes pass one of
/// these with a probability far below one in 2^40 per start.
fn strict(sb: &[u8]) -> Vec<Signature> {
    let at = |off: usize, magic: &[u8]| sb.get(off..off + magic.len()) == Some(magic);
    let le16 = |off: usize| {
        sb.get(off..off + 2)
            .map_or(0, |b| u16::from_le_bytes([b[0], b[1]]))
    };
    let le32 = |off: usize| {
        sb.get(off..off + 4)
            .map_or(0, |b| u32::from_le_bytes(b.try_into().unwrap()))
    };
    let le64 = |off: usize| {
        sb.get(off..off + 8)
            .map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap()))
    };
    let be16 = |off: usize| {
        sb.get(off..off + 2)
            .map_or(0, |b| u16::from_be_bytes([b[0], b[1]]))
    };
    let be32 = |off: usize| {
        sb.get(off..off + 4)
            .map_or(0, |b| u32::from_be_bytes(b.try_into().unwrap()))
    };
    let be64 = |off: usize| {
        sb.get(off..off + 8)
            .map_or(0, |b| u64::from_be_bytes(b.try_into().unwrap()))
    };
    let mut found = Vec::new();
    // ext2/3/4: the superblock is 1024 bytes in; its fields are relative to that.
    if le16(1024 + 56) == 0xEF53 {
        let e = |off: usize| le32(1024 + off);
        let log = e(24);
        let bs = 1024u64 << log.min(6);
        let ok = log <= 6
            && e(0) > 0 // inodes
            && (e(4) > 0 || e(0x150) > 0) // blocks, low and high words
            && e(76) <= 1 // revision
            && (if log == 0 { e(20) <= 1 } else { e(20) == 0 }) // first data block
            && (1..=8 * bs).contains(&u64::from(e(40))) // inodes per group
            && e(40) <= e(0)
            && e(32) > 0 // blocks per group
            && le16(1024 + 60) <= 3 // behaviour on errors
            && e(72) <= 4; // creator OS
        if ok {
            found.push(Signature::Ext);
        }
    }
    // XFS: big-endian; block size, sector size and their logarithms agree.
    if at(0, b"XFSB") {
        let (bs, ss) = (u64::from(be32(4)), u64::from(be16(102)));
        let ok = is_pow2_in(bs, 512, 65536)
            && is_pow2_in(ss, 512, 32768)
            && sb.get(120).is_some_and(|&l| 1u64 << l.min(63) == bs)
            && sb.get(121).is_some_and(|&l| 1u64 << l.min(63) == ss)
            && be64(8) > 0 // data blocks
            && be32(88) > 0; // allocation groups
        if ok {
            found.push(Signature::Xfs);
        }
    }
    // btrfs: the primary superblock at 64 KiB records its own position.
    if at(65600, b"_BHRfS_M") && le64(65536 + 0x30) == 65536 {
        found.push(Signature::Btrfs);
    }
    // Swap (version 1): the magic ends the first page, the version follows the boot block.
    if [4096usize, 8192, 16384, 32768, 65536]
        .iter()
        .any(|&ps| at(ps - 10, b"SWAPSPACE2"))
        && le32(1024) == 1
        && le32(1028) > 0
    {
        found.push(Signature::Swap);
    }
    if at(0, b"LUKS\xba\xbe") && matches!(be16(6), 1 | 2) {
        found.push(Signature::Luks);
    }
    // LVM2: a label in one of the first four sectors that names its own sector.
    if (0..4usize).any(|s| {
        at(s * 512, b"LABELONE") && at(s * 512 + 24, b"LVM2 001") && le64(s * 512 + 8) == s as u64
    }) {
        found.push(Signature::Lvm2);
    }
    if le32(4096) == MD_MAGIC && le32(4100) == 1 {
        found.push(Signature::Md("1.2"));
    }
    if le32(0) == MD_MAGIC && le32(4) == 1 {
        found.push(Signature::Md("1.1"));
    }
    // FAT and NTFS boot sectors: the boot signature, a sector size and a cluster size.
    let boot = at(510, b"\x55\xAA")
        && is_pow2_in(u64::from(le16(11)), 512, 4096)
        && sb.get(13).is_some_and(|&c| c.is_power_of_two());
    if boot && (at(54, b"FAT1") || at(54, b"FAT     ") || at(82, b"FAT32   ")) {
        found.push(Signature::Vfat);
    }
    if boot && at(3, b"NTFS    ") {
        found.push(Signature::Ntfs);
    }
    // ISO 9660: a volume descriptor of a known type, version 1.
    if at(32769, b"CD001") && sb.get(32774) == Some(&1) && matches!(sb[32768], 0..=3 | 255) {
        found.push(Signature::Iso9660);
    }
    found
}

/// File systems, swap and volume members whose superblock lies in the first 128 KiB of
/// `head` (the start of the device, or of a would-be partition).
fn superblocks(head: &[u8], found: &mut Vec<Signature>) {
    let at = |off: usize, magic: &[u8]| head.get(off..off + magic.len()) == Some(magic);
    let u16_at = |off: usize| {
        head.get(off..off + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
    };
    let u32_at = |off: usize| {
        head.get(off..off + 4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
    };
    // ext2/3/4: superblock at 1024, s_magic at +56, s_log_block_size (1K << n, n <= 6) at +24.
    if u16_at(1080) == Some(0xEF53) && u32_at(1048).is_some_and(|l| l <= 6) {
        found.push(Signature::Ext);
    }
    if at(0, b"XFSB") {
        found.push(Signature::Xfs);
    }
    if at(65600, b"_BHRfS_M") {
        found.push(Signature::Btrfs);
    }
    // Swap: the last 10 bytes of the first page, for any page size Linux uses.
    if [4096usize, 8192, 16384, 32768, 65536]
        .iter()
        .any(|&ps| at(ps - 10, b"SWAPSPACE2") || at(ps - 10, b"SWAP-SPACE"))
    {
        found.push(Signature::Swap);
    }
    if at(0, b"LUKS\xba\xbe") {
        found.push(Signature::Luks);
    }
    // LVM2: a label in one of the first four sectors.
    if (0..4).any(|s| at(s * 512, b"LABELONE") && at(s * 512 + 24, b"LVM2 001")) {
        found.push(Signature::Lvm2);
    }
    if u32_at(4096) == Some(MD_MAGIC) {
        found.push(Signature::Md("1.2"));
    }
    if u32_at(0) == Some(MD_MAGIC) {
        found.push(Signature::Md("1.1"));
    }
    if at(510, b"\x55\xAA") && (at(54, b"FAT1") || at(54, b"FAT     ") || at(82, b"FAT32   ")) {
        found.push(Signature::Vfat);
    }
    if at(3, b"NTFS    ") {
        found.push(Signature::Ntfs);
    }
    if at(32769, b"CD001") {
        found.push(Signature::Iso9660);
    }
}

/// MBR and GPT partition tables at the start of the device.
fn partition_tables(head: &[u8], found: &mut Vec<Signature>) {
    let at = |off: usize, magic: &[u8]| head.get(off..off + magic.len()) == Some(magic);
    if at(510, b"\x55\xAA") {
        // Four partition entries at 446: a valid boot flag each, at least one with a type.
        let entries: Vec<&[u8]> = (0..4).map(|i| &head[446 + 16 * i..462 + 16 * i]).collect();
        let flags_ok = entries.iter().all(|e| e[0] == 0 || e[0] == 0x80);
        if flags_ok && entries.iter().any(|e| e[4] != 0) {
            found.push(Signature::Mbr);
        }
    }
    if at(512, b"EFI PART") || at(4096, b"EFI PART") {
        found.push(Signature::Gpt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: usize = 1 << 20;

    fn blank() -> Vec<u8> {
        vec![0u8; 4 * MIB]
    }

    fn with(at: usize, bytes: &[u8]) -> Vec<u8> {
        let mut img = blank();
        img[at..at + bytes.len()].copy_from_slice(bytes);
        img
    }

    fn sigs(img: &[u8]) -> Vec<Signature> {
        let found = signatures(img).unwrap();
        assert!(found.iter().all(|f| f.offset == 0), "{found:?}");
        found.into_iter().map(|f| f.sig).collect()
    }

    #[test]
    fn blank_and_random_images_carry_nothing() {
        assert!(sigs(&blank()).is_empty());
        let mut img = blank();
        let mut state = 42;
        crate::sys::fill_random(&mut img, &mut state);
        assert!(sigs(&img).is_empty());
        // Smaller than the places checked: nothing read out of range.
        assert!(sigs(&[0u8; 100]).is_empty());
        assert!(sigs(&[]).is_empty());
    }

    #[test]
    fn file_systems_are_recognised() {
        let mut ext = with(1080, &0xEF53u16.to_le_bytes());
        ext[1048..1052].copy_from_slice(&2u32.to_le_bytes());
        assert_eq!(sigs(&ext), [Signature::Ext]);
        // The magic alone, with an impossible block size, is noise.
        ext[1048..1052].copy_from_slice(&900u32.to_le_bytes());
        assert!(sigs(&ext).is_empty());
        assert_eq!(sigs(&with(0, b"XFSB")), [Signature::Xfs]);
        assert_eq!(sigs(&with(65600, b"_BHRfS_M")), [Signature::Btrfs]);
        assert_eq!(sigs(&with(3, b"NTFS    ")), [Signature::Ntfs]);
        assert_eq!(sigs(&with(32769, b"CD001")), [Signature::Iso9660]);
        let mut fat = with(82, b"FAT32   ");
        fat[510..512].copy_from_slice(&[0x55, 0xAA]);
        assert_eq!(sigs(&fat), [Signature::Vfat]);
    }

    #[test]
    fn swap_luks_lvm_and_md_are_recognised() {
        assert_eq!(sigs(&with(4086, b"SWAPSPACE2")), [Signature::Swap]);
        assert_eq!(sigs(&with(65526, b"SWAP-SPACE")), [Signature::Swap]);
        assert_eq!(sigs(&with(0, b"LUKS\xba\xbe\x00\x02")), [Signature::Luks]);
        let mut lvm = with(512, b"LABELONE");
        lvm[536..544].copy_from_slice(b"LVM2 001");
        assert_eq!(sigs(&lvm), [Signature::Lvm2]);
        // LABELONE without the LVM2 type is something else.
        assert!(sigs(&with(512, b"LABELONE")).is_empty());
        let magic = MD_MAGIC.to_le_bytes();
        assert_eq!(sigs(&with(4096, &magic)), [Signature::Md("1.2")]);
        assert_eq!(sigs(&with(0, &magic)), [Signature::Md("1.1")]);
        let size = 4 * MIB;
        assert_eq!(
            sigs(&with(size - 65536, &magic)),
            [Signature::Md("0.90")],
            "0.90: 64K from the end, 64K-aligned"
        );
        assert_eq!(sigs(&with(size - 8192, &magic)), [Signature::Md("1.0")]);
    }

    #[test]
    fn partition_tables_are_recognised() {
        let mut mbr = with(510, &[0x55, 0xAA]);
        assert!(sigs(&mbr).is_empty(), "a boot signature with no partition");
        mbr[446 + 4] = 0x83; // one Linux partition
        assert_eq!(sigs(&mbr), [Signature::Mbr]);
        mbr[446 + 16] = 0x17; // an impossible boot flag: not a partition table
        assert!(sigs(&mbr).is_empty());
        assert_eq!(sigs(&with(512, b"EFI PART")), [Signature::Gpt]);
        assert_eq!(sigs(&with(4096, b"EFI PART")), [Signature::Gpt]);
    }

    fn found(img: &[u8]) -> Vec<(Signature, u64)> {
        signatures(img)
            .unwrap()
            .into_iter()
            .map(|f| (f.sig, f.offset))
            .collect()
    }

    /// A plausible ext4 superblock for a 16 MiB file system with 1 KiB blocks at `base`.
    fn ext_at(base: usize, size: usize) -> Vec<u8> {
        let mut img = vec![0u8; size];
        let sb = &mut img[base + 1024..base + 2048];
        for (off, v) in [
            (0, 4096u32),
            (4, 16384),
            (20, 1),
            (24, 0),
            (32, 8192),
            (40, 2048),
        ] {
            sb[off..off + 4].copy_from_slice(&v.to_le_bytes());
        }
        sb[76..80].copy_from_slice(&1u32.to_le_bytes());
        sb[60..62].copy_from_slice(&1u16.to_le_bytes());
        sb[56..58].copy_from_slice(&0xEF53u16.to_le_bytes());
        img
    }

    #[test]
    fn superblocks_at_any_sector_of_a_blank_start_are_found_with_their_offset() {
        for base in [
            512usize,
            17408,
            32256,
            131072,
            258048,
            MIB,
            4 * MIB,
            8 * MIB,
            16 * MIB - 512,
        ] {
            assert_eq!(
                found(&ext_at(base, 17 * MIB)),
                [(Signature::Ext, base as u64)],
                "ext at {base}"
            );
        }
        let f = signatures(&ext_at(MIB, 4 * MIB)[..]).unwrap();
        let text = f[0].to_string();
        assert!(
            text.contains("at byte 1048576") && text.contains("1.0 MiB"),
            "{text}"
        );
        // Not on a sector boundary, or past the first 16 MiB: not looked for.
        assert!(found(&ext_at(MIB + 100, 4 * MIB)).is_empty());
        assert!(found(&ext_at(16 * MIB, 17 * MIB)).is_empty());
        // The magic with fields no mkfs writes is noise.
        for (off, bad) in [
            (24usize, 7u32),
            (0, 0),
            (4, 0),
            (76, 2),
            (20, 5),
            (40, 0),
            (40, 9000),
        ] {
            let mut img = ext_at(MIB, 4 * MIB);
            img[MIB + 1024 + off..MIB + 1028 + off].copy_from_slice(&bad.to_le_bytes());
            assert!(found(&img).is_empty(), "field {off} = {bad}");
        }
        let mut xfs = blank();
        let sb = &mut xfs[MIB + 4096..MIB + 4096 + 512];
        sb[..4].copy_from_slice(b"XFSB");
        sb[4..8].copy_from_slice(&4096u32.to_be_bytes());
        sb[8..16].copy_from_slice(&4096u64.to_be_bytes());
        sb[88..92].copy_from_slice(&4u32.to_be_bytes());
        sb[102..104].copy_from_slice(&512u16.to_be_bytes());
        sb[120] = 12;
        sb[121] = 9;
        assert_eq!(found(&xfs), [(Signature::Xfs, MIB as u64 + 4096)]);
        xfs[MIB + 4096 + 120] = 11; // a block size its logarithm contradicts
        assert!(found(&xfs).is_empty());
        // LVM2: the label sits in sector 1 of the volume and says so: found where the
        // volume starts, not three sectors earlier.
        let mut lvm = blank();
        let l = 32256 + 512;
        lvm[l..l + 8].copy_from_slice(b"LABELONE");
        lvm[l + 8..l + 16].copy_from_slice(&1u64.to_le_bytes());
        lvm[l + 24..l + 32].copy_from_slice(b"LVM2 001");
        assert_eq!(found(&lvm), [(Signature::Lvm2, 32256)]);
        // Beyond the end of a small device: nothing read out of range.
        assert_eq!(found(&ext_at(32256, 40000)).len(), 1);
        // A device whose start says what it holds reports that only: the start of a file
        // system (whose backup superblocks may lie further on), or a partition table (whose
        // partitions are devices of their own, checked as such).
        let mut both = ext_at(MIB, 4 * MIB);
        both[1080..1082].copy_from_slice(&0xEF53u16.to_le_bytes());
        assert_eq!(found(&both), [(Signature::Ext, 0)]);
        let mut mbr = ext_at(MIB, 4 * MIB);
        mbr[510..512].copy_from_slice(&[0x55, 0xAA]);
        mbr[446 + 4] = 0x83;
        assert_eq!(found(&mbr), [(Signature::Mbr, 0)]);
    }

    /// `mkfs.ext4 -E offset=N`: a real file system at an offset of a blank device.
    fn mkfs_at(offset: usize) -> Option<Vec<u8>> {
        let dir = tempfile::tempdir().unwrap();
        let img = dir.path().join("ext4.img");
        std::fs::write(&img, vec![0u8; offset]).unwrap();
        let ok = std::process::Command::new("mkfs.ext4")
            .args(["-q", "-F", "-E", &format!("offset={offset}")])
            .arg(&img)
            .arg("16M")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
        if !matches!(ok, Ok(s) if s.success()) {
            stderr_line!("skipped: no mkfs.ext4");
            return None;
        }
        let mut bytes = std::fs::read(&img).unwrap();
        bytes.resize(offset + 24 * MIB, 0);
        Some(bytes)
    }

    #[test]
    fn real_mkfs_images_at_offsets_are_found_and_named_with_their_offset() {
        for offset in [17408usize, 131072, 4 * MIB, MIB] {
            let Some(bytes) = mkfs_at(offset) else {
                return;
            };
            let f = signatures(&bytes[..]).unwrap();
            assert_eq!(
                f,
                [Found {
                    sig: Signature::Ext,
                    offset: offset as u64
                }],
                "mkfs.ext4 -E offset={offset}"
            );
            assert!(f[0].to_string().contains(&format!("at byte {offset} (")));
        }
    }

    #[test]
    fn random_data_and_dbio_s_own_fill_patterns_are_not_taken_for_a_file_system() {
        use crate::dataset::fill::Content;
        let mut img = vec![0u8; 64 * MIB];
        for seed in [1u64, 42, 0xdead_beef, 7_777_777] {
            crate::sys::fill_random(&mut img, &mut { seed });
            // Every 16 MiB window of the 64 MiB, as if it were a device's start.
            for w in 0..4 {
                let win = &img[w * 16 * MIB..(w + 1) * 16 * MIB];
                assert!(
                    signatures(win).unwrap().is_empty(),
                    "seed {seed} window {w}"
                );
            }
        }
        for content in [
            Content::Random,
            Content::Zero,
            Content::Compress(2.0),
            Content::Compress(64.0),
            Content::Dedupe(4),
        ] {
            content.generate(&mut img, 0, 64 << 20, 3);
            assert!(signatures(&img[..]).unwrap().is_empty(), "{content:?}");
            let mut buf = vec![0u8; 17 * MIB];
            content.write_buffer(&mut buf, 9);
            assert!(
                signatures(&buf[..]).unwrap().is_empty(),
                "{content:?} writes"
            );
        }
        // Blocks stamped with verify headers (--verify), 4 KiB each.
        for block in img.chunks_exact_mut(4096) {
            let h = crate::verify::header::Header {
                dataset: 1,
                file: 0,
                block: 7,
                seq: 3,
            };
            crate::verify::header::seal(block, h);
        }
        assert!(signatures(&img[..]).unwrap().is_empty(), "sealed blocks");
    }

    #[test]
    fn the_scan_of_sixteen_mib_is_quick() {
        let mut img = vec![0u8; 17 * MIB];
        crate::sys::fill_random(&mut img, &mut 5);
        let t = std::time::Instant::now();
        assert!(signatures(&img[..]).unwrap().is_empty());
        let took = t.elapsed();
        stderr_line!("16 MiB scanned in {took:?}");
        // Generous for a debug build on a busy machine; release builds take a few ms.
        assert!(took < std::time::Duration::from_secs(2), "{took:?}");
    }

    #[test]
    fn a_real_mkfs_image_is_recognised() {
        // Only where mkfs.ext4 exists; the in-memory cases above always run.
        let dir = tempfile::tempdir().unwrap();
        let img = dir.path().join("ext4.img");
        std::fs::write(&img, vec![0u8; 8 * MIB]).unwrap();
        let ok = std::process::Command::new("mkfs.ext4")
            .args(["-q", "-F"])
            .arg(&img)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
        if !matches!(ok, Ok(s) if s.success()) {
            stderr_line!("skipped: no mkfs.ext4");
            return;
        }
        let bytes = std::fs::read(&img).unwrap();
        assert_eq!(sigs(&bytes), [Signature::Ext]);
    }
}

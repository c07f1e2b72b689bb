//! The emulated address space: a few byte-addressed regions at fixed 64-bit bases, plus the two
//! write-only IDVS streams (position and varying records).
//!
//! | region | base | size |
//! | --- | --- | --- |
//! | UBO k (`CONST[k][*]`) | `0x10_0000_0000 + k·0x100_0000` | 64 KiB, read-only |
//! | SSBO i (`BUFFER[i]`) | `0x20_0000_0000 + i·0x1_0000_0000` | 4 × the input's word count |
//! | TLS of lane l | `0x30_0000_0000 + l·0x100_0000` | `tls_size` |
//! | WLS of workgroup g | `0x40_0000_0000 + g·0x100_0000` | `wls_size` |
//! | IDVS record of linear index i | `0x50_0000_0000 + i·0x1000` | 4 KiB, stores only |
//! | sample positions (fragment shaders; the `sample` FAU special) | `0x58_0000_0000` | 4 bytes, read-only |
//! | image i (`IMAGE[i]`) | `0x70_0000_0000 + i·0x1_0000_0000` | the image's texels (`exec::image`) |
//! | sink of image i | image base + `0xFFFF_FF00` | 16 bytes: reads zero, writes are dropped |
//!
//! Accesses must lie entirely inside one region, be aligned to `min(size, 4)` rounded down to
//! a power of two, and (TLS) must not cross a 16-byte boundary. Anything else is a fault.
//!
//! Resource table 5 (images) is kept here too ([`Memory::images`]): the image each entry
//! describes, whose texels live in its region. `LEA_TEX` of a texel outside the image yields the
//! address of the image's sink, so stores and atomics there have no effect and atomics return 0
//! (docs/emulator.md).

use super::error::{EmuError, ErrorKind, err};
use crate::exec::image::Image;
use std::collections::BTreeMap;

pub use crate::exec::{bytes_to_words, words_to_bytes};

pub const UBO_BASE: u64 = 0x10_0000_0000;
pub const UBO_STRIDE: u64 = 0x100_0000;
pub const UBO_SIZE: usize = 0x1_0000;
/// 64 bytes below a 4 GiB boundary, so that address arithmetic on a buffer's address must carry
/// into the high word from byte 64 on (a driver may place a buffer anywhere).
pub const SSBO_BASE: u64 = 0x20_FFFF_FFC0;
pub const SSBO_STRIDE: u64 = 0x1_0000_0000;
pub const TLS_BASE: u64 = 0x30_0000_0000;
pub const TLS_STRIDE: u64 = 0x100_0000;
pub const WLS_BASE: u64 = 0x40_0000_0000;
pub const WLS_STRIDE: u64 = 0x100_0000;
pub const IDVS_BASE: u64 = 0x50_0000_0000;
pub const IDVS_RECORD: u64 = 0x1000;
pub const IDVS_RECORDS: u64 = 0x1_0000;
/// The sample-position table of a one-sample framebuffer: sample 0 at the pixel centre, two
/// signed 16-bit coordinates in 1/256 of a pixel (x low).
pub const SAMPLE_POSITIONS_BASE: u64 = 0x58_0000_0000;
pub const SAMPLE_POSITIONS: [u8; 4] = [0x80, 0x00, 0x80, 0x00];
pub const IMAGE_BASE: u64 = 0x70_0000_0000;
pub const IMAGE_STRIDE: u64 = 0x1_0000_0000;
/// Offset of an image's sink from its base.
pub const IMAGE_SINK: u64 = 0xFFFF_FF00;
/// Bytes of a sink: the largest texel.
pub const IMAGE_SINK_SIZE: usize = 16;
/// Address of instruction 0 of the running variant.
pub const CODE_BASE: u64 = 0x60_1000_0000;

/// What a region holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegionKind {
    Ubo(u32),
    Ssbo(u32),
    Tls(usize),
    Wls(u32),
    /// The texels of image i.
    Image(u32),
    /// Where out-of-bounds image accesses of image i go: reads zero, ignores writes.
    ImageSink(u32),
    /// The sample-position table (read-only).
    SamplePositions,
    /// Plain memory mapped by a test.
    Global,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    pub base: u64,
    pub data: Vec<u8>,
    pub kind: RegionKind,
    pub writable: bool,
}

/// The two IDVS output streams, selected by a store's `memory_access` hint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// `.istream`: position, point size, layer.
    Position,
    /// `.estream`: varyings.
    Varying,
}

/// Where an access landed (for hazard tracking and messages).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    Region(usize),
    Idvs(Stream),
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Memory {
    pub regions: Vec<Region>,
    /// Bytes stored to the IDVS streams: (stream, address) → byte.
    pub idvs: [BTreeMap<u64, u8>; 2],
    /// Resource table 5: image unit → the image its descriptor describes.
    pub images: BTreeMap<u32, Image>,
}

fn fault<T>(message: String) -> Result<T, EmuError> {
    err(ErrorKind::Fault, message)
}

impl Memory {
    /// Maps a region; it must not overlap another one.
    pub fn map(&mut self, base: u64, data: Vec<u8>, kind: RegionKind, writable: bool) -> Result<usize, EmuError> {
        let end =
            base.checked_add(data.len() as u64).ok_or_else(|| EmuError::new(ErrorKind::Metadata, "region wraps"))?;
        for r in &self.regions {
            if base < r.base + r.data.len() as u64 && r.base < end {
                return err(ErrorKind::Metadata, format!("region at {base:#x} overlaps the region at {:#x}", r.base));
            }
        }
        self.regions.push(Region { base, data, kind, writable });
        Ok(self.regions.len() - 1)
    }

    pub fn region(&self, kind: RegionKind) -> Option<&Region> {
        self.regions.iter().find(|r| r.kind == kind)
    }

    pub fn is_idvs(addr: u64) -> bool {
        (IDVS_BASE..IDVS_BASE + IDVS_RECORD * IDVS_RECORDS).contains(&addr)
    }

    fn check_alignment(addr: u64, len: usize) -> Result<(), EmuError> {
        let align = match len {
            0 | 1 | 3 => 1,
            2 | 6 => 2,
            _ if len % 4 == 0 => 4,
            _ => 1,
        } as u64;
        if addr % align != 0 {
            return fault(format!("{len}-byte access at {addr:#x} is not {align}-byte aligned"));
        }
        Ok(())
    }

    /// Finds the region holding `[addr, addr + len)`.
    pub fn locate(&self, addr: u64, len: usize) -> Result<(usize, usize), EmuError> {
        Self::check_alignment(addr, len)?;
        for (i, r) in self.regions.iter().enumerate() {
            if addr >= r.base && addr - r.base < r.data.len() as u64 {
                let offset = (addr - r.base) as usize;
                if offset + len > r.data.len() {
                    return fault(format!(
                        "{len}-byte access at {addr:#x} runs past the end of {} ({} bytes)",
                        describe(r.kind),
                        r.data.len()
                    ));
                }
                if matches!(r.kind, RegionKind::Tls(_)) && len > 0 && offset / 16 != (offset + len - 1) / 16 {
                    return fault(format!(
                        "{len}-byte thread-local access at offset {offset} crosses a 16-byte boundary"
                    ));
                }
                return Ok((i, offset));
            }
            if len > 0 && addr < r.base && addr + len as u64 > r.base {
                return fault(format!("{len}-byte access at {addr:#x} starts before {}", describe(r.kind)));
            }
        }
        if Self::is_idvs(addr) {
            return fault(format!("address {addr:#x} is in the IDVS output buffer, which can only be stored to"));
        }
        fault(format!("address {addr:#x} is not mapped"))
    }

    pub fn read(&self, addr: u64, len: usize) -> Result<Vec<u8>, EmuError> {
        let (r, off) = self.locate(addr, len)?;
        Ok(self.regions[r].data[off..off + len].to_vec())
    }

    /// Stores bytes. `hint` is the `memory_access` index (0 none, 1 istream, 2 estream, 3 force):
    /// IDVS records need `istream`/`estream`, which are refused elsewhere.
    pub fn write(&mut self, addr: u64, bytes: &[u8], hint: u8) -> Result<Place, EmuError> {
        if Self::is_idvs(addr) {
            Self::check_alignment(addr, bytes.len())?;
            let stream = match hint {
                1 => Stream::Position,
                2 => Stream::Varying,
                _ => {
                    return fault(format!("store to the IDVS record at {addr:#x} without .istream or .estream"));
                }
            };
            let record = (addr - IDVS_BASE) % IDVS_RECORD;
            if record + bytes.len() as u64 > IDVS_RECORD {
                return fault(format!("store at {addr:#x} crosses the end of an IDVS record"));
            }
            let map = &mut self.idvs[stream as usize];
            for (i, &b) in bytes.iter().enumerate() {
                map.insert(addr + i as u64, b);
            }
            return Ok(Place::Idvs(stream));
        }
        if hint == 1 || hint == 2 {
            return fault(format!(".istream/.estream store to {addr:#x}, which is not an IDVS record"));
        }
        let (r, off) = self.locate(addr, bytes.len())?;
        let region = &mut self.regions[r];
        if matches!(region.kind, RegionKind::ImageSink(_)) {
            return Ok(Place::Region(r));
        }
        if !region.writable {
            return fault(format!("store to read-only {} at {addr:#x}", describe(region.kind)));
        }
        region.data[off..off + bytes.len()].copy_from_slice(bytes);
        Ok(Place::Region(r))
    }

    /// Binds image `unit` (table 5 entry `unit`): maps its texels and its sink.
    pub fn map_image(&mut self, unit: u32, image: Image) -> Result<(), EmuError> {
        let base = image_base(unit);
        self.map(base, image.initial_data(), RegionKind::Image(unit), true)?;
        self.map(base + IMAGE_SINK, vec![0; IMAGE_SINK_SIZE], RegionKind::ImageSink(unit), true)?;
        self.images.insert(unit, image);
        Ok(())
    }

    /// Bytes of an IDVS stream (unwritten bytes read as zero).
    pub fn idvs_bytes(&self, stream: Stream, addr: u64, len: usize) -> Vec<u8> {
        (0..len as u64).map(|i| self.idvs[stream as usize].get(&(addr + i)).copied().unwrap_or(0)).collect()
    }

    /// Whether any byte of `[addr, addr+len)` of a stream was written.
    pub fn idvs_written(&self, stream: Stream, addr: u64, len: usize) -> bool {
        self.idvs[stream as usize].range(addr..addr + len as u64).next().is_some()
    }
}

/// The base address of image `unit`.
pub fn image_base(unit: u32) -> u64 {
    IMAGE_BASE + u64::from(unit) * IMAGE_STRIDE
}

/// Where shader buffer `index` is mapped: what `LEA_BUFFER` gives for offset 0 and the
/// `buffer_address.I` sysval holds.
pub fn ssbo_address(index: u32) -> u64 {
    SSBO_BASE + u64::from(index) * SSBO_STRIDE
}

/// The address of IDVS record `index`.
pub fn idvs_record(index: u64) -> u64 {
    IDVS_BASE + index * IDVS_RECORD
}

pub fn describe(kind: RegionKind) -> String {
    match kind {
        RegionKind::Ubo(k) => format!("UBO {k}"),
        RegionKind::Ssbo(i) => format!("SSBO {i}"),
        RegionKind::Tls(l) => format!("the thread-local storage of lane {l}"),
        RegionKind::Wls(g) => format!("the shared memory of workgroup {g}"),
        RegionKind::Image(i) => format!("image {i}"),
        RegionKind::ImageSink(i) => format!("the out-of-bounds sink of image {i}"),
        RegionKind::SamplePositions => "the sample-position table".to_string(),
        RegionKind::Global => "global memory".to_string(),
    }
}

//! Instruction → 64-bit word.
//!
//! [`encode_raw`] places every field of the instruction's table entry (opcode, secondary
//! opcode, FAU page, flow, placeholder, destination, staging base/control/count, source bytes
//! and their modifiers, immediates, modifiers); it fails only when a value does not fit its
//! field, when a modifier is set on a source that has no such field, or when the sources need
//! two FAU pages. [`encode`] succeeds exactly for valid instructions ([`Instr::validate`]).
//!
//! The compiler encodes every instruction it emits, so [`encode`] first tries a fast path:
//! a per-opcode [`Layout`] built once from the tables (field positions, the valid values of
//! every field as a bit set, and per source the word bits of every flag and field value with
//! the values it does not accept marked) checks and places each field with a few operations and
//! no allocation. It accepts exactly the valid instructions (a test compares it with
//! [`Instr::validate`] on random, mostly invalid instructions); anything it rejects goes through
//! the reference path (`check_invariants`, then `encode_raw`), which names the first problem.
//!
//! The compiler encodes through [`encode_emitted`]: the same fast path, except that release
//! builds do not read the operand slots and modifiers the opcode does not use (no bit of the
//! word comes from them; the compiler leaves them empty, as debug and test builds check).

use super::inst::{Base, Instr, InstrError, Src};
use super::tables::*;
use std::sync::OnceLock;

// The unused staging groups and modifiers are checked as one integer each.
const _: () = assert!(MAX_STAGING <= 2 && MAX_MODIFIERS <= 16);

/// The error type of encoding (shared with validation).
pub type EncodeError = InstrError;

/// Encodes a valid instruction.
#[inline]
pub fn encode(instr: &Instr) -> Result<u64, EncodeError> {
    // Both paths are out of line: inlined into the caller's loop, the fast path ran short of
    // registers and spilled on every source.
    match encode_valid(instr) {
        Some(word) => Ok(word),
        None => encode_checked(instr),
    }
}

/// The reference path: `validate` is `check_invariants` followed by `encode_raw`, whose word is
/// that second step.
#[cold]
#[inline(never)]
fn encode_checked(instr: &Instr) -> Result<u64, EncodeError> {
    instr.check_invariants()?;
    encode_raw(instr)
}

/// The word of a valid instruction, `None` for an invalid one (the fast path of [`encode`]).
#[inline(never)]
pub(super) fn encode_valid(instr: &Instr) -> Option<u64> {
    encode_fields::<true>(instr)
}

/// Encodes an instruction the compiler built: [`encode`], except that release builds do not
/// check the operand slots and modifiers the opcode does not use (no field of the word reads
/// them; the compiler leaves them empty, which debug and test builds still check). Every
/// field the word holds is validated as in [`encode`], and a failure names the problem.
#[inline]
pub fn encode_emitted(instr: &Instr) -> Result<u64, EncodeError> {
    const CHECK_UNUSED: bool = cfg!(debug_assertions);
    match encode_fields::<CHECK_UNUSED>(instr) {
        Some(word) => Ok(word),
        None => encode_checked(instr),
    }
}

/// The fast path: `CHECK_UNUSED` also requires the unused slots to be empty (without it, they
/// are not read, nor are the immediates of an opcode without immediate fields).
///
/// Written for few live values per source (the loop otherwise spills; a branch for sources
/// without modifiers, or a register base tested before the others, measured no faster). The
/// FAU page is gathered in the source loop (one page bit per uniform or special); the limits
/// need a closer look, from the sources again, only when two or more sources read the FAU.
#[inline(never)]
fn encode_fields<const CHECK_UNUSED: bool>(instr: &Instr) -> Option<u64> {
    let layout = Layout::of(instr.opcode);
    // (`flows` is empty for an opcode the fast path does not take.)
    if !allows(layout.flows, instr.flow) {
        return None;
    }
    let mut w = layout.base | u64::from(instr.flow) << 59;
    if layout.dest {
        let d = instr.dest;
        if d.reg > 63 || d.mask.wrapping_sub(1) > 2 {
            return None;
        }
        w |= u64::from(d.reg) << 40 | u64::from(d.mask) << 46;
    } else if CHECK_UNUSED && (instr.dest.reg | instr.dest.mask) != 0 {
        return None;
    }
    let n_staging = usize::from(layout.n_staging);
    for (s, l) in instr.staging[..n_staging].iter().zip(&layout.staging) {
        let (min, max) = if l.count_minus_one { (1, 8) } else { (0, 7) };
        if s.count < min || s.count > max || u32::from(s.base) + u32::from(s.count) > 64 {
            return None;
        }
        if (s.count > 1 && s.base % 2 == 1) || (s.count == 0 && s.base != 0) {
            return None;
        }
        let count = s.count - u8::from(l.count_minus_one);
        w |= u64::from(s.base) << l.base_start | u64::from(count) << l.count_start;
    }
    if CHECK_UNUSED {
        // Unused staging groups and modifiers are all zero: their bytes, masked, as one integer.
        let mut staging_bytes = [0u8; 2 * MAX_STAGING];
        for (k, s) in instr.staging.iter().enumerate() {
            staging_bytes[2 * k] = s.base;
            staging_bytes[2 * k + 1] = s.count;
        }
        let mut mod_bytes = [0u8; 16];
        mod_bytes[..MAX_MODIFIERS].copy_from_slice(&instr.mods);
        if u32::from_le_bytes(staging_bytes) & layout.unused_staging != 0
            || u128::from_le_bytes(mod_bytes) & layout.unused_mods != 0
        {
            return None;
        }
    }
    let n_srcs = usize::from(layout.n_srcs);
    // How many sources read the FAU (bit 7 of the source byte), and the FAU pages the uniforms
    // and specials need (bit p for page p).
    let (mut n_fau, mut pages) = (0u8, 0u8);
    // The sources' bits: [`INVALID`] set when some flag or field value is not accepted.
    let mut bits = 0u64;
    for (src, l) in instr.srcs[..n_srcs].iter().zip(&layout.srcs) {
        let (byte, page) = source_byte(src.base)?;
        n_fau += byte >> 7;
        pages |= page;
        bits |= u64::from(byte) << l.shift | l.fields(src)?;
    }
    if bits & INVALID != 0 {
        return None;
    }
    w |= bits;
    if CHECK_UNUSED {
        for src in &instr.srcs[n_srcs..] {
            if !is_empty(src) {
                return None;
            }
        }
    }
    // One FAU page at most (`pages` has at most one bit), and the limits (one FAU word always
    // satisfies them).
    if pages & pages.wrapping_sub(1) != 0 || (n_fau > 1 && !fau_sources_hold(&instr.srcs[..n_srcs], layout.alu)) {
        return None;
    }
    w |= u64::from(pages.trailing_zeros() & 3) << 57;
    if CHECK_UNUSED || layout.has_imms {
        // Both immediate fields at once (unused ones have width 0, so only 0 fits).
        const _: () = assert!(MAX_IMMEDIATES == 2);
        let [(start0, width0), (start1, width1)] = layout.imms;
        let (mut v0, mut v1) = (u64::from(instr.imms[0]), u64::from(instr.imms[1]));
        if !CHECK_UNUSED {
            // An unused field is not read.
            (v0, v1) = (v0 & layout.imms_read[0], v1 & layout.imms_read[1]);
        }
        if (v0 >> width0) | (v1 >> width1) != 0 {
            return None;
        }
        w |= v0 << start0 | v1 << start1;
    }
    let n_mods = usize::from(layout.n_mods);
    for (&v, &(start, mask)) in instr.mods[..n_mods].iter().zip(&layout.mods) {
        if !allows(mask, v) {
            return None;
        }
        w |= u64::from(v) << start;
    }
    Some(w)
}

/// The source byte of a valid base (`Base::byte`) and the FAU page it needs as a bit (`1 << p`
/// for page p, 0 for registers and table constants); `None` for an invalid base.
#[inline(always)]
fn source_byte(base: Base) -> Option<(u8, u8)> {
    match base {
        Base::Register(r) if r <= 63 => Some((r, 0)),
        Base::Discard(r) if r <= 63 => Some((0x40 | r, 0)),
        Base::Uniform(u) if u <= 127 => Some((0x80 | (u & 0x3F), 1 << (u >> 6))),
        Base::Immediate(i) if i <= 31 => Some((0xC0 | i, 0)),
        Base::Special(sp) if sp.page <= 3 && sp.entry <= 15 && sp.name().is_some() => {
            Some((0xE0 | sp.entry << 1 | u8::from(sp.high), 1 << sp.page))
        }
        _ => None,
    }
}

/// [`fau_limits_hold`] over the sources (of valid bases), those reading registers skipped.
#[cold]
#[inline(never)]
fn fau_sources_hold(srcs: &[Src], alu: bool) -> bool {
    let mut fau = [0u8; MAX_SOURCES];
    let mut n_fau = 0;
    for src in srcs {
        let byte = src.base.byte();
        if byte & 0x80 != 0 {
            fau[n_fau] = byte;
            n_fau += 1;
        }
    }
    fau_limits_hold(&fau[..n_fau], alu)
}

/// The assembler's FAU limits (encoding spec §2.7, A1–A3; [`Instr::check_fau_limits`] names the
/// failing source) over the source bytes of the FAU-reading sources, in slot order: at most two
/// distinct FAU words in all; of the uniforms and specials (immediates excluded), at most one
/// 64-bit slot and two words for an ALU instruction, two slots and three words for a message.
pub(super) fn fau_limits_hold(fau: &[u8], alu: bool) -> bool {
    let (max_slots, max_words) = if alu { (1, 2) } else { (2, 3) };
    let mut all = Distinct::default();
    let mut words = Distinct::default();
    let mut slots = Distinct::default();
    for &byte in fau {
        all.add(byte);
        // Table constants (immediates) count only among all FAU words.
        if byte & 0xE0 != 0xC0 {
            words.add(byte);
            slots.add(byte >> 1);
        }
    }
    all.n <= 2 && words.n <= max_words && slots.n <= max_slots
}

/// The distinct values among at most [`MAX_SOURCES`].
#[derive(Default)]
struct Distinct {
    seen: [u8; MAX_SOURCES],
    n: usize,
}

impl Distinct {
    fn add(&mut self, v: u8) {
        if !self.seen[..self.n].contains(&v) {
            self.seen[self.n] = v;
            self.n += 1;
        }
    }
}

/// Whether an unused source slot holds [`Src::EMPTY`] (spelled out: cheaper than the derived
/// comparison of the enum).
fn is_empty(s: &Src) -> bool {
    let fields = u8::from(s.neg) | u8::from(s.abs) | u8::from(s.not) | s.swizzle | s.widen | s.lane;
    matches!(s.base, Base::Register(0)) & (fields == 0)
}

/// Whether value `v` is in the bit set `mask` (values past 15 never are).
fn allows(mask: u16, v: u8) -> bool {
    v < 16 && (mask >> v) & 1 == 1
}

/// Where one source goes and which values its fields accept: the word bits of every value of
/// its flags and fields, [`INVALID`] for a value the source does not accept (so that a source
/// costs table reads and one test, not a bit-set test and a shift per field).
#[derive(Clone, Copy, Debug)]
struct SrcLayout {
    /// `8 · slot`.
    shift: u8,
    /// Indexed by the combination of `neg`, `abs` and `not` (bits 0, 1, 2 of the index).
    flag_words: [u64; 8],
    /// Indexed by the value of the swizzle, widen and lane field (an absent field accepts only 0).
    field_words: [[u64; 16]; 3],
}

impl Default for SrcLayout {
    fn default() -> SrcLayout {
        SrcLayout { shift: 0, flag_words: [INVALID; 8], field_words: [[INVALID; 16]; 3] }
    }
}

impl SrcLayout {
    /// The bits of the flags and fields of a source (`None` when a field value does not fit the
    /// tables; [`INVALID`] when a value is not accepted).
    #[inline(always)]
    fn fields(&self, src: &Src) -> Option<u64> {
        let (swizzle, widen, lane) = (src.swizzle, src.widen, src.lane);
        if (swizzle | widen | lane) >= 16 {
            return None;
        }
        let flags = usize::from(src.neg) | usize::from(src.abs) << 1 | usize::from(src.not) << 2;
        Some(
            self.flag_words[flags]
                | self.field_words[0][usize::from(swizzle & 15)]
                | self.field_words[1][usize::from(widen & 15)]
                | self.field_words[2][usize::from(lane & 15)],
        )
    }
}

/// Marks a table entry of a value the source does not accept. Bit 63 is past the flow field
/// (bits 59–62), and no source field reaches it (a layout where one did would be built with
/// `fast: false`).
const INVALID: u64 = 1 << 63;

#[derive(Clone, Copy, Debug, Default)]
struct StagingLayout {
    base_start: u8,
    count_start: u8,
    count_minus_one: bool,
}

/// Everything the fast path needs about one opcode, derived from its table entry.
#[derive(Clone, Copy, Debug, Default)]
struct Layout {
    /// Opcode, secondary opcode, placeholder and staging control bits.
    base: u64,
    /// The valid flow values (the same for every opcode; kept here to need one lookup); none
    /// when the fast path does not take the opcode (`fast` false).
    flows: u16,
    dest: bool,
    n_staging: u8,
    n_srcs: u8,
    n_mods: u8,
    /// The opcode has an immediate field.
    has_imms: bool,
    /// An ALU instruction (for the FAU limits).
    alu: bool,
    /// The fast path may encode the opcode (its source tables never produce [`INVALID`]).
    fast: bool,
    /// The bytes of the unused staging groups (`base`, `count` of each, little-endian) and of
    /// the unused modifiers: they must be zero.
    unused_staging: u32,
    unused_mods: u128,
    staging: [StagingLayout; MAX_STAGING],
    srcs: [SrcLayout; MAX_SOURCES],
    /// First bit and width of each immediate field (unused entries: width 0, so only 0 fits).
    imms: [(u8, u8); MAX_IMMEDIATES],
    /// Per immediate: all ones if the opcode has the field, else 0.
    imms_read: [u64; MAX_IMMEDIATES],
    /// First bit and valid values of each modifier.
    mods: [(u8, u16); MAX_MODIFIERS],
}

impl Layout {
    fn of(opcode: Opcode) -> &'static Layout {
        // Built on first use of each opcode: a program uses a few dozen of them, and building all
        // of them up front would cost a one-shot compile more than encoding it.
        static TABLE: [OnceLock<Layout>; INSTRUCTION_COUNT] = [const { OnceLock::new() }; INSTRUCTION_COUNT];
        TABLE[opcode as usize].get_or_init(|| Layout::build(opcode.info()))
    }

    fn build(info: &InstrInfo) -> Layout {
        let set = |width: u8, valid: &dyn Fn(u8) -> bool| -> u16 {
            (0..16u8).filter(|&v| u32::from(v) >> width == 0 && valid(v)).fold(0, |m, v| m | 1 << v)
        };
        let field =
            |f: Option<SrcField>| f.map_or((0, 1), |f| (f.start, set(f.width, &|v| f.values.info().is_valid(v))));
        let bit = |b: Option<u8>| b.map_or(0, |b| 1u64 << b);
        let mut layout = Layout {
            base: info.opcode_pattern().1 | if info.placeholder { 0xC0 << 40 } else { 0 },
            flows: set(4, &|v| Flow::from_index(v).is_some()),
            dest: info.dest,
            n_staging: info.staging.len() as u8,
            n_srcs: info.srcs.len() as u8,
            n_mods: info.mods.len() as u8,
            has_imms: !info.imms.is_empty(),
            alu: info.unit.is_alu(),
            unused_staging: (2 * info.staging.len()..2 * MAX_STAGING).fold(0, |m, k| m | 0xFF << (8 * k)),
            unused_mods: (info.mods.len()..MAX_MODIFIERS).fold(0, |m, k| m | 0xFF << (8 * k)),
            fast: true,
            ..Layout::default()
        };
        for (k, s) in info.staging.iter().enumerate() {
            layout.base |= u64::from(s.control) << s.control_start;
            layout.staging[k] = StagingLayout {
                base_start: s.base_start,
                count_start: s.count_start,
                count_minus_one: s.count_minus_one,
            };
        }
        for (k, s) in info.srcs.iter().enumerate() {
            let mut src = SrcLayout { shift: 8 * s.slot, ..SrcLayout::default() };
            for (words, f) in src.field_words.iter_mut().zip([s.swizzle, s.widen, s.lane]) {
                let (start, valid) = field(f);
                for (v, word) in words.iter_mut().enumerate() {
                    if valid >> v & 1 == 1 {
                        *word = (v as u64) << start;
                        layout.fast &= *word & INVALID == 0;
                    }
                }
            }
            for flags in 0..8 {
                let wanted = [(flags & 1 != 0, s.neg), (flags & 2 != 0, s.abs), (flags & 4 != 0, s.not)];
                if wanted.iter().all(|&(on, bit)| !on || bit.is_some()) {
                    src.flag_words[flags] = wanted.iter().filter(|w| w.0).fold(0, |m, &(_, b)| m | bit(b));
                    layout.fast &= src.flag_words[flags] & INVALID == 0;
                }
            }
            layout.fast &= 8 * s.slot < 56;
            layout.srcs[k] = src;
        }
        for (k, f) in info.imms.iter().enumerate() {
            layout.imms[k] = (f.start, f.width);
            layout.imms_read[k] = u64::MAX;
        }
        for (k, m) in info.mods.iter().enumerate() {
            let valid = match m.kind {
                ModKind::Flag => 0b11,
                ModKind::Enum(e) => set(m.width, &|v| e.info().is_valid(v)),
            };
            layout.mods[k] = (m.start, valid);
        }
        if !layout.fast {
            layout.flows = 0;
        }
        layout
    }
}

/// Encodes an instruction whose values fit their fields, reserved values included.
pub fn encode_raw(instr: &Instr) -> Result<u64, EncodeError> {
    let info = instr.info();
    let name = info.name;
    let fits = |what: &dyn Fn() -> String, value: u64, width: u8| {
        if value >> width == 0 {
            Ok(value)
        } else {
            Err(InstrError::DoesNotFit { instr: name, what: what(), value: value as i64 })
        }
    };
    let mut w = u64::from(info.primary) << 48;
    if let Some(s) = info.secondary {
        w |= u64::from(s.value) << s.shift;
    }
    w |= fits(&|| "flow".into(), instr.flow.into(), 4)? << 59;
    w |= fits(&|| "FAU page".into(), instr.fau_page()?.into(), 2)? << 57;
    if info.placeholder {
        w |= 0xC0 << 40;
    }
    if info.dest {
        w |= fits(&|| "destination register".into(), instr.dest.reg.into(), 6)? << 40;
        w |= fits(&|| "destination write mask".into(), instr.dest.mask.into(), 2)? << 46;
    }
    for (k, s) in info.staging.iter().enumerate() {
        let st = instr.staging[k];
        w |= fits(&|| format!("staging operand {k} base register"), st.base.into(), 6)? << s.base_start;
        w |= u64::from(s.control) << s.control_start;
        let count = if s.count_minus_one {
            if st.count == 0 {
                return Err(InstrError::DoesNotFit {
                    instr: name,
                    what: format!("staging operand {k} count"),
                    value: 0,
                });
            }
            st.count - 1
        } else {
            st.count
        };
        w |= fits(&|| format!("staging operand {k} count"), count.into(), 3)? << s.count_start;
    }
    for (k, s) in info.srcs.iter().enumerate() {
        let src = &instr.srcs[k];
        match src.base {
            super::Base::Register(r) | super::Base::Discard(r) => {
                fits(&|| format!("source {k} register"), r.into(), 6)?;
            }
            super::Base::Uniform(u) => {
                fits(&|| format!("source {k} uniform"), u.into(), 8)?;
            }
            super::Base::Immediate(i) => {
                fits(&|| format!("source {k} immediate index"), i.into(), 5)?;
            }
            super::Base::Special(sp) => {
                fits(&|| format!("source {k} special entry"), sp.entry.into(), 4)?;
                fits(&|| format!("source {k} special page"), sp.page.into(), 2)?;
            }
        }
        w |= u64::from(src.base.byte()) << (8 * s.slot);
        for (on, bit, what) in [(src.neg, s.neg, "neg"), (src.abs, s.abs, "abs"), (src.not, s.not, "not")] {
            match (on, bit) {
                (false, _) => {}
                (true, Some(bit)) => w |= 1 << bit,
                (true, None) => {
                    return Err(InstrError::NoSuch {
                        instr: name,
                        what: "source modifier",
                        name: format!("{what} on source {k}"),
                    });
                }
            }
        }
        for (value, field, what) in
            [(src.swizzle, s.swizzle, "swizzle"), (src.widen, s.widen, "widen"), (src.lane, s.lane, "lane")]
        {
            match field {
                Some(f) => w |= fits(&|| format!("source {k} {what}"), value.into(), f.width)? << f.start,
                None if value != 0 => {
                    return Err(InstrError::NoSuch {
                        instr: name,
                        what: "source modifier",
                        name: format!("{what} on source {k}"),
                    });
                }
                None => {}
            }
        }
    }
    for (k, f) in info.imms.iter().enumerate() {
        w |= fits(&|| format!("immediate `{}`", f.name), instr.imms[k].into(), f.width)? << f.start;
    }
    for (k, m) in info.mods.iter().enumerate() {
        w |= fits(&|| format!("modifier `{}`", m.key), instr.mods[k].into(), m.width)? << m.start;
    }
    Ok(w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::valhall::{Dest, Special, Staging};

    /// A xorshift generator: the test needs many cheap, reproducible random numbers.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: u64) -> u8 {
            (self.next() % n) as u8
        }

        fn chance(&mut self, one_in: u64) -> bool {
            self.next() % one_in == 0
        }
    }

    /// An instruction near the valid ones: each field is random in (or just past) its range, so
    /// that both valid instructions and every kind of invalid one are frequent.
    fn near_valid(op: Opcode, rng: &mut Rng) -> Instr {
        let info = op.info();
        let mut i = Instr::new(op);
        let wide = |rng: &mut Rng, usual: u64| if rng.chance(40) { rng.below(256) } else { rng.below(usual) };
        if rng.chance(3) {
            i.flow = wide(rng, 16);
        }
        if rng.chance(3) {
            i.dest = Dest { reg: wide(rng, 66), mask: if rng.chance(8) { rng.below(5) } else { 3 } };
        }
        for k in 0..MAX_STAGING {
            if k < info.staging.len() || rng.chance(30) {
                i.staging[k] = Staging { base: wide(rng, 66), count: rng.below(10) };
            }
        }
        for k in 0..MAX_SOURCES {
            if k >= info.srcs.len() && !rng.chance(30) {
                continue;
            }
            let src = &mut i.srcs[k];
            src.base = match rng.below(8) {
                0..=3 => Base::Register(wide(rng, 66)),
                4 => Base::Discard(wide(rng, 66)),
                5 => Base::Uniform(wide(rng, 130)),
                6 => Base::Immediate(wide(rng, 34)),
                _ => Base::Special(Special { page: rng.below(5), entry: rng.below(17), high: rng.chance(2) }),
            };
            if rng.chance(4) {
                src.swizzle = wide(rng, 5);
            }
            if rng.chance(4) {
                src.widen = wide(rng, 16);
            }
            if rng.chance(4) {
                src.lane = wide(rng, 8);
            }
            src.neg = rng.chance(6);
            src.abs = rng.chance(6);
            src.not = rng.chance(6);
        }
        for k in 0..MAX_IMMEDIATES {
            if k < info.imms.len() || rng.chance(30) {
                // The field's width, sometimes one bit more.
                let bits = u32::from(info.imms.get(k).map_or(0, |f| f.width)) + u32::from(rng.chance(8));
                i.imms[k] = (rng.next() as u32).checked_shr(32 - bits.min(32)).unwrap_or(0);
            }
        }
        for k in 0..MAX_MODIFIERS {
            if (k < info.mods.len() && rng.chance(3)) || rng.chance(60) {
                i.mods[k] = wide(rng, 16);
            }
        }
        i
    }

    /// The one-pass hardware-rule check agrees with the rules walked in order (which name the
    /// violation), on random instructions with every kind of source.
    #[test]
    fn hardware_rules_fast_check_agrees() {
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        let (mut hold, mut fail) = (0, 0);
        for op in Opcode::ALL {
            for _ in 0..300 {
                let i = near_valid(op, &mut rng);
                let walked = i.first_hardware_rule_violation();
                assert_eq!(i.hardware_rules_hold(), walked.is_ok(), "{i:?}");
                assert_eq!(i.check_hardware_rules(), walked, "{i:?}");
                if walked.is_ok() { hold += 1 } else { fail += 1 }
            }
        }
        assert!(hold > 5_000 && fail > 5_000, "{hold} hold, {fail} fail");
    }

    /// Without `CHECK_UNUSED` the fast path ignores the unused slots: it gives what the full
    /// fast path gives for the instruction with those slots emptied (and the compiler's entry
    /// point is [`encode`] on such instructions).
    #[test]
    fn unused_slots_are_ignored_without_the_check() {
        let mut rng = Rng(0x2F0F_1E3C_5A69_7788);
        let mut ignored = 0;
        for op in Opcode::ALL {
            let info = op.info();
            let fresh = Instr::new(op);
            for _ in 0..1000 {
                let i = near_valid(op, &mut rng);
                let mut emptied = i;
                emptied.staging[info.staging.len()..].copy_from_slice(&fresh.staging[info.staging.len()..]);
                emptied.srcs[info.srcs.len()..].copy_from_slice(&fresh.srcs[info.srcs.len()..]);
                emptied.mods[info.mods.len()..].copy_from_slice(&fresh.mods[info.mods.len()..]);
                emptied.imms[info.imms.len()..].copy_from_slice(&fresh.imms[info.imms.len()..]);
                if !info.dest {
                    emptied.dest = fresh.dest;
                }
                assert_eq!(encode_fields::<false>(&i), encode_fields::<true>(&emptied), "{i:?}");
                assert_eq!(encode_emitted(&emptied), encode(&emptied), "{i:?}");
                ignored += usize::from(i != emptied && encode_fields::<false>(&i).is_some());
            }
        }
        assert!(ignored > 1_000, "{ignored}");
    }

    /// Every opcode's source tables leave bit 63 to [`INVALID`], so the fast path takes them all.
    #[test]
    fn every_opcode_has_a_fast_layout() {
        for op in Opcode::ALL {
            assert!(Layout::of(op).fast, "{op}");
        }
    }

    /// The fast path accepts exactly the valid instructions, with the reference word.
    #[test]
    fn fast_path_agrees_with_validation() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let (mut valid, mut invalid) = (0, 0);
        for op in Opcode::ALL {
            for _ in 0..3000 {
                let i = near_valid(op, &mut rng);
                let reference = i.validate().ok().map(|()| encode_raw(&i).unwrap());
                assert_eq!(encode_valid(&i), reference, "{i:?}");
                match reference {
                    Some(w) => {
                        valid += 1;
                        assert_eq!(encode(&i), Ok(w));
                    }
                    None => {
                        invalid += 1;
                        assert!(encode(&i).is_err());
                    }
                }
            }
        }
        assert!(valid > 20_000 && invalid > 20_000, "{valid} valid, {invalid} invalid");
    }
}

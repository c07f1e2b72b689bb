//! The machine instruction: one Valhall instruction with every field as a plain value.
//!
//! An [`Instr`] is a fixed-size, `Copy` value (no heap): the opcode, the flow, a destination, up
//! to [`MAX_STAGING`] staging groups, [`MAX_SOURCES`] sources, [`MAX_IMMEDIATES`] immediate
//! fields and [`MAX_MODIFIERS`] instruction modifiers. Which of them are used, and what each
//! number means, is given by the instruction's table entry ([`Instr::info`]):
//!
//! * `srcs[k]` is the k-th source of `info.srcs` (text order = slot order);
//! * `staging[k]` is the k-th staging operand of `info.staging`;
//! * `imms[k]` holds the *field bits* of `info.imms[k]` (signed fields in two's complement; read
//!   them with [`Instr::imm`]);
//! * `mods[k]` holds the encoded index of `info.mods[k]` (flags: 0 or 1);
//! * `flow` is the index of the `flow` enum (use [`Instr::flow`] / [`Instr::set_flow`]).
//!
//! Invariants of a *valid* instruction ([`Instr::validate`], required by
//! [`encode`](super::encode)): every value fits its field and names a non-reserved enum value;
//! unused operands and fields hold their empty value (all zero, see [`Src::EMPTY`]); registers
//! are `r0..r63`, uniforms `u0..u127`; staging groups of more than one register start at an
//! even register; uniform and special sources agree on one FAU page, and respect the assembler's
//! FAU limits (encoding spec §2.7 A1–A3). The FAU page itself is not stored: it is derived from
//! the sources ([`Instr::fau_page`]).
//!
//! [`Instr::new`] returns a valid instruction with defaults: every register operand `r0`, every
//! staging group `@r0` (one register), enum modifiers at their default (required ones at their
//! first valid value), sources with the default swizzle of the slot (`h01` for 16-bit swizzled
//! sources, `b00` for lane-byte sources).

use super::tables::*;
use std::fmt;
use std::sync::LazyLock;

/// The base of a source operand: what its source byte selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Base {
    /// General register `rN` (N < 64).
    Register(u8),
    /// General register with the last-use (discard) hint, `^rN`.
    Discard(u8),
    /// 32-bit FAU word `uN`; page `N >> 6` (N < 128 in valid instructions).
    Uniform(u8),
    /// Entry of the immediate table (index < 32).
    Immediate(u8),
    /// Special FAU value.
    Special(Special),
}

/// A word of a special FAU value: entry `entry` of the special table of page `page`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Special {
    pub page: u8,
    pub entry: u8,
    /// The high 32-bit word (`.w1`) rather than the low one (`.w0`).
    pub high: bool,
}

impl Special {
    /// Looks a special value up by name; the lowest page wins (`reserved` is page 0, entry 0).
    pub fn named(name: &str, high: bool) -> Option<Special> {
        if name == "reserved" {
            return Some(Special { page: 0, entry: 0, high });
        }
        for (page, entries) in SPECIALS.iter().enumerate() {
            if let Some(entry) = entries.iter().position(|e| e.is_some_and(|(n, _)| n == name)) {
                return Some(Special { page: page as u8, entry: entry as u8, high });
            }
        }
        None
    }

    /// A special value the compiler names itself (`lane_id`, `atest_datum`, …): a fact of the
    /// ISA table, so a missing name is a bug in the table or the caller, never input to report.
    pub fn of(name: &str, high: bool) -> Special {
        Special::named(name, high).unwrap_or_else(|| panic!("the ISA table names no special value `{name}`"))
    }

    /// The name of the value, `None` if the entry is reserved.
    pub fn name(&self) -> Option<&'static str> {
        SPECIALS.get(usize::from(self.page))?.get(usize::from(self.entry))?.map(|(n, _)| n)
    }
}

impl Base {
    /// The 8-bit source field (the page of uniforms and specials lives elsewhere).
    pub fn byte(self) -> u8 {
        match self {
            Base::Register(r) => r & 0x3F,
            Base::Discard(r) => 0x40 | (r & 0x3F),
            Base::Uniform(u) => 0x80 | (u & 0x3F),
            Base::Immediate(i) => 0xC0 | (i & 0x1F),
            Base::Special(s) => 0xE0 | ((s.entry & 0xF) << 1) | u8::from(s.high),
        }
    }

    /// The FAU page this base requires, if any.
    pub fn page(self) -> Option<u8> {
        match self {
            Base::Uniform(u) => Some(u >> 6),
            Base::Special(s) => Some(s.page),
            _ => None,
        }
    }

    /// Decodes a source byte read on FAU page `page`.
    pub fn from_byte(byte: u8, page: u8) -> Base {
        match byte >> 6 {
            0 => Base::Register(byte & 0x3F),
            1 => Base::Discard(byte & 0x3F),
            2 => Base::Uniform((page << 6) | (byte & 0x3F)),
            _ if byte & 0x20 == 0 => Base::Immediate(byte & 0x1F),
            _ => Base::Special(Special { page, entry: (byte >> 1) & 0xF, high: byte & 1 == 1 }),
        }
    }

    /// The register number of a register operand.
    pub fn register(self) -> Option<u8> {
        match self {
            Base::Register(r) | Base::Discard(r) => Some(r),
            _ => None,
        }
    }

    /// The value of an immediate-table operand.
    pub fn immediate_value(self) -> Option<u32> {
        match self {
            Base::Immediate(i) => IMMEDIATES.get(usize::from(i)).map(|e| e.0),
            _ => None,
        }
    }
}

/// A source operand: its base and the values of its modifier fields. Which fields exist is
/// given by the source's [`SrcInfo`]; absent fields must stay 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Src {
    pub base: Base,
    pub neg: bool,
    pub abs: bool,
    pub not: bool,
    /// Index of the 2-bit swizzle field (`widen` or `swizzles_16_bit` enum).
    pub swizzle: u8,
    /// Index of the widen / lanes / half-swizzle / combine field.
    pub widen: u8,
    /// Index of the lane field.
    pub lane: u8,
}

impl Src {
    /// The value of an unused source slot (and a source with every field zero).
    pub const EMPTY: Src =
        Src { base: Base::Register(0), neg: false, abs: false, not: false, swizzle: 0, widen: 0, lane: 0 };

    /// A source with the given base and all modifier fields zero.
    pub fn new(base: Base) -> Src {
        Src { base, ..Src::EMPTY }
    }

    /// The default source of a slot: `base` with the slot's default modifier fields.
    pub fn defaults_for(info: &SrcInfo, base: Base) -> Src {
        let lanes_default = match info.widen_kind {
            WidenKind::Lanes => info.widen.map_or(0, |f| f.values.info().first_valid()),
            _ => info.default_widen(),
        };
        Src { base, swizzle: info.default_swizzle(), widen: lanes_default, ..Src::EMPTY }
    }
}

/// The destination: register and write mask (3 = whole register, 1 = low half `.h0`,
/// 2 = high half `.h1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dest {
    pub reg: u8,
    pub mask: u8,
}

impl Dest {
    /// The value of an instruction without destination.
    pub const NONE: Dest = Dest { reg: 0, mask: 0 };

    /// The whole register `rN`.
    pub fn full(reg: u8) -> Dest {
        Dest { reg, mask: 3 }
    }
}

/// A staging group: `count` consecutive registers starting at `base`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Staging {
    pub base: u8,
    pub count: u8,
}

impl Staging {
    /// Registers `base .. base + count`.
    pub fn new(base: u8, count: u8) -> Staging {
        Staging { base, count }
    }

    /// The registers of the group.
    pub fn registers(self) -> std::ops::Range<u8> {
        self.base..self.base.saturating_add(self.count)
    }
}

/// One machine instruction. See the module documentation for the meaning of each field and
/// the invariants of a valid instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Instr {
    pub opcode: Opcode,
    /// Index of the `flow` enum (0 = none).
    pub flow: u8,
    pub dest: Dest,
    pub staging: [Staging; MAX_STAGING],
    pub srcs: [Src; MAX_SOURCES],
    /// Raw bits of each immediate field.
    pub imms: [u32; MAX_IMMEDIATES],
    /// Encoded index of each instruction modifier, in `info().mods` order.
    pub mods: [u8; MAX_MODIFIERS],
}

/// Why an instruction cannot be encoded or is not valid.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InstrError {
    #[error("{instr} has no {what} `{name}`")]
    NoSuch { instr: &'static str, what: &'static str, name: String },
    #[error("{instr}: {what} {value} does not fit its field")]
    DoesNotFit { instr: &'static str, what: String, value: i64 },
    #[error("{instr}: {what} has the reserved value {value}")]
    Reserved { instr: &'static str, what: String, value: u32 },
    #[error("{instr}: operands need FAU pages {first} and {second}, but an instruction reads one page")]
    PageConflict { instr: &'static str, first: u8, second: u8 },
    #[error("{instr}: {message}")]
    Invalid { instr: &'static str, message: String },
}

impl Instr {
    /// A valid instruction of the given opcode with default operands and modifiers.
    pub fn new(opcode: Opcode) -> Instr {
        // Every IR instruction starts here: a copy from a table built once is cheaper than
        // walking the operand descriptions each time.
        static FRESH: LazyLock<Box<[Instr; INSTRUCTION_COUNT]>> = LazyLock::new(|| {
            let mut table = Box::new([Instr::build(Opcode::NOP); INSTRUCTION_COUNT]);
            for op in Opcode::ALL {
                table[op as usize] = Instr::build(op);
            }
            table
        });
        FRESH[opcode as usize]
    }

    /// [`Instr::new`] from the table entry.
    fn build(opcode: Opcode) -> Instr {
        let info = opcode.info();
        let mut instr = Instr {
            opcode,
            flow: 0,
            dest: if info.dest { Dest::full(0) } else { Dest::NONE },
            staging: [Staging::default(); MAX_STAGING],
            srcs: [Src::EMPTY; MAX_SOURCES],
            imms: [0; MAX_IMMEDIATES],
            mods: [0; MAX_MODIFIERS],
        };
        for (k, _) in info.staging.iter().enumerate() {
            instr.staging[k] = Staging::new(0, 1);
        }
        for (k, s) in info.srcs.iter().enumerate() {
            instr.srcs[k] = Src::defaults_for(s, Base::Register(0));
        }
        for (k, m) in info.mods.iter().enumerate() {
            instr.mods[k] = m.initial();
        }
        instr
    }

    /// An instruction from an opcode and its operands in text order: the staging groups, the
    /// destination (required exactly when the instruction has one) and the source bases (their
    /// modifier fields take the slot defaults). Modifiers and immediates keep the defaults of
    /// [`Instr::new`]; the counts must match the instruction.
    pub fn from_operands(
        opcode: Opcode,
        staging: &[Staging],
        dest: Option<Dest>,
        srcs: &[Base],
    ) -> Result<Instr, InstrError> {
        let info = opcode.info();
        let invalid = |message: String| Err(InstrError::Invalid { instr: info.name, message });
        if staging.len() != info.staging.len() {
            return invalid(format!("takes {} staging operands, got {}", info.staging.len(), staging.len()));
        }
        if dest.is_some() != info.dest {
            return invalid(if info.dest { "needs a destination".into() } else { "has no destination".into() });
        }
        if srcs.len() != info.srcs.len() {
            return invalid(format!("takes {} sources, got {}", info.srcs.len(), srcs.len()));
        }
        let mut instr = Instr::new(opcode);
        instr.staging[..staging.len()].copy_from_slice(staging);
        if let Some(d) = dest {
            instr.dest = d;
        }
        for (k, base) in srcs.iter().enumerate() {
            instr.srcs[k].base = *base;
        }
        Ok(instr)
    }

    /// The table entry of the instruction.
    pub fn info(&self) -> &'static InstrInfo {
        self.opcode.info()
    }

    /// The execution unit.
    pub fn unit(&self) -> Unit {
        self.info().unit
    }

    /// Number of sources.
    pub fn source_count(&self) -> usize {
        self.info().srcs.len()
    }

    /// The used sources.
    pub fn sources(&self) -> &[Src] {
        &self.srcs[..self.info().srcs.len()]
    }

    /// The used staging groups, in text order.
    pub fn staging_operands(&self) -> &[Staging] {
        &self.staging[..self.info().staging.len()]
    }

    /// The destination, if the instruction has one.
    pub fn destination(&self) -> Option<Dest> {
        self.info().dest.then_some(self.dest)
    }

    /// Sets the base of source `index`, keeping its modifier fields.
    pub fn set_src(&mut self, index: usize, base: Base) -> Result<(), InstrError> {
        self.check_src_index(index)?;
        self.srcs[index].base = base;
        Ok(())
    }

    /// Builder form of [`Instr::set_src`]; ignores an out-of-range index (checked by `validate`).
    pub fn with_src(mut self, index: usize, base: Base) -> Instr {
        if let Some(src) = self.srcs.get_mut(index) {
            src.base = base;
        }
        self
    }

    /// Builder: sets the destination.
    pub fn with_dest(mut self, dest: Dest) -> Instr {
        self.dest = dest;
        self
    }

    /// Builder: sets staging group `index`.
    pub fn with_staging(mut self, index: usize, staging: Staging) -> Instr {
        if let Some(s) = self.staging.get_mut(index) {
            *s = staging;
        }
        self
    }

    /// Builder: sets the flow.
    pub fn with_flow(mut self, flow: Flow) -> Instr {
        self.flow = flow.index();
        self
    }

    /// The default source of slot `index` with the given base (the modifier defaults of that
    /// source, e.g. `h01` on a 16-bit swizzle source).
    pub fn default_src(&self, index: usize, base: Base) -> Option<Src> {
        self.info().srcs.get(index).map(|s| Src::defaults_for(s, base))
    }

    fn check_src_index(&self, index: usize) -> Result<(), InstrError> {
        if index < self.info().srcs.len() {
            Ok(())
        } else {
            Err(InstrError::NoSuch { instr: self.info().name, what: "source", name: index.to_string() })
        }
    }

    /// The flow, `None` if reserved.
    pub fn flow(&self) -> Option<Flow> {
        Flow::from_index(self.flow)
    }

    pub fn set_flow(&mut self, flow: Flow) {
        self.flow = flow.index();
    }

    /// Raw value of the modifier `key` (the first one if the key occurs twice).
    pub fn modifier(&self, key: &str) -> Option<u8> {
        self.info().mod_index(key).map(|i| self.mods[i])
    }

    /// Sets the raw value of modifier `key`; it must fit the field.
    pub fn set_modifier(&mut self, key: &str, value: u8) -> Result<(), InstrError> {
        let info = self.info();
        let index = info.mod_index(key).ok_or_else(|| InstrError::NoSuch {
            instr: info.name,
            what: "modifier",
            name: key.to_string(),
        })?;
        if u32::from(value) >> info.mods[index].width != 0 {
            return Err(InstrError::DoesNotFit {
                instr: info.name,
                what: format!("modifier `{key}`"),
                value: value.into(),
            });
        }
        self.mods[index] = value;
        Ok(())
    }

    /// A flag modifier.
    pub fn flag(&self, key: &str) -> Option<bool> {
        self.modifier(key).map(|v| v != 0)
    }

    pub fn set_flag(&mut self, key: &str, on: bool) -> Result<(), InstrError> {
        self.set_modifier(key, u8::from(on))
    }

    /// A typed enum modifier: `None` when the instruction has no modifier `key` of enum `E`, or
    /// holds a reserved value.
    pub fn get<E: IsaEnum>(&self, key: &str) -> Option<E> {
        E::from_index(self.mods[self.info().enum_mod_index(key, E::ID)?])
    }

    /// Sets a typed enum modifier.
    pub fn set<E: IsaEnum>(&mut self, key: &str, value: E) -> Result<(), InstrError> {
        let info = self.info();
        let index = info.enum_mod_index(key, E::ID).ok_or_else(|| InstrError::NoSuch {
            instr: info.name,
            what: "modifier",
            name: key.to_string(),
        })?;
        self.mods[index] = value.index();
        Ok(())
    }

    pub fn clamp(&self) -> Option<Clamp> {
        self.get("clamp")
    }
    pub fn set_clamp(&mut self, v: Clamp) -> Result<(), InstrError> {
        self.set("clamp", v)
    }
    pub fn round_mode(&self) -> Option<RoundMode> {
        self.get("round_mode")
    }
    pub fn set_round_mode(&mut self, v: RoundMode) -> Result<(), InstrError> {
        self.set("round_mode", v)
    }
    pub fn condition(&self) -> Option<Condition> {
        self.get("condition")
    }
    pub fn set_condition(&mut self, v: Condition) -> Result<(), InstrError> {
        self.set("condition", v)
    }
    pub fn result_type(&self) -> Option<ResultType> {
        self.get("result_type")
    }
    pub fn set_result_type(&mut self, v: ResultType) -> Result<(), InstrError> {
        self.set("result_type", v)
    }
    pub fn register_format(&self) -> Option<RegisterFormat> {
        self.get("register_format")
    }
    pub fn set_register_format(&mut self, v: RegisterFormat) -> Result<(), InstrError> {
        self.set("register_format", v)
    }
    pub fn slot(&self) -> Option<Slot> {
        self.get("slot")
    }
    pub fn set_slot(&mut self, v: Slot) -> Result<(), InstrError> {
        self.set("slot", v)
    }
    pub fn vector_size(&self) -> Option<VectorSize> {
        self.get("vector_size")
    }
    pub fn set_vector_size(&mut self, v: VectorSize) -> Result<(), InstrError> {
        self.set("vector_size", v)
    }

    /// The value of immediate field `name` (sign-extended for signed fields).
    pub fn imm(&self, name: &str) -> Option<i64> {
        let info = self.info();
        let k = info.imm_index(name)?;
        Some(info.imms[k].decode(self.imms[k]))
    }

    /// Sets immediate field `name`; the value must be in the field's range.
    pub fn set_imm(&mut self, name: &str, value: i64) -> Result<(), InstrError> {
        let info = self.info();
        let k = info.imm_index(name).ok_or_else(|| InstrError::NoSuch {
            instr: info.name,
            what: "immediate",
            name: name.to_string(),
        })?;
        self.set_imm_at(k, value)
    }

    /// Sets immediate field `k` (its index in `info().imms`, e.g. looked up once with
    /// `imm_index`: looking it up by name compares strings); the value must be in its range.
    pub fn set_imm_at(&mut self, k: usize, value: i64) -> Result<(), InstrError> {
        let info = self.info();
        let field = &info.imms[k];
        self.imms[k] = field.encode(value).ok_or_else(|| InstrError::DoesNotFit {
            instr: info.name,
            what: format!("immediate `{}`", field.name),
            value,
        })?;
        Ok(())
    }

    /// The FAU page required by the uniform and special sources (0 when there are none).
    pub fn fau_page(&self) -> Result<u8, InstrError> {
        let mut page: Option<u8> = None;
        for src in self.sources() {
            if let Some(p) = src.base.page() {
                match page {
                    Some(q) if q != p => {
                        return Err(InstrError::PageConflict { instr: self.info().name, first: q, second: p });
                    }
                    _ => page = Some(p),
                }
            }
        }
        Ok(page.unwrap_or(0))
    }

    /// The assembler's FAU limits (encoding spec §2.7, A1–A3), checked source by source in slot
    /// order. On failure returns the index of the first source that exceeds a limit.
    pub fn check_fau_limits(&self) -> Result<(), (usize, InstrError)> {
        if self.sources().iter().all(|s| matches!(s.base, Base::Register(_) | Base::Discard(_))) {
            return Ok(()); // Most instructions read registers only.
        }
        let info = self.info();
        let alu = info.unit.is_alu();
        let (mut all, mut all_n) = ([0u8; MAX_SOURCES], 0);
        let (mut fau, mut fau_n) = ([0u8; MAX_SOURCES], 0);
        let (mut slots, mut slots_n) = ([0u8; MAX_SOURCES], 0);
        let mut page: Option<u8> = None;
        let err = |message: &str| InstrError::Invalid { instr: info.name, message: message.to_string() };
        for (k, src) in self.sources().iter().enumerate() {
            let byte = src.base.byte();
            if let Some(p) = src.base.page() {
                if page.is_some_and(|q| q != p) {
                    return Err((
                        k,
                        InstrError::PageConflict { instr: info.name, first: page.unwrap_or(0), second: p },
                    ));
                }
                page = Some(p);
            }
            if byte & 0x80 == 0 {
                continue;
            }
            if !all[..all_n].contains(&byte) {
                all[all_n] = byte;
                all_n += 1;
            }
            if all_n > 2 {
                return Err((k, err("more than two distinct FAU words (uniforms, constants, specials)")));
            }
            if matches!(src.base, Base::Immediate(_)) {
                continue;
            }
            if !fau[..fau_n].contains(&byte) {
                fau[fau_n] = byte;
                fau_n += 1;
            }
            if !slots[..slots_n].contains(&(byte >> 1)) {
                slots[slots_n] = byte >> 1;
                slots_n += 1;
            }
            let (max_slots, max_words) = if alu { (1, 2) } else { (2, 3) };
            if slots_n > max_slots {
                return Err((k, err("more than one 64-bit uniform/special slot")));
            }
            if fau_n > max_words {
                return Err((k, err("too many uniform/special words")));
            }
        }
        Ok(())
    }

    /// The hardware FAU rules the compiler must respect (encoding spec §2.7, H2–H7), stricter
    /// than the assembler's. Returns the first violation.
    pub fn check_hardware_rules(&self) -> Result<(), InstrError> {
        // The legaliser asks this of every instruction with a FAU source: decide in one pass,
        // and walk the rules in order only to name a violation.
        if self.hardware_rules_hold() {
            return Ok(());
        }
        self.first_hardware_rule_violation()
    }

    /// The rules of [`Instr::check_hardware_rules`] walked in order: the first violation.
    pub(super) fn first_hardware_rule_violation(&self) -> Result<(), InstrError> {
        let info = self.info();
        let err = |message: String| Err(InstrError::Invalid { instr: info.name, message });
        self.fau_page()?;
        if let Err((_, e)) = self.check_fau_limits() {
            return Err(e);
        }
        let mut uniform_slot: Option<u8> = None;
        let mut special: Option<(u8, u8)> = None;
        for (src, sinfo) in self.sources().iter().zip(info.srcs) {
            match src.base {
                Base::Uniform(u) => {
                    if uniform_slot.is_some_and(|s| s != u >> 1) {
                        return err("more than one 64-bit uniform slot".into());
                    }
                    uniform_slot = Some(u >> 1);
                    if sinfo.size == 64 && u % 2 == 1 {
                        return err(format!("64-bit uniform operand u{u} is not an even word"));
                    }
                }
                Base::Special(s) => {
                    if special.is_some_and(|x| x != (s.page, s.entry)) {
                        return err("more than one special FAU value".into());
                    }
                    special = Some((s.page, s.entry));
                    let warp = s.page == 0 && s.entry == 2;
                    if !info.unit.is_alu() && (warp || s.page == 3) {
                        return err("message instructions cannot read warp_id or page-3 special values".into());
                    }
                }
                Base::Register(r) | Base::Discard(r) => {
                    if sinfo.size == 64 && r % 2 == 1 {
                        return err(format!("64-bit register operand r{r} is not an even register"));
                    }
                }
                Base::Immediate(_) => {}
            }
        }
        let two_indices = !info.unit.is_alu() && !matches!(info.opcode, Opcode::ATEST | Opcode::BLEND);
        if special.is_some() && uniform_slot.is_some() && !two_indices {
            return err("only message instructions (not ATEST/BLEND) may combine a uniform and a special value".into());
        }
        Ok(())
    }

    /// Whether [`Instr::check_hardware_rules`] holds, in one pass over the sources (the same
    /// rules: one FAU page, the assembler's FAU limits, one 64-bit uniform slot, one special
    /// value, aligned 64-bit operands, the message-only special values and combinations).
    pub(super) fn hardware_rules_hold(&self) -> bool {
        let info = self.info();
        let alu = info.unit.is_alu();
        let (mut fau, mut n_fau) = ([0u8; MAX_SOURCES], 0);
        let mut page: Option<u8> = None;
        let mut uniform_slot: Option<u8> = None;
        let mut special: Option<(u8, u8)> = None;
        for (src, sinfo) in self.sources().iter().zip(info.srcs) {
            let wide = sinfo.size == 64;
            match src.base {
                Base::Register(r) | Base::Discard(r) => {
                    if wide && r % 2 == 1 {
                        return false;
                    }
                    continue;
                }
                Base::Uniform(u) => {
                    if uniform_slot.is_some_and(|s| s != u >> 1) || (wide && u % 2 == 1) {
                        return false;
                    }
                    uniform_slot = Some(u >> 1);
                }
                Base::Special(s) => {
                    let warp = s.page == 0 && s.entry == 2;
                    if special.is_some_and(|x| x != (s.page, s.entry)) || (!alu && (warp || s.page == 3)) {
                        return false;
                    }
                    special = Some((s.page, s.entry));
                }
                Base::Immediate(_) => {}
            }
            if let Some(p) = src.base.page() {
                if page.is_some_and(|q| q != p) {
                    return false;
                }
                page = Some(p);
            }
            fau[n_fau] = src.base.byte();
            n_fau += 1;
        }
        if n_fau > 1 && !super::encode::fau_limits_hold(&fau[..n_fau], alu) {
            return false;
        }
        let two_indices = !alu && !matches!(info.opcode, Opcode::ATEST | Opcode::BLEND);
        !(special.is_some() && uniform_slot.is_some() && !two_indices)
    }

    /// Checks every invariant of a valid instruction (module documentation).
    pub fn validate(&self) -> Result<(), InstrError> {
        self.check_invariants()?;
        super::encode::encode_raw(self).map(|_| ())
    }

    /// [`Instr::validate`] except the checks [`encode_raw`](super::encode_raw) makes itself (every
    /// value fits its field), so that [`encode`](super::encode) runs the field placement once.
    pub(super) fn check_invariants(&self) -> Result<(), InstrError> {
        let info = self.info();
        let masks = ValueMasks::of(self.opcode);
        let name = info.name;
        let invalid = |message: String| Err(InstrError::Invalid { instr: name, message });
        let reserved = |what: String, value: u32| Err(InstrError::Reserved { instr: name, what, value });
        // Unused parts hold their empty values.
        if !info.dest && self.dest != Dest::NONE {
            return invalid("has no destination, but `dest` is set".into());
        }
        if self.staging[info.staging.len()..].iter().any(|s| *s != Staging::default())
            || self.srcs[info.srcs.len()..].iter().any(|s| *s != Src::EMPTY)
            || self.imms[info.imms.len()..].iter().any(|&v| v != 0)
            || self.mods[info.mods.len()..].iter().any(|&v| v != 0)
        {
            return invalid("unused operand or modifier entries must be zero".into());
        }
        if Flow::from_index(self.flow).is_none() {
            return reserved("flow".into(), self.flow.into());
        }
        if info.dest {
            if self.dest.reg > 63 {
                return invalid(format!("destination r{} is not a register", self.dest.reg));
            }
            if self.dest.mask == 0 || self.dest.mask > 3 {
                return invalid(format!("destination write mask {} is not 1, 2 or 3", self.dest.mask));
            }
        }
        for (k, (s, sinfo)) in self.staging.iter().zip(info.staging).enumerate() {
            if !sinfo.count_range().contains(&s.count) {
                return invalid(format!("staging operand {k} has {} registers", s.count));
            }
            if u32::from(s.base) + u32::from(s.count) > 64 {
                return invalid(format!("staging operand {k} runs past r63"));
            }
            if s.count > 1 && s.base % 2 == 1 {
                return invalid(format!("staging operand {k} of {} registers starts at odd r{}", s.count, s.base));
            }
            if s.count == 0 && s.base != 0 {
                return invalid(format!("empty staging operand {k} must have base r0"));
            }
        }
        for (k, (src, sinfo)) in self.srcs.iter().zip(info.srcs).enumerate() {
            match src.base {
                Base::Register(r) | Base::Discard(r) if r > 63 => {
                    return invalid(format!("source {k}: r{r} is not a register"));
                }
                Base::Uniform(u) if u > 127 => return invalid(format!("source {k}: uniform u{u} is beyond u127")),
                Base::Immediate(i) if i > 31 => {
                    return invalid(format!("source {k}: immediate index {i} is beyond 31"));
                }
                Base::Special(s) if s.page > 3 || s.entry > 15 || s.name().is_none() => {
                    return reserved(format!("source {k} special value (page {})", s.page), s.entry.into());
                }
                _ => {}
            }
            // The common case first; the loop below names the first bad field.
            let [swizzle, widen, lane] = masks.srcs[k];
            if allows(swizzle, src.swizzle) && allows(widen, src.widen) && allows(lane, src.lane) {
                continue;
            }
            let fields = [
                (src.swizzle, sinfo.swizzle, "swizzle"),
                (src.widen, sinfo.widen, "widen"),
                (src.lane, sinfo.lane, "lane"),
            ];
            for (value, field, what) in fields {
                match field {
                    None if value != 0 => return invalid(format!("source {k} has no {what} field")),
                    Some(f) if !f.values.info().is_valid(value) || u32::from(value) >> f.width != 0 => {
                        return reserved(format!("source {k} {what}"), value.into());
                    }
                    _ => {}
                }
            }
        }
        let mods_ok = self.mods.iter().zip(&masks.mods).all(|(&v, &mask)| allows(mask, v));
        for (k, m) in info.mods.iter().enumerate().filter(|_| !mods_ok) {
            let v = self.mods[k];
            let ok = match m.kind {
                ModKind::Flag => v <= 1,
                ModKind::Enum(e) => e.info().is_valid(v) && u32::from(v) >> m.width == 0,
            };
            if !ok {
                return reserved(format!("modifier `{}`", m.key), v.into());
            }
        }
        if let Err((_, e)) = self.check_fau_limits() {
            return Err(e);
        }
        Ok(())
    }
}

/// The valid values of every source modifier field and instruction modifier of one opcode, as
/// bit sets (bit `v` set when value `v` fits the field and is not reserved; an absent field
/// allows only 0, an unused modifier entry only 0). Fields are at most 4 bits wide. Checking an
/// instruction against these sets is what [`Instr::check_invariants`] does for every
/// instruction the compiler emits, so it is a table lookup rather than a walk of the enums.
#[derive(Clone, Copy, Debug)]
struct ValueMasks {
    /// Swizzle, widen and lane field of each source slot.
    srcs: [[u16; 3]; MAX_SOURCES],
    mods: [u16; MAX_MODIFIERS],
}

impl ValueMasks {
    fn of(opcode: Opcode) -> &'static ValueMasks {
        static TABLE: LazyLock<Box<[ValueMasks; INSTRUCTION_COUNT]>> = LazyLock::new(|| {
            let empty = ValueMasks { srcs: [[1; 3]; MAX_SOURCES], mods: [1; MAX_MODIFIERS] };
            let mut table = Box::new([empty; INSTRUCTION_COUNT]);
            for op in Opcode::ALL {
                table[op as usize] = ValueMasks::build(op.info());
            }
            table
        });
        &TABLE[opcode as usize]
    }

    fn build(info: &InstrInfo) -> ValueMasks {
        let set = |width: u8, valid: &dyn Fn(u8) -> bool| -> u16 {
            (0..16u8).filter(|&v| u32::from(v) >> width == 0 && valid(v)).fold(0, |m, v| m | 1 << v)
        };
        let field = |f: Option<SrcField>| f.map_or(1, |f| set(f.width, &|v| f.values.info().is_valid(v)));
        let mut masks = ValueMasks { srcs: [[1; 3]; MAX_SOURCES], mods: [1; MAX_MODIFIERS] };
        for (k, s) in info.srcs.iter().enumerate() {
            masks.srcs[k] = [field(s.swizzle), field(s.widen), field(s.lane)];
        }
        for (k, m) in info.mods.iter().enumerate() {
            masks.mods[k] = match m.kind {
                ModKind::Flag => 0b11,
                ModKind::Enum(e) => set(m.width, &|v| e.info().is_valid(v)),
            };
        }
        masks
    }
}

/// Whether value `v` is in the bit set `mask` (values past 15 never are).
fn allows(mask: u16, v: u8) -> bool {
    mask.checked_shr(u32::from(v)).is_some_and(|m| m & 1 == 1)
}

impl fmt::Display for Instr {
    /// Mesa's text of the instruction (the disassembler's output).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&super::disasm::print(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every immediate field of every opcode: `encode` inverts `decode` over the field's whole
    /// range and refuses the values just outside it; `set_imm_at` and `set_imm` agree.
    #[test]
    fn immediate_fields_encode_what_they_decode() {
        for op in Opcode::ALL {
            let info = op.info();
            for (k, field) in info.imms.iter().enumerate() {
                let (lo, hi) = field.range();
                for value in [lo, lo + 1, -1, 0, 1, hi - 1, hi].into_iter().filter(|v| (lo..=hi).contains(v)) {
                    let bits = field.encode(value).expect("in range");
                    assert_eq!(field.decode(bits), value, "{} {}", info.name, field.name);
                    let (mut by_index, mut by_name) = (Instr::new(op), Instr::new(op));
                    by_index.set_imm_at(k, value).unwrap();
                    by_name.set_imm(field.name, value).unwrap();
                    assert_eq!(by_index, by_name, "{} {}", info.name, field.name);
                }
                assert_eq!(field.encode(lo - 1), None, "{} {}", info.name, field.name);
                assert_eq!(field.encode(hi + 1), None, "{} {}", info.name, field.name);
                let err = Instr::new(op).set_imm_at(k, hi + 1).unwrap_err();
                assert!(err.to_string().contains(field.name), "{err}");
            }
        }
    }

    /// The bit sets say exactly what the enum tables say, for every value of a byte (so no
    /// field is wider than the 16 values a set holds).
    #[test]
    fn value_masks_match_the_enum_tables() {
        for op in Opcode::ALL {
            let info = op.info();
            let masks = ValueMasks::of(op);
            for v in 0..=255u8 {
                for (k, s) in info.srcs.iter().enumerate() {
                    for (f, mask) in [s.swizzle, s.widen, s.lane].into_iter().zip(masks.srcs[k]) {
                        let valid = match f {
                            None => v == 0,
                            Some(f) => u32::from(v) >> f.width == 0 && f.values.info().is_valid(v),
                        };
                        assert_eq!(allows(mask, v), valid, "{} source {k} value {v}", info.name);
                    }
                }
                for (k, m) in info.mods.iter().enumerate() {
                    let valid = match m.kind {
                        ModKind::Flag => v <= 1,
                        ModKind::Enum(e) => e.info().is_valid(v) && u32::from(v) >> m.width == 0,
                    };
                    assert_eq!(allows(masks.mods[k], v), valid, "{} modifier {} value {v}", info.name, m.key);
                }
            }
        }
    }

    #[test]
    fn fresh_instructions_are_valid_and_built_from_the_table() {
        for op in Opcode::ALL {
            assert_eq!(Instr::new(op), Instr::build(op));
            assert_eq!(Instr::new(op).validate(), Ok(()), "{}", op.name());
        }
    }
}

//! Instruction / word → Mesa's assembly text.
//!
//! [`print`] writes one instruction exactly as Mesa's disassembler does (encoding spec §6.2):
//! mnemonic, instruction modifiers in table order (flags when set, enum values when not the
//! default, reserved or out-of-list values as `.reserved`), the flow last, then one space (also
//! when there is no operand), then destination, staging operands, sources and immediates
//! separated by `, `. [`disassemble_word`] decodes permissively first, so every word Mesa
//! prints is printed, reserved fields included.
//!
//! Flags Mesa's text tools do not know (`hidden` in `isa/valhall.isa`: `TEX_GRADIENT`'s
//! force-delta-enable and derivative-enable) are not printed, and renamed flags print Mesa's
//! spelling (its lod-bias/lod-clamp-disable flags both print `.lod_mode`); [`print_exact`] and
//! [`write_mnemonic`] print every flag by its unique key instead.
//!
//! Deliberate differences from Mesa, where Mesa is undefined: enum values past the end of their
//! list print `.reserved` (Mesa reads past its string table); special values in floating-point
//! sources print normally (Mesa asserts); bit 63 is ignored (Mesa asserts).
//!
//! [`listing`] formats a whole buffer like Mesa's `disassemble_valhall`: each line is
//! `   TEXT` (or the eight bytes `xx ` and three spaces in hex mode), a blank line follows every
//! `BRANCHZ`/`BRANCHZI`, the first all-zero word ends the program, and a final newline closes it.

use super::decode::{DecodeError, decode_permissive};
use super::inst::{Base, Instr, Src};
use super::tables::*;
use std::fmt::Write;

fn enum_text(id: EnumId, index: u8) -> &'static str {
    id.info().display(index)
}

/// Mesa's text of one instruction.
pub fn print(instr: &Instr) -> String {
    let mut out = String::with_capacity(64);
    write_instr(&mut out, instr);
    out
}

/// The text of one instruction with every flag by its unique key (hidden flags included):
/// Mesa's text except for the flags `isa/valhall.isa` renames or hides (`TEX_GRADIENT`), and
/// `assemble_line(&print_exact(i)) == encode(i)` wherever Mesa's own text can express the rest.
pub fn print_exact(instr: &Instr) -> String {
    let mut out = String::with_capacity(64);
    write_instr_as(&mut out, instr, false);
    out
}

/// Appends Mesa's text of one instruction to `out`.
pub fn write_instr(out: &mut String, instr: &Instr) {
    write_instr_as(out, instr, true);
}

fn write_instr_as(out: &mut String, instr: &Instr, mesa: bool) {
    let info = instr.info();
    write_mnemonic_as(out, instr, mesa);
    out.push(' ');
    let mut first = true;
    let mut sep = |out: &mut String| {
        if !first {
            out.push_str(", ");
        }
        first = false;
    };
    if info.dest {
        sep(out);
        let _ = write!(out, "r{}", instr.dest.reg);
        match instr.dest.mask {
            3 => {}
            1 => out.push_str(".h0"),
            _ => out.push_str(".h1"),
        }
    }
    for (k, _) in info.staging.iter().enumerate() {
        sep(out);
        let st = instr.staging[k];
        out.push('@');
        for i in 0..st.count {
            if i > 0 {
                out.push(':');
            }
            let _ = write!(out, "r{}", u32::from(st.base) + u32::from(i));
        }
    }
    for (k, s) in info.srcs.iter().enumerate() {
        sep(out);
        write_base(out, instr.srcs[k].base);
        write_src_suffixes(out, &instr.srcs[k], s);
    }
    for k in 0..info.imms.len() {
        sep(out);
        write_imm(out, instr, k);
    }
}

/// Appends the mnemonic, the instruction modifiers (in table order, defaults omitted) and the
/// flow, e.g. `FADD.f32.clamp_0_1.wait0`, every flag by its unique key: the text names every
/// bit, hidden ones included, and assembles back to the same word. It differs from Mesa's
/// text only for `TEX_GRADIENT` and the `VAR_TEX*_GRADIENT` instructions (used by the IR text).
pub fn write_mnemonic(out: &mut String, instr: &Instr) {
    write_mnemonic_as(out, instr, false);
}

/// Mesa's form of the mnemonic: hidden flags omitted, flags by their Mesa spelling.
fn write_mnemonic_as(out: &mut String, instr: &Instr, mesa: bool) {
    let info = instr.info();
    out.push_str(info.name);
    for (k, m) in info.mods.iter().enumerate() {
        let v = instr.mods[k];
        match m.kind {
            ModKind::Flag => {
                if v != 0 && !(mesa && m.hidden) {
                    out.push('.');
                    out.push_str(if mesa { m.text } else { m.key });
                }
            }
            ModKind::Enum(id) => {
                if Some(v) != id.info().default {
                    out.push('.');
                    out.push_str(enum_text(id, v));
                }
            }
        }
    }
    if instr.flow != 0 {
        out.push('.');
        out.push_str(enum_text(EnumId::Flow, instr.flow));
    }
}

/// Appends immediate field `k` as Mesa prints it (`#0x…`, `offset:-8`, `index:0x1`).
pub fn write_imm(out: &mut String, instr: &Instr, k: usize) {
    let f = &instr.info().imms[k];
    let bits = instr.imms[k];
    if f.name == "constant" {
        let _ = write!(out, "#0x{bits:X}");
    } else if f.signed {
        let value = if bits >> (f.width - 1) & 1 == 1 { i64::from(bits) - (1i64 << f.width) } else { i64::from(bits) };
        let _ = write!(out, "{}:{value}", f.name);
    } else {
        let _ = write!(out, "{}:0x{bits:X}", f.name);
    }
}

/// Appends a source base as Mesa prints it (`r1`, `^r1`, `u3`, `0x3F800000`, `lane_id.w0`).
pub fn write_base(out: &mut String, base: Base) {
    match base {
        Base::Register(r) => {
            let _ = write!(out, "r{r}");
        }
        Base::Discard(r) => {
            let _ = write!(out, "^r{r}");
        }
        Base::Uniform(u) => {
            let _ = write!(out, "u{u}");
        }
        Base::Immediate(i) => {
            let _ = write!(out, "0x{:X}", IMMEDIATES[usize::from(i & 31)].0);
        }
        Base::Special(sp) => {
            let name = if sp.page == 2 { "reserved_page2" } else { sp.name().unwrap_or("reserved") };
            let _ = write!(out, "{name}.w{}", u8::from(sp.high));
        }
    }
}

/// Appends the modifier suffixes of a source (`.neg`, `.abs`, swizzles, lanes, `.not`) in Mesa's
/// order; fields at their default print nothing.
pub fn write_src_suffixes(out: &mut String, src: &Src, s: &SrcInfo) {
    if src.neg {
        out.push_str(".neg");
    }
    if src.abs {
        out.push_str(".abs");
    }
    let mut field = |f: Option<SrcField>, value: u8| {
        if let Some(f) = f
            && Some(value) != f.values.info().default
        {
            out.push('.');
            out.push_str(enum_text(f.values, value));
        }
    };
    field(s.swizzle, src.swizzle);
    field(s.widen, src.widen);
    field(s.lane, src.lane);
    if src.not {
        out.push_str(".not");
    }
}

/// Decodes (permissively) and prints one word.
pub fn disassemble_word(word: u64) -> Result<String, DecodeError> {
    decode_permissive(word).map(|i| print(&i))
}

/// Options of [`listing`].
#[derive(Clone, Copy, Debug, Default)]
pub struct ListingOptions {
    /// Prefix each line with the instruction's eight bytes (Mesa's verbose mode).
    pub hex: bool,
    /// One line per word: do not stop at an all-zero word, no blank lines, no final newline.
    pub each: bool,
}

/// A formatted listing.
#[derive(Clone, Debug, Default)]
pub struct Listing {
    pub text: String,
    /// Byte offsets of the words that could not be decoded (printed as markers).
    pub undecodable: Vec<usize>,
    /// Number of bytes after the last whole word (ignored).
    pub trailing_bytes: usize,
}

/// The marker printed for a word that is not an instruction.
pub const UNDECODABLE_MARKER: &str = "<undecodable>";

/// Formats a buffer of little-endian instruction words (see the module documentation).
/// Undecodable words print as `<undecodable>` followed by the reason after `; `.
pub fn listing(code: &[u8], options: ListingOptions) -> Listing {
    let mut listing = Listing { trailing_bytes: code.len() % 8, ..Listing::default() };
    let out = &mut listing.text;
    for (index, chunk) in code.chunks_exact(8).enumerate() {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(chunk);
        let word = u64::from_le_bytes(bytes);
        if word == 0 && !options.each {
            break;
        }
        if options.hex {
            for b in bytes {
                let _ = write!(out, "{b:02x} ");
            }
            out.push_str("   ");
        } else if !options.each {
            out.push_str("   ");
        }
        match decode_permissive(word) {
            Ok(instr) => write_instr(out, &instr),
            Err(e) => {
                let _ = write!(out, "{UNDECODABLE_MARKER} ; {e}");
                listing.undecodable.push(index * 8);
            }
        }
        out.push('\n');
        let primary = (word >> 48) & 0x1FF;
        if !options.each && (primary == 0x1F || primary == 0x2F) {
            out.push('\n');
        }
    }
    if !options.each {
        out.push('\n');
    }
    listing
}

/// Disassembles a buffer into Mesa's non-verbose listing.
pub fn disassemble(code: &[u8]) -> String {
    listing(code, ListingOptions::default()).text
}

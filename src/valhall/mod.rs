//! The Valhall ISA layer: tables generated from `isa/valhall.isa`, the machine-instruction type,
//! and the four conversions between words, instructions and text.
//!
//! ```text
//!                 asm::assemble_line                 encode
//!   Mesa text ─────────────────────────► Instr ─────────────────► u64 word
//!   Mesa text ◄───────────────────────── Instr ◄───────────────── u64 word
//!                 disasm::print                     decode / decode_permissive
//! ```
//!
//! * [`encode`] succeeds exactly for valid instructions ([`Instr::validate`]);
//!   [`encode_raw`] only requires every value to fit its field (the assembler uses it, because
//!   Mesa's assembler accepts reserved values such as an unspecified `lanes` field).
//! * [`decode`] succeeds exactly for words that are the encoding of a valid instruction, so
//!   `encode(decode(w)?) == w` and `decode(encode(i)?) == i`.
//! * [`decode_permissive`] accepts every word Mesa's disassembler decodes (known opcode and,
//!   for shared primary opcodes, a known secondary opcode); bits outside the instruction's
//!   fields are dropped. The disassembler prints from it, so its text equals Mesa's.
//!
//! Nothing here allocates per instruction except the text functions.
//!
//! Building and encoding an instruction (what the compiler does):
//!
//! ```
//! use tgsi2va::valhall::{Base, Dest, Flow, Instr, Opcode, encode, decode, print};
//! use tgsi2va::valhall::tables::Clamp;
//!
//! let mut fadd = Instr::from_operands(Opcode::FADD_F32, &[], Some(Dest::full(0)), &[Base::Register(1), Base::Register(2)])?;
//! fadd.srcs[1].neg = true;
//! fadd.srcs[1].abs = true;
//! fadd.set_clamp(Clamp::ClampM1_1)?;
//! fadd.set_flow(Flow::Wait0);
//! let word = encode(&fadd)?;
//! assert_eq!(word, 0x08A4_C032_0000_0201);
//! assert_eq!(print(&fadd), "FADD.f32.clamp_m1_1.wait0 r0, r1, r2.neg.abs");
//! assert_eq!(decode(word)?, fadd);
//! assert_eq!(fadd.unit().name(), "FMA");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Reading a decoded instruction (what the emulator does):
//!
//! ```
//! use tgsi2va::valhall::{Base, decode};
//!
//! // 40 00 00 18 82 80 60 08    LOAD.i32.unsigned.slot0.wait0 @r0, ^r0, offset:0
//! let load = decode(0x0860_8082_1800_0040)?;
//! assert_eq!(load.staging_operands()[0].registers(), 0..1);
//! assert_eq!(load.sources()[0].base, Base::Discard(0));
//! assert_eq!(load.imm("offset"), Some(0));
//! assert_eq!(load.flag("unsigned"), Some(true));
//! assert_eq!(load.modifier("slot"), Some(0));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod asm;
pub mod decode;
pub mod disasm;
pub mod encode;
pub mod inst;
pub mod reference;
pub mod tables;

pub use asm::{AsmError, assemble, assemble_line, parse_line};
pub use decode::{DecodeError, decode, decode_permissive};
pub use disasm::{Listing, ListingOptions, disassemble, disassemble_word, listing, print, print_exact};
pub use encode::{EncodeError, encode, encode_raw};
pub use inst::{Base, Dest, Instr, InstrError, Special, Src, Staging};
pub use tables::{EnumId, Flow, InstrInfo, IsaEnum, Opcode, Unit};

/// Whether a resource handle (`table << 24 | index`, as `LD_BUFFER` and `LEA_BUFFER` read it)
/// names a constant buffer: table 0, whose memory no shader writes.
pub const fn is_constant_buffer_handle(handle: u32) -> bool {
    handle >> 24 == 0
}

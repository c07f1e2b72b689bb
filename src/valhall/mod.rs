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

pub mod asm;
pub mod decode;
pub mod disasm;
pub mod encode;
pub mod inst;
pub mod reference;
pub mod tables;

pub use asm::{AsmError, assemble, assemble_line, parse_line};
pub use decode::{DecodeError, decode, decode_permissive};
pub use disasm::{Listing, ListingOptions, disassemble, disassemble_word, listing, print};
pub use encode::{EncodeError, encode, encode_raw};
pub use inst::{Base, Dest, Instr, InstrError, Special, Src, Staging};
pub use tables::{EnumId, Flow, InstrInfo, IsaEnum, Opcode, Unit};

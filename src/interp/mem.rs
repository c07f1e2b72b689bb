//! BUFFER and shared MEMORY access: LOAD, STORE, the atomics and RESQ.
//!
//! Addresses are byte addresses; channel c of a LOAD/STORE accesses the 32-bit word at
//! `(address + 4c) / 4` (the low two bits are ignored). Accesses outside the buffer (or the
//! shared memory) read 0 and are not written; an atomic outside does nothing and returns 0.
//! Stores and atomics are performed by the active lanes that are not helpers, in lane order
//! 0..3; loads by every active lane.

use super::InterpError;
use super::alu::Kind;
use super::machine::{Machine, Reg};
use super::value::{self as v, Val};
use crate::exec::LANES;
use crate::tgsi::ast::*;
use crate::tgsi::opcodes::Opcode;

pub fn is_memory(op: Opcode) -> bool {
    use Opcode as O;
    matches!(
        op,
        O::Load
            | O::Store
            | O::Resq
            | O::Atomuadd
            | O::Atomfadd
            | O::Atomxchg
            | O::Atomcas
            | O::Atomand
            | O::Atomor
            | O::Atomxor
            | O::Atomumin
            | O::Atomumax
            | O::Atomimin
            | O::Atomimax
            | O::AtomincWrap
            | O::AtomdecWrap
    )
}

#[derive(Clone, Copy, PartialEq)]
enum Space {
    Buffer(u32),
    Shared,
}

impl Machine<'_, '_> {
    fn space(&self, reg: &Register) -> Result<Space, InterpError> {
        match reg.file {
            File::Buffer => Ok(Space::Buffer(reg.index.value.max(0) as u32)),
            File::Memory => Ok(Space::Shared),
            f => Err(InterpError::unsupported(
                self.op_span(),
                format!("memory access to `{}` is not supported (BUFFER and shared MEMORY are)", f.name()),
            )),
        }
    }

    fn words(&mut self, space: Space) -> &mut Vec<Val> {
        match space {
            Space::Buffer(b) => self.buffers.entry(b).or_default(),
            Space::Shared => &mut self.shared,
        }
    }

    fn load_word(&mut self, space: Space, byte: u64) -> Val {
        let words = self.words(space);
        words.get((byte / 4) as usize).copied().unwrap_or(Val::ZERO)
    }

    fn store_word(&mut self, space: Space, byte: u64, val: Val) {
        let words = self.words(space);
        if let Some(w) = words.get_mut((byte / 4) as usize) {
            *w = val;
        }
    }

    /// An address that is not exact: the access may touch any word.
    fn unknown_address(&mut self, space: Space, writes: bool) {
        if writes {
            for w in self.words(space).iter_mut() {
                w.err = f32::INFINITY;
            }
        }
    }

    pub fn memory(&mut self, op: Opcode) -> Result<(), InterpError> {
        use Opcode as O;
        let inst = self.inst();
        match op {
            O::Load => {
                let space = self.space(&inst.src[0].register)?;
                let swizzle = inst.src[0].swizzle;
                let addr = self.src(1)?;
                let mut r: Reg = [[Val::ZERO; 4]; LANES];
                for l in Machine::lanes(self.exec) {
                    let a = addr[l][0];
                    let mut loaded = [Val::ZERO; 4];
                    for (c, w) in loaded.iter_mut().enumerate() {
                        *w = self.load_word(space, a.bits as u64 + 4 * c as u64);
                    }
                    r[l] = std::array::from_fn(|c| {
                        let w = loaded[swizzle[c].index()];
                        if a.is_exact() { w } else { Val::unknown(w.bits) }
                    });
                }
                self.write_all(&r, Kind::Int)
            }
            O::Store => {
                let space = self.space(&inst.dst[0].register)?;
                let mask = inst.dst[0].write_mask;
                let addr = self.src(0)?;
                let value = self.src(1)?;
                for l in Machine::lanes(self.exec & !self.demoted) {
                    let a = addr[l][0];
                    if !a.is_exact() {
                        self.unknown_address(space, true);
                        continue;
                    }
                    for c in mask.components() {
                        let mut val = value[l][c.index()];
                        if self.tainted & (1 << l) != 0 {
                            val.err = f32::INFINITY;
                        }
                        self.store_word(space, a.bits as u64 + 4 * c.index() as u64, val);
                    }
                }
                Ok(())
            }
            O::Resq => {
                let space = self.space(&inst.src[0].register)?;
                let Space::Buffer(b) = space else {
                    return Err(InterpError::unsupported(self.op_span(), "`RESQ` of MEMORY has no meaning"));
                };
                let bytes = self.buffers.get(&b).map_or(0, |w| w.len() as u32 * 4);
                let r: Reg = [[Val::exact(bytes), Val::unknown(0), Val::unknown(0), Val::unknown(0)]; LANES];
                self.write_all(&r, Kind::Int)
            }
            _ => self.atomic(op),
        }
    }

    fn atomic(&mut self, op: Opcode) -> Result<(), InterpError> {
        use Opcode as O;
        let inst = self.inst();
        let space = self.space(&inst.src[0].register)?;
        let offset = self.src(1)?;
        let value = self.src(2)?;
        let third = if op == O::Atomcas { Some(self.src(3)?) } else { None };
        let mut r: Reg = [[Val::ZERO; 4]; LANES];
        let lanes: Vec<usize> = Machine::lanes(self.exec).collect();
        for l in lanes {
            let a = offset[l][0];
            if self.demoted & (1 << l) != 0 {
                r[l] = [Val::unknown(0); 4];
                continue;
            }
            if !a.is_exact() {
                self.unknown_address(space, true);
                r[l] = [Val::unknown(0); 4];
                continue;
            }
            let byte = a.bits as u64;
            let in_range = (byte / 4) < self.words(space).len() as u64;
            if !in_range {
                r[l] = [Val::ZERO; 4];
                continue;
            }
            let old = self.load_word(space, byte);
            let x = value[l][0];
            let (o, s) = (old.bits, x.bits);
            let new = match op {
                O::Atomuadd => Val::derived(o.wrapping_add(s), &[old, x]),
                O::Atomfadd => v::add(old, x),
                O::Atomxchg => x,
                O::Atomcas => {
                    let src = third.map_or(Val::ZERO, |t| t[l][0]);
                    let chosen = if o == s { src } else { old };
                    if old.is_exact() && x.is_exact() { chosen } else { Val::unknown(chosen.bits) }
                }
                O::Atomand => Val::derived(o & s, &[old, x]),
                O::Atomor => Val::derived(o | s, &[old, x]),
                O::Atomxor => Val::derived(o ^ s, &[old, x]),
                O::Atomumin => Val::derived(o.min(s), &[old, x]),
                O::Atomumax => Val::derived(o.max(s), &[old, x]),
                O::Atomimin => Val::derived((o as i32).min(s as i32) as u32, &[old, x]),
                O::Atomimax => Val::derived((o as i32).max(s as i32) as u32, &[old, x]),
                O::AtomincWrap => {
                    let inc = o.wrapping_add(1);
                    Val::derived(if inc <= s { inc } else { 0 }, &[old, x])
                }
                _ => Val::derived(if o > 0 && o < s { o - 1 } else { 0 }, &[old, x]),
            };
            let new = if self.tainted & (1 << l) != 0 { Val::unknown(new.bits) } else { new };
            self.store_word(space, byte, new);
            r[l] = [old; 4];
        }
        self.write_all(&r, Kind::Int)
    }
}

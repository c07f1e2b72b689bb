//! Random valid Valhall instructions for the ISA property tests and the emulator's robustness
//! tests: one generator, so both exercise the same space of instructions.

#![allow(dead_code)]

use super::rng::Rng;
use tgsi2va::valhall::tables::{IsaEnum, ModKind, SPECIALS};
use tgsi2va::valhall::{Base, Flow, Instr, Opcode, Special, Staging};

/// The indices of the named values of an enum that fit a field `width` bits wide.
pub fn valid_indices(values: &[Option<&str>], width: u8) -> Vec<u8> {
    (0..values.len()).filter(|&k| values[k].is_some() && k >> width == 0).map(|k| k as u8).collect()
}

/// A random valid instruction of `op`: every field drawn from the values the ISA accepts for
/// it, staging vectors aligned, at most one source from the FAU (a uniform, an immediate or a
/// named special), others registers with or without the discard hint.
pub fn random_instr(op: Opcode, rng: &mut Rng) -> Instr {
    let info = op.info();
    let mut i = Instr::new(op);
    let flows = valid_indices(Flow::ID.info().values, 4);
    i.flow = rng.pick(&flows);
    if info.dest {
        i.dest.reg = rng.below(64) as u8;
        i.dest.mask = rng.pick(&[3, 3, 1, 2]);
    }
    for (k, s) in info.staging.iter().enumerate() {
        let range = s.count_range();
        let count = *range.start() + rng.below(u64::from(*range.end() - *range.start() + 1)) as u8;
        let base = match count {
            0 => 0,
            1 => rng.below(64) as u8,
            n => 2 * rng.below(u64::from((64 - n) / 2 + 1)) as u8,
        };
        i.staging[k] = Staging { base, count };
    }
    let fau_source =
        if rng.chance(60) && !info.srcs.is_empty() { Some(rng.below(info.srcs.len() as u64) as usize) } else { None };
    for (k, s) in info.srcs.iter().enumerate() {
        let base = if fau_source == Some(k) {
            match rng.below(3) {
                0 => Base::Uniform(rng.below(128) as u8),
                1 => Base::Immediate(rng.below(32) as u8),
                _ => {
                    let named: Vec<(u8, u8)> = SPECIALS
                        .iter()
                        .enumerate()
                        .flat_map(|(p, e)| {
                            e.iter().enumerate().filter(|(_, x)| x.is_some()).map(move |(n, _)| (p as u8, n as u8))
                        })
                        .collect();
                    let (page, entry) = rng.pick(&named);
                    Base::Special(Special { page, entry, high: rng.chance(50) })
                }
            }
        } else if rng.chance(30) {
            Base::Discard(rng.below(64) as u8)
        } else {
            Base::Register(rng.below(64) as u8)
        };
        let src = &mut i.srcs[k];
        src.base = base;
        src.neg = s.neg.is_some() && rng.chance(40);
        src.abs = s.abs.is_some() && rng.chance(40);
        src.not = s.not.is_some() && rng.chance(40);
        if let Some(f) = s.swizzle {
            src.swizzle = rng.pick(&valid_indices(f.values.info().values, f.width));
        }
        if let Some(f) = s.widen {
            src.widen = rng.pick(&valid_indices(f.values.info().values, f.width));
        }
        if let Some(f) = s.lane {
            src.lane = rng.pick(&valid_indices(f.values.info().values, f.width));
        }
    }
    for (k, f) in info.imms.iter().enumerate() {
        i.imms[k] = (rng.next() & ((1u64 << f.width) - 1)) as u32;
    }
    for (k, m) in info.mods.iter().enumerate() {
        i.mods[k] = match m.kind {
            ModKind::Flag => rng.below(2) as u8,
            ModKind::Enum(e) => rng.pick(&valid_indices(e.info().values, m.width)),
        };
    }
    i
}

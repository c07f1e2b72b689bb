//! Parallel-copy lowering: a set of register moves that happen at once, turned into a sequence of
//! `MOV.i32` (Valhall has no swap instruction).
//!
//! Moves whose destination is no longer needed as a source are emitted first (the tree parts of
//! the copy graph, fan-out included); what is left are disjoint cycles. A cycle `r1 ← r2 ← … ←
//! rk ← r1` is broken with a free register `t` (`t ← r1`, the chain, `rk ← t`: k + 1 moves), or,
//! when no register is free, with k − 1 XOR swaps of three instructions each. Cost: linear in
//! the number of moves (the register file has 64 entries).

use super::mach::{MachInst, Origin, Reg};
use crate::valhall::{Base, Dest, Instr, Opcode, Src};

/// One step of a lowered parallel copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// `dst ← src`.
    Move { dst: Reg, src: Reg },
    /// Exchange two registers (three XORs).
    Swap(Reg, Reg),
}

/// Sequentialises the parallel copy `copies` (pairs `(dst, src)`, destinations distinct). `temp`
/// is a register that holds nothing needed (neither a source nor a destination), if any.
pub fn sequentialize(copies: &[(Reg, Reg)], temp: Option<Reg>) -> Vec<Step> {
    let mut steps = Vec::with_capacity(copies.len() + 1);
    sequentialize_into(copies, temp, |step| steps.push(step));
    steps
}

/// [`sequentialize`], handing each step to `step` (no allocation: the work lists are arrays
/// over the 64 registers, walked through masks of the registers involved: most copies have one
/// to three moves, so scanning the whole register file would dominate).
fn sequentialize_into(copies: &[(Reg, Reg)], temp: Option<Reg>, mut step: impl FnMut(Step)) {
    const NO_REG: Reg = Reg::MAX;
    // pred[d] = the register whose value d must receive (`NO_REG`: none, or done).
    let mut pred = [NO_REG; 64];
    // Number of pending moves reading each register (at most 64: destinations are distinct).
    let mut readers = [0u8; 64];
    // Registers with a pending move into them.
    let mut pending = 0u64;
    for &(d, s) in copies {
        if d == s {
            continue;
        }
        debug_assert!(pred[d as usize] == NO_REG, "parallel copy: r{d} written twice");
        pred[d as usize] = s;
        readers[s as usize] += 1;
        pending |= 1u64 << d;
    }
    // Emit moves into registers nobody still reads.
    // saved[r] = a register already holding the old value of r (a fan-out copy).
    let mut saved = [NO_REG; 64];
    // A stack of registers; each is pushed at most once (when its readers drop to zero).
    // Seeded in increasing register order.
    let mut ready = [0 as Reg; 64];
    let mut n_ready = 0;
    let mut seeds = pending;
    while seeds != 0 {
        let d = seeds.trailing_zeros() as Reg;
        seeds &= seeds - 1;
        if readers[d as usize] == 0 {
            ready[n_ready] = d;
            n_ready += 1;
        }
    }
    while n_ready > 0 {
        n_ready -= 1;
        let d = ready[n_ready];
        let s = pred[d as usize];
        if s == NO_REG {
            continue;
        }
        pred[d as usize] = NO_REG;
        pending &= !(1u64 << d);
        step(Step::Move { dst: d, src: s });
        saved[s as usize] = d;
        readers[s as usize] -= 1;
        if readers[s as usize] == 0 && pred[s as usize] != NO_REG {
            ready[n_ready] = s;
            n_ready += 1;
        }
    }
    // The rest are cycles: each register is read once and written once. They are taken in
    // increasing order of their lowest register.
    while pending != 0 {
        let start = pending.trailing_zeros() as Reg;
        let mut cycle_regs = [0 as Reg; 64];
        cycle_regs[0] = start;
        let mut len = 1;
        let mut r = start;
        loop {
            let s = pred[r as usize];
            if s == NO_REG {
                break;
            }
            pred[r as usize] = NO_REG;
            pending &= !(1u64 << r);
            if s == start {
                break;
            }
            cycle_regs[len] = s;
            len += 1;
            r = s;
        }
        let cycle = &mut cycle_regs[..len];
        // cycle = [r1, r2, …, rk]: r1 ← r2, r2 ← r3, …, rk ← r1.
        if let Some(j) = cycle.iter().position(|&r| saved[r as usize] != NO_REG) {
            // The old value of cycle[j] survives elsewhere: start the chain there.
            cycle.rotate_left(j);
            let copy = saved[cycle[0] as usize];
            for w in cycle.windows(2) {
                step(Step::Move { dst: w[0], src: w[1] });
            }
            step(Step::Move { dst: cycle[cycle.len() - 1], src: copy });
            continue;
        }
        match temp {
            Some(t) => {
                step(Step::Move { dst: t, src: cycle[0] });
                for w in cycle.windows(2) {
                    step(Step::Move { dst: w[0], src: w[1] });
                }
                step(Step::Move { dst: cycle[cycle.len() - 1], src: t });
            }
            None => {
                for w in cycle.windows(2) {
                    step(Step::Swap(w[0], w[1]));
                }
            }
        }
    }
}

/// `MOV.i32 dst, src`.
pub fn mov(dst: Reg, src: Reg) -> Instr {
    let mut i = Instr::new(Opcode::MOV_I32);
    i.dest = Dest::full(dst);
    i.srcs[0] = Src::new(Base::Register(src));
    i
}

/// `LSHIFT_XOR.i32 a, a, 0x0.b00, b` (`a ^= b`).
fn xor(a: Reg, b: Reg) -> Instr {
    let mut i = Instr::new(Opcode::LSHIFT_XOR_I32);
    i.dest = Dest::full(a);
    i.srcs[0] = Src::new(Base::Register(a));
    i.srcs[1].base = Base::Immediate(0);
    i.srcs[2] = Src::new(Base::Register(b));
    i
}

/// Appends the machine instructions of the lowered parallel copy to `out`.
pub fn emit(copies: &[(Reg, Reg)], temp: Option<Reg>, out: &mut Vec<MachInst>) {
    sequentialize_into(copies, temp, |step| match step {
        Step::Move { dst, src } => out.push(MachInst::new(mov(dst, src), Origin::Move)),
        Step::Swap(a, b) => {
            out.push(MachInst::new(xor(a, b), Origin::Swap(a, b)));
            out.push(MachInst::new(xor(b, a), Origin::SwapTail));
            out.push(MachInst::new(xor(a, b), Origin::SwapTail));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the steps on a register file where register i holds i, returns the file.
    fn run(steps: &[Step]) -> [u32; 64] {
        let mut file: [u32; 64] = std::array::from_fn(|i| i as u32);
        for s in steps {
            match *s {
                Step::Move { dst, src } => file[dst as usize] = file[src as usize],
                Step::Swap(a, b) => file.swap(a as usize, b as usize),
            }
        }
        file
    }

    fn check(copies: &[(Reg, Reg)], temp: Option<Reg>) -> Vec<Step> {
        let steps = sequentialize(copies, temp);
        let file = run(&steps);
        for &(d, s) in copies {
            assert_eq!(file[d as usize], u32::from(s), "r{d} should hold the old r{s}: {steps:?}");
        }
        steps
    }

    #[test]
    fn chain_needs_no_temporary() {
        let steps = check(&[(1, 0), (2, 1), (3, 2)], None);
        assert_eq!(steps.len(), 3);
    }

    #[test]
    fn fan_out() {
        let steps = check(&[(1, 0), (2, 0), (3, 0), (0, 3)], None);
        assert_eq!(steps.len(), 4);
    }

    #[test]
    fn two_cycle_with_temporary() {
        let steps = check(&[(0, 1), (1, 0)], Some(9));
        assert_eq!(
            steps,
            vec![Step::Move { dst: 9, src: 0 }, Step::Move { dst: 0, src: 1 }, Step::Move { dst: 1, src: 9 }]
        );
    }

    #[test]
    fn cycles_without_temporary_use_swaps() {
        let steps = check(&[(0, 1), (1, 2), (2, 0), (5, 6), (6, 5)], None);
        assert_eq!(steps.iter().filter(|s| matches!(s, Step::Swap(..))).count(), 3);
    }

    #[test]
    fn cycle_with_a_tail() {
        // r0 ← r1 ← r0 plus r2 ← r0 (fan-out out of the cycle).
        check(&[(0, 1), (1, 0), (2, 0)], Some(7));
        check(&[(0, 1), (1, 0), (2, 0)], None);
    }

    #[test]
    fn identity_moves_vanish() {
        assert!(check(&[(4, 4)], None).is_empty());
    }

    #[test]
    fn emitted_xor_swap_is_encodable() {
        let mut out = Vec::new();
        emit(&[(0, 1), (1, 0)], None, &mut out);
        assert_eq!(out.len(), 3);
        for m in &out {
            crate::valhall::encode(&m.instr).unwrap();
        }
        assert_eq!(crate::valhall::print(&out[0].instr), "LSHIFT_XOR.i32 r0, r0, 0x0.b00, r1");
    }
}
